package amf

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// gnb is one NG association (TS 38.413 8.7.1). Its fields other than conn
// change only in the association's own (gNB-keyed) events.
type gnb struct {
	id    uint64
	conn  Conn
	name  string
	ready atomic.Bool // NG Setup succeeded
	// tais are the TAs the gNB serves in our PLMN (NG Setup, RAN
	// Configuration Update): where it pages (ngap_paging.go).
	tais atomic.Pointer[[]domain.TAI]
	// global is the Global gNB ID of its NG Setup Request, read by the
	// handovers that name it as their target (ngap_handover.go).
	global atomic.Pointer[ngapx.GlobalGNBID]
}

// stream picks the SCTP stream of a UE's signalling: stream 0 is for non-UE
// signalling, UE-associated signalling spreads over the others (TS 38.412 7).
func (g *gnb) stream(amfUEID int64) uint16 {
	n := g.conn.Streams()
	if n <= 1 {
		return 0
	}
	return uint16(1 + amfUEID%int64(n-1))
}

// registration is what the UE asked for in its Registration Request
// (TS 24.501 8.2.6), kept while the procedure runs.
type registration struct {
	regType   uint8 // TS 24.501 9.11.3.7
	ngKSI     uint8
	identity  nasx.Identity
	secCap    nasx.SecurityCapability
	requested []models.Snssai
	verified  bool // the request passed the integrity check of a valid context
	followOn  bool // follow-on request pending (FOR, TS 24.501 9.11.3.7)
	// container is the ciphered NAS message container of a request sent
	// under a security context (TS 24.501 4.4.6); nil when absent.
	container []byte
	started   time.Time
	// prefetch holds the subscription reads started once the UE was
	// authenticated (registration_prefetch.go); nil: none.
	prefetch *subscriptionPrefetch
}

// ueContext is one UE: its N2 connection (AMF/RAN UE NGAP IDs) and its 5GMM
// context. It is touched only by events of its own key.
type ueContext struct {
	amfID int64
	ranID int64
	gnbID uint64
	state State
	tai   domain.TAI

	suci, supi, pei string
	guti            *nasx.GUTI
	reg             registration
	auth            authState
	sec             *secContext
	capability      nasx.SecurityCapability // as replayed in the last Security Mode Command
	allowed         []models.Snssai
	ambrUL, ambrDL  int64
	policyID        string
	udmRegistered   bool
	deregistering   bool   // UE-initiated deregistration: counted when released
	registered      bool   // completed a registration; counted in registered_ues; parked on release
	contextSetup    bool   // Initial Context Setup sent on this N2 connection
	radioCapability []byte // UE Radio Capability from the gNB (TS 38.413 8.14.1)
	timer           *nasTimer
	guard           *guardTimer // bounds the context's life before authentication and while releasing (timers.go)
	call            pendingCall // the SBI answer the UE waits for (sbi_call.go)
	pdu             pduState    // PDU session routing contexts (pdu_session.go)
	lim             procedures  // its procedures in progress, as the limiter counts them (limiter_procedure.go)
	stored          storedAs    // its record in the UE store (persist_ue.go)

	// Idle mode (mobile_reachable.go, paging.go, gmm_service_request.go).
	idle     idleState                 // parked in CM-IDLE: reachability timers and paging
	service  *serviceRequest           // a Service Request being served
	paged    map[uint8]pendingTransfer // transfers paging kept, to deliver on this connection
	activeUP *nasx.PSISet              // the sessions the gNB's release request listed (nil: not listed)
	mob      mobility                  // its handover, if one runs (ngap_handover_common.go)
}

type authState struct {
	av       AuthVector
	resynced bool // one resynchronisation per procedure (TS 33.501 6.1.3.3)
	renewed  bool // one new authentication per procedure after the AUSF lost its context
	ngKSI    uint8
}

