package amf

// The reply policy: the one place that decides what the UE hears when a
// handler fails (STYLE.md habit 1). Handlers only validate and return a
// *gmmError (with its 5GMM cause) or another error.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

type replyKind int

const (
	replyRegistrationReject   replyKind = iota + 1 // TS 24.501 5.5.1.2.5
	replyAuthenticationReject                      // TS 24.501 5.4.1.3.5
	replyStatus                                    // TS 24.501 7, 5GMM Status
	replyDiscard                                   // TS 24.501 4.4.4.3: no answer
	replyAbort                                     // release the UE without NAS answer
	replyBackOff                                   // a passing fault of the core: see backOff
	replyNotForwarded                              // TS 24.501 5.4.5.2.5: the payload back in DL NAS Transport
	replyServiceReject                             // TS 24.501 5.6.1.5 (gmm_service_request.go)
)

// gmmError is a handler's verdict.
type gmmError struct {
	kind  replyKind
	cause uint8
	err   error
	back  *nasx.DLNASTransport // replyNotForwarded: what goes back to the UE
}

func (e *gmmError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("5GMM cause #%d: %v", e.cause, e.err)
	}
	return fmt.Sprintf("5GMM cause #%d", e.cause)
}

func (e *gmmError) Unwrap() error { return e.err }

func rejectRegistration(cause uint8, err error) error {
	return &gmmError{kind: replyRegistrationReject, cause: cause, err: err}
}

func rejectAuthentication(err error) error {
	return &gmmError{kind: replyAuthenticationReject, err: err}
}

func statusError(cause uint8, err error) error {
	return &gmmError{kind: replyStatus, cause: cause, err: err}
}

var errNoConnection = errors.New("UE has no N2 connection")

// reply answers a failed event.
func (n *NF) reply(ue *ueContext, ev Event, err error) {
	var ns errNotInState
	if errors.As(err, &ns) {
		n.replyNotInState(ue, ev, ns)
		return
	}
	var ge *gmmError
	if !errors.As(err, &ge) {
		// Not a verdict: an internal or peer failure. A registration in
		// progress cannot complete (TS 24.501 5.5.1.2.5, #111).
		n.log.Warn("event failed", "amfUeNgapId", ue.amfID, "event", ev, "state", ue.state, "err", err)
		if procedureOf(ue.state) == "" && ev != EvRegistrationRequest {
			return
		}
		ge = &gmmError{kind: replyRegistrationReject, cause: nasx.CauseProtocolErrorUnspecified, err: err}
	}
	n.log.Info("5GMM failure", "amfUeNgapId", ue.amfID, "event", ev, "state", ue.state, "err", ge)
	switch ge.kind {
	case replyRegistrationReject:
		n.sendPlainOrProtected(ue, n.built("RegistrationReject")(nasx.BuildRegistrationReject(ge.cause)))
		n.endProcedure(ue, resultReject)
	case replyAuthenticationReject:
		n.sendPlainOrProtected(ue, n.built("AuthenticationReject")(nasx.BuildAuthenticationReject()))
		n.endProcedure(ue, resultReject)
	case replyStatus:
		n.sendPlainOrProtected(ue, n.built("5GMMStatus")(nasx.BuildStatus(ge.cause)))
	case replyDiscard:
		n.discard(ue, ge)
	case replyAbort:
		n.endProcedure(ue, resultFailure)
	case replyBackOff:
		n.backOff(ue)
	case replyNotForwarded:
		n.sendPlainOrProtected(ue, n.built("DLNASTransport")(nasx.BuildDLNASTransport(*ge.back)))
	case replyServiceReject:
		n.rejectService(ue, ge.cause)
	}
}

