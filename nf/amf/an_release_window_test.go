package amf

// The AN release's window (an_release_window.go): a UE back at once, or
// paged, while its old N2 connection is still being released. A slow
// event on the old connection's key (holdKey) stands for a loaded AMF: the
// gNB's Release Complete queues behind it while the new connection's
// message runs on a key of its own.

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/ratelimit"
	"github.com/l25gc/l25gc/sbi"
)

// holdKey runs an event on the UE's key until the returned func is called:
// the UE's later events queue behind it.
func (h *harness) holdKey(amfID int64) (open func()) {
	h.t.Helper()
	running, gate := make(chan struct{}), make(chan struct{})
	if err := h.amf.disp.Dispatch(ratelimit.UE(amfID), func() { close(running); <-gate }); err != nil {
		h.t.Fatal(err)
	}
	<-running
	var once sync.Once
	open = func() { once.Do(func() { close(gate) }) }
	h.t.Cleanup(open)
	return open
}

// releasing is an established UE whose gNB asked for the AN release and got
// the UE Context Release Command; the Complete is the test's to send.
func releasing(t *testing.T, msin string, id uint8, edit func(*config.Config)) (*harness, *gnbSide, *testUE, *fakeSMF) {
	t.Helper()
	h, g, ue, smf := establishedUEWith(t, msin, id, edit)
	g.send(releaseRequest(t, ue.amfID, ue.ranID))
	g.expect("UEContextReleaseCommand")
	return h, g, ue, smf
}

// waited is how many messages of kind waited for an AN release.
func (h *harness) waited(kind string) float64 {
	return h.metric("l25gc_amf_release_waits_total", map[string]string{"message": kind})
}

// awaitsRelease waits until the UE's initial message of kind waits for the
// release; an answer the AMF sends it meanwhile fails the test.
func (h *harness) awaitsRelease(g *gnbSide, kind string) {
	h.t.Helper()
	h.eventually(kind+" waits for the release", func() bool { return h.waited(kind) == 1 || len(g.conn.out) > 0 })
	if len(g.conn.out) > 0 {
		s, _ := g.recv()
		h.t.Fatalf("the AMF answered the %s with %s before the release ended", kind, s.Name)
	}
}

// reader makes sure the association's reader has dispatched everything
// sent before: it reads in order, and the acknowledgement follows.
func (g *gnbSide) reader() {
	g.t.Helper()
	g.send(must2(g.t)(ngapx.BuildRANConfigurationUpdate(ngapx.GNB{PLMN: testPLMN, ID: 1, TACs: []domain.TAC{1},
		SNSSAIs: []models.Snssai{{Sst: 1, Sd: "010203"}}})))
	g.expect("RANConfigurationUpdateAcknowledge")
}

// TS 23.502 4.2.3.2 right after 4.2.6: the Service Request that comes
// before the Release Complete was handled waits for it and is served
// with the kept context, not rejected with #9; the SMF, slow to answer the
// deactivation, still gets the activation only after it.
func TestServiceRequestDuringTheReleaseIsServed(t *testing.T) {
	h, g, ue, smf := releasing(t, "0000000801", 5, nil)
	slow := &slowDeactivation{SessionConsumer: h.amf.opts.Sessions, hold: make(chan struct{})}
	h.amf.opts.Sessions = slow
	open := h.holdKey(ue.amfID)
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	smf.answerActivation(setupTransfer(t, 5))
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeData, psis(5), psis(5)))
	h.awaitsRelease(g, "service_request")
	open()
	h.waitIdle(0) // parked, then adopted by the Service Request
	smf.none()    // the deactivation is still unanswered: no activation yet
	close(slow.hold)
	if u := smf.expect("modify"); u.update.UpCnxState != models.UpCnxState_DEACTIVATED {
		t.Fatalf("first update %+v, want the deactivation", u.update)
	}
	if u := smf.expect("modify"); u.update.UpCnxState != models.UpCnxState_ACTIVATING {
		t.Fatalf("second update %+v, want the activation", u.update)
	}
	if ics, _ := ue.readServiceAccept(); len(ics.Sessions) != 1 || ics.Sessions[0].ID != 5 {
		t.Fatalf("ICS sessions %+v, want session 5", ics.Sessions)
	}
	h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": procService, "result": resultReject}, 0, "service requests rejected")
}

