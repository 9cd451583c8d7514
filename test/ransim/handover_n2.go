package ransim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// N2 handover, intra-AMF (TS 23.502 4.9.1.3; TS 38.413 8.4.1-8.4.3,
// 8.4.5-8.4.7): the source gNB asks the AMF with Handover Required, the
// target admits the UE's sessions in Handover Request Acknowledge, the
// source gets Handover Command, forwards what it still receives and sends
// Uplink RAN Status Transfer, and the target says Handover Notify once
// the UE is there. The AMF then releases the UE at the source.

// N2Options are the ways an N2 handover can go.
type N2Options struct {
	// NoDirectForwarding says the source has no direct path to the target
	// (TS 38.413 9.3.1.64): forwarding goes through the UPF, when the
	// core sets up indirect forwarding, or not at all.
	NoDirectForwarding bool
	// Cancel makes the source cancel the handover once it got the
	// Handover Command instead of executing it (TS 38.413 8.4.5): the UE
	// stays with the source.
	Cancel bool
}

// handoverDesirable is the cause of a simulated handover (TS 38.413 9.3.1.2).
var handoverDesirable = ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHandoverDesirableForRadioReason)

// HandoverN2 moves the UE from its gNB to target by N2 handover. It returns
// the time from Handover Required to the end of the procedure at the AMF:
// the UE Context Release Command the source gets once the AMF processed
// Handover Notify (TS 23.502 4.9.1.3.3 steps 12-14). On any failure the UE
// is still served by the source, and the error says why
// (ErrHandoverPreparationFailure, ErrHandoverCancelled, or ctx's end).
func (u *UE) HandoverN2(ctx context.Context, target *GNB, o N2Options) (time.Duration, error) {
	src := u.g
	if target == src {
		return 0, errors.New("N2 handover: the target is the serving gNB")
	}
	moved := u.sessionsWithTunnels()
	if len(moved) == 0 {
		return 0, errors.New("N2 handover: the UE has no PDU session with a user plane (TS 38.413 9.2.3.1 needs one)")
	}
	a := target.expect(u, ulTEIDsOf(moved))
	defer target.unexpect(a)
	required, err := u.handoverRequired(target, moved, !o.NoDirectForwarding)
	if err != nil {
		return 0, err
	}
	ranID := u.ranID.Load()
	answer := src.ho.await(answerPreparation, ranID)
	start := time.Now()
	if err := src.conn.WriteMsg(required, src.stream(ranID)); err != nil {
		src.ho.forget(answerPreparation, ranID)
		return 0, fmt.Errorf("Handover Required: %w", err)
	}
	pdu, err := src.wait(ctx, answer, answerPreparation, ranID, "N2 handover")
	if err != nil {
		return 0, err
	}
	if err := refusal("Handover Required", pdu); err != nil {
		return 0, err
	}
	if pdu.Present != ngapType.NGAPPDUPresentSuccessfulOutcome {
		f, _ := ngapx.ParseHandoverPreparationFailure(pdu)
		return 0, fmt.Errorf("%w: %s", ErrHandoverPreparationFailure, ngapx.CauseString(&f.Cause))
	}
	cmd, err := ngapx.ParseHandoverCommand(pdu)
	if err != nil {
		return 0, fmt.Errorf("Handover Command: %w", err)
	}
	if o.Cancel {
		return 0, u.cancelHandover(ctx, src, ranID)
	}
	return u.executeHandover(ctx, src, target, a, cmd, moved, start)
}

func ulTEIDsOf(moved []movedSession) []uint32 {
	out := make([]uint32, 0, len(moved))
	for _, m := range moved {
		out = append(out, m.old.UL().TEID)
	}
	return out
}

