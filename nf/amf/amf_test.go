package amf

import (
	"context"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/security"
)

func TestInitialRegistrationWithSUCI(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000001", 1)
	a := ue.register()

	allowed, err := nasx.NSSAIModels(a.AllowedNSSAI.Buffer)
	if err != nil || len(allowed) != 1 || allowed[0].Sst != 1 || allowed[0].Sd != "010203" {
		t.Fatalf("allowed NSSAI %+v (requested 1/010203 and 9; only the first is subscribed and served)", allowed)
	}
	if a.TAIList == nil || a.T3512Value == nil {
		t.Fatal("Registration Accept without TAI list or T3512")
	}
	if ue.guti.GUAMI != testGUAMI {
		t.Fatalf("GUTI %+v not of this AMF", ue.guti)
	}
	if len(h.peers.uecm) != 1 || len(h.peers.policies) != 1 {
		t.Fatalf("UECM registrations %v, policies %v", h.peers.uecm, h.peers.policies)
	}
	h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": "registration", "result": "success"}, 1, "registration successes")
	if h.metric("l25gc_amf_registered_ues", nil) != 1 || h.metric("l25gc_amf_connected_gnbs", nil) != 1 {
		t.Fatal("gauges not updated")
	}
	if h.metric("l25gc_amf_procedure_duration_seconds", map[string]string{"procedure": "registration"}) != 1 {
		t.Fatal("no latency sample")
	}
}

func TestNGSetupFailureForWrongPLMN(t *testing.T) {
	h := newHarness(t, nil)
	g := h.connect()
	g.send(ngSetupRequest(t, "001", "01", 1))
	s := g.expect("NGSetupFailure")
	if s.Cause == nil || s.Cause.Misc == nil || s.Cause.Misc.Value != ngapType.CauseMiscPresentUnknownPLMN {
		t.Fatalf("cause %+v, want misc unknown-PLMN", s.Cause)
	}
	g.send(ngSetupRequest(t, "208", "93", 0x77)) // our PLMN, a TAC we do not serve
	g.expect("NGSetupFailure")
	g.setup() // the association is still usable
}

func TestMalformedNGAPGetsErrorIndication(t *testing.T) {
	h := newHarness(t, nil)
	g := h.connect()
	g.send([]byte{0x00, 0x15, 0x00, 0xff, 0xff})
	s := g.expect("ErrorIndication")
	if s.Cause == nil || s.Cause.Protocol == nil || s.Cause.Protocol.Value != ngapType.CauseProtocolPresentTransferSyntaxError {
		t.Fatalf("cause %+v, want protocol transfer-syntax-error", s.Cause)
	}
	g.setup()
	ue := h.newUE(g, "0000000002", 7)
	ue.register() // and UEs still register over the same association
}

func TestBadMACAndReplayAreDiscarded(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000003", 1)
	ue.registerUntilAccept()

	complete := ue.registrationComplete()
	tampered := append([]byte(nil), complete...)
	tampered[3] ^= 0xFF
	ue.up(tampered) // bad MAC: discarded, no answer
	ue.up(complete) // the genuine one
	ue.up(complete) // replayed: discarded
	if m := ue.dl("DownlinkNASTransport"); m.ConfigurationUpdateCommand == nil {
		t.Fatal("the genuine Registration Complete was not processed")
	}
	ue.up(ue.deregistrationRequest(false))
	if m := ue.dl("DownlinkNASTransport"); m.GmmHeader.GetMessageType() != nas.MsgTypeDeregistrationAcceptUEOriginatingDeregistration {
		t.Fatal("want Deregistration Accept next: the discarded messages must get no answer")
	}
	h.wantMetric("l25gc_amf_nas_discarded_total", map[string]string{"reason": "integrity"}, 2, "discarded")
}

func TestUnknownSUPIRejectedWithConfiguredCause(t *testing.T) {
	for _, cause := range []int{3, 7} {
		h, g := newSetUpHarness(t, func(c *config.Config) { c.AMF.NAS.UnknownSubscriberCause = cause })
		ue := &testUE{t: t, g: g, suci: "suci-0-208-93-0000-0-0-0999999999", ranID: 3, caps: []byte{0xE0, 0xE0}, lastKSI: 7}
		g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
		m := ue.dl("DownlinkNASTransport")
		if m.RegistrationReject == nil || int(m.RegistrationReject.Cause5GMM.GetCauseValue()) != cause {
			t.Fatalf("want Registration Reject #%d, got %+v", cause, m.GmmMessage)
		}
		g.expect("UEContextReleaseCommand")
		h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": "registration", "result": "reject"}, 1, "rejects")
	}
}

