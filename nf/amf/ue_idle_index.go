package amf

import "slices"

// The SUPI index of the parked (CM-IDLE) contexts. Paging (the SMF's
// N1N2MessageTransfer names the UE by SUPI), the UDM's and SMF's
// notifications, and every release of a registered UE (superseded) look
// parked contexts up by SUPI: a scan of all of them under the table's lock
// grows with the idle UEs. A SUPI has one parked context, rarely two (a
// context restored from the UE store beside a newer one); contexts parked
// before their SUPI is known (none are: park needs a 5G-GUTI, given after
// authentication) would be indexed under "" and never looked up.

// parkLocked keeps ue parked under tmsi, replacing (and unindexing) a
// context parked there before; t.mu held.
func (t *ueTable) parkLocked(tmsi uint32, ue *ueContext) {
	if old, ok := t.idle[tmsi]; ok {
		t.unindexIdle(old.supi, tmsi)
	}
	t.idle[tmsi] = ue
	if ue.supi != "" && !slices.Contains(t.idleBySUPI[ue.supi], tmsi) {
		t.idleBySUPI[ue.supi] = append(t.idleBySUPI[ue.supi], tmsi)
	}
}

// unparkLocked forgets the context parked under tmsi; t.mu held.
func (t *ueTable) unparkLocked(tmsi uint32) {
	if ue, ok := t.idle[tmsi]; ok {
		t.unindexIdle(ue.supi, tmsi)
		delete(t.idle, tmsi)
	}
}

// unindexIdle forgets that the context parked under tmsi has supi.
func (t *ueTable) unindexIdle(supi string, tmsi uint32) { dropFromIndex(t.idleBySUPI, supi, tmsi) }

// idleOfSUPI lists the contexts parked with supi; t.mu held.
func (t *ueTable) idleOfSUPI(supi string) []*ueContext {
	var out []*ueContext
	for _, tmsi := range t.idleBySUPI[supi] {
		if ue := t.idle[tmsi]; ue != nil && ue.supi == supi {
			out = append(out, ue)
		}
	}
	return out
}