// handoverRequired is the source's Handover Required (TS 38.413 9.2.3.1):
// the target's Global gNB ID and TAI, a Handover Required Transfer per
// session (9.3.4.14) and the transparent container for the target.
func (u *UE) handoverRequired(target *GNB, moved []movedSession, direct bool) ([]byte, error) {
	var sessions []ngapx.SessionTransfer
	for _, m := range moved {
		tr, err := ngapx.BuildHandoverRequiredTransfer(direct)
		if err != nil {
			return nil, err
		}
		sessions = append(sessions, ngapx.SessionTransfer{ID: int64(m.s.ID), Transfer: tr})
	}
	container, err := sourceToTargetContainer(u.g.cell, target.cell)
	if err != nil {
		return nil, err
	}
	return ngapx.BuildHandoverRequired(ngapx.HandoverRequired{
		UEIDs:  ngapx.UEIDs{AMFUEID: u.amfID.Load(), RANUEID: u.ranID.Load()},
		Cause:  handoverDesirable,
		Target: ngapx.Target{GNB: target.globalID(), TAI: target.cell.TAI}, DirectForwarding: direct,
		Sessions: sessions, Container: container})
}

// globalID is the gNB's Global gNB ID as NG Setup announced it (24 bits).
func (g *GNB) globalID() ngapx.GlobalGNBID {
	return ngapx.GlobalGNBID{PLMN: g.cfg.PLMN, ID: g.cfg.ID, Bits: 24}
}

// cancelHandover is the source giving up after the command (TS 38.413
// 8.4.5): Handover Cancel, then the AMF's acknowledgement.
func (u *UE) cancelHandover(ctx context.Context, src *GNB, ranID int64) error {
	b, err := ngapx.BuildHandoverCancel(ngapx.UEIDs{AMFUEID: u.amfID.Load(), RANUEID: ranID}, handoverDesirable)
	if err != nil {
		return err
	}
	answer := src.ho.await(answerCancel, ranID)
	if err := src.conn.WriteMsg(b, src.stream(ranID)); err != nil {
		src.ho.forget(answerCancel, ranID)
		return fmt.Errorf("Handover Cancel: %w", err)
	}
	pdu, err := src.wait(ctx, answer, answerCancel, ranID, "Handover Cancel")
	if err != nil {
		return err
	}
	if err := refusal("Handover Cancel", pdu); err != nil {
		return err
	}
	return ErrHandoverCancelled
}

