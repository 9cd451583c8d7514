package amf

// Uplink NAS: security check, decoding and the event it becomes
// (TS 24.501 4.4.4.3, 4.4.6, 7).

import (
	"errors"

	"github.com/free5gc/nas"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// nasMsg is a decoded uplink 5GMM message.
type nasMsg struct {
	typ      uint8
	m        *nas.Message
	raw      []byte // as received (for a later integrity check by GUTI)
	verified bool   // passed the integrity check of the UE's current context
}

// onUplinkNAS checks, decodes and steps one uplink NAS message.
func (n *NF) onUplinkNAS(ue *ueContext, raw []byte, initial bool) {
	sp := n.trace.Child(ue.amfID, "NAS integrity check and deciphering", tracing.HopCrypto)
	plain, verified, err := n.unprotect(ue, raw, initial)
	sp.End()
	if err != nil {
		n.discard(ue, err)
		return
	}
	m, err := nasx.Decode(plain)
	if err != nil {
		n.log.Info("invalid NAS", "amfUeNgapId", ue.amfID, "err", err)
		n.reply(ue, eventOfType(typeOf(plain)), &gmmError{kind: rejectFor(typeOf(plain)), cause: nasx.CauseOf(err)})
		return
	}
	t := m.GmmHeader.GetMessageType()
	ev, ok := eventOf(t)
	n.trace.Step(ue.amfID, ev.String()) // the span's name: the procedure step
	if !ok {
		// TS 24.501 7.4: a message type the AMF does not implement.
		n.reply(ue, EvStatus, &gmmError{kind: replyStatus, cause: nasx.CauseMessageTypeNonExistent})
		return
	}
	in := &input{msg: &nasMsg{typ: t, m: m, raw: raw, verified: verified}}
	if kind, ok := n.gatedKind(ev, m); ok {
		// An event-initiating message waits for the limiter (limiter_procedure.go).
		if !n.gate(ue, kind, func(ue *ueContext) { n.step(ue, ev, in) }) && initial {
			n.refuseCongested(ue, t)
		}
		return
	}
	n.step(ue, ev, in)
}

var (
	errBadMAC        = errors.New("integrity check failed")
	errNoContext     = errors.New("protected message without a security context")
	errPlainRejected = errors.New("plain message after NAS security was established")
)

// unprotect applies TS 24.501 4.4.4.3: once the UE has a confirmed security
// context, only integrity-checked messages are processed; before that, only
// the messages an unauthenticated UE may send arrive plain (checked by the
// state table). An initial message protected with a context this connection
// does not know yet (5G-GUTI registration) is read and verified later.
func (n *NF) unprotect(ue *ueContext, raw []byte, initial bool) (plain []byte, verified bool, err error) {
	h, err := nasx.PeekHeader(raw)
	if err != nil {
		return raw, false, nil // let Decode name the cause
	}
	if !h.Protected() {
		if ue.sec != nil && ue.sec.confirmed {
			return nil, false, errPlainRejected
		}
		return raw, false, nil
	}
	if ue.sec != nil && ue.sec.active {
		p, err := ue.sec.nas.Unprotect(raw)
		if err != nil {
			return nil, false, errors.Join(errBadMAC, err)
		}
		return p, true, nil
	}
	if initial && h.SecurityHeaderType == nas.SecurityHeaderTypeIntegrityProtected {
		return raw[7:], false, nil
	}
	return nil, false, errNoContext
}

// discard drops an uplink message without answer (TS 24.501 4.4.4.3).
func (n *NF) discard(ue *ueContext, err error) {
	reason := "plain-after-security"
	switch {
	case errors.Is(err, errBadMAC):
		reason = "integrity"
	case errors.Is(err, errNoContext):
		reason = "no-context"
	}
	n.metrics.discarded.WithLabelValues(reason).Inc()
	n.log.Info("uplink NAS discarded", "amfUeNgapId", ue.amfID, "reason", err)
}

func typeOf(plain []byte) uint8 {
	if h, err := nasx.PeekHeader(plain); err == nil {
		return h.MessageType
	}
	return 0
}

func eventOfType(t uint8) Event {
	if ev, ok := eventOf(t); ok {
		return ev
	}
	return EvStatus
}

// eventOf maps a 5GMM message type to its event.
func eventOf(t uint8) (Event, bool) {
	switch t {
	case nas.MsgTypeRegistrationRequest:
		return EvRegistrationRequest, true
	case nas.MsgTypeIdentityResponse:
		return EvIdentityResponse, true
	case nas.MsgTypeAuthenticationResponse:
		return EvAuthenticationResponse, true
	case nas.MsgTypeAuthenticationFailure:
		return EvAuthenticationFailure, true
	case nas.MsgTypeSecurityModeComplete:
		return EvSecurityModeComplete, true
	case nas.MsgTypeSecurityModeReject:
		return EvSecurityModeReject, true
	case nas.MsgTypeRegistrationComplete:
		return EvRegistrationComplete, true
	case nas.MsgTypeDeregistrationRequestUEOriginatingDeregistration:
		return EvDeregistrationRequest, true
	case nas.MsgTypeConfigurationUpdateComplete:
		return EvConfigurationUpdateComplete, true
	case nas.MsgTypeStatus5GMM:
		return EvStatus, true
	case nas.MsgTypeULNASTransport:
		return EvULNASTransport, true
	case nas.MsgTypeServiceRequest:
		return EvServiceRequest, true
	}
	return 0, false
}

// rejectFor says how an invalid message of type t is answered: a broken
// Registration Request gets Registration Reject, anything else 5GMM Status.
func rejectFor(t uint8) replyKind {
	switch t {
	case nas.MsgTypeRegistrationRequest:
		return replyRegistrationReject
	case nas.MsgTypeServiceRequest:
		return replyServiceReject // TS 24.501 5.6.1.5
	}
	return replyStatus
}
