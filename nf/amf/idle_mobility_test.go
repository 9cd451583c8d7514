package amf

import (
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// TS 23.502 4.2.6 step 4: the AMF deactivates the sessions the gNB's UE
// Context Release Request lists (their user plane was active), and keeps
// every session.
func TestANReleaseDeactivatesTheListedSessions(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000501", 5)
	cause := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity)
	g.send(must2(t)(ngapx.BuildUEContextReleaseRequestWithSessions(ue.amfID, ue.ranID, cause, []uint8{9})))
	g.expect("UEContextReleaseCommand")
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	h.waitIdle(1)
	smf.none() // session 5's user plane was not listed as active
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeSignalling, nil, nil))
	if _, a := ue.readServiceAccept(); a.PDUSessionStatus == nil || !a.PDUSessionStatus.Has(5) {
		t.Fatalf("status %v: the session is kept", a.PDUSessionStatus)
	}
	g.send(must2(t)(ngapx.BuildUEContextReleaseRequestWithSessions(ue.amfID, ue.ranID, cause, []uint8{5})))
	g.expect("UEContextReleaseCommand")
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	if u := smf.expect("modify"); u.update.UpCnxState != models.UpCnxState_DEACTIVATED {
		t.Fatalf("update %+v", u.update)
	}
}

// TS 24.501 5.5.1.3: periodic and mobility registration updates from
// CM-IDLE keep the PDU sessions; a mobility update from a new TA under
// another gNB moves the UE there, and the UE is then paged through every
// gNB of its registration area.
func TestRegistrationUpdatesFromIdleKeepSessions(t *testing.T) {
	h, g, ue, smf := idleUEWith(t, "0000000502", 5, func(c *config.Config) { c.TACs = []string{"000001", "000002"} })
	g2 := h.connect()
	g2.send(ngSetupRequest(t, "208", "93", 2))
	g2.expect("NGSetupResponse")

	// Periodic update through the first gNB.
	gb, _ := nasx.EncodeGUTI(*ue.guti)
	ue.ranID = 2
	g.send(initialUEMessage(t, ue.ranID, ue.protect(ue.registrationRequest(
		nasMessage.RegistrationType5GSPeriodicRegistrationUpdating, gb), nas.SecurityHeaderTypeIntegrityProtected)))
	if a := ue.readAccept(); a.TAIList == nil {
		t.Fatal("Registration Accept without TAI list")
	}
	ue.up(ue.registrationComplete())
	ue.dl("DownlinkNASTransport")
	ue.goIdle(1)
	// The gNB listed no sessions: all are deactivated again (harmless), none released.
	if u := smf.expect("modify"); u.update.UpCnxState != models.UpCnxState_DEACTIVATED {
		t.Fatalf("update %+v", u.update)
	}
	// Mobility update from TA 2 under the second gNB.
	ue.g, ue.ranID = g2, 3
	g2.send(must2(t)(ngapx.BuildInitialUEMessage(ue.ranID, ue.protect(ue.registrationRequest(
		nasMessage.RegistrationType5GSMobilityRegistrationUpdating, gb), nas.SecurityHeaderTypeIntegrityProtected),
		ngapx.Cell{TAI: domain.TAI{PLMN: testPLMN, TAC: 2}, CellID: 2}, nil)))
	ue.readAccept()
	ue.up(ue.registrationComplete())
	ue.dl("DownlinkNASTransport")
	ue.goIdle(1)
	smf.expect("modify")
	smf.none()
	// The session is still there: its downlink data pages the UE through both gNBs.
	if w, _ := h.pageRequest(ue.supi, 5, nil); w.Code != 202 {
		t.Fatalf("transfer: %d %s", w.Code, w.Body)
	}
	for _, gn := range []*gnbSide{g, g2} {
		if p := gn.readPaging(); p.STMSI != ue.guti.STMSI() || len(p.TAIs) != 2 {
			t.Fatalf("paging %+v", p)
		}
	}
}

// A UE restored from the UE store after a restart answers with a Service
// Request under its kept security context, without authentication.
func TestRestoredUEServiceRequest(t *testing.T) {
	dir := t.TempDir()
	h1, g1 := persistHarness(t, dir)
	ue := h1.newUE(g1, "0000000503", 1)
	ue.register()
	awaitStored(t, dir, ue.guti.TMSI)
	h2, g2 := persistHarness(t, dir)
	ue.g = g2
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeSignalling, nil, psis()))
	if _, a := ue.readServiceAccept(); a.PDUSessionStatus == nil {
		t.Fatal("Service Accept without PDU session status")
	}
	if h2.peers.nextAuth != 0 {
		t.Fatalf("%d authentications after the restart", h2.peers.nextAuth)
	}
}

// TS 24.501 5.3.1.3, 5.5.1.3.4: a periodic update without "follow-on
// request pending" ends with the AMF releasing the N2 connection; the UE is
// back in CM-IDLE with its sessions.
func TestPeriodicUpdateWithoutFollowOnIsReleased(t *testing.T) {
	h, g, ue, smf := idleUE(t, "0000000504", 5)
	gb, _ := nasx.EncodeGUTI(*ue.guti)
	req := must2(t)(nasx.BuildRegistrationRequest(nasx.RegistrationRequest{Type: nasMessage.RegistrationType5GSPeriodicRegistrationUpdating,
		NgKSI: ue.lastKSI, Identity: gb, SecurityCaps: ue.caps, NoFollowOn: true}))
	ue.ranID = 2
	g.send(initialUEMessage(t, ue.ranID, ue.protect(req, nas.SecurityHeaderTypeIntegrityProtected)))
	ue.readAccept()
	ue.up(ue.registrationComplete())
	ue.dl("DownlinkNASTransport") // Configuration Update Command
	if s := g.expect("UEContextReleaseCommand"); s.Cause == nil || s.Cause.Nas == nil || s.Cause.Nas.Value != ngapType.CauseNasPresentNormalRelease {
		t.Fatalf("release cause %s, want nas normal-release", ngapx.CauseString(s.Cause))
	}
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	h.waitIdle(1)
	if u := smf.expect("modify"); u.update.UpCnxState != models.UpCnxState_DEACTIVATED {
		t.Fatalf("update %+v", u.update)
	}
	ue.requestService(3, ue.serviceRequest(nasx.ServiceTypeSignalling, nil, nil))
	if _, a := ue.readServiceAccept(); a.PDUSessionStatus == nil || !a.PDUSessionStatus.Has(5) {
		t.Fatalf("status %v", a.PDUSessionStatus)
	}
}