// TS 23.502 4.2.2.2.2: a periodic registration update with the 5G-GUTI in
// the same window is accepted under the kept security context, without an
// Identity Request or a new authentication.
func TestRegistrationDuringTheReleaseUsesTheKeptContext(t *testing.T) {
	h, g, ue, smf := releasing(t, "0000000802", 5, nil)
	auths := h.peers.nextAuth
	open := h.holdKey(ue.amfID)
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	gb, _ := nasx.EncodeGUTI(*ue.guti)
	ue.ranID = 2
	g.send(initialUEMessage(t, ue.ranID, ue.protect(ue.registrationRequest(
		nasMessage.RegistrationType5GSPeriodicRegistrationUpdating, gb), nas.SecurityHeaderTypeIntegrityProtected)))
	h.awaitsRelease(g, "registration_request")
	open()
	if a := ue.readAccept(); a.TAIList == nil {
		t.Fatal("Registration Accept without TAI list")
	}
	smf.expect("modify") // the release's deactivation
	h.peers.mu.Lock()
	defer h.peers.mu.Unlock()
	if h.peers.nextAuth != auths {
		t.Fatalf("%d authentications, want none: the kept context verifies the request", h.peers.nextAuth-auths)
	}
}

// startTransfer posts the SMF's paging transfer (N2 PDU_RES_SETUP_REQ for
// session id) on a goroutine of its own; the answer comes on the channel.
func (h *harness) startTransfer(supi string, id uint8) <-chan *httptest.ResponseRecorder {
	h.t.Helper()
	req, parts := transferRequest(int32(id), models.AmfCommunicationNgapIeType_PDU_RES_SETUP_REQ, nil, setupTransfer(h.t, id))
	b, ct, err := sbi.EncodeRelated(req, parts...)
	if err != nil {
		h.t.Fatal(err)
	}
	out := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		r := httptest.NewRequest(http.MethodPost, "/namf-comm/v1/ue-contexts/"+supi+"/n1-n2-messages", bytes.NewReader(b))
		r.Header.Set("Content-Type", ct)
		w := httptest.NewRecorder()
		h.amf.Handler().ServeHTTP(w, r)
		out <- w
	}()
	return out
}

// TS 23.502 4.2.3.3 step 3a: the SMF's paging transfer that meets the UE
// still releasing waits for the release and pages the parked UE (202)
// instead of 504 UE_NOT_REACHABLE.
func TestPagingTransferDuringTheReleasePages(t *testing.T) {
	h, g, ue, _ := releasing(t, "0000000803", 5, nil)
	answer := h.startTransfer(ue.supi, 5)
	var early *httptest.ResponseRecorder
	h.eventually("the transfer waits for the release", func() bool {
		select {
		case early = <-answer:
			return true
		default:
			return h.waited("n1n2_message_transfer") == 1
		}
	})
	if early != nil {
		t.Fatalf("transfer answered %d %s before the release ended", early.Code, early.Body)
	}
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	if w := <-answer; w.Code != http.StatusAccepted || !bytes.Contains(w.Body.Bytes(), []byte("ATTEMPTING_TO_REACH_UE")) {
		t.Fatalf("transfer: %d %s, want 202 ATTEMPTING_TO_REACH_UE", w.Code, w.Body)
	}
	if p := g.readPaging(); p.STMSI != ue.guti.STMSI() {
		t.Fatalf("paging %+v, want the UE's 5G-S-TMSI", p)
	}
}

