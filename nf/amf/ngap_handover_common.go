package amf

// What Xn handover (ngap_path_switch.go, TS 23.502 4.9.1.2) and intra-AMF
// N2 handover (ngap_handover.go, 4.9.1.3) share: the UE's handover state
// beside its 5GMM state, routing of the handover messages, the UE's move
// to its new N2 connection, the release of the leg it left, the next-hop
// key (TS 33.501 A.10), the TNGRELOC timers and the metrics.
//
// The UE keeps its AMF UE NGAP ID across a handover: the target gNB learns
// it in Handover Request / Path Switch Request Acknowledge, and the pair
// with the target's own RAN UE NGAP ID identifies the new connection on
// the target's association (TS 38.413 9.3.3.1, 10.6). So every message of
// the UE, from either gNB, stays on one dispatcher key, and its NAS
// timers, SBI calls and store record are untouched by the move.

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/ratelimit"
	"github.com/l25gc/l25gc/security"
)

// hoKind labels the two handovers in metrics and logs.
type hoKind string

const (
	hoXn hoKind = "xn" // TS 23.502 4.9.1.2: Xn handover, Path Switch Request
	hoN2 hoKind = "n2" // TS 23.502 4.9.1.3: intra-AMF N2 handover
)

// hoPhase is how far a handover got; each message of the procedure is
// accepted in one phase only (hoAccepts).
type hoPhase int

const (
	hoPreparing  hoPhase = iota + 1 // the SMFs were asked (PATH_SWITCH_REQ, or hoState PREPARING)
	hoAllocating                    // Handover Request sent to the target gNB
	hoPrepared                      // the target acknowledged; the SMFs were asked (hoState PREPARED)
	hoExecuting                     // Handover Command sent to the source; Handover Notify awaited
)

func (p hoPhase) String() string {
	return map[hoPhase]string{hoPreparing: "preparing", hoAllocating: "allocating", hoPrepared: "prepared", hoExecuting: "executing"}[p]
}

// leg is one N2 connection of the UE: an association and the RAN UE NGAP
// ID the gNB gave the UE there (-1 while the gNB has not answered).
type leg struct {
	gnbID uint64
	ranID int64
}

// hoSession is one PDU session in a handover and its latest N2 SM
// transfer: from the SMF for the gNB, or the gNB's refusal for the SMF.
type hoSession struct {
	id       uint8
	ok       bool // still in the handover
	transfer []byte
	released []byte // the transfer saying why it left the handover (nil: none)
}

// handover is a running handover of one UE; nil when none.
type handover struct {
	kind    hoKind
	phase   hoPhase
	started time.Time
	source  leg
	target  leg
	// targetTAI is where the UE goes (the Selected TAI of the Target ID,
	// or the TAI of the cell the Path Switch Request names).
	targetTAI domain.TAI
	target5GC models.NgRanTargetId // the Target ID for the SMFs (n2)
	cause     ngapType.Cause       // why the source wants the handover (n2)
	container []byte               // the transparent container from one gNB to the other
	sessions  []*hoSession         // in the order of the gNB's list
	pending   int                  // SMF answers still awaited
	timer     *time.Timer          // TNGRELOCprep or TNGRELOCoverall (n2)
	// targetRefused: the target answered Handover Failure and holds no
	// context for the UE (TS 38.413 8.4.2.3).
	targetRefused bool
	// reportedCaps are the UE security capabilities the target reported (xn).
	reportedCaps ngapx.SecurityCapabilities
}

// mobility is a UE's handover state beside its 5GMM state.
type mobility struct {
	ho *handover
	// releasing are legs the UE left whose UE Context Release Complete is
	// still to come; it ends nothing of the UE's context.
	releasing []leg
}

func (h *handover) session(id int64) *hoSession {
	for _, s := range h.sessions {
		if int64(s.id) == id {
			return s
		}
	}
	return nil
}

// inHandover lists the sessions still in the handover, with their transfers.
func (h *handover) inHandover() []ngapx.SessionTransfer {
	var out []ngapx.SessionTransfer
	for _, s := range h.sessions {
		if s.ok {
			out = append(out, ngapx.SessionTransfer{ID: int64(s.id), Transfer: s.transfer})
		}
	}
	return out
}

