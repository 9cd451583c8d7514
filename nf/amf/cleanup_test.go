package amf

import (
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// sbiState is what the UDM and PCF still hold of the AMF's UEs.
func (h *harness) sbiState() (purges, policies int) {
	h.peers.mu.Lock()
	defer h.peers.mu.Unlock()
	return len(h.peers.purge), len(h.peers.policies)
}

func (h *harness) wantSBIState(purges, policies int, registered float64) {
	h.t.Helper()
	gotPurges, gotPolicies := h.sbiState()
	if gotPurges != purges || gotPolicies != policies {
		h.t.Fatalf("UDM purges %d, PCF associations %d; want %d and %d", gotPurges, gotPolicies, purges, policies)
	}
	h.wantMetric("l25gc_amf_registered_ues", nil, registered, "UEs counted as registered")
}

// A registration rejected after Nudm_UECM_Registration (#62: no subscribed
// slice is served) purges that registration (TS 23.502 4.2.2.3.2 steps 3-5
// apply to every end of the context).
func TestRejectAfterUECMRegistrationPurgesIt(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000050", 1)
	h.peers.subs[ue.supi].nssai = []models.Snssai{{Sst: 77}}
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
	ue.up(ue.authResponse(ue.dl("DownlinkNASTransport")))
	ue.up(ue.acceptSMC(g.expect("DownlinkNASTransport").NASPDU, nil))
	if m := ue.dl("DownlinkNASTransport"); m.RegistrationReject == nil || m.RegistrationReject.Cause5GMM.GetCauseValue() != nasx.CauseNoNetworkSlicesAvailable {
		t.Fatalf("want Registration Reject #62, got message type %d", m.GmmHeader.GetMessageType())
	}
	g.expect("UEContextReleaseCommand")
	h.wantSBIState(1, 0, 0)
	h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": "deregistration"}, 0, "a reject counted as deregistrations")
}

// A registered UE whose new registration is rejected loses its context: it
// is no longer counted as registered, and the UDM and PCF forget it too.
func TestRejectOfRegisteredUEEndsItsContext(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000051", 1)
	ue.register()
	h.amf.opts.Consumer = failingPeers{fakePeers: h.peers, authenticate: problem(504, "TARGET_NF_NOT_REACHABLE")}
	ue.up(ue.protect(ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity()),
		nas.SecurityHeaderTypeIntegrityProtectedAndCiphered))
	if m := ue.dl("DownlinkNASTransport"); m.RegistrationReject == nil {
		t.Fatalf("want Registration Reject, got message type %d", m.GmmHeader.GetMessageType())
	}
	g.expect("UEContextReleaseCommand")
	h.wantSBIState(1, 0, 0)
}

// TS 24.501 5.5.1.2.8 b): an initial registration whose Registration
// Accept is never completed is aborted; its UDM registration and AM policy
// association go with it.
func TestT3550GiveUpUndoesTheSBIState(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) { c.AMF.NAS.T3550 = time.Millisecond; c.AMF.NAS.MaxRetransmissions = 1 })
	ue := h.newUE(g, "0000000052", 1)
	ue.registerUntilAccept()
	ue.dl("DownlinkNASTransport")
	g.expect("UEContextReleaseCommand")
	h.wantSBIState(1, 0, 0)
}

// A UE registering afresh with its SUCI replaces its parked context: the
// old AM policy association is deleted and the UE is counted once.
func TestFreshRegistrationReplacesTheParkedContext(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000053", 1)
	ue.register()
	ue.goIdle(1)
	ue.ranID, ue.sec, ue.lastKSI = 2, nil, 7
	ue.register()
	_, policies := h.sbiState()
	if policies != 1 {
		t.Fatalf("PCF associations %d, want 1 (the parked context's deleted)", policies)
	}
	h.wantMetric("l25gc_amf_registered_ues", nil, 1, "UEs counted as registered")
}
