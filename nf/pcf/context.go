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
	request  *models.PcfAmPolicyControlPolicyAssociationRequest // replaced, never changed in place
	data     *models.AmPolicyData                               // nil: no UE-specific policy data
	decision models.PcfAmPolicyControlPolicyAssociation
}

// smPolicy is one SM policy association (TS 29.512 4.2.2): the SMF's
// context as updated since, the UE's SM policy data and QoS flows, and
// the decision.
type smPolicy struct {
	context  *models.SmPolicyContextData // replaced, never changed in place
	data     *models.SmPolicyData        // nil: no UE-specific policy data
	flows    *policyFlows                // the subscriber's QoS flows, nil if none
	decision models.SmPolicyDecision
}

// table holds policy associations by their resource id, at most one per
// owner key: the AM policy of a UE (a UE registering anew, e.g. at another
// AMF, TS 23.502 4.16.2.1.2, replaces its association), the SM policy of a
// UE's PDU session (an SMF establishing the session anew replaces it). So
// memory is bounded by the UEs and their sessions, never by requests.
type table[T any] struct {
	mu      sync.Mutex
	byID    map[string]*T
	byOwner map[string]string // owner key → id
	ownerOf map[string]string // id → owner key
}

func newTable[T any]() *table[T] {
	return &table[T]{byID: map[string]*T{}, byOwner: map[string]string{}, ownerOf: map[string]string{}}
}

// add stores v for owner under a fresh id and returns it with the id of
// the association it replaced ("" if none).
func (s *table[T]) add(owner string, v *T) (id, replaced string) {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	id = hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.byOwner[owner]; ok {
		delete(s.byID, old)
		delete(s.ownerOf, old)
		replaced = old
	}
	s.byID[id] = v
	s.byOwner[owner] = id
	s.ownerOf[id] = owner
	return id, replaced
}

// get returns a copy of the association (its pointers and maps are never
// changed in place, only replaced).
func (s *table[T]) get(id string) (T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.byID[id]
	if !ok {
		var zero T
		return zero, false
	}
	return *v, true
}

// idOf is the id of owner's association.
func (s *table[T]) idOf(owner string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.byOwner[owner]
	return id, ok
}

// update applies f to the association under the lock.
func (s *table[T]) update(id string, f func(*T)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.byID[id]
	if ok {
		f(v)
	}
	return ok
}

func (s *table[T]) remove(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[id]; !ok {
		return false
	}
	delete(s.byID, id)
	delete(s.byOwner, s.ownerOf[id])
	delete(s.ownerOf, id)
	return true
}

// len is the number of associations.
func (s *table[T]) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}
