package amf

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/security"
)

// idleUE is a registered UE with PDU session id, gone to CM-IDLE: the
// SMF was told to deactivate the user plane (TS 23.502 4.2.6 step 5).
func idleUE(t *testing.T, msin string, id uint8) (*harness, *gnbSide, *testUE, *fakeSMF) {
	t.Helper()
	h, g, ue, smf := establishedUE(t, msin, id)
	ue.goIdle(1)
	if u := smf.expect("modify"); u.update.UpCnxState != models.UpCnxState_DEACTIVATED {
		t.Fatalf("AN release: update %+v, want upCnxState DEACTIVATED", u.update)
	}
	return h, g, ue, smf
}

// TS 23.502 4.2.3.2: the UE has uplink data for its session; the SMF
// activates the user plane, the gNB gets the SMF's N2 SM information in
// Initial Context Setup with Service Accept, and its answer reaches the SMF.
func TestServiceRequestFromIdleActivatesTheSession(t *testing.T) {
	h, _, ue, smf := idleUE(t, "0000000201", 5)
	tr := setupTransfer(t, 5)
	smf.answerActivation(tr)
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeData, psis(5), psis(5)))

	u := smf.expect("modify")
	if u.update.UpCnxState != models.UpCnxState_ACTIVATING || u.ref != "1" {
		t.Fatalf("activation: update %+v of %s, want upCnxState ACTIVATING", u.update, u.ref)
	}
	ics, accept := ue.readServiceAccept()
	if len(ics.Sessions) != 1 || ics.Sessions[0].ID != 5 || ics.Sessions[0].UL != upfTunnel {
		t.Fatalf("ICS sessions %+v, want session 5 on the UPF's tunnel", ics.Sessions)
	}
	if accept.PDUSessionStatus == nil || accept.PDUSessionStatus.IDs()[0] != 5 || accept.ReactivationResult == nil || *accept.ReactivationResult != 0 {
		t.Fatalf("Service Accept %+v: want status {5} and no reactivation failure", accept)
	}
	smf.set("modify", smfReply{status: 204})
	ue.contextSetupResponse(5)
	if u := smf.expect("modify"); u.update.N2SmInfoType != models.N2SmInfoType_PDU_RES_SETUP_RSP || u.n2 == nil {
		t.Fatalf("setup response to the SMF: %+v", u.update)
	}
	h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": procService, "result": resultSuccess}, 1, "service requests accepted")
	h.wantMetric("l25gc_amf_idle_ues", nil, 0, "idle UEs")
	// Back to idle and again: the same context serves the next request.
	ue.goIdle(1)
	smf.expect("modify")
	ue.requestService(3, ue.serviceRequest(nasx.ServiceTypeSignalling, nil, nil))
	if ics, a := ue.readServiceAccept(); len(ics.Sessions) != 0 || a.ReactivationResult != nil {
		t.Fatalf("signalling only: sessions %v, reactivation result %v", ics.Sessions, a.ReactivationResult)
	}
	smf.none()
}

// TS 23.502 4.2.3.2 step 4: a session the UE no longer has (PDU session
// status) is released at its SMF; Service Accept says what is left.
func TestServiceRequestReleasesSessionsTheUEDropped(t *testing.T) {
	_, _, ue, smf := idleUE(t, "0000000202", 6)
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeSignalling, nil, psis()))
	if c := smf.expect("release"); c.ref != "1" {
		t.Fatalf("released %s, want context 1", c.ref)
	}
	if _, a := ue.readServiceAccept(); a.PDUSessionStatus == nil || *a.PDUSessionStatus != 0 {
		t.Fatalf("Service Accept status %v, want none", a.PDUSessionStatus)
	}
}

// TS 24.501 5.6.1.4.1: a session the SMF does not activate is a failure in
// the PDU session reactivation result; the others go on.
func TestServiceRequestReportsSessionsNotReactivated(t *testing.T) {
	_, _, ue, smf := idleUE(t, "0000000203", 7)
	smf.set("modify", smfReply{status: 404, body: models.ProblemDetails{Status: 404, Cause: "CONTEXT_NOT_FOUND"}})
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeData, psis(7, 9), psis(7)))
	smf.expect("modify")
	ics, a := ue.readServiceAccept()
	if len(ics.Sessions) != 0 || a.ReactivationResult == nil || !reflect.DeepEqual(a.ReactivationResult.IDs(), []uint8{7, 9}) {
		t.Fatalf("sessions %v, reactivation result %v: want 7 (SMF refused) and 9 (unknown) failed", ics.Sessions, a.ReactivationResult)
	}
	if a.PDUSessionStatus == nil || *a.PDUSessionStatus != 0 {
		t.Fatalf("status %v: the SMF's 404 ends the session", a.PDUSessionStatus)
	}
}

