package ransim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// Xn handover (TS 23.502 4.9.1.2.2; TS 38.300 9.2.3.2; TS 38.413 8.4.4):
// the source and target prepare over Xn — inside the simulator — and the
// source forwards what it still receives to the target over Xn; once the
// UE is at the target, the target asks the AMF to switch the sessions'
// downlink with Path Switch Request, naming the DL tunnels it allocated.
// The UPF sends the End Marker on the old path; the AMF releases the UE at
// the source.

// HandoverXn moves the UE from its gNB to target by Xn handover. It returns
// the time from Path Switch Request to Path Switch Request Acknowledge. On
// Path Switch Request Failure (or ctx's end) the UE is back with the source.
func (u *UE) HandoverXn(ctx context.Context, target *GNB) (time.Duration, error) {
	src := u.g
	if target == src {
		return 0, errors.New("Xn handover: the target is the serving gNB")
	}
	moved := u.sessionsWithTunnels()
	if len(moved) == 0 {
		return 0, errors.New("Xn handover: the UE has no PDU session with a user plane (TS 38.413 9.2.3.8 needs one)")
	}
	// Xn Handover Request/Acknowledge (TS 38.423 8.2.1): the target's
	// tunnels, holding what comes until the UE is there.
	ranID := target.attach(u)
	for i := range moved {
		m := &moved[i]
		qfis, refused := target.admitFlows(m.old.QFIs())
		m.new = target.up.newTunnel(m.s.ID, m.old.UL(), qfis)
		// Over Xn the target learns the session's QoS from the source
		// (TS 38.423 Handover Request), here the source's record.
		old := m.old.RANQoS()
		m.new.recordRANQoS(old.AMBR, old.Flows, refused)
		m.new.awaitArrival(true)
		m.old.startForwarding(xnForwarder(m.new))
	}
	// The UE arrives at the target (TS 38.300 9.2.3.2.1 step 9).
	for _, m := range moved {
		m.new.arrive(m.old.sink.Load())
	}
	req, err := u.pathSwitchRequest(target, ranID, moved)
	if err != nil {
		u.abandonXn(target, ranID, moved)
		return 0, err
	}
	src.depart(u, u.ranID.Load())
	answer := target.ho.await(answerPathSwitch, ranID)
	start := time.Now()
	if err := target.conn.WriteMsg(req, target.stream(ranID)); err != nil {
		target.ho.forget(answerPathSwitch, ranID)
		u.abandonXn(target, ranID, moved)
		return 0, fmt.Errorf("Path Switch Request: %w", err)
	}
	pdu, err := target.wait(ctx, answer, answerPathSwitch, ranID, "Xn handover")
	lat := time.Since(start)
	if err != nil {
		u.abandonXn(target, ranID, moved)
		return 0, err
	}
	if err := refusal("Path Switch Request", pdu); err != nil {
		u.abandonXn(target, ranID, moved)
		return 0, err
	}
	if pdu.Present != ngapType.NGAPPDUPresentSuccessfulOutcome {
		u.abandonXn(target, ranID, moved)
		return 0, ErrPathSwitchRequestFailure
	}
	ack, err := ngapx.ParsePathSwitchRequestAcknowledge(pdu)
	if err != nil {
		u.abandonXn(target, ranID, moved)
		return 0, fmt.Errorf("Path Switch Request Acknowledge: %w", err)
	}
	u.takeUplinkTunnels(ack, moved)
	u.moveTo(target, ranID, ack.AMFUEID, moved)
	for _, m := range moved {
		target.putTunnel(u, m.new)
	}
	return lat, nil
}

// pathSwitchRequest is the target's Path Switch Request (TS 38.413
// 9.2.3.8): the UE by the source's AMF UE NGAP ID, the target's cell, and a
// Path Switch Request Transfer per session with its new DL tunnel (9.3.4.8).
func (u *UE) pathSwitchRequest(target *GNB, ranID int64, moved []movedSession) ([]byte, error) {
	var sessions []ngapx.SessionTransfer
	for _, m := range moved {
		tr, err := ngapx.BuildPathSwitchRequestTransfer(ngapx.PathSwitchRequest{DL: m.new.DL(), QFIs: m.new.QFIs()})
		if err != nil {
			return nil, err
		}
		sessions = append(sessions, ngapx.SessionTransfer{ID: int64(m.s.ID), Transfer: tr})
	}
	return ngapx.BuildPathSwitchRequest(ngapx.PathSwitchRequestMsg{RANUEID: ranID, SourceAMFUEID: u.amfID.Load(),
		Cell: target.cell, SecurityCaps: ueSecurityCapabilities, ToSwitch: sessions})
}

// takeUplinkTunnels applies a new UPF tunnel end where the SMF gave one
// (TS 38.413 9.3.4.9).
func (u *UE) takeUplinkTunnels(ack ngapx.PathSwitchRequestAcknowledge, moved []movedSession) {
	for _, s := range ack.Switched {
		ul, err := ngapx.ParsePathSwitchRequestAcknowledgeTransfer(s.Transfer)
		if err != nil || ul == nil {
			continue
		}
		for _, m := range moved {
			if int64(m.s.ID) == s.ID {
				t := *ul
				m.new.ul.Store(&t)
			}
		}
	}
}

// abandonXn is a path switch that failed: the UE stays with the source,
// whose tunnels deliver to it again; the target forgets it (TS 23.502
// 4.9.1.2.2: the core still sends the downlink to the source).
func (u *UE) abandonXn(target *GNB, ranID int64, moved []movedSession) {
	u.g.undepart(u, u.ranID.Load())
	for _, m := range moved {
		m.old.stopForwarding()
		target.up.remove(m.new)
	}
	target.detach(ranID)
}