// releasedSessions lists the sessions that left the handover with a transfer for the gNB.
func (h *handover) releasedSessions() []ngapx.SessionTransfer {
	var out []ngapx.SessionTransfer
	for _, s := range h.sessions {
		if !s.ok && s.released != nil {
			out = append(out, ngapx.SessionTransfer{ID: int64(s.id), Transfer: s.released})
		}
	}
	return out
}

// errNoHandover: a handover message with no handover in the phase it belongs to.
var errNoHandover = errors.New("no handover in this phase")

// handoverProcedures are the procedure codes of TS 38.413 8.4.
var handoverProcedures = map[int64]bool{
	ngapType.ProcedureCodeHandoverPreparation:        true,
	ngapType.ProcedureCodeHandoverResourceAllocation: true,
	ngapType.ProcedureCodeHandoverNotification:       true,
	ngapType.ProcedureCodePathSwitchRequest:          true,
	ngapType.ProcedureCodeHandoverCancel:             true,
	ngapType.ProcedureCodeUplinkRANStatusTransfer:    true,
}

// onMobility takes the UE-associated messages that belong to a handover:
// the procedures of TS 38.413 8.4, and the UE Context Release Complete of
// a leg the UE left. handled is false for every other message.
func (n *NF) onMobility(g *gnb, ue *ueContext, pdu *ngapType.NGAPPDU, s ngapx.Summary) (handled bool, err error) {
	if ue != nil && n.fromLeftLeg(ue, leg{g.id, s.RANUEID}) && s.Procedure != ngapType.ProcedureCodeUEContextRelease {
		// A message the source sent before it heard of its release
		// (e.g. a late Uplink RAN Status Transfer, TS 38.413 8.4.6): the
		// UE is no longer there, so it is dropped, and no Error
		// Indication adds noise to the release.
		n.log.Debug("message from a connection the UE left dropped", "amfUeNgapId", ue.amfID, "message", s.Name)
		return true, nil
	}
	if handoverProcedures[s.Procedure] {
		return true, n.onHandoverMessage(g, ue, pdu, s)
	}
	if ue != nil && s.Procedure == ngapType.ProcedureCodeUEContextRelease && s.Kind == ngapx.Successful {
		return n.leftLegReleased(ue, leg{g.id, s.RANUEID}), nil
	}
	return false, nil
}

func (n *NF) onHandoverMessage(g *gnb, ue *ueContext, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	if s.Procedure == ngapType.ProcedureCodePathSwitchRequest && s.Kind == ngapx.Initiating {
		return n.onPathSwitchRequest(g, ue, pdu, s)
	}
	if ue == nil {
		// TS 38.413 10.6: the AMF UE NGAP ID is unknown here.
		return ngapFail(s, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownLocalUENGAPID),
			errors.New("handover message for an unknown AMF UE NGAP ID"))
	}
	switch {
	case s.Procedure == ngapType.ProcedureCodeHandoverPreparation && s.Kind == ngapx.Initiating:
		return n.onHandoverRequired(g, ue, pdu, s)
	case s.Procedure == ngapType.ProcedureCodeHandoverResourceAllocation && s.Kind == ngapx.Successful:
		return n.onHandoverRequestAcknowledge(g, ue, pdu, s)
	case s.Procedure == ngapType.ProcedureCodeHandoverResourceAllocation && s.Kind == ngapx.Unsuccessful:
		return n.onHandoverFailure(g, ue, pdu, s)
	case s.Procedure == ngapType.ProcedureCodeHandoverNotification:
		return n.onHandoverNotify(g, ue, pdu, s)
	case s.Procedure == ngapType.ProcedureCodeHandoverCancel && s.Kind == ngapx.Initiating:
		return n.onHandoverCancel(g, ue, pdu, s)
	case s.Procedure == ngapType.ProcedureCodeUplinkRANStatusTransfer:
		return n.onUplinkRANStatusTransfer(g, ue, pdu, s)
	}
	return notImplemented(pdu, s)
}