// backOff rejects a registration that failed on a passing fault of the core
// (a peer unreachable, timing out or answering 5xx), choosing between the
// two causes TS 24.501 5.5.1.2.5 offers for it:
//   - #22 congestion with T3346 (TS 24.501 5.3.9): the UE waits T3346, then
//     registers again, with nothing deleted and no attempt counted. The UE
//     takes the network's T3346 only from an integrity-protected reject;
//     from an unprotected one it draws 15-30 min (table 10.2.1), far too
//     long for a passing fault. So #22 only when the reject is protected
//     under a context the UE confirmed.
//   - otherwise #111: the UE treats it as an abnormal case (5.5.1.2.7) and
//     retries after T3511 (10 s), after five attempts T3502.
func (n *NF) backOff(ue *ueContext) {
	if ue.sec != nil && ue.sec.confirmed {
		n.sendPlainOrProtected(ue, n.built("RegistrationReject")(nasx.BuildRegistrationRejectWithT3346(nasx.CauseCongestion, congestionBackOff())))
	} else {
		n.sendPlainOrProtected(ue, n.built("RegistrationReject")(nasx.BuildRegistrationReject(nasx.CauseProtocolErrorUnspecified)))
	}
	n.endProcedure(ue, resultReject)
}

// congestionBackOff is the T3346 value of a #22 reject: 20-60 s, drawn at
// random so that the UEs rejected together do not come back together
// (TS 23.501 5.19.7.2).
func congestionBackOff() time.Duration {
	return 20*time.Second + rand.N(40*time.Second)
}

// endProcedure counts the failed registration, ends the UE's context (it
// does not outlive a reject) and releases the UE's N2 connection (TS 24.501
// 5.5.1.2.5: the AMF releases after a reject).
func (n *NF) endProcedure(ue *ueContext, result string) {
	n.finishProcedure(ue, procRegistration, result)
	n.endContext(ue)
	state, _ := n.release(ue, ngapx.CauseNas(ngapType.CauseNasPresentUnspecified))
	ue.state = state
}

// replyNotInState: TS 24.501 7.4 b) — a message not compatible with the
// protocol state gets 5GMM Status #98; other events are dropped.
func (n *NF) replyNotInState(ue *ueContext, ev Event, e errNotInState) {
	switch {
	case isAnswer(ev):
		n.log.Debug("SBI answer no longer awaited", "amfUeNgapId", ue.amfID, "err", e)
	case ev == EvTimerExpiry || ev == EvContextSetupResponse || ev == EvReleaseComplete || ev == EvReset ||
		ev == EvReleaseRequest || ev == EvContextSetupFailure:
		n.log.Debug("event ignored", "amfUeNgapId", ue.amfID, "err", e)
	default:
		n.log.Info("NAS message not compatible with state", "amfUeNgapId", ue.amfID, "err", e)
		n.sendPlainOrProtected(ue, n.built("5GMMStatus")(nasx.BuildStatus(nasx.CauseMessageTypeNotCompatible)))
	}
}

// startProcedure and finishProcedure bracket a UE's registration or
// deregistration, from its initiating message to its end in any way
// (accepted, rejected, aborted, released): the two points where the
// limiter's count of procedures in progress (DESIGN.md "AMF limiter and
// overload") goes up and down. Waiting for a peer's answer is inside the
// bracket, though no dispatcher event runs meanwhile (sbi_call.go).
func (n *NF) startProcedure(ue *ueContext) {
	ue.reg.started = time.Now()
	kind := kindRegistration
	if ue.deregistering {
		kind = kindDeregistration
	}
	n.claimProcedure(ue, mmKey(kind), kind)
}

// finishProcedure records the outcome of a procedure once.
func (n *NF) finishProcedure(ue *ueContext, proc, result string) {
	if proc != "" {
		n.releaseProcedure(ue, mmKey(proc), result)
	}
	if proc == "" || ue.reg.started.IsZero() {
		return
	}
	n.metrics.done(proc, result, ue.reg.started)
	ue.reg.started = time.Time{}
}

// procedureOf names the procedure a state belongs to, for metrics.
func procedureOf(s State) string {
	switch s {
	case StateIdentification, StateAwaitingVector, StateAuthentication, StateAwaitingConfirmation,
		StateSecurityMode, StateAwaitingPeers, StateRegistering:
		return procRegistration
	}
	return ""
}
