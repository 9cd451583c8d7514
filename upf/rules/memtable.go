package rules

import (
	"fmt"
	"slices"
	"sync"
)

// MemTable is a Table in process memory: what tests of UPF-C and of the
// SMF install rules into instead of UPF-U's shared memory. It keeps deep
// copies, so a caller changing its Session after Install changes nothing
// here (as with shared memory), and it outlives any one UPF-C built on it,
// so a test can restart UPF-C over the same sessions.
type MemTable struct {
	mu       sync.Mutex
	sessions map[uint64]Session
	usage    map[uint64]map[uint32]Usage
	installs int
}

var _ Table = (*MemTable)(nil)

// NewMemTable is an empty table.
func NewMemTable() *MemTable {
	return &MemTable{sessions: map[uint64]Session{}, usage: map[uint64]map[uint32]Usage{}}
}

// Install replaces the session whole.
func (t *MemTable) Install(s *Session) error {
	if s == nil || s.UPSEID == 0 {
		return fmt.Errorf("rules: install of a session without UP SEID")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sessions[s.UPSEID] = s.Clone()
	t.installs++
	return nil
}

// Remove drops the session and its counters.
func (t *MemTable) Remove(upSEID uint64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.sessions[upSEID]; !ok {
		return fmt.Errorf("rules: no session with UP SEID %#x", upSEID)
	}
	delete(t.sessions, upSEID)
	delete(t.usage, upSEID)
	return nil
}

// Usage is what the session's URRs counted, by URR ID, one entry per URR
// of the session (zero when nothing was counted).
func (t *MemTable) Usage(upSEID uint64) ([]Usage, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.sessions[upSEID]
	if !ok {
		return nil, fmt.Errorf("rules: no session with UP SEID %#x", upSEID)
	}
	out := make([]Usage, 0, len(s.URRs))
	for _, u := range s.URRs {
		got := t.usage[upSEID][u.ID]
		got.URRID = u.ID
		out = append(out, got)
	}
	return out, nil
}

// Count adds to what URR u of the session counted, as UPF-U would.
func (t *MemTable) Count(upSEID uint64, u Usage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.usage[upSEID] == nil {
		t.usage[upSEID] = map[uint32]Usage{}
	}
	got := t.usage[upSEID][u.URRID]
	got.URRID = u.URRID
	got.UplinkBytes += u.UplinkBytes
	got.DownlinkBytes += u.DownlinkBytes
	got.UplinkPackets += u.UplinkPackets
	got.DownlinkPackets += u.DownlinkPackets
	t.usage[upSEID][u.URRID] = got
}

// Sessions reads every session back, by UP SEID.
func (t *MemTable) Sessions() ([]Session, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Session, 0, len(t.sessions))
	for _, s := range t.sessions {
		out = append(out, s.Clone())
	}
	slices.SortFunc(out, func(a, b Session) int {
		switch {
		case a.UPSEID < b.UPSEID:
			return -1
		case a.UPSEID > b.UPSEID:
			return 1
		}
		return 0
	})
	return out, nil
}

// Session is one installed session, a copy.
func (t *MemTable) Session(upSEID uint64) (Session, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.sessions[upSEID]
	if !ok {
		return Session{}, false
	}
	return s.Clone(), true
}

// Installs counts the Install calls so far: a test's proof that a
// retransmitted request was not applied twice.
func (t *MemTable) Installs() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.installs
}

// Clone is a deep copy of s: no slice or pointer shared with it.
func (s *Session) Clone() Session {
	c := *s
	c.Rules = s.Rules.Clone()
	return c
}

// Clone is a deep copy of r.
func (r Rules) Clone() Rules {
	c := Rules{
		PDRs: slices.Clone(r.PDRs),
		FARs: slices.Clone(r.FARs),
		QERs: slices.Clone(r.QERs),
		URRs: slices.Clone(r.URRs),
	}
	for i := range c.PDRs {
		p := &c.PDRs[i]
		if p.LocalFTEID != nil {
			f := *p.LocalFTEID
			p.LocalFTEID = &f
		}
		p.SDFFilters = slices.Clone(p.SDFFilters)
		p.QERIDs = slices.Clone(p.QERIDs)
		p.URRIDs = slices.Clone(p.URRIDs)
	}
	for i := range c.FARs {
		if oh := c.FARs[i].OuterHeader; oh != nil {
			h := *oh
			c.FARs[i].OuterHeader = &h
		}
	}
	return c
}
