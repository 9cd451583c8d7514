package amf

// Handover Required (TS 23.502 4.9.1.3) and Path Switch Request (4.9.1.2)
// in the limiter's count (DESIGN.md "AMF limiter and overload"): each is
// gated on the UE's key, counted from the start of the handover
// (beginHandover) to endHandover, its single exit for every outcome
// (Handover Notify, Path Switch Request Acknowledge or Failure, Handover
// Cancel, the target's Handover Failure, TNGRELOCprep or TNGRELOCoverall
// expiry, the source connection lost). Every other handover message is a
// follow-up and never waits at the gate.

import (
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/ratelimit"
)

// handoverKind is the limiter's kind of a handover.
func handoverKind(k hoKind) string {
	if k == hoXn {
		return kindPathSwitch
	}
	return kindHandover
}

// handoverResult is the limiter's result for endHandover's reason.
func handoverResult(reason string) string {
	switch reason {
	case "":
		return ratelimit.ResultSuccess
	case "prep-timeout", "overall-timeout":
		return ratelimit.ResultTimeout
	case "source-lost":
		return ratelimit.ResultGone
	}
	return ratelimit.ResultFailure
}

// gateMobility runs Handover Required or Path Switch Request through the
// gate (limiter_procedure.go); its NGAP error is answered when it runs.
// A Path Switch Request naming no UE starts nothing and is answered at
// once. With the limiter's queue full the gNB hears the procedure's
// failure with cause control processing overload (TS 38.413 9.3.1.2), so
// it keeps the UE where it is instead of waiting for its own timer.
func (n *NF) gateMobility(g *gnb, ue *ueContext, pdu *ngapType.NGAPPDU, s ngapx.Summary, kind string,
	handle func(*ueContext) error) error {
	if ue == nil {
		return handle(nil)
	}
	if n.gate(ue, kind, func(ue *ueContext) { n.answerIfFailed(g, s, handle(ue)) }) {
		return nil
	}
	overload := ngapx.CauseMisc(ngapType.CauseMiscPresentControlProcessingOverload)
	if kind == kindHandover {
		n.countRefusedHandover("overload")
		n.sendPreparationFailure(ue, overload)
		return nil
	}
	req, err := ngapx.ParsePathSwitchRequest(pdu)
	if err != nil && len(req.ToSwitch) == 0 {
		return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, err)
	}
	n.metrics.handovers.WithLabelValues(string(hoXn), "attempted", "").Inc()
	n.metrics.handovers.WithLabelValues(string(hoXn), "failed", "overload").Inc()
	n.sendPathSwitchFailure(g, req.SourceAMFUEID, req.RANUEID, sessionsOf(req.ToSwitch, overload))
	return nil
}
