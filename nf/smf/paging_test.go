package smf

import (
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"
	dto "github.com/prometheus/client_model/go"

	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/upf/rules"
)

// idleSession is an established, activated and then AN-released session
// (TS 23.502 4.2.6): its context URI and CP SEID.
func (s *testSMF) idleSession(t *testing.T, supi string, psi uint8) (string, uint64) {
	t.Helper()
	ref, _ := s.established(t, supi, psi, establishmentRequest(t, psi, 1))
	s.activate(t, ref)
	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_DEACTIVATED}); a.status != 200 {
		t.Fatalf("deactivation: %d %s", a.status, a.json)
	}
	c, ok := s.nf.ctxs.get(strings.TrimPrefix(ref, smContextsPath+"/"))
	if !ok {
		t.Fatal("no context behind " + ref)
	}
	return ref, c.cpSEID
}

func downlinkData(cpSEID uint64) *rules.Report {
	return &rules.Report{CPSEID: cpSEID, DownlinkData: &rules.DownlinkDataReport{PDRIDs: []uint16{pdrDownlink(defaultQFI)}, QFIs: []uint8{defaultQFI}}}
}

func (s *testSMF) reports(t *testing.T, result string) float64 {
	t.Helper()
	var m dto.Metric
	if err := s.nf.m.pagings.WithLabelValues(result).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// downlinkFAR is the session's downlink FAR at the fake UPF.
func (s *testSMF) downlinkFAR(t *testing.T) rules.FAR {
	t.Helper()
	if s.wire != nil {
		return s.wire.downlinkFAR(t)
	}
	far, ok := s.n4.far(t, farDownlink)
	if !ok {
		t.Fatal("no downlink FAR")
	}
	return far
}

// waitFor polls cond: the SMF acts after answering; the bound catches a
// broken SMF, it times nothing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("never happened: " + what)
}

// failurePath is the path of the transfer's n1n2FailureTxfNotifURI (its
// host is the SMF's advertised address, not the test server's).
func failurePath(t *testing.T, tr transfer) string {
	t.Helper()
	u, err := url.Parse(tr.req.N1n2FailureTxfNotifURI)
	if err != nil || u.Scheme == "" || u.Host == "" {
		t.Fatalf("n1n2FailureTxfNotifURI %q", tr.req.N1n2FailureTxfNotifURI)
	}
	return u.Path
}

// A report storm (TS 23.502 4.2.3.3, DESIGN.md: one report per session
// until served): 100 Downlink Data Reports for one idle session, all
// accepted, make one N1N2MessageTransfer, with what TS 29.518 6.1.6.2.3
// asks for paging; the gNB's setup response, without ACTIVATING first,
// forwards the downlink to its tunnel again.
func TestDownlinkDataReportStormPagesOnce(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, seid := s.idleSession(t, subscribed, 1)
	s.core.setTransferStatus(202)
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cause := s.n4.report(downlinkData(seid)); cause != pfcpCauseAccepted {
				t.Errorf("report answered cause %d, want 1", cause)
			}
		}()
	}
	wg.Wait()
	if r, sup := s.reports(t, "reported"), s.reports(t, "suppressed"); r != 1 || sup != 99 {
		t.Fatalf("%v reports paged, %v suppressed; want 1 and 99", r, sup)
	}
	tr := s.core.waitTransfer(t)
	if tr.supi != subscribed || tr.req.PduSessionId != 1 || tr.n1 != nil || tr.req.Arp == nil || tr.req.Arp.PriorityLevel != 7 || tr.req.Var5qi != 9 ||
		failurePath(t, tr) != n1n2FailurePath+strings.TrimPrefix(ref, smContextsPath+"/") {
		t.Fatalf("paging transfer %+v", tr.req)
	}
	if typ := tr.req.N2InfoContainer.SmInfo.N2InfoContent.NgapIeType; typ != models.AmfCommunicationNgapIeType_PDU_RES_SETUP_REQ {
		t.Fatalf("N2 SM information %s", typ)
	}
	setup, err := ngapx.ParsePDUSessionResourceSetupRequestTransfer(tr.n2)
	if err != nil || setup.UL.IPv4.String() != upfN3 {
		t.Fatalf("setup request transfer %+v %v", setup, err)
	}
	if far := s.downlinkFAR(t); far.Action != rules.ActionBuffer|rules.ActionNotify {
		t.Fatalf("downlink FAR while paging: %+v", far)
	}
	s.activate(t, ref) // the Service Request answered paging (TS 23.502 4.2.3.3 step 5)
	if far := s.downlinkFAR(t); far.Action != rules.ActionForward || far.OuterHeader == nil || far.OuterHeader.PeerIPv4.String() != gnbN3 || far.OuterHeader.TEID != 0x77 {
		t.Fatalf("downlink FAR after activation: %+v", far)
	}
	// Active: a late report pages nobody.
	if cause := s.n4.report(downlinkData(seid)); cause != pfcpCauseAccepted || s.reports(t, "reported") != 1 {
		t.Fatalf("late report: cause %d, %v paged", cause, s.reports(t, "reported"))
	}
}