// TS 24.501 5.6.1.5: a 5G-S-TMSI the AMF does not know is #9; the N2
// connection is released.
func TestServiceRequestUnknownTMSIRejected(t *testing.T) {
	_, g, ue, _ := idleUE(t, "0000000204", 5)
	real := *ue.guti
	ue.guti.TMSI += 1000
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeData, nil, nil))
	if r := ue.readServiceReject(); r.Cause != nasx.CauseUEIdentityCannotBeDerived {
		t.Fatalf("cause #%d, want #9", r.Cause)
	}
	g.expect("UEContextReleaseCommand")
	// The real UE is untouched.
	*ue.guti = real
	ue.requestService(3, ue.serviceRequest(nasx.ServiceTypeSignalling, nil, nil))
	ue.readServiceAccept()
}

// TS 24.501 5.6.1.3, 4.4.6: a Service Request that fails the integrity
// check is served after authentication and security mode, with the new
// context (its KgNB and Service Accept).
func TestServiceRequestWithBadMACAuthenticatesFirst(t *testing.T) {
	_, _, ue, smf := idleUE(t, "0000000205", 5)
	sr := ue.serviceRequest(nasx.ServiceTypeData, nil, psis(5))
	sr[3] ^= 0xFF // the MAC
	ue.requestService(2, sr)
	ue.up(ue.authResponse(ue.dl("DownlinkNASTransport")))
	ue.up(ue.acceptSMC(ue.g.expect("DownlinkNASTransport").NASPDU, nil))
	if _, a := ue.readServiceAccept(); a.PDUSessionStatus == nil || !a.PDUSessionStatus.Has(5) {
		t.Fatalf("Service Accept after authentication: %+v", a)
	}
	smf.none()
}

// TS 24.501 5.6.1.1: a connected UE asks for its session's user plane;
// Service Accept in Downlink NAS Transport, the setup in PDU Session
// Resource Setup Request.
func TestServiceRequestInConnectedMode(t *testing.T) {
	_, g, ue, smf := establishedUE(t, "0000000206", 5)
	tr := setupTransfer(t, 5)
	smf.answerActivation(tr)
	ue.up(ue.protect(must2(t)(nasx.BuildServiceRequest(nasx.ServiceRequest{ServiceType: nasx.ServiceTypeData, NgKSI: ue.lastKSI,
		STMSI: ue.guti.STMSI(), UplinkDataStatus: psis(5)})), nas.SecurityHeaderTypeIntegrityProtectedAndCiphered))
	if u := smf.expect("modify"); u.update.UpCnxState != models.UpCnxState_ACTIVATING {
		t.Fatalf("update %+v", u.update)
	}
	if m := ue.dl("DownlinkNASTransport"); m.ServiceAccept == nil {
		t.Fatalf("NAS message type %d, want Service Accept", m.GmmHeader.GetMessageType())
	}
	if _, items, _ := g.readSessionRequest("PDUSessionResourceSetupRequest"); len(items) != 1 || !bytes.Equal(items[0].transfer, tr) {
		t.Fatalf("setup request items %+v", items)
	}
}

// A malformed Service Request (no 5G-S-TMSI) is rejected with its cause.
func TestMalformedServiceRequestRejected(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	b := must2(t)(nasx.BuildServiceRequest(nasx.ServiceRequest{STMSI: nasx.STMSI{TMSI: 1}}))
	b[6] = 0xF2 // identity type 5G-GUTI in the 5G-S-TMSI IE
	g.send(initialUEMessage(t, 1, b))
	s := g.expect("DownlinkNASTransport")
	ue := h.newUE(g, "0000000207", 1)
	if m := ue.decode(s.NASPDU); m.ServiceReject == nil || m.ServiceReject.GetCauseValue() != nasx.CauseInvalidMandatoryInfo {
		t.Fatalf("want Service Reject #96, got %+v", m.GmmHeader)
	}
	g.expect("UEContextReleaseCommand")
}

