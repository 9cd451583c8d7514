package amf

// Xn handover, the AMF's part (TS 23.502 4.9.1.2.2; TS 38.413 8.4.4): the
// UE already moved to the target gNB over Xn, which asks with Path Switch
// Request for the downlink of the UE's PDU sessions. Each session's SMF
// switches its UPF to the target (UpdateSMContext, PATH_SWITCH_REQ); the
// sessions switched go back in Path Switch Request Acknowledge with a
// fresh {NH, NCC} (TS 33.501 6.9.2.3.2), the UE's connection moves to the
// target and the source's is released. No session switched, or a UE the
// AMF does not know: Path Switch Request Failure, and the UE stays where
// it was.

import (
	"context"
	"fmt"
	"slices"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

func (n *NF) onPathSwitchRequest(g *gnb, ue *ueContext, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	req, err := ngapx.ParsePathSwitchRequest(pdu)
	if err != nil {
		// TS 38.413 10.3.4.2, 10.3.5: a mandatory IE missing or malformed
		// gets the procedure's failure when it can name the sessions it
		// refuses, else Error Indication.
		if len(req.ToSwitch) == 0 || req.RANUEID < 0 {
			return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, err)
		}
		n.log.Info("Path Switch Request malformed", "gnb", g.id, "sourceAmfUeNgapId", req.SourceAMFUEID, "err", err)
		n.sendPathSwitchFailure(g, req.SourceAMFUEID, req.RANUEID,
			sessionsOf(req.ToSwitch, ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorReject)))
		return nil
	}
	if why := n.pathSwitchRefusal(g, ue, req); why != "" {
		n.metrics.handovers.WithLabelValues(string(hoXn), "attempted", "").Inc()
		n.metrics.handovers.WithLabelValues(string(hoXn), "failed", why).Inc()
		n.log.Info("Path Switch Request refused", "gnb", g.id, "sourceAmfUeNgapId", req.SourceAMFUEID, "reason", why)
		cause := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownLocalUENGAPID)
		if why != "unknown-ue" {
			cause = ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified)
		}
		n.sendPathSwitchFailure(g, req.SourceAMFUEID, req.RANUEID, sessionsOf(req.ToSwitch, cause))
		return nil
	}
	h := &handover{kind: hoXn, phase: hoPreparing, source: leg{ue.gnbID, ue.ranID}, target: leg{g.id, req.RANUEID},
		targetTAI: req.Cell.TAI, reportedCaps: req.SecurityCaps}
	n.beginHandover(ue, h)
	// TS 23.502 4.9.1.2.2 step 1a: sessions the target could not set up go
	// to their SMFs, which release them; they are not awaited.
	for _, f := range req.Failed {
		n.tellSMF(ue, f.ID, models.SmfPduSessionSmContextUpdateData{N2SmInfoType: models.N2SmInfoType_PATH_SWITCH_SETUP_FAIL,
			FailedToBeSwitched: true, UeLocation: locationAt(h.targetTAI)}, f.Transfer)
	}
	for _, t := range req.ToSwitch {
		n.askPathSwitch(ue, h, t)
	}
	if h.pending == 0 {
		n.finishPathSwitch(ue, h)
	}
	return nil
}

// pathSwitchRefusal says why the AMF cannot switch the UE's path ("" when
// it can): an unknown UE (the Source AMF UE NGAP ID names none), a UE not
// registered with a security context, or one already in a handover.
func (n *NF) pathSwitchRefusal(g *gnb, ue *ueContext, req ngapx.PathSwitchRequestMsg) string {
	switch {
	case ue == nil:
		return "unknown-ue"
	case ue.state != StateRegistered || ue.sec == nil:
		return "not-registered"
	case ue.mob.ho != nil:
		return "handover-running"
	case g.id == ue.gnbID && req.RANUEID == ue.ranID:
		return "same-connection"
	}
	return ""
}

// sessionsOf lists every session of a refused request as released, with
// the AMF's unsuccessful transfer for cause.
func sessionsOf(list []ngapx.SessionTransfer, cause ngapType.Cause) []ngapx.SessionTransfer {
	tr := unsuccessfulTransfer(cause)
	out := make([]ngapx.SessionTransfer, 0, len(list))
	for _, s := range list {
		out = append(out, ngapx.SessionTransfer{ID: s.ID, Transfer: tr})
	}
	return out
}

// askPathSwitch hands one session's Path Switch Request Transfer to its
// SMF (TS 23.502 4.9.1.2.2 step 2, TS 29.502 5.2.2.3.7 / 5.2.2.3.2).
func (n *NF) askPathSwitch(ue *ueContext, h *handover, t ngapx.SessionTransfer) {
	hs := &hoSession{id: uint8(t.ID)}
	h.sessions = append(h.sessions, hs)
	s := n.handedSession(ue, t.ID)
	if s == nil {
		hs.released = unsuccessfulTransfer(ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownPDUSessionID))
		return
	}
	h.pending++
	sess, uri := n.opts.Sessions, s.ContextURI
	data := models.SmfPduSessionSmContextUpdateData{N2SmInfoType: models.N2SmInfoType_PATH_SWITCH_REQ, ToBeSwitched: true,
		UeLocation: locationAt(h.targetTAI)}
	n.smCall(ue, func(ctx context.Context) (SMAnswer, error) {
		return sess.UpdateSMContext(ctx, uri, data, nil, t.Transfer)
	}, func(ue *ueContext, a SMAnswer, err error) {
		if ue.mob.ho != h {
			return // the handover ended meanwhile
		}
		h.pending--
		n.onPathSwitchAnswer(ue, hs, a, err)
		if h.pending == 0 {
			n.finishPathSwitch(ue, h)
		}
	}, nil)
}