// A paging transfer queued on the old connection's key behind the Release
// Complete finds the UE parked: it pages instead of 404.
func TestPagingTransferBehindTheCompletePages(t *testing.T) {
	h, g, ue, _ := releasing(t, "0000000804", 5, nil)
	open := h.holdKey(ue.amfID)
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	g.reader() // the Complete is queued on the held key
	queued := h.amf.disp.QueueLen()
	answer := h.startTransfer(ue.supi, 5)
	h.eventually("the transfer queued behind it", func() bool { return h.amf.disp.QueueLen() > queued })
	open()
	if w := <-answer; w.Code != http.StatusAccepted {
		t.Fatalf("transfer: %d %s, want 202", w.Code, w.Body)
	}
	if p := g.readPaging(); p.STMSI != ue.guti.STMSI() {
		t.Fatalf("paging %+v", p)
	}
}

// Another UE's Service Request does not wait for this UE's release, and a
// 5G-S-TMSI no release is in progress for is still #9 at once.
func TestOnlyTheReleasedUEWaits(t *testing.T) {
	h, g, ue, smf := releasing(t, "0000000805", 5, nil)
	other := h.newUE(g, "0000000806", 7)
	other.register()
	other.goIdle(1)
	open := h.holdKey(ue.amfID)
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	other.requestService(8, other.serviceRequest(nasx.ServiceTypeSignalling, nil, nil))
	other.readServiceAccept()
	stranger := *ue
	g2 := *ue.guti
	g2.TMSI += 1000
	stranger.guti, stranger.ranID = &g2, 9
	stranger.requestService(9, stranger.serviceRequest(nasx.ServiceTypeSignalling, nil, nil))
	if r := stranger.readServiceReject(); r.Cause != nasx.CauseUEIdentityCannotBeDerived {
		t.Fatalf("unknown 5G-S-TMSI: cause #%d, want #9", r.Cause)
	}
	g.expect("UEContextReleaseCommand")
	open()
	smf.expect("modify")
	h.waitIdle(1) // the released UE; the other one is connected again
	if n := h.waited("service_request"); n != 0 {
		t.Fatalf("%v Service Requests waited, want none", n)
	}
}

// A release the gNB never completes ends on the release guard; the
// Service Request that waited for it is served then.
func TestServiceRequestWaitsOutAReleaseNeverCompleted(t *testing.T) {
	h, g, ue, smf := releasing(t, "0000000807", 5, func(c *config.Config) { c.AMF.NGAP.UEReleaseTimeout = 50 * msec })
	open := h.holdKey(ue.amfID) // the guard's expiry queues behind, whenever it comes
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeSignalling, nil, nil))
	h.awaitsRelease(g, "service_request")
	open()
	ue.readServiceAccept()
	smf.expect("modify") // the deactivation of the release the guard ended
	h.wantMetric("l25gc_amf_ue_guard_expiries_total", map[string]string{"guard": "release"}, 1, "release guard expiries")
}

// The table's notes: a waiter runs once when its release ends, and the note
// of a release that nothing ended expires by itself; a parked context or a
// 5G-TMSI without a release in progress has nothing to wait for, and the end
// of another connection's release leaves the note alone.
func TestReleaseNotes(t *testing.T) {
	tab := newUETable()
	if tab.awaitLeft(7, func() {}) {
		t.Fatal("waiting on a 5G-TMSI no release is in progress for")
	}
	tab.markLeaving(7, 1, time.Hour)
	woke := 0
	if !tab.awaitLeft(7, func() { woke++ }) {
		t.Fatal("no wait for a release in progress")
	}
	if w := tab.left(7, 2); w != nil || !tab.someLeaving() {
		t.Fatal("another connection's end ended the note")
	}
	runAll(tab.left(7, 1))
	if woke != 1 || tab.someLeaving() {
		t.Fatalf("woke %d times, note left %v", woke, tab.someLeaving())
	}
	runAll(tab.left(7, 1))
	if woke != 1 {
		t.Fatal("a waiter ran twice")
	}

	expired := make(chan struct{})
	tab.markLeaving(8, 3, time.Millisecond)
	tab.awaitLeft(8, func() { close(expired) })
	<-expired // a release nothing ended does not keep its waiters
	if tab.someLeaving() {
		t.Fatal("an expired note stays")
	}

	tab.markLeaving(9, 4, time.Hour)
	tab.idle[9] = &ueContext{}
	if tab.awaitLeft(9, func() {}) {
		t.Fatal("waiting although the context is parked")
	}
	runAll(tab.left(9, 4))
}

