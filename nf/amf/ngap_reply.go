package amf

// The NGAP error policy: the one place that decides what a gNB hears when
// the AMF cannot handle its message (TS 38.413 10), as reply.go does for
// NAS. Handlers only validate and return an *ngapError with the cause;
// ngapReplyFor chooses between the procedure's failure message, Error
// Indication and silence, and answerNGAP sends it. No builder fed with the
// gNB's data can crash the AMF: a builder's error is logged and counted,
// the answer is left unsent, and the association lives on.

import (
	"errors"
	"fmt"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// ngapReply is what the gNB hears about a message the AMF could not handle.
type ngapReply int

const (
	ngapSilence         ngapReply = iota + 1 // nothing
	ngapErrorIndication                      // Error Indication (TS 38.413 8.7.5)
	ngapFailure                              // the procedure's unsuccessful outcome (TS 38.413 8.1, class 1)
)

func (r ngapReply) String() string {
	return map[ngapReply]string{ngapSilence: "silence", ngapErrorIndication: "ErrorIndication", ngapFailure: "failure"}[r]
}

// ngapError is a handler's verdict on a message.
type ngapError struct {
	cause            ngapType.Cause
	amfUEID, ranUEID int64 // the UE NGAP IDs the answer names; -1 for none
	unimplemented    bool  // a procedure the AMF does not run
	criticality      aper.Enumerated
	err              error
}

func (e *ngapError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("NGAP cause %s: %v", ngapx.CauseString(&e.cause), e.err)
	}
	return "NGAP cause " + ngapx.CauseString(&e.cause)
}

func (e *ngapError) Unwrap() error { return e.err }

// ngapFail says the message s cannot be handled, for cause; the answer
// names the UE NGAP IDs the message carried.
func ngapFail(s ngapx.Summary, cause ngapType.Cause, err error) *ngapError {
	return &ngapError{cause: cause, amfUEID: s.AMFUEID, ranUEID: s.RANUEID, err: err}
}

// protocolError is ngapFail with a protocol cause (TS 38.413 9.3.1.2).
func protocolError(s ngapx.Summary, cause aper.Enumerated, err error) *ngapError {
	return ngapFail(s, ngapx.CauseProtocol(cause), err)
}

// notImplemented is the verdict on a procedure the AMF decodes but does
// not run; its procedure code's criticality decides the answer.
func notImplemented(pdu *ngapType.NGAPPDU, s ngapx.Summary) *ngapError {
	crit := ngapx.Criticality(pdu)
	cause := ngapType.CauseProtocolPresentAbstractSyntaxErrorReject
	if crit == ngapType.CriticalityPresentNotify {
		cause = ngapType.CauseProtocolPresentAbstractSyntaxErrorIgnoreAndNotify
	}
	e := protocolError(s, cause, fmt.Errorf("procedure %s not implemented", s.Name))
	e.unimplemented, e.criticality = true, crit
	return e
}

// failureMessages are the unsuccessful outcomes the AMF can send: the
// class 1 procedures a gNB initiates that define one (TS 38.413 8.7.1.3,
// 8.7.2.3).
var failureMessages = map[int64]func(ngapType.Cause) ([]byte, error){
	ngapType.ProcedureCodeNGSetup:                ngapx.BuildNGSetupFailure,
	ngapType.ProcedureCodeRANConfigurationUpdate: ngapx.BuildRANConfigurationUpdateFailure,
}

// ngapReplyFor is the policy of TS 38.413 10:
//   - an Error Indication is never answered, however wrong (8.7.5.2: the
//     receiver only logs; an answer could loop);
//   - a procedure the AMF does not run goes by the criticality of its
//     procedure code (10.3.4.1): ignore -> silence; ignore and notify,
//     reject -> Error Indication;
//   - the initiating message of a class 1 procedure that has a failure
//     message is answered with it (10.3.4.2, e.g. NG Setup Failure);
//   - anything else — class 2 procedures, response messages, messages
//     that do not decode (10.2) or name an unknown UE (10.6) — gets
//     Error Indication.
func ngapReplyFor(s ngapx.Summary, e *ngapError) ngapReply {
	switch {
	case s.Kind == ngapx.Initiating && s.Procedure == ngapType.ProcedureCodeErrorIndication:
		return ngapSilence
	case e.unimplemented && e.criticality == ngapType.CriticalityPresentIgnore:
		return ngapSilence
	case e.unimplemented:
		return ngapErrorIndication
	case s.Kind == ngapx.Initiating && failureMessages[s.Procedure] != nil:
		return ngapFailure
	}
	return ngapErrorIndication
}

// answerNGAP answers message s that a handler failed with err.
func (n *NF) answerNGAP(g *gnb, s ngapx.Summary, err error) {
	var e *ngapError
	if !errors.As(err, &e) {
		// Not a verdict on the message: the AMF's own failure (a builder,
		// a write). Logged and counted; the gNB's message stays unanswered.
		n.log.Error("NGAP message not handled", "gnb", g.id, "message", s.Name, "err", err)
		n.metrics.internalErrors.WithLabelValues("ngap").Inc()
		return
	}
	reply := ngapReplyFor(s, e)
	n.log.Info("NGAP message refused", "gnb", g.id, "message", s.Name, "amfUeNgapId", s.AMFUEID,
		"reply", reply, "err", e)
	switch reply {
	case ngapFailure:
		n.sendNonUE(g, n.built("failure of "+s.Name)(failureMessages[s.Procedure](e.cause)))
	case ngapErrorIndication:
		n.sendErrorIndication(g, e.amfUEID, e.ranUEID, e.cause)
	}
}

// built passes a builder's message on; on an error it logs and counts it
// and gives nil, which the senders skip. Builders are never trusted not to
// fail: some are fed with what a gNB or UE sent.
func (n *NF) built(message string) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		if err != nil {
			n.log.Error("message not built; not sent", "message", message, "err", err)
			n.metrics.internalErrors.WithLabelValues("build").Inc()
			return nil
		}
		return b
	}
}