// input is the typed payload of one event.
type input struct {
	msg      *nasMsg    // the decoded uplink NAS message
	answer   *sbiAnswer // a peer's answer (EvAuthVector, ...; sbi_call.go)
	timer    timerKind
	timerGen uint64
	cause    *ngapType.Cause
	done     func() // runs after the event, even when the UE is gone
}

// ueTable holds the UEs with an N2 connection by AMF UE NGAP ID, and the
// registered UEs without one (CM-IDLE) by 5G-TMSI, so a later Registration
// Request with the 5G-GUTI finds its security context.
//
// perGNB counts the UEs of byID by gNB, so that the caps of admit cost
// nothing per InitialUEMessage; a gNB without UEs has no entry.
type ueTable struct {
	mu   sync.Mutex
	byID map[int64]*ueContext
	idle map[uint32]*ueContext
	// bySUPI indexes byID by SUPI (ue_supi_index.go): usually one id, two
	// while an old connection of the UE is being released.
	bySUPI map[string][]int64
	// idleBySUPI indexes idle by SUPI (ue_idle_index.go).
	idleBySUPI map[string][]uint32
	perGNB     map[uint64]int
	nextID     atomic.Int64
	tmsi       atomic.Uint32
	tmsiReservation
	// deregistered are the 5G-TMSIs of UEs deregistered implicitly, so that
	// their Service Request gets #10 (mobile_reachable.go).
	deregistered recentTMSIs
	// leaving are the registered UEs whose AN release is in progress
	// (an_release_window.go).
	leaving leavingUEs
}

func newUETable() *ueTable {
	return &ueTable{byID: map[int64]*ueContext{}, idle: map[uint32]*ueContext{}, perGNB: map[uint64]int{},
		bySUPI: map[string][]int64{}, idleBySUPI: map[string][]uint32{}}
}

// allocID gives a fresh AMF UE NGAP ID (TS 38.413 9.3.3.1: 0..2^40-1).
func (t *ueTable) allocID() int64 { return t.nextID.Add(1) & (1<<40 - 1) }

// allocTMSI gives a fresh 5G-TMSI (TS 23.003 2.10.1), never 0 and never
// one of a parked (or restored) context, reserved in the UE store before
// use (persist.go) so a restarted AMF does not hand it out again.
func (t *ueTable) allocTMSI() uint32 {
	for {
		v := t.tmsi.Add(1)
		if v == 0 || t.parked(v) {
			continue
		}
		t.reserveUpTo(v)
		return v
	}
}

func (t *ueTable) parked(tmsi uint32) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.idle[tmsi]
	return ok
}

func (t *ueTable) get(id int64) *ueContext {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

// refusal says why admit turned a new UE context away.
type refusal string

const (
	admitted      refusal = ""
	refusedGNBCap refusal = "gnb-cap"   // amf.ngap.max_ues_per_gnb
	refusedAMFCap refusal = "total-cap" // amf.ngap.max_ues
)

// admit adds a new UE context with an N2 connection unless its gNB already
// has perGNB of them or the AMF total of them; existing UEs are untouched.
func (t *ueTable) admit(ue *ueContext, perGNB, total int) refusal {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.perGNB[ue.gnbID] >= perGNB:
		return refusedGNBCap
	case len(t.byID) >= total:
		return refusedAMFCap
	}
	t.addLocked(ue)
	return admitted
}

func (t *ueTable) put(ue *ueContext) {
	t.mu.Lock()
	t.addLocked(ue)
	t.mu.Unlock()
}

func (t *ueTable) addLocked(ue *ueContext) {
	if old, dup := t.byID[ue.amfID]; !dup {
		t.perGNB[ue.gnbID]++
	} else {
		t.unindexSUPI(old.supi, ue.amfID)
	}
	t.byID[ue.amfID] = ue
	t.indexSUPI(ue.supi, ue.amfID)
}

func (t *ueTable) remove(id int64) {
	t.mu.Lock()
	t.removeLocked(id)
	t.mu.Unlock()
}

