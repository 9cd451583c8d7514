package amf

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/ratelimit"
)

// TS 23.502 4.2.3.3: the SMF's transfer for an idle UE is answered 202
// ATTEMPTING_TO_REACH_UE, the UE is paged by its 5G-S-TMSI in its
// registration area, answers with a Service Request, and the gNB gets the
// SMF's N2 SM information in Initial Context Setup — no second round trip
// to the SMF; the gNB's answer reaches the SMF.
func TestPagingThenServiceRequestSetsUpTheSession(t *testing.T) {
	h, g, ue, smf := idleUE(t, "0000000301", 5)
	w, tr := h.pageRequest(ue.supi, 5, nil)
	if w.Code != http.StatusAccepted || !bytes.Contains(w.Body.Bytes(), []byte("ATTEMPTING_TO_REACH_UE")) || w.Header().Get("Location") == "" {
		t.Fatalf("transfer for an idle UE: %d %s Location %q", w.Code, w.Body, w.Header().Get("Location"))
	}
	p := g.readPaging()
	if p.STMSI != ue.guti.STMSI() || len(p.TAIs) != 1 || p.TAIs[0] != (domain.TAI{PLMN: testPLMN, TAC: 1}) {
		t.Fatalf("paging %+v, want the UE's 5G-S-TMSI in TA 1", p)
	}
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeMobileTerminated, nil, psis(5)))
	ics, a := ue.readServiceAccept()
	if len(ics.Sessions) != 1 || ics.Sessions[0].ID != 5 || a.ReactivationResult != nil {
		t.Fatalf("ICS sessions %+v, accept %+v", ics.Sessions, a)
	}
	smf.none() // the transfer's N2 SM information was used as it was
	smf.set("modify", smfReply{status: 204})
	ue.contextSetupResponse(5)
	if u := smf.expect("modify"); u.update.N2SmInfoType != models.N2SmInfoType_PDU_RES_SETUP_RSP {
		t.Fatalf("update %+v", u.update)
	}
	h.wantMetric("l25gc_amf_paging_total", map[string]string{"result": resultSuccess}, 1, "pagings answered")
	h.wantMetric("l25gc_amf_paging_attempts_total", nil, 1, "pagings started")
	_ = tr
}

// TS 24.501 5.6.2.2.2: unanswered, Paging is sent again on each T3513
// expiry, paging_retransmissions times; then every kept transfer's SMF
// hears N1N2MsgTxfrFailureNotification UE_NOT_RESPONDING with the
// transfer's URI. The UE stays registered and idle and is paged again for
// the next downlink data.
func TestPagingTimeoutNotifiesTheSMF(t *testing.T) {
	h, g, ue, _ := idleUEWith(t, "0000000302", 5, func(c *config.Config) {
		c.AMF.NAS.T3513 = 20 * msec
		c.AMF.NAS.PagingRetransmissions = 2
	})
	sink := h.failureSink()
	w, _ := h.pageRequest(ue.supi, 5, sink)
	if w.Code != http.StatusAccepted {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	for i := 0; i < 3; i++ { // the first Paging and two retransmissions
		g.readPaging()
	}
	n := sink.expect(h)
	if n.Cause != models.N1N2MessageTransferCause_UE_NOT_RESPONDING || n.N1n2MsgDataUri != w.Header().Get("Location") {
		t.Fatalf("failure notification %+v, want UE_NOT_RESPONDING for %s", n, w.Header().Get("Location"))
	}
	g.noMore(60 * msec) // no fourth Paging
	h.wantMetric("l25gc_amf_paging_retransmissions_total", nil, 2, "T3513 retransmissions")
	h.wantMetric("l25gc_amf_paging_total", map[string]string{"result": resultFailure}, 1, "pagings failed")
	h.waitIdle(1)
	if w, _ := h.pageRequest(ue.supi, 5, sink); w.Code != http.StatusAccepted {
		t.Fatalf("next transfer: %d", w.Code)
	}
	g.readPaging()
}

// idleUEWith is idleUE with the AMF's config edited.
func idleUEWith(t *testing.T, msin string, id uint8, edit func(*config.Config)) (*harness, *gnbSide, *testUE, *fakeSMF) {
	t.Helper()
	h, g, ue, smf := establishedUEWith(t, msin, id, edit)
	ue.goIdle(1)
	smf.expect("modify")
	return h, g, ue, smf
}

// TS 23.502 4.2.3.3 step 4a: transfers for a UE already paged page once.
func TestSeveralTransfersPageOnce(t *testing.T) {
	h, g, ue, _ := idleUE(t, "0000000303", 5)
	for i := 0; i < 3; i++ {
		if w, _ := h.pageRequest(ue.supi, 5, nil); w.Code != http.StatusAccepted {
			t.Fatalf("transfer %d: %d", i, w.Code)
		}
	}
	g.readPaging()
	g.noMore(50 * msec)
	h.wantMetric("l25gc_amf_paging_attempts_total", nil, 1, "pagings started")
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeMobileTerminated, nil, psis(5)))
	if ics, _ := ue.readServiceAccept(); len(ics.Sessions) != 1 {
		t.Fatalf("sessions %+v: want the last transfer's one session", ics.Sessions)
	}
}