// fromSource says whether s came over the UE's current connection.
func fromSource(g *gnb, ue *ueContext, s ngapx.Summary) error {
	switch {
	case g.id != ue.gnbID:
		return ngapFail(s, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownLocalUENGAPID),
			errors.New("AMF UE NGAP ID of a UE on another association"))
	case s.RANUEID != ue.ranID:
		return ngapFail(s, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentInconsistentRemoteUENGAPID),
			fmt.Errorf("RAN UE NGAP ID %d, the UE has %d", s.RANUEID, ue.ranID))
	}
	return nil
}

// fromTarget says whether s came from the target of the UE's handover in
// phase; before the target answered, any RAN UE NGAP ID it gives is taken.
func fromTarget(g *gnb, ue *ueContext, s ngapx.Summary, phases ...hoPhase) error {
	h := ue.mob.ho
	switch {
	case h == nil || h.kind != hoN2 || !hasPhase(h.phase, phases):
		return protocolError(s, ngapType.CauseProtocolPresentMessageNotCompatibleWithReceiverState,
			fmt.Errorf("%s with no handover waiting for it", s.Name))
	case g.id != h.target.gnbID:
		return ngapFail(s, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownLocalUENGAPID),
			errors.New("not from the handover's target gNB"))
	case h.target.ranID >= 0 && s.RANUEID >= 0 && s.RANUEID != h.target.ranID:
		return ngapFail(s, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentInconsistentRemoteUENGAPID),
			fmt.Errorf("RAN UE NGAP ID %d, the target gave %d", s.RANUEID, h.target.ranID))
	}
	return nil
}

func hasPhase(p hoPhase, phases []hoPhase) bool {
	for _, q := range phases {
		if p == q {
			return true
		}
	}
	return false
}

// moveTo makes to the UE's N2 connection (TS 23.502 4.9.1.2.2 step 5,
// 4.9.1.3.3 step 2): downlink NGAP and NAS go there from now on, and the
// leg left is released with cause "successful handover" (TS 38.413
// 9.3.1.2) without touching the UE's sessions or 5GMM context.
func (n *NF) moveTo(ue *ueContext, to leg, tai domain.TAI) {
	from := leg{ue.gnbID, ue.ranID}
	n.ues.moveConnection(ue, to)
	ue.tai = tai
	if g := n.gnb(from.gnbID); g != nil && from != to {
		n.sendReleaseCommand(g, ue.amfID, from.ranID, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentSuccessfulHandover))
		n.rememberReleasing(ue, from)
	}
}

// releaseLeg commands a gNB to drop the UE's connection there (a target
// whose preparation was cancelled or failed); ranID < 0 names the UE by
// the AMF UE NGAP ID alone (TS 38.413 9.2.3.x UE NGAP IDs).
func (n *NF) releaseLeg(ue *ueContext, l leg, cause ngapType.Cause) {
	g := n.gnb(l.gnbID)
	if g == nil {
		return
	}
	n.sendReleaseCommand(g, ue.amfID, l.ranID, cause)
	n.rememberReleasing(ue, l)
}

// maxReleasing bounds the legs a UE remembers: a gNB that never completes
// a release costs one entry, not a growing list.
const maxReleasing = 4

func (n *NF) rememberReleasing(ue *ueContext, l leg) {
	if len(ue.mob.releasing) == maxReleasing {
		ue.mob.releasing = ue.mob.releasing[1:]
	}
	ue.mob.releasing = append(ue.mob.releasing, l)
}

// fromLeftLeg says whether from is a connection the UE left and is being released.
func (n *NF) fromLeftLeg(ue *ueContext, from leg) bool {
	if from == (leg{ue.gnbID, ue.ranID}) {
		return false
	}
	for _, l := range ue.mob.releasing {
		if l.gnbID == from.gnbID && l.ranID == from.ranID {
			return true
		}
	}
	return false
}