// TS 24.501 5.3.7: a UE that stays away past the mobile reachable and the
// implicit deregistration timers is deregistered: SM contexts released,
// UDM purged, AM policy deleted, record removed; its late Service Request
// hears #10.
func TestImplicitDeregistrationEndsTheContext(t *testing.T) {
	h, g, ue, smf := establishedUEWith(t, "0000000208", 5, func(c *config.Config) {
		c.AMF.NAS.MobileReachable = 30 * msec
		c.AMF.NAS.ImplicitDeregistration = 30 * msec
	})
	ue.releaseToIdle()                                          // the timers may end the parked context at once
	if _, c := smf.expect2("modify", "release"); c.ref != "1" { // deactivated, then (timers) released
		t.Fatalf("implicit deregistration released %s", c.ref)
	}
	h.waitIdle(0)
	h.eventually("UDM registration purged", func() bool { return h.peers.purged(ue.supi) })
	h.eventually("AM policy association deleted", func() bool { return !h.peers.policyOf(ue.supi) })
	h.wantMetric("l25gc_amf_implicit_deregistrations_total", nil, 1, "implicit deregistrations")
	h.wantMetric("l25gc_amf_registered_ues", nil, 0, "registered UEs")
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeData, nil, nil))
	if r := ue.readServiceReject(); r.Cause != nasx.CauseImplicitlyDeregistered {
		t.Fatalf("cause #%d, want #10", r.Cause)
	}
	g.expect("UEContextReleaseCommand")
}

// slowDeactivation holds the SMF's deactivations until released.
type slowDeactivation struct {
	SessionConsumer
	hold chan struct{}
}

func (s *slowDeactivation) UpdateSMContext(ctx context.Context, uri string, d models.SmfPduSessionSmContextUpdateData, n1, n2 []byte) (SMAnswer, error) {
	if d.UpCnxState == models.UpCnxState_DEACTIVATED {
		<-s.hold
	}
	return s.SessionConsumer.UpdateSMContext(ctx, uri, d, n1, n2)
}

// A UE back at once after the AN release: its session's activation
// reaches the SMF only after the release's deactivation, never before it
// (which would leave the user plane buffering).
func TestActivationWaitsForTheDeactivation(t *testing.T) {
	h, _, ue, smf := establishedUE(t, "0000000209", 5)
	slow := &slowDeactivation{SessionConsumer: h.amf.opts.Sessions, hold: make(chan struct{})}
	h.amf.opts.Sessions = slow
	ue.goIdle(1)
	smf.answerActivation(setupTransfer(t, 5))
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeData, psis(5), psis(5)))
	smf.none()
	close(slow.hold)
	if u := smf.expect("modify"); u.update.UpCnxState != models.UpCnxState_DEACTIVATED {
		t.Fatalf("first update %+v, want the deactivation", u.update)
	}
	if u := smf.expect("modify"); u.update.UpCnxState != models.UpCnxState_ACTIVATING {
		t.Fatalf("second update %+v, want the activation", u.update)
	}
	if ics, _ := ue.readServiceAccept(); len(ics.Sessions) != 1 {
		t.Fatalf("sessions %+v", ics.Sessions)
	}
}

// containerServiceRequest is a Service Request the way TS 24.501 4.4.6 has
// a UE with a security context send it: cleartext IEs, the whole request
// ciphered in the NAS message container, integrity protected by sec.
func (u *testUE) containerServiceRequest(sec *security.NASContext, full nasx.ServiceRequest) []byte {
	u.t.Helper()
	whole := must2(u.t)(nasx.BuildServiceRequest(full))
	c, err := sec.CipherContainer(whole)
	if err != nil {
		u.t.Fatal(err)
	}
	clear := full
	clear.Cleartext, clear.Container = true, c
	pdu, err := sec.Protect(must2(u.t)(nasx.BuildServiceRequest(clear)), nas.SecurityHeaderTypeIntegrityProtected)
	if err != nil {
		u.t.Fatal(err)
	}
	return pdu
}

