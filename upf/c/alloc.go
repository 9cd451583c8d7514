package upfc

// teids hands out local GTP-U TEIDs (TS 29.281 5.1), each unique on
// UPF-U's N3 address, and remembers which session holds each.
type teids struct {
	next  uint32
	owner map[uint32]uint64 // TEID → UP SEID
}

func newTEIDs() *teids { return &teids{next: 1, owner: map[uint32]uint64{}} }

// take allocates a TEID for session seid, skipping those in use (e.g.
// recovered ones) and 0, which TS 29.281 5.1 reserves for Echo and the
// like. False when all 2^32-1 are taken.
func (t *teids) take(seid uint64) (uint32, bool) {
	for range 1 << 20 { // bounded: far more tries than a table holds TEIDs
		id := t.next
		t.next++
		if t.next == 0 {
			t.next = 1
		}
		if _, used := t.owner[id]; !used && id != 0 {
			t.owner[id] = seid
			return id, true
		}
	}
	return 0, false
}

// hold marks id as held by seid (an F-TEID the SMF chose, or one
// recovered); false when another session holds it.
func (t *teids) hold(id uint32, seid uint64) bool {
	if s, used := t.owner[id]; used && s != seid {
		return false
	}
	t.owner[id] = seid
	return true
}

// release frees the TEIDs of ids that seid holds.
func (t *teids) release(seid uint64, ids ...uint32) {
	for _, id := range ids {
		if t.owner[id] == seid {
			delete(t.owner, id)
		}
	}
}

// seids hands out UP SEIDs (TS 29.244 8.2.37), unique among the sessions
// UPF-C serves, recovered ones included, and never 0 (the SEID of a
// request with no session, 7.2.2.4.2).
type seids struct{ next uint64 }

func (s *seids) take(used func(uint64) bool) uint64 {
	for {
		s.next++
		if s.next != 0 && !used(s.next) {
			return s.next
		}
	}
}
