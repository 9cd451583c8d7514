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
func (u *UE) AnswerPaging(ctx context.Context) (pagedAt time.Time, latency time.Duration, err error) {
	if pagedAt, err = u.AwaitPaging(ctx); err != nil {
		return pagedAt, 0, err
	}
	latency, err = u.answerPaging(ctx, pagedAt)
	return pagedAt, latency, err
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
			if err != nil && !u.Idle() {
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
// Service Request of service type data, TS 24.501 5.6.1.2).
func (u *UE) serveIdle(ctx context.Context, onPaged func(time.Time, time.Duration, error)) error {
	select {
	case <-u.idle.uplink:
		_, err := u.RequestService(ctx)
		return err
	case <-ctx.Done():
		return ctx.Err()
	case at := <-u.idle.paged:
		lat, err := u.answerPaging(ctx, at)
		if onPaged != nil {
			onPaged(at, lat, err)
		}
		return err
	}
}