// TS 24.501 4.4.6: the uplink data status travels ciphered in the
// container; the AMF reads it there and activates the session.
func TestServiceRequestWithCipheredContainer(t *testing.T) {
	_, _, ue, smf := idleUE(t, "0000000210", 5)
	smf.answerActivation(setupTransfer(t, 5))
	full := nasx.ServiceRequest{ServiceType: nasx.ServiceTypeData, NgKSI: ue.lastKSI, STMSI: ue.guti.STMSI(),
		UplinkDataStatus: psis(5), PDUSessionStatus: psis(5)}
	ue.requestService(2, ue.containerServiceRequest(ue.sec, full))
	if u := smf.expect("modify"); u.update.UpCnxState != models.UpCnxState_ACTIVATING {
		t.Fatalf("update %+v: the container's uplink data status asks for activation", u.update)
	}
	if ics, _ := ue.readServiceAccept(); len(ics.Sessions) != 1 {
		t.Fatalf("sessions %+v", ics.Sessions)
	}
}

// A container the AMF cannot decipher (the request fails the integrity
// check) is asked for again in Security Mode Command (RINMR), and the
// whole request in Security Mode Complete is served.
func TestUnverifiedServiceRequestContainerIsAskedForAgain(t *testing.T) {
	_, g, ue, smf := idleUE(t, "0000000211", 5)
	smf.answerActivation(setupTransfer(t, 5))
	stale := security.NewNASContext(bytes.Repeat([]byte{7}, 32), security.NEA2, security.NIA2, security.Uplink)
	full := nasx.ServiceRequest{ServiceType: nasx.ServiceTypeData, NgKSI: ue.lastKSI, STMSI: ue.guti.STMSI(), UplinkDataStatus: psis(5)}
	ue.requestService(2, ue.containerServiceRequest(stale, full))
	ue.up(ue.authResponse(ue.dl("DownlinkNASTransport")))
	s := g.expect("DownlinkNASTransport")
	smc, err := nasx.Decode(s.NASPDU[7:])
	if err != nil {
		t.Fatal(err)
	}
	if info := smc.SecurityModeCommand.Additional5GSecurityInformation; info == nil || info.GetRINMR() != 1 {
		t.Fatal("Security Mode Command does not ask for the initial message again (RINMR)")
	}
	ue.up(ue.acceptSMC(s.NASPDU, must2(t)(nasx.BuildServiceRequest(full))))
	if u := smf.expect("modify"); u.update.UpCnxState != models.UpCnxState_ACTIVATING {
		t.Fatalf("update %+v", u.update)
	}
	if ics, _ := ue.readServiceAccept(); len(ics.Sessions) != 1 {
		t.Fatalf("sessions %+v", ics.Sessions)
	}
}

// Implicit deregistration deletes the UE's record from the UE store: a
// restarted AMF does not bring it back.
func TestImplicitDeregistrationDeletesTheRecord(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, func(c *config.Config) {
		c.DataDir = dir
		c.AMF.NAS.MobileReachable = 20 * msec
		c.AMF.NAS.ImplicitDeregistration = 20 * msec
	})
	if err := h.amf.openPersist(); err != nil {
		t.Fatal(err)
	}
	g := h.connect()
	g.setup()
	ue := h.newUE(g, "0000000212", 1)
	ue.register()
	awaitStored(t, dir, ue.guti.TMSI)
	ue.releaseToIdle()
	h.eventually("implicit deregistration", func() bool { return h.metric("l25gc_amf_implicit_deregistrations_total", nil) == 1 })
	h.waitIdle(0)
	awaitStored(t, dir)
}

// TS 24.501 5.6.1.5: a Service Request refused at the AMF's UE cap gets #22
// with T3346; the UE stays registered and is served once there is room.
func TestServiceRequestAtTheCapGetsCongestionWithBackOff(t *testing.T) {
	h, g, ue, _ := idleUEWith(t, "0000000213", 5, func(c *config.Config) { c.AMF.NGAP.MaxUEs = 1 })
	other := h.newUE(g, "0000000214", 9)
	other.register()
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeSignalling, nil, nil))
	if r := ue.readServiceReject(); r.Cause != nasx.CauseCongestion || r.T3346 == 0 {
		t.Fatalf("Service Reject %+v, want #22 with T3346", r)
	}
	g.expect("UEContextReleaseCommand")
	other.up(other.deregistrationRequest(true))
	g.expect("UEContextReleaseCommand")
	g.send(releaseComplete(t, other.amfID, other.ranID))
	h.eventually("room for the UE", func() bool { all, _ := h.amf.ues.connected(0); return all == 0 })
	ue.requestService(3, ue.serviceRequest(nasx.ServiceTypeSignalling, nil, nil))
	ue.readServiceAccept()
}