// namedTMSI reads whatever the radio side sends without panicking, and
// names a 5G-TMSI only for the three messages that carry one of this AMF.
func FuzzNamedTMSI(f *testing.F) {
	n := &NF{guami: testGUAMI}
	ours := nasx.GUTI{GUAMI: testGUAMI, TMSI: 0x1234}
	gb, _ := nasx.EncodeGUTI(ours)
	sr, _ := nasx.BuildServiceRequest(nasx.ServiceRequest{ServiceType: nasx.ServiceTypeData, STMSI: ours.STMSI()})
	rr, _ := nasx.BuildRegistrationRequest(nasx.RegistrationRequest{Type: nasMessage.RegistrationType5GSPeriodicRegistrationUpdating, Identity: gb})
	dr, _ := nasx.BuildDeregistrationRequest(true, 0, gb)
	for _, b := range [][]byte{sr, rr, dr} {
		f.Add(b)
		f.Add(append([]byte{0x7e, 0x01, 0, 0, 0, 0, 0}, b...)) // integrity protected
	}
	f.Add([]byte{0x7e, 0x02, 0, 0, 0, 0, 0, 0x7e, 0x00, 0x4c})
	f.Fuzz(func(t *testing.T, b []byte) {
		tmsi, kind, ok := n.namedTMSI(b)
		if !ok {
			if tmsi != 0 || kind != "" {
				t.Fatalf("no identity, yet %08x %q", tmsi, kind)
			}
			return
		}
		switch kind {
		case waitServiceRequest, waitRegistration, waitDeregistration:
		default:
			t.Fatalf("kind %q", kind)
		}
	})
}

// The seeds name the 5G-TMSI they carry.
func TestNamedTMSIOfTheInitialMessages(t *testing.T) {
	n := &NF{guami: testGUAMI}
	ours := nasx.GUTI{GUAMI: testGUAMI, TMSI: 0x1234}
	gb, _ := nasx.EncodeGUTI(ours)
	other := ours
	other.GUAMI.AMFID.SetID++
	ob, _ := nasx.EncodeGUTI(other)
	sr := must2(t)(nasx.BuildServiceRequest(nasx.ServiceRequest{ServiceType: nasx.ServiceTypeData, STMSI: ours.STMSI()}))
	for _, c := range []struct {
		name string
		b    []byte
		kind string
	}{
		{"Service Request", sr, waitServiceRequest},
		{"protected Service Request", append([]byte{0x7e, 0x01, 1, 2, 3, 4, 0}, sr...), waitServiceRequest},
		{"Registration Request", must2(t)(nasx.BuildRegistrationRequest(nasx.RegistrationRequest{
			Type: nasMessage.RegistrationType5GSMobilityRegistrationUpdating, Identity: gb})), waitRegistration},
		{"Deregistration Request", must2(t)(nasx.BuildDeregistrationRequest(false, 0, gb)), waitDeregistration},
		{"another AMF's GUTI", must2(t)(nasx.BuildRegistrationRequest(nasx.RegistrationRequest{
			Type: nasMessage.RegistrationType5GSMobilityRegistrationUpdating, Identity: ob})), ""},
		{"ciphered", append([]byte{0x7e, 0x02, 1, 2, 3, 4, 0}, sr...), ""},
	} {
		tmsi, kind, ok := n.namedTMSI(c.b)
		if kind != c.kind || ok != (c.kind != "") || ok && tmsi != ours.TMSI {
			t.Errorf("%s: %08x %q %v, want %q", c.name, tmsi, kind, ok, c.kind)
		}
	}
}