// The paging-triggered activation also works when the AMF first asks
// with ACTIVATING (TS 23.502 4.2.3.2 step 4 after the UE's Service
// Request), and a later AN release and report page again.
func TestPagingAnsweredThroughServiceRequest(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, seid := s.idleSession(t, subscribed, 1)
	s.core.setTransferStatus(202)
	s.n4.report(downlinkData(seid))
	s.core.waitTransfer(t)
	a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_ACTIVATING})
	var up models.SmContextUpdatedData
	if a.status != 200 || json.Unmarshal(a.json, &up) != nil || up.N2SmInfoType != models.N2SmInfoType_PDU_RES_SETUP_REQ {
		t.Fatalf("activating: %d %s", a.status, a.json)
	}
	s.activate(t, ref)
	if s.downlinkFAR(t).Action != rules.ActionForward {
		t.Fatal("downlink not forwarded after the service request")
	}
	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_DEACTIVATED}); a.status != 200 {
		t.Fatalf("second deactivation: %d", a.status)
	}
	s.n4.report(downlinkData(seid))
	s.core.waitTransfer(t)
	if s.reports(t, "reported") != 2 {
		t.Fatalf("%v pagings, want 2", s.reports(t, "reported"))
	}
}

// The UE does not answer paging: the AMF's failure notification (TS
// 29.518 6.1.5.2) gets 204, the UPF drops its buffer (FAR DROP) and then
// buffers again, so the next packet pages again.
func TestPagingFailureNotificationDiscardsBuffer(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	_, seid := s.idleSession(t, subscribed, 1)
	s.core.setTransferStatus(202)
	s.n4.report(downlinkData(seid))
	tr := s.core.waitTransfer(t)
	before := len(s.n4.modifications())
	a := s.post(t, failurePath(t, tr), models.N1N2MsgTxfrFailureNotification{Cause: models.N1N2MessageTransferCause_UE_NOT_RESPONDING, N1n2MsgDataUri: "/x"})
	if a.status != 204 {
		t.Fatalf("failure notification: %d %s", a.status, a.json)
	}
	s.assertDiscardedThenBuffered(t, before)
	s.n4.report(downlinkData(seid))
	s.core.waitTransfer(t)
	if a := s.post(t, callbackPrefix+"n1n2-failure/nosuchref", models.N1N2MsgTxfrFailureNotification{Cause: models.N1N2MessageTransferCause_UE_NOT_RESPONDING}); a.status != 404 {
		t.Fatalf("failure notification for no context: %d", a.status)
	}
}

// assertDiscardedThenBuffered waits for the discard and the re-arm (done
// after the SMF answered, for a refused transfer or a timeout) and checks
// the two modifications.
func (s *testSMF) assertDiscardedThenBuffered(t *testing.T, before int) {
	t.Helper()
	waitFor(t, "the downlink FAR buffering again", func() bool { return len(s.n4.modifications()) >= before+2 })
	checkDiscardedThenBuffered(t, s.n4.modifications()[before:])
}

