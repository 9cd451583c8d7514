package ransim

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// pagingAnswerResult is what AnswerPaging returned.
type pagingAnswerResult struct {
	at  time.Time
	lat time.Duration
	err error
}

func answerPagingAsync(ctx context.Context, ue *UE) chan pagingAnswerResult {
	done := make(chan pagingAnswerResult, 1)
	go func() { at, lat, err := ue.AnswerPaging(ctx); done <- pagingAnswerResult{at, lat, err} }()
	return done
}

// waitArmed returns once the UE's owner waits in AnswerPaging.
func waitArmed(t *testing.T, ue *UE) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ue.idle.answer.Load() == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // bounds a failing test only
			t.Fatal("AnswerPaging never armed the UE's answer")
		}
	}
}

func pagingFor(amf *scriptedAMF, s nasx.STMSI) *ngapType.NGAPPDU {
	pdu, err := ngapx.Decode(amf.built(ngapx.BuildPaging(ngapx.Paging{STMSI: s, TAIs: []domain.TAI{{PLMN: testPLMN, TAC: 1}}})))
	if err != nil {
		amf.t.Fatal(err)
	}
	return pdu
}

// idleUEWithUserPlane connects a gNB with a GTP-U side to a scripted AMF
// and gives it an idle UE with one PDU session.
func idleUEWithUserPlane(t *testing.T) (*GNB, *scriptedAMF, *UE) {
	g, amf := connectScripted(t)
	g.up = NewUserPlane(netip.MustParseAddr("127.0.0.1"), nil)
	if err := g.up.Listen(0); err != nil {
		t.Fatal(err)
	}
	ue, _ := amf.withIdleSession(g)
	return g, amf, ue
}

// pagedWhileAnswering pages an idle UE whose owner already waits in
// AnswerPaging; done gets the owner's answer.
func pagedWhileAnswering(t *testing.T) (*GNB, *scriptedAMF, *UE, chan pagingAnswerResult) {
	g, amf, ue := idleUEWithUserPlane(t)
	done := answerPagingAsync(context.Background(), ue)
	waitArmed(t, ue)
	g.onPaging(pagingFor(amf, testSTMSI))
	return g, amf, ue, done
}

// TS 23.502 4.2.3.3 step 6: the paged UE's Service Request is on N2 by the
// time the gNB has handled the Paging: it does not wait for the owner's
// goroutine to be scheduled (the first downlink packet's latency).
func TestPagedUEAnswersFromTheGNBsHandlingOfThePaging(t *testing.T) {
	g, amf, ue, done := pagedWhileAnswering(t)
	if n := len(amf.conn.up); n != 1 {
		t.Fatalf("%d uplink messages when the gNB had handled the Paging: want the Initial UE Message", n)
	}
	rrc, _, ranID, pdu := amf.initialNAS()
	clear, _ := amf.serviceRequest(pdu)
	if rrc != int64(ngapType.RRCEstablishmentCausePresentMtAccess) || clear.ServiceType != nasx.ServiceTypeMobileTerminated {
		t.Fatalf("RRC cause %d, service type %d: want mt-Access and mobile terminated services", rrc, clear.ServiceType)
	}
	amf.contextWithSession(ranID, ngapx.Tunnel{IPv4: testUPF.IPv4, TEID: testUPF.TEID + 1})
	if a := <-done; a.err != nil || a.lat <= 0 {
		t.Fatalf("AnswerPaging: %v after %v", a.err, a.lat)
	}
	if ue.Idle() || g.IdleUEs() != 0 {
		t.Fatalf("after the Service Accept: idle %v, the gNB pages %d UEs", ue.Idle(), g.IdleUEs())
	}
}

// A Paging that reached the UE before its owner called AnswerPaging is
// answered all the same, and its latency counts from the Paging.
func TestPagingBeforeAnswerPagingIsAnswered(t *testing.T) {
	g, amf, ue := idleUEWithUserPlane(t)
	g.onPaging(pagingFor(amf, testSTMSI))
	if n := len(amf.conn.up); n != 0 {
		t.Fatalf("%d uplink messages with nobody waiting to answer: want none yet", n)
	}
	called := time.Now()
	done := answerPagingAsync(context.Background(), ue)
	rrc, _, ranID, _ := amf.initialNAS()
	if rrc != int64(ngapType.RRCEstablishmentCausePresentMtAccess) {
		t.Fatalf("RRC cause %d: want mt-Access", rrc)
	}
	amf.contextWithSession(ranID, ngapx.Tunnel{IPv4: testUPF.IPv4, TEID: testUPF.TEID + 1})
	a := <-done
	if a.err != nil || !a.at.Before(called) {
		t.Fatalf("AnswerPaging: %v, paged at %v (called at %v): want the earlier Paging's time", a.err, a.at, called)
	}
}

