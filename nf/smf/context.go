package smf

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// state is where an SM context is in its life (TS 23.502 4.3.2.2.1,
// 4.3.3.2, 4.3.4.2).
type state int

const (
	stateEstablishing state = iota // CreateSMContext answered, user plane being set up
	stateActivating                // N1N2 transfer sent, waiting for the gNB's tunnel
	stateActive                    // user plane up
	stateInactive                  // AN released: no downlink tunnel (CM-IDLE)
	stateModifying                 // a modification command is out
	stateReleasing                 // Release Command sent, waiting for the UE's and the gNB's answers
	stateReleased                  // gone; late messages for it are refused
)

func (s state) String() string {
	return [...]string{"establishing", "activating", "active", "inactive", "modifying", "releasing", "released"}[s]
}

// smContext is one PDU session (an SM context, TS 29.502 5.2.2.2). Its
// fields are guarded by mu; procedures hold mu while they change it and
// let it go while they wait on a peer that may call back (the AMF).
type smContext struct {
	mu sync.Mutex

	ref         string // smContextRef
	supi        string
	psi         uint8
	pti         uint8 // of the UE's pending procedure
	dnn         string
	snssai      models.Snssai
	servingNfID string // the AMF
	statusURI   string // smContextStatusUri
	anType      models.AccessType
	ratType     models.RatType
	plmn        *models.PlmnIdNid

	state    state
	ueIP     netip.Addr
	pool     *ipPool
	wantsDNS bool
	ipv4Only bool // the UE asked IPv4v6: the Accept says #50 (TS 24.501 6.4.1.3)

	ambrUp, ambrDown uint64
	flows            []qosFlow // the default flow first
	pending          []qosFlow // flows of a modification not yet confirmed by the gNB
	changing         []qosFlow // flows changed by a modification the gNB has not confirmed: their old values
	// weights is smf.qos: each flow's QER weight by its 5QI (upf_rules.go).
	weights config.SMFQoS

	policyURI      string // the PCF's SM policy association; "" = local policy
	uecmRegistered bool
	upSEID         uint64
	cpSEID         uint64
	ul             ngapx.Tunnel // UPF-C's N3 F-TEID
	dl             ngapx.Tunnel // the gNB's N3 tunnel

	releaseN1Done bool        // the UE's PDU Session Release Complete seen
	releaseN2Done bool        // the gNB's PDU Session Resource Release Response seen (or no N2 resources)
	releaseGuard  *time.Timer // T3592 of a Release Command

	// everActive: the user plane was up once, so a gNB's refusal is of a
	// reactivation (the session stays), not of the establishment.
	everActive bool
	// paging: a Downlink Data Report started a network-triggered service
	// request that has not ended yet (pdu_paging.go, TS 23.502 4.2.3.3).
	paging    bool
	pagingGen uint64 // counts the attempts, so a timer ends only its own
	// ho is the N2 handover in preparation, fwd its indirect forwarding
	// (pdu_handover.go).
	ho  *handover
	fwd forwarding
}

func (c *smContext) owner() string { return fmt.Sprintf("%s/%d", c.supi, c.psi) }

// flow finds the QoS flow qfi among the established ones.
func (c *smContext) flow(qfi uint8) (qosFlow, bool) {
	for _, f := range c.flows {
		if f.QFI == qfi {
			return f, true
		}
	}
	return qosFlow{}, false
}

// nextQFI is the lowest QFI no flow of the session uses, nor one of
// adding (TS 23.501 5.7.1.1: unique within the session).
func (c *smContext) nextQFI(adding []qosFlow) (uint8, bool) {
	used := map[uint8]bool{}
	for _, list := range [][]qosFlow{c.flows, c.pending, adding} {
		for _, f := range list {
			used[f.QFI] = true
		}
	}
	for q := uint8(1); q <= 63; q++ {
		if !used[q] {
			return q, true
		}
	}
	return 0, false
}

// contexts are the SM contexts by reference and by (SUPI, PDU session ID).
type contexts struct {
	mu    sync.Mutex
	byRef map[string]*smContext
	byKey map[string]*smContext
	// bySEID finds a context from a PFCP Session Report (its CP SEID).
	bySEID map[uint64]*smContext
	seid   uint64
}

func newContexts() *contexts {
	return &contexts{byRef: map[string]*smContext{}, byKey: map[string]*smContext{}, bySEID: map[uint64]*smContext{}}
}

func newRef() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// add stores c under a fresh reference and CP SEID; it returns the
// context it replaced for the same SUPI and PDU session ID, if any.
func (s *contexts) add(c *smContext) (replaced *smContext) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.ref = newRef()
	s.seid++
	c.cpSEID = s.seid
	replaced = s.byKey[c.owner()]
	if replaced != nil {
		delete(s.byRef, replaced.ref)
		delete(s.bySEID, replaced.cpSEID)
	}
	s.byRef[c.ref] = c
	s.bySEID[c.cpSEID] = c
	s.byKey[c.owner()] = c
	return replaced
}

// take removes and returns the context of owner (SUPI and PDU session
// ID), if any.
func (s *contexts) take(owner string) *smContext {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.byKey[owner]
	if c == nil {
		return nil
	}
	delete(s.byRef, c.ref)
	delete(s.bySEID, c.cpSEID)
	delete(s.byKey, owner)
	return c
}

func (s *contexts) get(ref string) (*smContext, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.byRef[ref]
	return c, ok
}

// remove forgets c (and not a newer context of the same session).
func (s *contexts) remove(c *smContext) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byRef[c.ref] == c {
		delete(s.byRef, c.ref)
	}
	if s.byKey[c.owner()] == c {
		delete(s.byKey, c.owner())
	}
	if s.bySEID[c.cpSEID] == c {
		delete(s.bySEID, c.cpSEID)
	}
}

// byCPSEID finds the context whose PFCP session has the SMF's SEID seid.
func (s *contexts) byCPSEID(seid uint64) (*smContext, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.bySEID[seid]
	return c, ok
}

// byOwner finds the context of the UE's PDU session.
func (s *contexts) byOwner(supi string, psi int) (*smContext, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.byKey[fmt.Sprintf("%s/%d", supi, psi)]
	return c, ok
}

// all lists the contexts.
func (s *contexts) all() []*smContext {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*smContext, 0, len(s.byRef))
	for _, c := range s.byRef {
		out = append(out, c)
	}
	return out
}

func (s *contexts) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byRef)
}