// TS 24.501 5.3.7: once the mobile reachable timer expired the UE is not
// paged: the transfer gets 504 UE_NOT_REACHABLE; a paging running then
// fails.
func TestMobileReachableExpiryStopsPaging(t *testing.T) {
	h, g, ue, _ := idleUEWith(t, "0000000304", 5, func(c *config.Config) { c.AMF.NAS.T3513 = time.Hour })
	sink := h.failureSink()
	if w, _ := h.pageRequest(ue.supi, 5, sink); w.Code != http.StatusAccepted {
		t.Fatalf("%d", w.Code)
	}
	g.readPaging()
	h.expireReachability(ue.guti.TMSI)
	if n := sink.expect(h); n.Cause != models.N1N2MessageTransferCause_UE_NOT_RESPONDING {
		t.Fatalf("%+v", n)
	}
	w, _ := h.pageRequest(ue.supi, 5, sink)
	if w.Code != http.StatusGatewayTimeout || !bytes.Contains(w.Body.Bytes(), []byte(causeUENotReachable)) {
		t.Fatalf("after mobile reachable expiry: %d %s", w.Code, w.Body)
	}
	h.wantMetric("l25gc_amf_mobile_reachable_expiries_total", nil, 1, "unreachable UEs")
	h.wantMetric("l25gc_amf_registered_ues", nil, 1, "still registered until implicit deregistration")
}

// A UE that registers (mobility update) instead of answering the paging
// ends it: the SMF hears of the failure at once, nothing stays kept.
func TestRegistrationEndsThePaging(t *testing.T) {
	h, g, ue, _ := idleUEWith(t, "0000000305", 5, func(c *config.Config) { c.AMF.NAS.T3513 = time.Hour })
	sink := h.failureSink()
	h.pageRequest(ue.supi, 5, sink)
	g.readPaging()
	ue.returnWithGUTI(2)
	if n := sink.expect(h); n.Cause != models.N1N2MessageTransferCause_UE_NOT_RESPONDING {
		t.Fatalf("%+v", n)
	}
	ue.up(ue.registrationComplete())
	ue.dl("DownlinkNASTransport")
	h.wantMetric("l25gc_amf_paging_total", map[string]string{"result": resultFailure}, 1, "pagings ended by the registration")
}

// A UE deregistered by the UDM while paged: the paging ends, the SMF is
// told, nothing is left of the UE.
func TestDeregistrationEndsThePaging(t *testing.T) {
	h, g, ue, _ := idleUEWith(t, "0000000306", 5, func(c *config.Config) { c.AMF.NAS.T3513 = time.Hour })
	sink := h.failureSink()
	h.pageRequest(ue.supi, 5, sink)
	g.readPaging()
	if code, p := h.callback("/namf-callback/v1/"+ue.supi+"/dereg-notify", `{"deregReason":"SUBSCRIPTION_WITHDRAWN"}`); code != http.StatusNoContent {
		t.Fatalf("%d %+v", code, p)
	}
	sink.expect(h)
	h.waitIdle(0)
}