func checkDiscardedThenBuffered(t *testing.T, mods []rules.Modification) {
	t.Helper()
	if len(mods) != 2 || len(mods[0].Update.FARs) != 1 || len(mods[1].Update.FARs) != 1 ||
		mods[0].Update.FARs[0].Action != rules.ActionDrop || mods[1].Update.FARs[0].Action != rules.ActionBuffer|rules.ActionNotify {
		t.Fatalf("modifications after the failure: %+v, want FAR DROP then BUFF|NOCP", mods)
	}
}

// The AMF refuses the transfer (TS 29.518 5.2.2.3.1.3, e.g. 504 UE not
// reachable): as a paging failure, and the next report pages again.
func TestPagingRefusedByAMF(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	_, seid := s.idleSession(t, subscribed, 1)
	s.core.setTransferStatus(504)
	before := len(s.n4.modifications())
	s.n4.report(downlinkData(seid))
	s.core.waitTransfer(t)
	waitFor(t, "the buffer discarded after the refusal", func() bool { return s.reports(t, "failed") == 1 })
	s.assertDiscardedThenBuffered(t, before)
	s.core.setTransferStatus(202)
	if cause := s.n4.report(downlinkData(seid)); cause != pfcpCauseAccepted {
		t.Fatalf("report after the failure: cause %d", cause)
	}
	s.core.waitTransfer(t)
}

// A report for a session the SMF does not hold, or no longer holds, is
// PFCP cause 65 (TS 29.244 7.5.9); usage-only reports are accepted and
// page nobody.
func TestReportForUnknownSession(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	if cause := s.n4.report(downlinkData(4242)); cause != pfcpCauseSessionNotFound {
		t.Fatalf("unknown SEID: cause %d, want 65", cause)
	}
	ref, seid := s.idleSession(t, subscribed, 1)
	if cause := s.n4.report(&rules.Report{CPSEID: seid, Usage: []rules.Usage{{URRID: urrSession}}}); cause != pfcpCauseAccepted || s.reports(t, "reported") != 0 {
		t.Fatalf("usage report: cause %d", cause)
	}
	if a := s.post(t, ref+"/release", models.SmfPduSessionSmContextReleaseData{}); a.status != 204 {
		t.Fatalf("release: %d", a.status)
	}
	if cause := s.n4.report(downlinkData(seid)); cause != pfcpCauseSessionNotFound {
		t.Fatalf("released session: cause %d, want 65", cause)
	}
}

// The AMF passed the transfer on (200) but released the UE before the
// gNB answered: the AN release ends the paging attempt and re-arms the
// report, so the next downlink packet pages again.
func TestANReleaseWhilePagingRearmsReport(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, seid := s.idleSession(t, subscribed, 1)
	s.n4.report(downlinkData(seid))
	s.core.waitTransfer(t)
	before := len(s.n4.modifications())
	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_DEACTIVATED}); a.status != 200 {
		t.Fatalf("deactivation while paging: %d %s", a.status, a.json)
	}
	if mods := s.n4.modifications()[before:]; len(mods) != 1 || mods[0].Update.FARs[0].Action != rules.ActionBuffer|rules.ActionNotify {
		t.Fatalf("modifications %+v, want the downlink FAR at BUFF|NOCP again", mods)
	}
	s.n4.report(downlinkData(seid))
	s.core.waitTransfer(t)

	// Paged, the UE's Service Request made the AMF ask ACTIVATING, and the
	// UE was lost before the gNB answered: the AN release ends the attempt.
	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_ACTIVATING}); a.status != 200 {
		t.Fatalf("activating: %d", a.status)
	}
	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_DEACTIVATED}); a.status != 200 {
		t.Fatalf("deactivation after ACTIVATING: %d", a.status)
	}
	if cause := s.n4.report(downlinkData(seid)); cause != pfcpCauseAccepted || s.reports(t, "reported") != 3 {
		t.Fatalf("report after the second AN release: cause %d, %v pagings, want 3", cause, s.reports(t, "reported"))
	}
	s.core.waitTransfer(t)
}

