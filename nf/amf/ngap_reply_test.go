package amf

import (
	"errors"
	"testing"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// TS 38.413 10: which answer each kind of refused message gets.
func TestNGAPReplyPolicy(t *testing.T) {
	initiating := func(proc int64) ngapx.Summary {
		return ngapx.Summary{Kind: ngapx.Initiating, Procedure: proc, AMFUEID: -1, RANUEID: -1}
	}
	fail := func(s ngapx.Summary) *ngapError {
		return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, errors.New("bad"))
	}
	unimplemented := func(s ngapx.Summary, crit aper.Enumerated) *ngapError {
		e := fail(s)
		e.unimplemented, e.criticality = true, crit
		return e
	}
	response := ngapx.Summary{Kind: ngapx.Successful, Procedure: ngapType.ProcedureCodeInitialContextSetup, AMFUEID: 7, RANUEID: 1}
	undecodable := ngapx.Summary{AMFUEID: -1, RANUEID: -1}
	transfer := initiating(ngapType.ProcedureCodeUplinkRANConfigurationTransfer)
	cases := []struct {
		name string
		s    ngapx.Summary
		e    *ngapError
		want ngapReply
	}{
		{"NG Setup, no TA of ours", initiating(ngapType.ProcedureCodeNGSetup),
			ngapFail(initiating(ngapType.ProcedureCodeNGSetup), ngapx.CauseMisc(ngapType.CauseMiscPresentUnknownPLMN), nil), ngapFailure},
		{"NG Setup, missing IE", initiating(ngapType.ProcedureCodeNGSetup), fail(initiating(ngapType.ProcedureCodeNGSetup)), ngapFailure},
		{"RAN Configuration Update, missing IE", initiating(ngapType.ProcedureCodeRANConfigurationUpdate),
			fail(initiating(ngapType.ProcedureCodeRANConfigurationUpdate)), ngapFailure},
		{"NG Reset: class 1 without a failure message", initiating(ngapType.ProcedureCodeNGReset),
			fail(initiating(ngapType.ProcedureCodeNGReset)), ngapErrorIndication},
		{"Uplink NAS Transport: class 2", initiating(ngapType.ProcedureCodeUplinkNASTransport),
			fail(initiating(ngapType.ProcedureCodeUplinkNASTransport)), ngapErrorIndication},
		{"a response for an unknown UE", response, ngapFail(response,
			ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownLocalUENGAPID), nil), ngapErrorIndication},
		{"undecodable", undecodable, protocolError(undecodable, ngapType.CauseProtocolPresentTransferSyntaxError, nil), ngapErrorIndication},
		{"not implemented, criticality reject", transfer, unimplemented(transfer, ngapType.CriticalityPresentReject), ngapErrorIndication},
		{"not implemented, criticality notify", transfer, unimplemented(transfer, ngapType.CriticalityPresentNotify), ngapErrorIndication},
		{"not implemented, criticality ignore", transfer, unimplemented(transfer, ngapType.CriticalityPresentIgnore), ngapSilence},
		{"an Error Indication is never answered", initiating(ngapType.ProcedureCodeErrorIndication),
			fail(initiating(ngapType.ProcedureCodeErrorIndication)), ngapSilence},
	}
	for _, c := range cases {
		if got := ngapReplyFor(c.s, c.e); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// emptyInitiating is an initiating message of proc with no IEs at all, at
// the given criticality.
func emptyInitiating(t *testing.T, proc int64, crit aper.Enumerated, present int, set func(*ngapType.InitiatingMessageValue)) []byte {
	t.Helper()
	pdu := &ngapType.NGAPPDU{Present: ngapType.NGAPPDUPresentInitiatingMessage, InitiatingMessage: &ngapType.InitiatingMessage{
		ProcedureCode: ngapType.ProcedureCode{Value: proc}, Criticality: ngapType.Criticality{Value: crit}}}
	pdu.InitiatingMessage.Value.Present = present
	set(&pdu.InitiatingMessage.Value)
	return must2(t)(ngapx.Encode(pdu))
}

func uplinkRANConfigurationTransfer(t *testing.T, crit aper.Enumerated) []byte {
	return emptyInitiating(t, ngapType.ProcedureCodeUplinkRANConfigurationTransfer, crit,
		ngapType.InitiatingMessagePresentUplinkRANConfigurationTransfer, func(v *ngapType.InitiatingMessageValue) {
			v.UplinkRANConfigurationTransfer = &ngapType.UplinkRANConfigurationTransfer{}
		})
}

func wantProtocolCause(t *testing.T, what string, s ngapx.Summary, want aper.Enumerated) {
	t.Helper()
	if s.Cause == nil || s.Cause.Protocol == nil || s.Cause.Protocol.Value != want {
		t.Fatalf("%s: cause %s, want protocol(%d)", what, ngapx.CauseString(s.Cause), want)
	}
}

// Each branch of the policy, through the AMF: a malformed NG Setup gets NG
// Setup Failure, an unimplemented procedure Error Indication or silence by
// its criticality, the gNB's own Error Indication silence; the association
// serves on after each.
func TestNGAPAnswersByBranch(t *testing.T) {
	h := newHarness(t, nil)
	g := h.connect()
	g.send(emptyInitiating(t, ngapType.ProcedureCodeNGSetup, ngapType.CriticalityPresentReject,
		ngapType.InitiatingMessagePresentNGSetupRequest, func(v *ngapType.InitiatingMessageValue) {
			v.NGSetupRequest = &ngapType.NGSetupRequest{}
		}))
	wantProtocolCause(t, "NG Setup without IEs", g.expect("NGSetupFailure"), ngapType.CauseProtocolPresentAbstractSyntaxErrorReject)
	g.setup()

	g.send(uplinkRANConfigurationTransfer(t, ngapType.CriticalityPresentReject))
	wantProtocolCause(t, "unimplemented, reject", g.expect("ErrorIndication"), ngapType.CauseProtocolPresentAbstractSyntaxErrorReject)
	g.send(uplinkRANConfigurationTransfer(t, ngapType.CriticalityPresentNotify))
	wantProtocolCause(t, "unimplemented, notify", g.expect("ErrorIndication"), ngapType.CauseProtocolPresentAbstractSyntaxErrorIgnoreAndNotify)

	// Silence: the next answer on the association is the NG Reset's.
	g.send(uplinkRANConfigurationTransfer(t, ngapType.CriticalityPresentIgnore))
	g.send(must2(t)(ngapx.BuildErrorIndication(-1, -1, ngapx.CauseProtocol(ngapType.CauseProtocolPresentUnspecified))))
	g.send(ngReset(t))
	g.expect("NGResetAcknowledge")
	h.wantMetric("l25gc_amf_ngap_errors_total", map[string]string{"cause": "abstract-syntax-error-reject"}, 1, "Error Indications (reject)")
	h.wantMetric("l25gc_amf_ngap_errors_total", map[string]string{"cause": "abstract-syntax-error-ignore-and-notify"}, 1,
		"Error Indications (ignore and notify)")

	ue := h.newUE(g, "0000000040", 1)
	ue.register()
}

// A builder's error is logged and counted, the message is not sent and
// nothing panics.
func TestBuildErrorIsCountedNotFatal(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	b := h.amf.built("NGResetAcknowledge")(nil, errors.New("IE out of range"))
	if b != nil {
		t.Fatalf("built gave %x for a failed build", b)
	}
	h.amf.sendNonUE(h.amf.gnb(1), b)
	h.wantMetric("l25gc_amf_internal_errors_total", map[string]string{"where": "build"}, 1, "failed builds")
	ue := h.newUE(g, "0000000041", 1)
	ue.register()
}
