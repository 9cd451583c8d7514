package udm

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"

	"github.com/free5gc/openapi/models"
)

// ueState is what the UDM remembers per UE between requests. Each map is
// bounded by the number of subscribers (one entry per UE, or per UE and
// subscribing NF), never by the number of requests.
type ueState struct {
	sqn sqnLocks

	mu      sync.Mutex
	amf     map[string]models.Amf3GppAccessRegistration // supi → serving AMF (3GPP access)
	events  map[string]*models.AuthEvent                // supi → last authentication result (nil: vector issued, none reported yet)
	subs    map[string]sdmSubscription                  // subscriptionId → subscription
	subKeys map[string]string                           // subscriptionKey → subscriptionId
}

type sdmSubscription struct {
	supi, key string
	sub       models.SdmSubscription
}

func newUEState() *ueState {
	return &ueState{sqn: sqnLocks{m: map[string]*sqnLock{}},
		amf: map[string]models.Amf3GppAccessRegistration{}, events: map[string]*models.AuthEvent{},
		subs: map[string]sdmSubscription{}, subKeys: map[string]string{}}
}

// sqnLocks serialises SQN_HE read-increment-write per SUPI (TS 33.102 C.3:
// each vector needs a fresh SQN), so concurrent requests for one UE never
// lose an increment, while different UEs proceed in parallel.
type sqnLocks struct {
	mu sync.Mutex
	m  map[string]*sqnLock
}

type sqnLock struct {
	sync.Mutex
	waiters int
}

// lock takes the SUPI's lock and returns its release. An entry lives only
// while someone holds or waits for it.
func (l *sqnLocks) lock(supi string) (unlock func()) {
	l.mu.Lock()
	e := l.m[supi]
	if e == nil {
		e = &sqnLock{}
		l.m[supi] = e
	}
	e.waiters++
	l.mu.Unlock()
	e.Lock()
	return func() {
		e.Unlock()
		l.mu.Lock()
		if e.waiters--; e.waiters == 0 {
			delete(l.m, supi)
		}
		l.mu.Unlock()
	}
}

// putAMF stores the serving AMF and says whether it replaced one.
func (s *ueState) putAMF(supi string, reg models.Amf3GppAccessRegistration) (replaced bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, replaced = s.amf[supi]
	s.amf[supi] = reg
	return replaced
}

func (s *ueState) getAMF(supi string) (models.Amf3GppAccessRegistration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.amf[supi]
	return r, ok
}

// markAuthenticating records that a vector was issued for supi, so its
// result may be reported (auth-events for other SUPIs are refused and
// cannot grow the map).
func (s *ueState) markAuthenticating(supi string) {
	s.mu.Lock()
	if _, ok := s.events[supi]; !ok {
		s.events[supi] = nil
	}
	s.mu.Unlock()
}

// putEvent stores the UE's latest authentication result; false when no
// vector was issued for the SUPI.
func (s *ueState) putEvent(supi string, ev models.AuthEvent) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.events[supi]; !ok {
		return false
	}
	s.events[supi] = &ev
	return true
}

// lastEvent is the UE's latest reported authentication result.
func (s *ueState) lastEvent(supi string) (models.AuthEvent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := s.events[supi]
	if ev == nil {
		return models.AuthEvent{}, false
	}
	return *ev, true
}

// subscribe stores an SDM subscription and returns its id. The same NF
// subscribing again to the same resources of the same UE (an AMF does at
// every registration) gets its earlier subscription back, updated.
func (s *ueState) subscribe(supi string, sub models.SdmSubscription) string {
	key := subscriptionKey(supi, sub)
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.subKeys[key]
	if !ok {
		id = newID()
		s.subKeys[key] = id
	}
	sub.SubscriptionId = id
	s.subs[id] = sdmSubscription{supi: supi, key: key, sub: sub}
	return id
}

func subscriptionKey(supi string, sub models.SdmSubscription) string {
	return strings.Join(append([]string{supi, sub.NfInstanceId, sub.CallbackReference}, sub.MonitoredResourceUris...), "\x00")
}

// unsubscribe removes the UE's subscription id; false when there is none.
func (s *ueState) unsubscribe(supi, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.subs[id]
	if !ok || old.supi != supi {
		return false
	}
	delete(s.subs, id)
	delete(s.subKeys, old.key)
	return true
}

// newID is a random resource id (128 bits, hex).
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
