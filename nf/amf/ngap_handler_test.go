package amf

import (
	"testing"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// A real gNB reports the UE's radio capability after Initial Context Setup
// and may report a NAS PDU it could not deliver: both are valid procedures
// (TS 38.413 8.14.1, 8.6.4) of criticality ignore, so no Error Indication
// comes back and the UE's registration carries on.
func TestRadioCapabilityAndNASNonDeliveryGetNoErrorIndication(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000020", 1)
	ue.registerUntilAccept()
	g.send(must2(t)(ngapx.BuildInitialContextSetupResponse(ue.amfID, ue.ranID)))
	capability := []byte{0x04, 0x01, 0x02, 0x03}
	g.send(must2(t)(ngapx.BuildUERadioCapabilityInfoIndication(ue.amfID, ue.ranID, capability)))
	g.send(must2(t)(ngapx.BuildNASNonDeliveryIndication(ue.amfID, ue.ranID, []byte{0x7e, 0x00, 0x54},
		ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentRadioConnectionWithUeLost))))
	ue.up(ue.registrationComplete())
	if m := ue.dl("DownlinkNASTransport"); m.ConfigurationUpdateCommand == nil {
		t.Fatalf("after Registration Complete: message type %d, want Configuration Update Command", m.GmmHeader.GetMessageType())
	}
	h.wantMetric("l25gc_amf_ngap_errors_total", nil, 0, "NGAP errors counted for valid messages")
	if got := h.amf.ues.get(ue.amfID).radioCapability; string(got) != string(capability) {
		t.Fatalf("UE radio capability %x, want %x stored", got, capability)
	}
}

// TS 38.413 10.6: an unknown AMF UE NGAP ID, or a RAN UE NGAP ID that does
// not match the UE's, gets Error Indication with the radio network cause
// that says which.
func TestUnknownOrInconsistentUENGAPIDsGetErrorIndication(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000021", 1)
	ue.register()
	cases := []struct {
		name         string
		amfID, ranID int64
		want         int64
	}{
		{"unknown AMF UE NGAP ID", ue.amfID + 1000, ue.ranID, int64(ngapType.CauseRadioNetworkPresentUnknownLocalUENGAPID)},
		{"inconsistent RAN UE NGAP ID", ue.amfID, ue.ranID + 1, int64(ngapType.CauseRadioNetworkPresentInconsistentRemoteUENGAPID)},
	}
	for _, c := range cases {
		g.send(must2(t)(ngapx.BuildUERadioCapabilityInfoIndication(c.amfID, c.ranID, []byte{1})))
		s := g.expect("ErrorIndication")
		if s.Cause == nil || s.Cause.RadioNetwork == nil || int64(s.Cause.RadioNetwork.Value) != c.want {
			t.Fatalf("%s: cause %s, want radioNetwork(%d)", c.name, ngapx.CauseString(s.Cause), c.want)
		}
		if s.AMFUEID != c.amfID || s.RANUEID != c.ranID {
			t.Fatalf("%s: Error Indication names %d/%d, want the received %d/%d", c.name, s.AMFUEID, s.RANUEID, c.amfID, c.ranID)
		}
	}
	// The UE itself is untouched.
	ue.up(ue.deregistrationRequest(false))
	if m := ue.dl("DownlinkNASTransport"); m.DeregistrationAcceptUEOriginatingDeregistration == nil {
		t.Fatal("want Deregistration Accept")
	}
}