// The gNB refuses to set an idle session up again (PDU_RES_SETUP_FAIL
// after ACTIVATING, or after paging): the session stays, deactivated and
// buffering, and the next report pages again.
func TestReactivationRefusedKeepsSession(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, seid := s.idleSession(t, subscribed, 1)
	fail, err := ngapx.BuildPDUSessionResourceSetupUnsuccessfulTransfer(ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified))
	if err != nil {
		t.Fatal(err)
	}
	refuse := func() {
		t.Helper()
		a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N2SmInfo: &models.RefToBinaryData{ContentId: "n2"},
			N2SmInfoType: models.N2SmInfoType_PDU_RES_SETUP_FAIL}, n2Part(fail))
		var up models.SmContextUpdatedData
		if a.status != 200 || json.Unmarshal(a.json, &up) != nil || up.UpCnxState != models.UpCnxState_DEACTIVATED {
			t.Fatalf("refused reactivation: %d %s", a.status, a.json)
		}
		if far := s.downlinkFAR(t); far.Action != rules.ActionBuffer|rules.ActionNotify || s.nf.ctxs.count() != 1 {
			t.Fatalf("after the refusal: FAR %+v, %d contexts", far, s.nf.ctxs.count())
		}
	}
	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_ACTIVATING}); a.status != 200 {
		t.Fatalf("activating: %d", a.status)
	}
	refuse()
	s.n4.report(downlinkData(seid))
	s.core.waitTransfer(t)
	refuse()
	s.n4.report(downlinkData(seid))
	s.core.waitTransfer(t)
}

// The AMF rejects the transfer for now (409, a registration in progress):
// the SMF keeps the buffer and pages again after its guard timer (TS
// 23.502 4.2.3.3 step 3b); after pagingRetries such answers it gives up
// as on any failure.
func TestPagingRetriedAfterTemporaryReject(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	s.nf.pagingGuard = time.Millisecond
	_, seid := s.idleSession(t, subscribed, 1)
	before := len(s.n4.modifications())
	s.core.setTransferStatus(409, 202)
	s.n4.report(downlinkData(seid))
	s.core.waitTransfer(t)
	s.core.waitTransfer(t) // the retry, answered 202: the AMF pages
	if mods := s.n4.modifications()[before:]; len(mods) != 0 || s.reports(t, "failed") != 0 {
		t.Fatalf("the buffer was touched after a temporary reject: %+v", mods)
	}

	_, seid2 := s.idleSession(t, subscribed, 2)
	before = len(s.n4.modifications())
	s.core.setTransferStatus(409)
	s.n4.report(downlinkData(seid2))
	for range pagingRetries + 1 {
		s.core.waitTransfer(t)
	}
	waitFor(t, "paging given up after the retries", func() bool { return s.reports(t, "failed") == 1 })
	s.assertDiscardedThenBuffered(t, before)
}

// An AMF that accepted the transfer (202) and then lost the attempt (it
// restarted) never reports an outcome: after pagingTimeout the SMF ends
// the attempt as failed, and the next packet pages again.
func TestPagingWithoutOutcomeTimesOut(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	s.nf.pagingTimeout = time.Millisecond
	_, seid := s.idleSession(t, subscribed, 1)
	before := len(s.n4.modifications())
	s.core.setTransferStatus(202)
	s.n4.report(downlinkData(seid))
	s.core.waitTransfer(t)
	waitFor(t, "the attempt ended", func() bool { return s.reports(t, "failed") == 1 })
	s.assertDiscardedThenBuffered(t, before)
	s.n4.report(downlinkData(seid))
	s.core.waitTransfer(t)
}
