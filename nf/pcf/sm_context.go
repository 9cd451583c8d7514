package pcf

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"

	"github.com/free5gc/openapi/models"
)

// smPolicy is one SM policy association (TS 29.512 4.2.2): the SMF's
// context as updated since, the UE's SM policy data, and the decision.
type smPolicy struct {
	context  *models.SmPolicyContextData // replaced, never changed in place
	data     *models.SmPolicyData        // nil: no UE-specific policy data
	flows    *policyFlows                // the subscriber's QoS flows, nil if none
	decision models.SmPolicyDecision
}

// smPolicies holds the SM policy associations by smPolicyId, at most one
// per PDU session of a UE: an SMF establishing a session anew under the
// same id (e.g. after it restarted) replaces the old association, so
// memory is bounded by the UEs' sessions.
type smPolicies struct {
	mu        sync.Mutex
	byID      map[string]*smPolicy
	bySession map[string]string // supi + pduSessionId → smPolicyId
	sessionOf map[string]string // smPolicyId → its bySession key
}

func newSMPolicies() *smPolicies {
	return &smPolicies{byID: map[string]*smPolicy{}, bySession: map[string]string{}, sessionOf: map[string]string{}}
}

// add stores p under a fresh id and returns it with the id of the
// association it replaced ("" if none).
func (s *smPolicies) add(supi string, pduSessionID int32, p *smPolicy) (id, replaced string) {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	id = hex.EncodeToString(b[:])
	key := supi + "/" + strconv.Itoa(int(pduSessionID))
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.bySession[key]; ok {
		delete(s.byID, old)
		delete(s.sessionOf, old)
		replaced = old
	}
	s.byID[id] = p
	s.bySession[key] = id
	s.sessionOf[id] = key
	return id, replaced
}

// get returns a copy of the association (its pointers and maps are never
// changed in place, only replaced).
func (s *smPolicies) get(id string) (smPolicy, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.byID[id]
	if !ok {
		return smPolicy{}, false
	}
	return *p, true
}

// update applies f to the association under the lock.
func (s *smPolicies) update(id string, f func(*smPolicy)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.byID[id]
	if ok {
		f(p)
	}
	return ok
}

func (s *smPolicies) remove(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[id]; !ok {
		return false
	}
	delete(s.byID, id)
	delete(s.bySession, s.sessionOf[id])
	delete(s.sessionOf, id)
	return true
}

// len is the number of associations (tests, metrics).
func (s *smPolicies) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}