func (t *ueTable) removeLocked(id int64) {
	ue, ok := t.byID[id]
	if !ok {
		return
	}
	delete(t.byID, id)
	t.unindexSUPI(ue.supi, id)
	if t.perGNB[ue.gnbID]--; t.perGNB[ue.gnbID] <= 0 {
		delete(t.perGNB, ue.gnbID)
	}
}

// connected counts the UE contexts with an N2 connection: all of them, and
// those of gNB g.
func (t *ueTable) connected(g uint64) (all, ofGNB int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID), t.perGNB[g]
}

// park keeps a registered UE without N2 connection, keyed by its 5G-TMSI.
func (t *ueTable) park(ue *ueContext) {
	t.mu.Lock()
	t.removeLocked(ue.amfID)
	if ue.guti != nil {
		t.parkLocked(ue.guti.TMSI, ue)
	}
	t.mu.Unlock()
}

// takeIdleIf hands the parked context of tmsi to the caller (now its only
// owner) if accept, run while the table still owns it, agrees; otherwise the
// context stays parked. found says whether tmsi had a parked context.
func (t *ueTable) takeIdleIf(tmsi uint32, accept func(*ueContext) bool) (ue *ueContext, found bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ue, found = t.idle[tmsi]
	if !found || !accept(ue) {
		return nil, found
	}
	t.unparkLocked(tmsi)
	return ue, true
}

// takeIdleSUPI hands the parked contexts of supi to the caller (a UE
// registering afresh replaces them; the caller ends them).
func (t *ueTable) takeIdleSUPI(supi string) []*ueContext {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*ueContext
	for _, tmsi := range slices.Clone(t.idleBySUPI[supi]) {
		if ue := t.idle[tmsi]; ue != nil && ue.supi == supi {
			t.unparkLocked(tmsi)
			out = append(out, ue)
		}
	}
	return out
}

// ofGNB lists the AMF UE NGAP IDs of UEs connected through gNB g.
func (t *ueTable) ofGNB(g uint64) []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []int64
	for id, ue := range t.byID {
		if ue.gnbID == g {
			ids = append(ids, id)
		}
	}
	return ids
}

// findSUPI finds the AMF UE NGAP ID of the UE with an N2 connection that
// has supi. While an old connection of the UE is still being released, a
// new registration of it has a second one: the newest (the highest ID,
// allocID counts up) is the one the UE uses, and the one its SMFs mean.
func (t *ueTable) findSUPI(supi string) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	found := int64(-1)
	for _, id := range t.bySUPI[supi] {
		if id > found {
			found = id
		}
	}
	return found, found >= 0
}

// superseded says whether a newer context (connected or parked) than ue
// has ue's SUPI: the UE registered afresh on another N2 connection while
// ue's was still being released.
func (t *ueTable) superseded(ue *ueContext) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	newer := func(o *ueContext) bool { return o != ue && o.supi == ue.supi && o.amfID > ue.amfID }
	for _, id := range t.bySUPI[ue.supi] {
		if o := t.byID[id]; o != nil && newer(o) {
			return true
		}
	}
	return slices.ContainsFunc(t.idleOfSUPI(ue.supi), newer)
}

// editIdleSUPI changes the parked contexts of supi in place, under the
// table's lock (edit must not block); it says whether there were any.
func (t *ueTable) editIdleSUPI(supi string, edit func(*ueContext)) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	parked := t.idleOfSUPI(supi)
	for _, ue := range parked {
		edit(ue)
	}
	return len(parked) > 0
}

// known says whether the AMF has a context for supi, connected or parked.
func (t *ueTable) known(supi string) bool {
	if _, ok := t.findSUPI(supi); ok {
		return true
	}
	return t.editIdleSUPI(supi, func(*ueContext) {})
}

// findRAN finds the UE of a gNB by RAN UE NGAP ID.
func (t *ueTable) findRAN(g uint64, ranID int64) *ueContext {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ue := range t.byID {
		if ue.gnbID == g && ue.ranID == ranID {
			return ue
		}
	}
	return nil
}
