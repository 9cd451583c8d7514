package amf

import (
	"testing"
	"time"

	"github.com/free5gc/nas/nasMessage"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/ratelimit"
)

// expireTimer makes the UE's running NAS timer expire now, as an event on
// the UE's key like a real expiry: tests need not wait for real timers.
func (h *harness) expireTimer(amfID int64) {
	_ = h.amf.disp.Dispatch(ratelimit.UE(amfID), func() {
		if ue := h.amf.ues.get(amfID); ue != nil && ue.timer != nil {
			h.amf.step(ue, EvTimerExpiry, &input{timer: ue.timer.kind, timerGen: ue.timer.gen})
		}
	})
}

// A retransmitted Registration Accept is protected again with the next NAS
// COUNT: a UE that already took the first copy (its replay check accepts
// each COUNT once, TS 33.501 6.4.3.2) accepts the retransmission, which goes
// in Downlink NAS Transport since the gNB has the UE's context by then.
func TestRetransmittedRegistrationAcceptPassesTheUEsReplayCheck(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) { c.AMF.NAS.T3550 = time.Hour })
	ue := h.newUE(g, "0000000030", 1)
	ue.registerUntilAccept()
	h.expireTimer(ue.amfID)
	if m := ue.dl("DownlinkNASTransport"); m.RegistrationAccept == nil {
		t.Fatalf("retransmission carries message type %d, want Registration Accept", m.GmmHeader.GetMessageType())
	}
	ue.up(ue.registrationComplete())
	if m := ue.dl("DownlinkNASTransport"); m.ConfigurationUpdateCommand == nil {
		t.Fatal("the UE's Registration Complete after the retransmission was not taken")
	}
	h.wantMetric("l25gc_amf_nas_retransmissions_total", map[string]string{"timer": "T3550"}, 1, "T3550 retransmissions")
}

// TS 24.501 5.5.1.2.8 b): T3550 retransmits Registration Accept, each copy
// under a new COUNT, and on the last expiry the procedure is aborted.
func TestT3550RetransmitsThenAborts(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) {
		c.AMF.NAS.T3550 = time.Millisecond
		c.AMF.NAS.MaxRetransmissions = 2
	})
	ue := h.newUE(g, "0000000031", 1)
	ue.registerUntilAccept()
	for i := 0; i < 2; i++ {
		if m := ue.dl("DownlinkNASTransport"); m.RegistrationAccept == nil {
			t.Fatalf("retransmission %d carries message type %d", i+1, m.GmmHeader.GetMessageType())
		}
	}
	g.expect("UEContextReleaseCommand")
	h.wantMetric("l25gc_amf_nas_retransmissions_total", map[string]string{"timer": "T3550"}, 2, "T3550 retransmissions")
	h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": "registration", "result": "timeout"}, 1, "registration timeouts")
}

// TS 24.501 5.4.3.7 b): T3570 retransmits Identity Request; on the last
// expiry identification and the registration are aborted.
func TestT3570RetransmitsThenAborts(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) {
		c.AMF.NAS.T3570 = time.Millisecond
		c.AMF.NAS.MaxRetransmissions = 2
	})
	ue := h.newUE(g, "0000000032", 1)
	unknown, _ := nasx.EncodeGUTI(nasx.GUTI{GUAMI: testGUAMI, TMSI: 0xABCDEF})
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, unknown)))
	for i := 0; i < 3; i++ { // the first transmission and 2 retransmissions
		if m := ue.dl("DownlinkNASTransport"); m.IdentityRequest == nil {
			t.Fatalf("transmission %d is message type %d, want Identity Request", i, m.GmmHeader.GetMessageType())
		}
	}
	g.expect("UEContextReleaseCommand")
	h.wantMetric("l25gc_amf_nas_retransmissions_total", map[string]string{"timer": "T3570"}, 2, "T3570 retransmissions")
	h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": "registration", "result": "timeout"}, 1, "registration timeouts")
}