// Many idle UEs paged at once, each by its own transfer: each is paged
// once and each answer gets its own session set up.
func TestPagingManyUEsAtOnce(t *testing.T) {
	const n = 16
	h, g := newSetUpHarness(t, func(c *config.Config) { c.AMF.NAS.T3513 = time.Hour })
	smf, _ := h.withSMF()
	ues := make([]*testUE, n)
	for i := range ues {
		ue := h.newUE(g, fmt.Sprintf("00000004%02d", i), int64(100+i))
		ue.register()
		ue.requestSession(1, &slice1, "internet")
		smf.expect("create")
		h.eventually("SM context created", func() bool { return h.sessionCreated(ue.supi, 1) })
		ue.goIdle(i + 1)
		smf.expect("modify")
		ues[i] = ue
	}
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i, ue := range ues {
		wg.Add(1)
		go func() { defer wg.Done(); w, _ := h.pageRequest(ue.supi, 1, nil); codes[i] = w.Code }()
	}
	wg.Wait()
	paged := map[uint32]bool{}
	for i := 0; i < n; i++ {
		p := g.readPaging()
		if paged[p.STMSI.TMSI] {
			t.Fatalf("5G-TMSI %08x paged twice", p.STMSI.TMSI)
		}
		paged[p.STMSI.TMSI] = true
	}
	for i, ue := range ues {
		if codes[i] != http.StatusAccepted || !paged[ue.guti.TMSI] {
			t.Fatalf("UE %d: transfer %d, paged %v", i, codes[i], paged[ue.guti.TMSI])
		}
		ue.requestService(int64(200+i), ue.serviceRequest(nasx.ServiceTypeMobileTerminated, nil, psis(1)))
		if ics, _ := ue.readServiceAccept(); len(ics.Sessions) != 1 {
			t.Fatalf("UE %d: %d sessions set up", i, len(ics.Sessions))
		}
	}
	h.wantMetric("l25gc_amf_paging_total", map[string]string{"result": resultSuccess}, n, "pagings answered")
	h.wantMetric("l25gc_amf_idle_ues", nil, 0, "idle UEs")
}

// sessionCreated says whether the connected UE of supi has SM context id.
func (h *harness) sessionCreated(supi string, id uint8) bool {
	amfID, ok := h.amf.ues.findSUPI(supi)
	if !ok {
		return false
	}
	done := make(chan bool, 1)
	_ = h.amf.disp.Dispatch(ratelimit.UE(amfID), func() {
		ue := h.amf.ues.get(amfID)
		done <- ue != nil && ue.pdu.get(id) != nil && ue.pdu.get(id).created()
	})
	return <-done
}

// expireReachability runs the parked UE's mobile reachable expiry now, as
// its timer would (the timer itself runs for minutes).
func (h *harness) expireReachability(tmsi uint32) {
	h.t.Helper()
	var ue *ueContext
	h.amf.ues.editIdleTMSI(tmsi, func(p *ueContext) { ue = p })
	if ue == nil {
		h.t.Fatalf("no parked UE with 5G-TMSI %08x", tmsi)
	}
	h.amf.onMobileReachableExpiry(ue, tmsi)
}

// N2 SM information no PDU Session Resource request carries is refused at
// once for an idle UE too (400), without paging it.
func TestIdleTransferOfUnknownN2TypeRefused(t *testing.T) {
	h, g, ue, _ := idleUE(t, "0000000307", 5)
	req, parts := transferRequest(5, "PDU_RES_NTY", nil, []byte{2})
	if w, p := h.n1n2(ue.supi, req, parts...); w.Code != http.StatusBadRequest || p.Cause != "MANDATORY_IE_INCORRECT" {
		t.Fatalf("%d %q", w.Code, p.Cause)
	}
	g.noMore(20 * msec)
	h.wantMetric("l25gc_amf_paging_attempts_total", nil, 0, "pagings started")
}

// A paged UE that also has uplink data for the paged session: the kept
// N2 SM information serves both, with no second activation at the SMF.
func TestPagedSessionInUplinkDataStatusIsActivatedOnce(t *testing.T) {
	h, g, ue, smf := idleUE(t, "0000000308", 5)
	h.pageRequest(ue.supi, 5, nil)
	g.readPaging()
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeData, psis(5), psis(5)))
	ics, a := ue.readServiceAccept()
	if len(ics.Sessions) != 1 || a.ReactivationResult == nil || *a.ReactivationResult != 0 {
		t.Fatalf("sessions %+v, reactivation result %v", ics.Sessions, a.ReactivationResult)
	}
	smf.none()
}