// An owner that stops waiting disarms the answer: the next Paging waits
// for whoever asks for it, and nothing goes on N2 by itself.
func TestCancelledAnswerPagingLeavesThePagingToTheOwner(t *testing.T) {
	g, amf := connectScripted(t)
	ue, _ := amf.withIdleSession(g)
	ctx, cancel := context.WithCancel(context.Background())
	done := answerPagingAsync(ctx, ue)
	waitArmed(t, ue)
	cancel()
	if a := <-done; !errors.Is(a.err, context.Canceled) {
		t.Fatalf("AnswerPaging after cancel: %v", a.err)
	}
	g.onPaging(pagingFor(amf, testSTMSI))
	if n := len(amf.conn.up); n != 0 {
		t.Fatalf("%d uplink messages after the owner stopped waiting: want none", n)
	}
	expired, stop := context.WithTimeout(context.Background(), 10*time.Second) // bounds a failing test only
	defer stop()
	if _, err := ue.AwaitPaging(expired); err != nil {
		t.Fatalf("the Paging did not reach the UE: %v", err)
	}
}

// TS 23.501 5.4.4.1, TS 38.413 8.3.1.2: an Initial Context Setup Request
// with the UE Radio Capability the AMF kept spares the UE Radio Capability
// Info Indication: the gNB's next message is its answer to what the AMF
// sends next.
func TestKnownRadioCapabilityIsNotReportedAgain(t *testing.T) {
	_, amf, _, done := pagedWhileAnswering(t)
	_, _, ranID, _ := amf.initialNAS()
	amf.setUpContext(ranID, ngapx.Tunnel{IPv4: testUPF.IPv4, TEID: testUPF.TEID + 1}, []byte("kept capability"))
	if a := <-done; a.err != nil {
		t.Fatal(a.err)
	}
	amf.send(ngapx.BuildUEContextReleaseCommand(testAMFUEID+1, ranID, ngapx.CauseNas(ngapType.CauseNasPresentNormalRelease)))
	amf.next("UEContextReleaseComplete")
}

// A UE left to Stay (`l25gc ransim --idle`) answers a Paging as
// AnswerPaging does: its Service Request is on N2 by the time the gNB has
// handled the Paging; the owner reports the Accept, and once released to
// CM-IDLE again the UE answers the next Paging the same way.
func TestStayingUEAnswersPagingFromTheGNBsHandlingOfThePaging(t *testing.T) {
	g, amf, ue := idleUEWithUserPlane(t)
	ctx, cancel := context.WithCancel(context.Background())
	paged, stayed := make(chan error, 2), make(chan error, 1)
	go func() {
		stayed <- ue.Stay(ctx, func(_ time.Time, _ time.Duration, err error) { paged <- err })
	}()
	defer func() {
		cancel()
		if err := <-stayed; err != nil {
			t.Error(err)
		}
	}()
	waitArmed(t, ue)
	g.onPaging(pagingFor(amf, testSTMSI))
	if n := len(amf.conn.up); n != 1 {
		t.Fatalf("%d uplink messages when the gNB had handled the Paging: want the Initial UE Message", n)
	}
	rrc, _, ranID, _ := amf.initialNAS()
	if rrc != int64(ngapType.RRCEstablishmentCausePresentMtAccess) {
		t.Fatalf("RRC cause %d: want mt-Access", rrc)
	}
	amf.contextWithSession(ranID, ngapx.Tunnel{IPv4: testUPF.IPv4, TEID: testUPF.TEID + 1})
	if err := <-paged; err != nil {
		t.Fatalf("the paged UE's Service Request: %v", err)
	}
	amf.send(ngapx.BuildUEContextReleaseCommand(testAMFUEID+1, ranID, ngapx.CauseNas(ngapType.CauseNasPresentNormalRelease)))
	amf.next("UEContextReleaseComplete")
	waitArmed(t, ue)
	g.onPaging(pagingFor(amf, testSTMSI))
	if rrc, _, _, _ := amf.initialNAS(); rrc != int64(ngapType.RRCEstablishmentCausePresentMtAccess) {
		t.Fatalf("second paging: RRC cause %d, want mt-Access", rrc)
	}
}