func TestT3560RetransmitsThenAborts(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) {
		c.AMF.NAS.T3560 = time.Millisecond
		c.AMF.NAS.MaxRetransmissions = 2
	})
	ue := h.newUE(g, "0000000004", 1)
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
	for i := 0; i < 3; i++ { // the first transmission and 2 retransmissions
		if m := ue.dl("DownlinkNASTransport"); m.AuthenticationRequest == nil {
			t.Fatalf("transmission %d is not Authentication Request", i)
		}
	}
	g.expect("UEContextReleaseCommand")
	h.wantMetric("l25gc_amf_nas_retransmissions_total", map[string]string{"timer": "T3560"}, 2, "retransmissions")
	h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": "registration", "result": "timeout"}, 1, "timeouts")
}

func TestDeregistrationNormalAndSwitchOff(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	for i, switchOff := range []bool{false, true} {
		ue := h.newUE(g, "00000000"+string(rune('5'+i))+"0", int64(10+i))
		ue.register()
		ue.up(ue.deregistrationRequest(switchOff))
		if !switchOff {
			if m := ue.dl("DownlinkNASTransport"); m.DeregistrationAcceptUEOriginatingDeregistration == nil {
				t.Fatal("want Deregistration Accept")
			}
		}
		s := g.expect("UEContextReleaseCommand")
		if s.Cause == nil || s.Cause.Nas == nil || s.Cause.Nas.Value != ngapType.CauseNasPresentDeregister {
			t.Fatalf("release cause %+v, want nas deregister", s.Cause)
		}
		g.send(releaseComplete(t, ue.amfID, ue.ranID))
	}
	// The SBI clean-up happens before the release command the test waited for.
	if len(h.peers.purge) != 2 || len(h.peers.policies) != 0 {
		t.Fatalf("UDM purges %v, PCF associations left %v", h.peers.purge, h.peers.policies)
	}
}

func TestRegistrationWithKnownGUTISkipsAuthentication(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000007", 1)
	ue.register()
	old := *ue.guti
	// The gNB releases the UE (CM-IDLE); its 5GMM context stays.
	g.send(releaseRequest(t, ue.amfID, ue.ranID))
	g.expect("UEContextReleaseCommand")
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	h.waitIdle(1)

	// Mobility registration update with the 5G-GUTI, integrity protected.
	gb, _ := nasx.EncodeGUTI(old)
	req := ue.registrationRequest(nasMessage.RegistrationType5GSMobilityRegistrationUpdating, gb)
	ue.ranID = 2
	g.send(initialUEMessage(t, ue.ranID, ue.protect(req, nas.SecurityHeaderTypeIntegrityProtected)))
	a := ue.readAccept() // straight to accept: no Authentication Request
	if *ue.guti != old {
		t.Fatalf("GUTI changed on mobility registration: %+v -> %+v", old, *ue.guti)
	}
	_ = a
	ue.up(ue.registrationComplete())
	ue.dl("DownlinkNASTransport")
	h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": "registration", "result": "success"}, 2, "successes")
}

func TestUnknownGUTIGetsIdentityRequest(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000008", 1)
	gb, _ := nasx.EncodeGUTI(nasx.GUTI{GUAMI: testGUAMI, TMSI: 0xABCDEF})
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, gb)))
	m := ue.dl("DownlinkNASTransport")
	if m.IdentityRequest == nil || m.IdentityRequest.SpareHalfOctetAndIdentityType.GetTypeOfIdentity() != uint8(nasx.IdentitySUCI) {
		t.Fatal("want Identity Request for the SUCI")
	}
	ue.up(identityResponse(t, ue.suciIdentity()))
	if m := ue.dl("DownlinkNASTransport"); m.AuthenticationRequest == nil {
		t.Fatal("want Authentication Request after the Identity Response")
	}
}

func TestAuthenticationFailures(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000009", 1)
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
	m := ue.dl("DownlinkNASTransport")
	// The USIM's SQN is ahead of the network's: synch failure with AUTS.
	rnd := m.AuthenticationRequest.AuthenticationParameterRAND.GetRANDValue()
	auts, err := security.BuildAUTS(ue.k, ue.opc, rnd[:], []byte{0, 0, 0, 0, 0x10, 0})
	if err != nil {
		t.Fatal(err)
	}
	ue.up(authFailure(t, nasx.CauseSynchFailure, auts))
	if m := ue.dl("DownlinkNASTransport"); m.AuthenticationRequest == nil || h.peers.resyncs != 1 {
		t.Fatalf("synch failure: want a new Authentication Request after one AUSF resync (resyncs %d)", h.peers.resyncs)
	}
	ue.up(authFailure(t, nasx.CauseMACFailure, nil))
	if m := ue.dl("DownlinkNASTransport"); m.AuthenticationReject == nil {
		t.Fatal("MAC failure: want Authentication Reject")
	}
	g.expect("UEContextReleaseCommand")
}