// handedSession is the UE's session id if its SM context exists; an ID
// out of range or unknown is nil.
func (n *NF) handedSession(ue *ueContext, id int64) *PDUSession {
	if id < 1 || id > 15 {
		return nil
	}
	if s := ue.pdu.get(uint8(id)); s != nil && s.created() {
		return s
	}
	return nil
}

// onPathSwitchAnswer: PATH_SWITCH_REQ_ACK switched the session; anything
// else (PATH_SWITCH_SETUP_FAIL, PATH_SWITCH_REQ_FAIL, an error) leaves it
// out, with the SMF's transfer when it gave one (TS 29.502 5.2.2.3.7).
func (n *NF) onPathSwitchAnswer(ue *ueContext, hs *hoSession, a SMAnswer, err error) {
	if err == nil && a.N2Type == models.N2SmInfoType_PATH_SWITCH_REQ_ACK && a.N2 != nil {
		hs.ok, hs.transfer = true, a.N2
		return
	}
	n.log.Info("PDU session not switched", "supi", ue.supi, "pduSessionId", hs.id, "type", a.N2Type, "err", err)
	if hs.released = a.N2; hs.released == nil {
		hs.released = unsuccessfulTransfer(ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified))
	}
	if isContextGone(err) {
		ue.pdu.remove(hs.id)
	}
}

// finishPathSwitch answers the target once every SMF has: TS 38.413
// 8.4.4.2 (acknowledge) or 8.4.4.3 (failure, no session switched).
func (n *NF) finishPathSwitch(ue *ueContext, h *handover) {
	switched := h.inHandover()
	if len(switched) == 0 {
		n.endHandover(ue, "no-session-switched")
		n.sendPathSwitchFailure(n.gnb(h.target.gnbID), ue.amfID, h.target.ranID, h.releasedSessions())
		return
	}
	sec, err := n.nextHop(ue)
	if err != nil {
		n.failPathSwitch(ue, h, fmt.Errorf("next hop: %w", err))
		return
	}
	ack := ngapx.PathSwitchRequestAcknowledge{AMFUEID: ue.amfID, RANUEID: h.target.ranID, Security: sec,
		Switched: switched, Released: h.releasedSessions(), Allowed: n.allowedFor(ue)}
	// TS 38.413 8.4.4.2: the AMF's copy of the capabilities goes back when
	// the target reported others (TS 33.501 6.7.3.1: it may have been lied to).
	if caps := securityCaps(ue); caps != h.reportedCaps {
		ack.SecurityCaps = &caps
	}
	b, err := ngapx.BuildPathSwitchRequestAcknowledge(ack)
	if err == nil {
		err = n.sendOnLeg(ue, h.target, b)
	}
	if err != nil {
		n.failPathSwitch(ue, h, err)
		return
	}
	n.moveTo(ue, h.target, h.targetTAI)
	n.endHandover(ue, "")
}

// failPathSwitch: the AMF could not answer the switch it made (its own
// failure); the target hears Path Switch Request Failure for every session.
func (n *NF) failPathSwitch(ue *ueContext, h *handover, err error) {
	n.log.Error("Path Switch Request Acknowledge not sent", "amfUeNgapId", ue.amfID, "err", err)
	n.endHandover(ue, "internal")
	all := sessionsOf(append(h.inHandover(), h.releasedSessions()...), ngapx.CauseMisc(ngapType.CauseMiscPresentUnspecified))
	n.sendPathSwitchFailure(n.gnb(h.target.gnbID), ue.amfID, h.target.ranID, all)
}

func (n *NF) sendPathSwitchFailure(g *gnb, amfUEID, ranUEID int64, released []ngapx.SessionTransfer) {
	if g == nil {
		return
	}
	b := n.built("PathSwitchRequestFailure")(ngapx.BuildPathSwitchRequestFailure(ngapx.PathSwitchRequestFailure{
		AMFUEID: amfUEID, RANUEID: ranUEID, Released: released}))
	if b == nil {
		return
	}
	if err := g.conn.WriteMsg(b, g.stream(max(amfUEID, 0))); err != nil {
		n.log.Warn("N2 write", "gnb", g.id, "err", err)
	}
}

// allowedFor is the UE's Allowed NSSAI for the gNB (TS 38.413 9.3.1.31:
// mandatory in the handover messages, 1-8 S-NSSAIs); a UE registered
// without one gets its sessions' slices, each once.
func (n *NF) allowedFor(ue *ueContext) []models.Snssai {
	if len(ue.allowed) > 0 {
		return ue.allowed
	}
	var out []models.Snssai
	for _, s := range ue.pdu.sessions {
		if len(out) < 8 && !slices.ContainsFunc(out, func(o models.Snssai) bool { return domain.SameModelSNSSAI(o, s.SNSSAI) }) {
			out = append(out, s.SNSSAI)
		}
	}
	return out
}

// tellSMF sends a session's SMF an update whose answer only gets logged.
func (n *NF) tellSMF(ue *ueContext, id int64, data models.SmfPduSessionSmContextUpdateData, n2 []byte) {
	s := n.handedSession(ue, id)
	if s == nil {
		return
	}
	sess, uri, supi := n.opts.Sessions, s.ContextURI, ue.supi
	n.smCall(ue, func(ctx context.Context) (SMAnswer, error) {
		return sess.UpdateSMContext(ctx, uri, data, nil, n2)
	}, func(ue *ueContext, _ SMAnswer, err error) {
		if err != nil {
			n.log.Warn("SM context update during handover", "supi", supi, "pduSessionId", id, "hoState", data.HoState,
				"type", data.N2SmInfoType, "err", err)
			if isContextGone(err) {
				ue.pdu.forgetContext(uint8(id), uri)
			}
		}
	}, nil)
}