// leftLegReleased consumes the UE Context Release Complete of a leg the UE
// left; it says whether the message was one.
func (n *NF) leftLegReleased(ue *ueContext, from leg) bool {
	if from == (leg{ue.gnbID, ue.ranID}) {
		return false // the current connection's own release
	}
	for i, l := range ue.mob.releasing {
		if l.gnbID == from.gnbID && (l.ranID == from.ranID || l.ranID < 0) {
			ue.mob.releasing = append(ue.mob.releasing[:i], ue.mob.releasing[i+1:]...)
			return true
		}
	}
	return false
}

// moveConnection changes the UE's association and RAN UE NGAP ID under the
// table's lock (findRAN and ofGNB read them from other keys).
func (t *ueTable) moveConnection(ue *ueContext, to leg) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.byID[ue.amfID]; ok && to.gnbID != ue.gnbID {
		if t.perGNB[ue.gnbID]--; t.perGNB[ue.gnbID] <= 0 {
			delete(t.perGNB, ue.gnbID)
		}
		t.perGNB[to.gnbID]++
	}
	ue.gnbID, ue.ranID = to.gnbID, to.ranID
}

// sendOnLeg writes UE-associated signalling to a leg other than the UE's current one.
func (n *NF) sendOnLeg(ue *ueContext, l leg, b []byte) error {
	g := n.gnb(l.gnbID)
	if g == nil {
		return errNoConnection
	}
	return g.conn.WriteMsg(b, g.stream(ue.amfID))
}

// nextHop derives the next {NH, NCC} pair (TS 33.501 A.10, 6.9.2.3.2 for
// Xn, 6.9.2.3.3 for N2): NH = KDF(KAMF, 0x6F, SYNC-input), where the
// SYNC-input is the previous NH, or the KgNB of the last Initial Context
// Setup for the first one; NCC counts modulo 8.
func (n *NF) nextHop(ue *ueContext) (ngapx.SecurityContext, error) {
	s := ue.sec
	if s == nil || len(s.kamf) != security.KAMFLen {
		return ngapx.SecurityContext{}, errNoSecurity
	}
	if s.nhSync == nil {
		// No KgNB recorded (a context restored from the store): the chain
		// restarts from the KgNB of the current uplink COUNT.
		kgnb, err := n.opts.Crypto.KgNB(s.kamf, s.nas.ULCount())
		if err != nil {
			return ngapx.SecurityContext{}, err
		}
		s.nhSync, s.ncc = kgnb, 0
	}
	nh, err := security.KDF(s.kamf, fcNH, s.nhSync)
	if err != nil {
		return ngapx.SecurityContext{}, err
	}
	s.nhSync, s.ncc = nh, (s.ncc+1)%8
	return ngapx.SecurityContext{NCC: s.ncc, NH: nh}, nil
}

// fcNH is the FC of the NH derivation (TS 33.501 A.10).
const fcNH = 0x6F

// startNH anchors the NH chain on the KgNB just given to a gNB (TS 33.501
// 6.9.2.1.1: the initial NH derives from it, with NCC 0).
func (s *secContext) startNH(kgnb []byte) {
	if s != nil {
		s.nhSync, s.ncc = kgnb, 0
	}
}

// securityCaps are the UE's security capabilities as NGAP carries them
// (TS 38.413 9.3.1.86), from the last Security Mode Command's replay.
func securityCaps(ue *ueContext) ngapx.SecurityCapabilities {
	c := ue.capability
	if !c.Valid() {
		c = ue.reg.secCap
	}
	enc, integ := c.NRBits()
	eenc, einteg := c.EUTRABits()
	return ngapx.SecurityCapabilities{NREncryption: enc, NRIntegrity: integ, EUTRAEncryption: eenc, EUTRAIntegrity: einteg}
}

// armHandoverTimer (re)starts the handover's timer; its expiry comes back
// on the UE's key and finds the handover only if it is still this one.
func (n *NF) armHandoverTimer(ue *ueContext, d time.Duration, expired func(*ueContext)) {
	h := ue.mob.ho
	n.stopHandoverTimer(h)
	id := ue.amfID
	h.timer = time.AfterFunc(d, func() {
		_ = n.disp.Dispatch(ratelimit.UE(id), func() {
			if u := n.ues.get(id); u != nil && u.mob.ho == h {
				expired(u)
			}
		})
	})
}

