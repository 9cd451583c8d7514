package amf

import (
	"bytes"
	"testing"

	"github.com/free5gc/nas"

	"github.com/l25gc/l25gc/protocol/nasx"
)

func (u *testUE) ulNASTransport(p nasx.ULNASTransport) []byte {
	return u.protect(must2(u.t)(nasx.BuildULNASTransport(p)), nas.SecurityHeaderTypeIntegrityProtectedAndCiphered)
}

// TS 24.501 5.4.5.2.5: with no SMF to select, a PDU Session Establishment
// Request comes back in DL NAS Transport with #90, the 5GSM message and its
// PDU session ID, so the UE stops retrying; the UE stays registered.
func TestPDUSessionRequestComesBackNotForwarded(t *testing.T) {
	for _, c := range []struct {
		name        string
		requestType uint8
	}{
		{"initial request", nasx.RequestInitial},
		{"existing PDU session", nasx.RequestExistingSession},
		{"no request type", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, g := newSetUpHarness(t, nil)
			ue := h.newUE(g, "0000000060", 1)
			ue.register()
			sm := must2(t)(nasx.BuildPDUSessionEstablishmentRequest(3, 7))
			ue.up(ue.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: sm,
				PDUSessionID: 3, RequestType: c.requestType, DNN: "internet"}))
			d := ue.dl("DownlinkNASTransport").DLNASTransport
			if d == nil {
				t.Fatal("want DL NAS Transport")
			}
			if d.GetPayloadContainerType() != nasx.PayloadN1SMInformation || !bytes.Equal(d.GetPayloadContainerContents(), sm) {
				t.Fatalf("payload type %d % x, want N1 SM information with the request sent back", d.GetPayloadContainerType(), d.GetPayloadContainerContents())
			}
			if d.PduSessionID2Value == nil || d.GetPduSessionID2Value() != 3 {
				t.Fatal("PDU session ID not sent back")
			}
			if d.Cause5GMM == nil || d.Cause5GMM.GetCauseValue() != nasx.CausePayloadNotForwarded {
				t.Fatalf("5GMM cause %+v, want #90", d.Cause5GMM)
			}
			h.wantMetric("l25gc_amf_nas_payloads_not_forwarded_total", map[string]string{"payload": "n1-sm"}, 1, "payloads not forwarded")
			h.wantMetric("l25gc_amf_registered_ues", nil, 1, "registered UEs")
			// Still registered under the same context: a deregistration is accepted.
			ue.up(ue.deregistrationRequest(false))
			if m := ue.dl("DownlinkNASTransport"); m.DeregistrationAcceptUEOriginatingDeregistration == nil {
				t.Fatalf("message type %d, want Deregistration Accept", m.GmmHeader.GetMessageType())
			}
		})
	}
}

// N1 SM information without the PDU session ID the UE must include
// (TS 24.501 8.2.10.2) is a conditional IE error (7.6.2): 5GMM Status #100.
func TestN1SMWithoutPDUSessionIDGetsStatus(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000061", 1)
	ue.register()
	ue.up(ue.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation,
		Payload: must2(t)(nasx.BuildPDUSessionEstablishmentRequest(1, 1)), RequestType: nasx.RequestInitial}))
	m := ue.dl("DownlinkNASTransport")
	if m.Status5GMM == nil || m.Status5GMM.Cause5GMM.GetCauseValue() != nasx.CauseConditionalIEError {
		t.Fatalf("message type %d, want 5GMM Status #100", m.GmmHeader.GetMessageType())
	}
}

// A payload type the AMF has no peer for (SMS, no SMSF) is dropped and
// counted; the UE's next message is answered as usual.
func TestSMSPayloadIsDroppedAndCounted(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000062", 1)
	ue.register()
	ue.up(ue.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadSMS, Payload: []byte{0x09, 0x01, 0x00}}))
	ue.up(ue.deregistrationRequest(false))
	if m := ue.dl("DownlinkNASTransport"); m.DeregistrationAcceptUEOriginatingDeregistration == nil {
		t.Fatalf("message type %d, want Deregistration Accept (and nothing for the SMS)", m.GmmHeader.GetMessageType())
	}
	h.wantMetric("l25gc_amf_nas_payloads_not_forwarded_total", map[string]string{"payload": "sms"}, 1, "payloads not forwarded")
}

// Before the UE is registered, UL NAS Transport is not compatible with the
// protocol state (TS 24.501 7.4 b): 5GMM Status #98, no echo.
func TestULNASTransportBeforeRegistrationGetsStatus(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000063", 1)
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(1, ue.suciIdentity())))
	if m := ue.dl("DownlinkNASTransport"); m.AuthenticationRequest == nil {
		t.Fatal("want Authentication Request")
	}
	ue.up(must2(t)(nasx.BuildULNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation,
		Payload: must2(t)(nasx.BuildPDUSessionEstablishmentRequest(1, 1)), PDUSessionID: 1})))
	m := ue.dl("DownlinkNASTransport")
	if m.Status5GMM == nil || m.Status5GMM.Cause5GMM.GetCauseValue() != nasx.CauseMessageTypeNotCompatible {
		t.Fatalf("message type %d, want 5GMM Status #98", m.GmmHeader.GetMessageType())
	}
}