func TestMalformedNASGetsCause(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000010", 1)
	// A Registration Request cut short: #96 invalid mandatory information.
	g.send(initialUEMessage(t, ue.ranID, []byte{0x7e, 0x00, 0x41, 0x79}))
	m := ue.dl("DownlinkNASTransport")
	if m.RegistrationReject == nil || m.RegistrationReject.Cause5GMM.GetCauseValue() != nasx.CauseInvalidMandatoryInfo {
		t.Fatalf("want Registration Reject #96, got %+v", m.GmmMessage)
	}
	g.expect("UEContextReleaseCommand")
	// An unknown message type: 5GMM Status #97.
	ue2 := h.newUE(g, "0000000011", 2)
	g.send(initialUEMessage(t, ue2.ranID, []byte{0x7e, 0x00, 0x7f}))
	m = ue2.dl("DownlinkNASTransport")
	if m.Status5GMM == nil || m.Status5GMM.Cause5GMM.GetCauseValue() != nasx.CauseMessageTypeNonExistent {
		t.Fatalf("want 5GMM Status #97, got %+v", m.GmmMessage)
	}
}

// panicky makes the AUSF consumer panic for one SUPI: the AMF must clean up
// that UE and carry on with the others.
type panicky struct {
	*fakePeers
	bad string
}

func (p panicky) Authenticate(ctx context.Context, id, sn string, r *models.ResynchronizationInfo) (AuthVector, error) {
	if id == p.bad {
		panic("AUSF consumer bug")
	}
	return p.fakePeers.Authenticate(ctx, id, sn, r)
}

func TestPanicInOneUEIsContained(t *testing.T) {
	h := newHarness(t, nil)
	bad := "suci-0-208-93-0000-0-0-0000000012"
	h.amf.opts.Consumer = panicky{h.peers, bad}
	g := h.connect()
	g.setup()
	ue := h.newUE(g, "0000000012", 1)
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
	g.expect("UEContextReleaseCommand") // that UE is cleaned up
	other := h.newUE(g, "0000000013", 2)
	other.register() // the others carry on
	if h.metric("l25gc_amf_dispatcher_panics_total", nil) != 1 {
		t.Fatal("panic not counted")
	}
}

func TestPeriodicUpdateInConnectedModeUsesDownlinkNAS(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000014", 1)
	ue.register()
	gb, _ := nasx.EncodeGUTI(*ue.guti)
	ue.up(ue.protect(ue.registrationRequest(nasMessage.RegistrationType5GSPeriodicRegistrationUpdating, gb),
		nas.SecurityHeaderTypeIntegrityProtectedAndCiphered))
	m := ue.dl("DownlinkNASTransport") // the gNB already has the UE's context
	if m.RegistrationAccept == nil {
		t.Fatal("want Registration Accept")
	}
}

func TestNGResetReleasesTheGNBsUEs(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000015", 1)
	ue.register()
	g.send(ngReset(t))
	g.expect("NGResetAcknowledge")
	// The UE's context survived as CM-IDLE: it comes back with its GUTI.
	ue.returnWithGUTI(5)
}

// TS 38.413 8.7.2: a gNB that changed its cells announces them; the AMF
// acknowledges while a TA of ours remains, fails the update otherwise, and
// the association keeps serving UEs either way.
func TestRANConfigurationUpdate(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	update := func(mcc, mnc string, tac uint32) []byte {
		return must2(t)(ngapx.BuildRANConfigurationUpdate(ngapx.GNB{PLMN: domain.PLMN{MCC: mcc, MNC: mnc}, Name: "gnb-renamed",
			TACs: []domain.TAC{domain.TAC(tac)}, SNSSAIs: []models.Snssai{{Sst: 1, Sd: "010203"}}}))
	}
	g.send(update("208", "93", 1))
	g.expect("RANConfigurationUpdateAcknowledge")
	g.send(update("001", "01", 1))
	if s := g.expect("RANConfigurationUpdateFailure"); s.Cause == nil || s.Cause.Misc == nil ||
		s.Cause.Misc.Value != ngapType.CauseMiscPresentUnknownPLMN {
		t.Fatalf("cause %+v, want misc unknown-PLMN", s.Cause)
	}
	ue := h.newUE(g, "0000000031", 31)
	ue.register()
}