func (n *NF) stopHandoverTimer(h *handover) {
	if h != nil && h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
}

// endHandover closes the UE's handover, counting its outcome.
func (n *NF) endHandover(ue *ueContext, reason string) {
	h := ue.mob.ho
	if h == nil {
		return
	}
	n.stopHandoverTimer(h)
	ue.mob.ho = nil
	if reason == "" {
		n.metrics.handovers.WithLabelValues(string(h.kind), "succeeded", "").Inc()
		n.metrics.done("handover_"+string(h.kind), resultSuccess, h.started)
		n.log.Info("handover completed", "kind", h.kind, "amfUeNgapId", ue.amfID, "gnb", ue.gnbID, "ranUeNgapId", ue.ranID)
		return
	}
	n.metrics.handovers.WithLabelValues(string(h.kind), "failed", reason).Inc()
	n.metrics.done("handover_"+string(h.kind), resultFailure, h.started)
	n.log.Info("handover failed; the UE stays with the source", "kind", h.kind, "amfUeNgapId", ue.amfID, "reason", reason, "phase", h.phase)
}

// beginHandover opens one, counting the attempt.
func (n *NF) beginHandover(ue *ueContext, h *handover) {
	h.started = time.Now()
	ue.mob.ho = h
	n.metrics.handovers.WithLabelValues(string(h.kind), "attempted", "").Inc()
}

// newHandoverCounter counts handovers by kind (xn, n2), outcome
// (attempted, succeeded, failed) and, for failures, reason.
func newHandoverCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_amf_handovers_total",
		Help: "Handovers by kind (xn, n2), outcome (attempted, succeeded, failed) and failure reason."},
		[]string{"kind", "outcome", "reason"})
}

// locationAt is the user location the SMFs hear during a handover.
func locationAt(tai domain.TAI) *models.UserLocation {
	return &models.UserLocation{NrLocation: &models.NrLocation{Tai: ptr(tai.ToModel())}}
}

// unsuccessfulTransfer is the AMF's own Path Switch Request Unsuccessful
// Transfer (TS 38.413 9.3.4.10) for a session no SMF answered for; it has
// the shape of the Setup Failed Transfer the SMF's codec builds.
func unsuccessfulTransfer(cause ngapType.Cause) []byte {
	b, err := ngapx.BuildPathSwitchRequestSetupFailedTransfer(cause)
	if err != nil {
		return nil
	}
	return b
}

// causeTemporaryRejectHandover is TS 29.518 table 6.1.3.5.3.1-3's 409 cause.
const causeTemporaryRejectHandover = "TEMPORARY_REJECT_HANDOVER_ONGOING"

// handoverHolds: N2 SM information for a UE in a handover is rejected for
// now (TS 23.502 4.9.1.3.2 and 4.9.1.2.1, TS 29.518 5.2.2.3.1: 409
// TEMPORARY_REJECT_HANDOVER_ONGOING); the SMF sends it again once the
// handover is over. A 5GSM message alone still goes to the UE.
func handoverHolds(ue *ueContext, t transfer) (transferVerdict, bool) {
	if ue.mob.ho == nil || t.n2 == nil {
		return transferVerdict{}, false
	}
	return transferVerdict{http.StatusConflict, causeTemporaryRejectHandover, string(ue.mob.ho.kind) + " handover in progress"}, true
}

// abandonHandover: the UE lost its connection to the source (released,
// reset, association gone) while a handover ran. The preparation is
// undone (the SMFs cancel, a target holding a context releases it) so the
// parked context carries no handover into CM-IDLE.
func (n *NF) abandonHandover(ue *ueContext) {
	// The legs it left answer to nobody now (a late Complete finds no
	// connected UE and is dropped quietly, ngap_handler.go).
	ue.mob.releasing = nil
	h := ue.mob.ho
	if h == nil {
		return
	}
	if h.kind == hoN2 {
		n.undoPreparation(ue, h, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified))
	}
	n.endHandover(ue, "source-lost")
}
