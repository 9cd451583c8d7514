package ransim

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// Network-triggered Service Request (TS 23.502 4.2.3.3): the AMF pages a
// CM-IDLE UE with NGAP Paging (step 4b) to the gNBs of its registration
// area; the gNB pages it in its cells, and the UE, recognising its
// 5G-S-TMSI, answers with a Service Request of service type "mobile
// terminated services" (step 6, TS 24.501 5.6.1.2). The simulated gNB
// hands the paging to the UE it has camping under that 5G-S-TMSI; the UE
// answers when its owner runs AnswerPaging (or Stay).

// onPaging handles Paging (TS 38.413 8.5.1.2): for a TA of this gNB, the
// UE camping under the 5G-S-TMSI is told when the paging came; a paging
// for a UE not here is counted, as over the air nobody would answer it. A
// Paging that does not decode gets Error Indication (TS 38.413 10.3).
func (g *GNB) onPaging(pdu *ngapType.NGAPPDU) {
	at := time.Now()
	p, err := ngapx.ParsePaging(pdu)
	if err != nil {
		g.log.Warn("Paging", "err", err)
		g.sendErrorIndication(ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorFalselyConstructedMessage))
		return
	}
	g.Pagings.Add(1)
	if !slices.Contains(p.TAIs, g.cell.TAI) {
		g.log.Debug("Paging for other tracking areas", "tais", p.TAIs)
		return
	}
	ue := g.idle.find(p.STMSI)
	if ue == nil {
		g.PagingsForNobody.Add(1)
		g.log.Debug("Paging for a UE not camping here", "stmsi", p.STMSI)
		return
	}
	g.tracer().PagingReceived(at, ue.supi)
	if ue.answerNow(at) {
		return
	}
	ue.page(at)
}

func (g *GNB) sendErrorIndication(cause ngapType.Cause) {
	b, err := ngapx.BuildErrorIndication(-1, -1, cause)
	if err == nil {
		err = g.conn.WriteMsg(b, 0)
	}
	if err != nil {
		g.log.Warn("Error Indication", "err", err)
	}
}

// page tells the UE it was paged at; a retransmission (T3513) while the
// UE has not answered yet keeps the first time.
func (u *UE) page(at time.Time) {
	select {
	case u.idle.paged <- at:
	default:
	}
}

// ErrNotIdle is waiting for paging with a UE that is not CM-IDLE.
var ErrNotIdle = errors.New("the UE is not registered and CM-IDLE")

