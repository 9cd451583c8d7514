package pcf

import (
	"crypto/rand"
	"encoding/hex"
	"sync"

	"github.com/free5gc/openapi/models"
)

// association is one AM policy association (TS 29.507 4.2.2): the AMF's
// request as updated since, the UE's policy data, and the decision sent.
type association struct {
	supi     string
	request  *models.PcfAmPolicyControlPolicyAssociationRequest // replaced, never changed in place
	data     *models.AmPolicyData                               // nil: no UE-specific policy data
	decision models.PcfAmPolicyControlPolicyAssociation
}

// associations holds the AM policy associations by polAssoId, at most one
// per UE: a UE registering anew (e.g. at another AMF, TS 23.502 4.16.2.1.2)
// replaces its earlier association, so memory is bounded by the UEs.
type associations struct {
	mu     sync.Mutex
	byID   map[string]*association
	bySUPI map[string]string
}

func newAssociations() *associations {
	return &associations{byID: map[string]*association{}, bySUPI: map[string]string{}}
}

// add stores a under a fresh id and returns it with the id of the
// association it replaced ("" if none).
func (s *associations) add(a *association) (id, replaced string) {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	id = hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.bySUPI[a.supi]; ok {
		delete(s.byID, old)
		replaced = old
	}
	s.byID[id] = a
	s.bySUPI[a.supi] = id
	return id, replaced
}

// get returns a copy of the association (its slices and pointers are
// never changed in place, only replaced).
func (s *associations) get(id string) (association, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.byID[id]
	if !ok {
		return association{}, false
	}
	return *a, true
}

// update applies f to the association under the lock.
func (s *associations) update(id string, f func(*association)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.byID[id]
	if ok {
		f(a)
	}
	return ok
}

func (s *associations) remove(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.byID[id]
	if !ok {
		return false
	}
	delete(s.byID, id)
	if s.bySUPI[a.supi] == id {
		delete(s.bySUPI, a.supi)
	}
	return true
}