// executeHandover is the handover after the command (TS 23.502 4.9.1.3.3):
// the source forwards to the tunnels the command names and reports its
// PDCP state, the UE arrives at the target, which notifies the AMF; it
// ends with the AMF's release of the UE at the source.
func (u *UE) executeHandover(ctx context.Context, src, target *GNB, a *arrival, cmd ngapx.HandoverCommandMsg,
	moved []movedSession, start time.Time) (time.Duration, error) {
	select {
	case <-a.ready:
	case <-ctx.Done():
		return 0, fmt.Errorf("N2 handover: the target never prepared the UE: %w", ctx.Err())
	}
	oldRAN := u.ranID.Load()
	for i := range moved {
		moved[i].new = a.tunnels[moved[i].s.ID]
	}
	u.startForwarding(src, cmd, moved)
	status := target.ho.await(answerStatus, a.ranID)
	u.sendStatusTransfer(src, oldRAN, moved)
	target.awaitStatus(ctx, status, a.ranID)
	released := src.ho.await(answerRelease, oldRAN)
	src.depart(u, oldRAN)
	// The UE arrives at the target (TS 38.300 9.2.3.2.1 step 9).
	u.moveTo(target, a.ranID, a.amfID, moved)
	target.arrived(a)
	for _, m := range moved {
		if m.new != nil {
			m.new.arrive(m.old.sink.Load())
		}
	}
	target.send(a.amfID, a.ranID, func(amfID, ranID int64) ([]byte, error) {
		return ngapx.BuildHandoverNotify(ngapx.UEIDs{AMFUEID: amfID, RANUEID: ranID}, target.cell)
	})
	if _, err := src.wait(ctx, released, answerRelease, oldRAN, "N2 handover completion"); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// startForwarding sends each session's downlink on to the DL forwarding
// tunnel the command names (the target's: direct; the UPF's: indirect);
// a session without one loses what the source still gets.
func (u *UE) startForwarding(src *GNB, cmd ngapx.HandoverCommandMsg, moved []movedSession) {
	fwd := map[int64]*ngapx.Tunnel{}
	for _, s := range cmd.Sessions {
		c, err := ngapx.ParseHandoverCommandTransfer(s.Transfer)
		if err != nil {
			src.log.Warn("Handover Command Transfer", "session", s.ID, "err", err)
			continue
		}
		fwd[s.ID] = c.DLForwarding
	}
	for _, m := range moved {
		to := fwd[int64(m.s.ID)]
		switch {
		case to != nil:
			m.old.startForwarding(gtpForwarder(src.up, *to, m.s.DefaultQFI()))
		default:
			m.old.startForwarding(&forwarder{send: func([]byte) { src.up.Dropped.Add(1) }, end: func() {}})
			if m.new != nil {
				m.new.oldPathEnded() // nothing will be forwarded
			}
		}
	}
}

// sendStatusTransfer is Uplink RAN Status Transfer (TS 38.413 8.4.6): a
// DRB per session, counts from zero (the simulated UE has no PDCP).
func (u *UE) sendStatusTransfer(src *GNB, ranID int64, moved []movedSession) {
	var drbs []ngapx.DRBCount
	for _, m := range moved {
		drbs = append(drbs, ngapx.DRBCount{DRB: int64(m.s.ID)})
	}
	c, err := ngapx.RANStatusContainer(drbs)
	if err != nil {
		src.log.Warn("RAN Status Transfer", "err", err)
		return
	}
	src.send(u.amfID.Load(), ranID, func(amfID, ranID int64) ([]byte, error) {
		return ngapx.BuildUplinkRANStatusTransfer(ngapx.RANStatusTransfer{UEIDs: ngapx.UEIDs{AMFUEID: amfID, RANUEID: ranID}, Container: c})
	})
}

// statusWait bounds how long a target waits for the PDCP state before the
// UE arrives: the status transfer is not needed to go on (TS 38.413 8.4.7
// is for PDCP continuity, which the simulated UE does not have).
const statusWait = time.Second

// awaitStatus waits (at most statusWait) for Downlink RAN Status
// Transfer, as a real target has it before the UE reaches it (TS 23.502
// 4.9.1.3.3 steps 2-4); Handover Notify going first would overtake it.
func (g *GNB) awaitStatus(ctx context.Context, ch <-chan *ngapType.NGAPPDU, ranID int64) {
	wctx, cancel := context.WithTimeout(ctx, statusWait)
	defer cancel()
	if _, err := g.wait(wctx, ch, answerStatus, ranID, "Downlink RAN Status Transfer"); err != nil {
		g.log.Debug("handover goes on without the PDCP state", "err", err)
	}
}

// onHandoverRequest is the target's part (TS 38.413 8.4.2.2): a RAN UE
// NGAP ID and a DL tunnel and DL forwarding tunnel per session, answered
// with Handover Request Acknowledge — or Handover Failure, or nothing, as
// the gNB is told to behave.
func (g *GNB) onHandoverRequest(pdu *ngapType.NGAPPDU) {
	r, err := ngapx.ParseHandoverRequest(pdu)
	if err != nil {
		g.log.Warn("Handover Request", "err", err)
		return
	}
	g.ho.mu.Lock()
	behaviour := g.ho.behaviour
	g.ho.mu.Unlock()
	switch behaviour {
	case TargetSilent:
		return
	case TargetRefuses:
		g.refuseHandover(r.AMFUEID, ngapType.CauseRadioNetworkPresentNoRadioResourcesAvailableInTargetCell)
		return
	}
	setups := make(map[int64]ngapx.SetupRequestTransfer, len(r.Sessions))
	var ul []uint32
	for _, s := range r.Sessions {
		st, err := ngapx.ParsePDUSessionResourceSetupRequestTransfer(s.Transfer)
		if err != nil {
			g.log.Warn("Handover Request: PDU session transfer", "session", s.ID, "err", err)
			continue
		}
		setups[s.ID] = st
		ul = append(ul, st.UL.TEID)
	}
	a := g.match(ul)
	if a == nil {
		// No simulated UE is on its way here.
		g.refuseHandover(r.AMFUEID, ngapType.CauseRadioNetworkPresentUnspecified)
		return
	}
	a.ranID, a.amfID = g.attach(a.ue), r.AMFUEID
	b, err := g.admit(a, r, setups)
	if err == nil {
		err = g.conn.WriteMsg(b, g.stream(a.ranID))
	}
	if err != nil {
		g.log.Warn("Handover Request Acknowledge", "err", err)
		g.detach(a.ranID)
		return
	}
	g.prepare(a)
}

// admit sets up the tunnels of the sessions the target could read and
// builds the Acknowledge (TS 38.413 9.2.3.5) with a Handover Request
// Acknowledge Transfer each (9.3.4.11); the unreadable ones are listed as
// failed (Handover Resource Allocation Unsuccessful Transfer, 9.3.4.17).
func (g *GNB) admit(a *arrival, r ngapx.HandoverRequest, setups map[int64]ngapx.SetupRequestTransfer) ([]byte, error) {
	a.tunnels = map[uint8]*Tunnel{}
	ack := ngapx.HandoverRequestAcknowledge{UEIDs: ngapx.UEIDs{AMFUEID: a.amfID, RANUEID: a.ranID}}
	for _, s := range r.Sessions {
		st, ok := setups[s.ID]
		if !ok {
			c := ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorFalselyConstructedMessage)
			tr, err := ngapx.BuildHandoverResourceAllocationUnsuccessfulTransfer(c)
			if err != nil {
				return nil, err
			}
			ack.Failed = append(ack.Failed, ngapx.SessionTransfer{ID: s.ID, Transfer: tr})
			continue
		}
		var all []uint8
		for _, f := range st.Flows {
			all = append(all, f.QFI)
		}
		qfis, refused := g.admitFlows(all)
		t := g.up.newTunnel(uint8(s.ID), st.UL, qfis)
		t.recordRANQoS(ngapx.AMBR{Down: st.AMBRDown, Up: st.AMBRUp}, st.Flows, refused)
		t.awaitArrival(true)
		fwd := g.up.newForwardingTunnel(t)
		a.tunnels[uint8(s.ID)], a.forwarding = t, append(a.forwarding, fwd)
		fwdDL := fwd.DL()
		tr, err := ngapx.BuildHandoverRequestAcknowledgeTransfer(ngapx.HandoverRequestAck{DL: t.DL(), DLForwarding: &fwdDL,
			QFIs: qfis, ForwardQFIs: qfis, FailedQFIs: refused})
		if err != nil {
			return nil, err
		}
		ack.Admitted = append(ack.Admitted, ngapx.SessionTransfer{ID: s.ID, Transfer: tr})
	}
	if len(ack.Admitted) == 0 {
		return nil, errors.New("no PDU session of the Handover Request could be admitted")
	}
	c, err := targetToSourceContainer()
	if err != nil {
		return nil, err
	}
	ack.Container = c
	return ngapx.BuildHandoverRequestAcknowledge(ack)
}

// refuseHandover is Handover Failure (TS 38.413 8.4.2.3).
func (g *GNB) refuseHandover(amfID int64, cause aper.Enumerated) {
	b, err := ngapx.BuildHandoverFailure(amfID, ngapx.CauseRadioNetwork(cause))
	if err == nil {
		err = g.conn.WriteMsg(b, 0)
	}
	if err != nil {
		g.log.Warn("Handover Failure", "err", err)
	}
}