// AwaitPaging waits until the UE's gNB receives a Paging for it and
// returns when that was.
func (u *UE) AwaitPaging(ctx context.Context) (time.Time, error) {
	if !u.Idle() {
		return time.Time{}, ErrNotIdle
	}
	select {
	case at := <-u.idle.paged:
		return at, nil
	case <-u.g.done:
		return time.Time{}, errors.New("waiting for paging: N2 association ended")
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// AnswerPaging waits for paging and answers it with a Service Request
// (service type mobile terminated services, TS 24.501 5.6.1.2). It
// returns when the gNB received the Paging and the time from then to the
// Service Accept.
//
// Over the air a paged UE answers at once, waiting on nothing but the
// radio: so while the owner waits here, the gNB's goroutine that read the
// Paging sends the Service Request itself (answerNow) and the owner's
// goroutine only reads the answers, rather than the answer waiting for
// that goroutine to be woken and scheduled first.
func (u *UE) AnswerPaging(ctx context.Context) (pagedAt time.Time, latency time.Duration, err error) {
	if !u.Idle() {
		return time.Time{}, 0, ErrNotIdle
	}
	select {
	case at := <-u.idle.paged: // paged before the owner asked
		latency, err = u.answerPaging(ctx, at)
		return at, latency, err
	default:
	}
	if u.sec == nil {
		return time.Time{}, 0, errNoSecurity
	}
	got, err := u.awaitAnswer(ctx, u.armAnswer(), nil)
	if err != nil {
		return got.at, 0, err
	}
	latency, err = u.completeAnswer(ctx, got)
	return got.at, latency, err
}

// armAnswer has the gNB answer the UE's next Paging from its own
// goroutine (answerNow) while the owner waits in awaitAnswer.
func (u *UE) armAnswer() *pagingAnswer {
	u.drain() // what requestService does first, before the gNB may send
	a := &pagingAnswer{done: make(chan pagingAnswered, 1)}
	u.idle.answer.Store(a)
	return a
}

// completeAnswer ends the answer to a Paging awaitAnswer returned: the
// Service Accept to what the gNB sent, or the owner's own Service
// Request; it returns the time from the Paging to the Accept.
func (u *UE) completeAnswer(ctx context.Context, got pagingAnswered) (time.Duration, error) {
	if got.toOwner {
		return u.answerPaging(ctx, got.at)
	}
	if got.err == nil {
		_, got.err = u.awaitServiceAccept(ctx, got.full, got.start)
	}
	if got.err != nil {
		return 0, got.err
	}
	return time.Since(got.at), nil
}

// pagingAnswer is a Service Request the gNB sends for the UE when it
// reads a Paging for it; done hears what became of it.
type pagingAnswer struct {
	done chan pagingAnswered // buffered: the gNB never waits
}

// pagingAnswered is a Paging answered by the gNB's goroutine: when it
// arrived, and the Service Request sent (full, at start) or an error; or,
// toOwner, a Paging the owner's goroutine is to answer; or, uplink, no
// Paging but uplink data for the owner to ask service for.
type pagingAnswered struct {
	at, start time.Time
	full      []byte
	toOwner   bool
	uplink    bool
	err       error
}

// errNoSecurity: a CM-IDLE UE without a NAS security context cannot send
// a Service Request (TS 24.501 5.6.1.2).
var errNoSecurity = errors.New("service request: the UE has no NAS security context")

// errAssociationEnded: the gNB's N2 association ended while the UE waited
// to be paged.
var errAssociationEnded = errors.New("waiting for paging: N2 association ended")

// awaitAnswer waits until the gNB answered a Paging with a, or a Paging
// reached the UE otherwise (armed too late): then the owner answers it;
// or, when uplink (nil: never) signals, the UE wants service itself.
// Once disarmed, a is the owner's again; if the gNB took it first, its
// outcome is awaited, as it is on its way.
func (u *UE) awaitAnswer(ctx context.Context, a *pagingAnswer, uplink <-chan struct{}) (pagingAnswered, error) {
	var stop error
	select {
	case got := <-a.done:
		return got, nil
	case at := <-u.idle.paged:
		if u.idle.answer.CompareAndSwap(a, nil) {
			return pagingAnswered{at: at, toOwner: true}, nil
		}
	case <-uplink:
		if u.idle.answer.CompareAndSwap(a, nil) {
			return pagingAnswered{uplink: true}, nil
		}
	case <-u.g.done:
		stop = errAssociationEnded
	case <-ctx.Done():
		stop = ctx.Err()
	}
	if stop != nil && u.idle.answer.CompareAndSwap(a, nil) {
		return pagingAnswered{}, stop
	}
	return <-a.done, nil
}

// answerNow: the gNB, reading a Paging for a UE whose owner waits in
// AnswerPaging, sends the UE's Service Request itself (TS 24.501 5.6.1.2:
// mobile terminated services, RRC cause mt-Access). The owner's goroutine
// is parked until done, so the UE's state is this goroutine's meanwhile.
// No overload action sheds mt-Access (TS 38.413 8.7.6.2, overload.go), so
// the reader never waits for admission.
func (u *UE) answerNow(at time.Time) bool {
	a := u.idle.answer.Swap(nil)
	if a == nil {
		return false
	}
	full, start, err := u.sendServiceRequest(nasx.ServiceTypeMobileTerminated, nil)
	a.done <- pagingAnswered{at: at, start: start, full: full, err: err}
	return true
}

// answerPaging runs the Service Request answering the paging the gNB
// received at pagedAt and returns the time from then to the Accept.
func (u *UE) answerPaging(ctx context.Context, pagedAt time.Time) (time.Duration, error) {
	if _, err := u.requestService(ctx, nasx.ServiceTypeMobileTerminated, nil); err != nil {
		return 0, err
	}
	return time.Since(pagedAt), nil
}

// Stay keeps the UE in the network until ctx ends, as a phone in a pocket:
// connected, it handles what the network sends (Serve); CM-IDLE, it
// answers paging, and asks for service itself when its IP stack sends
// uplink (RequestService; that packet is lost, later ones go); released by
// the network, it goes CM-IDLE. onPaged, when set, hears of each paging
// answered (or not: err).
func (u *UE) Stay(ctx context.Context, onPaged func(pagedAt time.Time, latency time.Duration, err error)) error {
	for ctx.Err() == nil {
		if u.Idle() {
			err := u.serveIdle(ctx, onPaged)
			if ctx.Err() != nil {
				return nil
			}
			if err != nil && (!u.Idle() || errors.Is(err, errAssociationEnded) || errors.Is(err, errNoSecurity)) {
				return err
			}
			continue
		}
		err := u.Serve(ctx)
		if !errors.Is(err, ErrReleased) {
			return err
		}
		u.enterIdle()
	}
	return nil
}

// serveIdle waits for what ends CM-IDLE: paging (answered with a mobile
// terminated Service Request, reported to onPaged) or uplink data (a
// Service Request of service type data, TS 24.501 5.6.1.2). As in
// AnswerPaging, the gNB's goroutine that reads the Paging sends the
// Service Request: the owner is not woken first.
func (u *UE) serveIdle(ctx context.Context, onPaged func(time.Time, time.Duration, error)) error {
	if u.sec == nil {
		return errNoSecurity
	}
	got, err := u.awaitAnswer(ctx, u.armAnswer(), u.idle.uplink)
	switch {
	case err != nil:
		return err
	case got.uplink:
		_, err := u.RequestService(ctx)
		return err
	}
	lat, err := u.completeAnswer(ctx, got)
	if onPaged != nil {
		onPaged(got.at, lat, err)
	}
	return err
}
