package ransim

import (
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// The gNB's part of PDU sessions (TS 23.502 4.3.2.2.1 steps 11-13,
// 4.3.3.2, 4.3.4.2; TS 38.413 8.2): it sets up, modifies and releases the
// N3 tunnels the AMF asks for, hands the 5GSM message to the UE (over RRC
// in a real RAN) and answers the AMF.

// UserPlane is the gNB's N3.
func (g *GNB) UserPlane() *UserPlane { return g.up }

// tunnel is the gNB's tunnel of a UE's PDU session, nil when none.
func (g *GNB) tunnel(ue *UE, sessionID uint8) *Tunnel {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tunnels[ue][sessionID]
}

func (g *GNB) putTunnel(ue *UE, t *Tunnel) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tunnels[ue] == nil {
		g.tunnels[ue] = map[uint8]*Tunnel{}
	}
	if old := g.tunnels[ue][t.SessionID]; old != nil {
		g.up.remove(old)
	}
	g.tunnels[ue][t.SessionID] = t
}

func (g *GNB) dropTunnel(ue *UE, sessionID uint8) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.tunnels[ue][sessionID]
	if t == nil {
		return false
	}
	g.up.remove(t)
	delete(g.tunnels[ue], sessionID)
	return true
}

// dropTunnels releases every tunnel of a UE whose N2 connection ended:
// its user plane connection went with it (TS 23.502 4.2.6).
func (g *GNB) dropTunnels(ue *UE) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, t := range g.tunnels[ue] {
		g.up.remove(t)
	}
	delete(g.tunnels, ue)
}

// onSessionSetup handles PDU Session Resource Setup Request (TS 38.413
// 8.2.1.2): a DL tunnel per session at the gNB's N3 address, the NAS
// PDUs to the UE, then the response with what was set up and what not.
func (g *GNB) onSessionSetup(ue *UE, pdu *ngapType.NGAPPDU) {
	r, err := ngapx.ParseRANSetupRequest(pdu)
	if err != nil {
		g.log.Warn("PDU Session Resource Setup Request", "err", err)
		return
	}
	var results []ngapx.RANSessionResult
	for _, s := range r.Sessions {
		// A session of the UE already set up (the SMF re-activating it,
		// TS 23.502 4.2.3.3 step 3a with the UE CM-CONNECTED) keeps its
		// downlink sink on the new tunnel (service_request.go).
		t := g.activate(ue, s)
		results = append(results, ngapx.RANSessionResult{ID: s.ID, DL: t.DL(), QFIs: t.QFIs()})
	}
	for _, id := range r.Unreadable {
		// TS 38.413 8.2.1.2: a session the gNB cannot set up is listed
		// as failed; an undecodable transfer is a protocol error.
		c := ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorFalselyConstructedMessage)
		results = append(results, ngapx.RANSessionResult{ID: id, Cause: &c})
	}
	// The response goes before the UE hears its NAS: whatever the UE does
	// next (release to idle, a handover) then reaches the AMF after it, as
	// from a gNB that answers once the radio bearers are up.
	g.send(r.AMFUEID, r.RANUEID, func(amfID, ranID int64) ([]byte, error) {
		return ngapx.BuildRANSetupResponse(amfID, ranID, results)
	})
	g.deliverNAS(ue, r.AMFUEID, "PDUSessionResourceSetupRequest", r.NASPDU)
	for _, s := range r.Sessions {
		g.deliverNAS(ue, r.AMFUEID, "PDUSessionResourceSetupRequest", s.NASPDU)
	}
}

// onSessionModify handles PDU Session Resource Modify Request (TS 38.413
// 8.2.3.2): a new UPF tunnel end, QoS flows added, changed or released.
func (g *GNB) onSessionModify(ue *UE, pdu *ngapType.NGAPPDU) {
	r, err := ngapx.ParseRANModifyRequest(pdu)
	if err != nil {
		g.log.Warn("PDU Session Resource Modify Request", "err", err)
		return
	}
	var results []ngapx.RANSessionResult
	for _, s := range r.Sessions {
		t := g.tunnel(ue, s.ID)
		if t == nil {
			c := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownPDUSessionID)
			results = append(results, ngapx.RANSessionResult{ID: s.ID, Cause: &c})
			continue
		}
		results = append(results, ngapx.RANSessionResult{ID: s.ID, QFIs: t.modify(s)})
		t.modifyRANQoS(s)
	}
	for _, id := range r.Unreadable {
		c := ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorFalselyConstructedMessage)
		results = append(results, ngapx.RANSessionResult{ID: id, Cause: &c})
	}
	// TS 23.502 4.3.3.2 steps 4-8: the N2 answer reaches the SMF before
	// the UE's Modification Complete, so it goes out before the UE can
	// answer.
	g.send(r.AMFUEID, r.RANUEID, func(amfID, ranID int64) ([]byte, error) {
		return ngapx.BuildRANModifyResponse(amfID, ranID, results)
	})
	for _, s := range r.Sessions {
		if g.tunnel(ue, s.ID) != nil {
			g.deliverNAS(ue, r.AMFUEID, "PDUSessionResourceModifyRequest", s.NASPDU)
		}
	}
}

// modify applies a Modify Request Transfer to the tunnel and returns the
// QFIs added or modified.
func (t *Tunnel) modify(s ngapx.RANSessionModify) []uint8 {
	if s.UL != nil {
		ul := *s.UL
		t.ul.Store(&ul)
	}
	qfis := append([]uint8(nil), t.QFIs()...)
	var changed []uint8
	for _, f := range s.AddOrModify {
		changed = append(changed, f.QFI)
		if !containsQFI(qfis, f.QFI) {
			qfis = append(qfis, f.QFI)
		}
	}
	for _, q := range s.Release {
		for i, have := range qfis {
			if have == q {
				qfis = append(qfis[:i], qfis[i+1:]...)
				break
			}
		}
	}
	t.qfis.Store(&qfis)
	return changed
}

func containsQFI(qfis []uint8, q uint8) bool {
	for _, have := range qfis {
		if have == q {
			return true
		}
	}
	return false
}

// onSessionRelease handles PDU Session Resource Release Command (TS 38.413
// 8.2.2.2): the tunnels go, the AMF gets the list of sessions released,
// the UE its NAS PDU.
func (g *GNB) onSessionRelease(ue *UE, pdu *ngapType.NGAPPDU) {
	r, err := ngapx.ParseRANReleaseCommand(pdu)
	if err != nil {
		g.log.Warn("PDU Session Resource Release Command", "err", err)
		return
	}
	for _, id := range r.IDs {
		g.dropTunnel(ue, id)
	}
	// TS 23.502 4.3.4.2 steps 4-8: the N2 Release Response reaches the SMF
	// before the UE's Release Complete.
	g.send(r.AMFUEID, r.RANUEID, func(amfID, ranID int64) ([]byte, error) {
		return ngapx.BuildRANReleaseResponse(amfID, ranID, r.IDs)
	})
	g.deliverNAS(ue, r.AMFUEID, "PDUSessionResourceReleaseCommand", r.NASPDU)
}

func (g *GNB) deliverNAS(ue *UE, amfID int64, name string, pdu []byte) {
	if pdu != nil {
		ue.deliver(downlink{amfID: amfID, name: name, nas: pdu})
	}
}
