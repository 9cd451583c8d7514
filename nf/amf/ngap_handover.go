package amf

// Intra-AMF N2 handover (TS 23.502 4.9.1.3; TS 38.413 8.4.1-8.4.3, 8.4.5,
// 8.4.6, 8.4.7):
//
//	source gNB: Handover Required
//	  -> each session's SMF: UpdateSMContext hoState PREPARING + targetId + HANDOVER_REQUIRED
//	target gNB: <- Handover Request (the SMFs' transfers, {NH, NCC}, AMBR, Allowed NSSAI, GUAMI)
//	target gNB: Handover Request Acknowledge
//	  -> each session's SMF: hoState PREPARED + HANDOVER_REQ_ACK
//	source gNB: <- Handover Command (the SMFs' HANDOVER_CMD transfers); TNGRELOCoverall runs
//	source gNB: Uplink RAN Status Transfer -> target gNB: Downlink RAN Status Transfer
//	target gNB: Handover Notify
//	  -> each session's SMF: hoState COMPLETED; the UE moves to the target;
//	     the source is released (cause successful handover)
//
// Every failure leaves the UE served by the source: an unknown target,
// refusing SMFs, the target's Handover Failure, no answer within
// TNGRELOCprep -> Handover Preparation Failure; the source's Handover
// Cancel -> Handover Cancel Acknowledge; no Notify within TNGRELOCoverall.
// The SMFs hear hoState CANCELLED and a target that holds a context for
// the UE is told to release it.

import (
	"context"
	"fmt"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// n2HandoverRequestType is TS 29.502's HANDOVER_REQ; free5GC's openapi
// v1.2.4 has no constant for it, and an SMF may answer PDU_RES_SETUP_REQ
// (the same PDU Session Resource Setup Request Transfer, 9.3.4.1).
const n2HandoverRequestType = models.N2SmInfoType("HANDOVER_REQ")

// onHandoverRequired: TS 38.413 8.4.1.2, TS 23.502 4.9.1.3.2 steps 1-3.
func (n *NF) onHandoverRequired(g *gnb, ue *ueContext, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	if err := fromSource(g, ue, s); err != nil {
		return err
	}
	req, err := ngapx.ParseHandoverRequired(pdu)
	if err != nil {
		n.countRefusedHandover("malformed")
		// TS 38.413 10.3.5: the procedure's failure message, protocol cause.
		n.log.Info("Handover Required malformed", "amfUeNgapId", ue.amfID, "err", err)
		n.sendPreparationFailure(ue, ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorReject))
		return nil
	}
	target, cause, why := n.handoverTarget(ue, req)
	if why != "" {
		n.countRefusedHandover(why)
		n.log.Info("Handover Required refused", "amfUeNgapId", ue.amfID, "target", req.Target.GNB, "reason", why)
		n.sendPreparationFailure(ue, cause)
		return nil
	}
	h := &handover{kind: hoN2, phase: hoPreparing, source: leg{ue.gnbID, ue.ranID}, target: leg{target.id, -1},
		targetTAI: req.Target.TAI, target5GC: targetIDModel(req.Target), cause: req.Cause, container: req.Container}
	n.beginHandover(ue, h)
	n.armHandoverTimer(ue, n.cfg.AMF.NGAP.TNGRELOCprep, n.onPreparationExpiry)
	for _, t := range req.Sessions {
		n.askPreparing(ue, h, t)
	}
	switch {
	case len(h.sessions) == 0:
		// TS 23.502 4.9.1.3.2: nothing of the UE's to hand over.
		n.failPreparation(ue, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownPDUSessionID), "no-session")
	case h.pending == 0:
		n.onSMFsPreparing(ue, h)
	}
	return nil
}

func (n *NF) countRefusedHandover(why string) {
	n.metrics.handovers.WithLabelValues(string(hoN2), "attempted", "").Inc()
	n.metrics.handovers.WithLabelValues(string(hoN2), "failed", why).Inc()
}

// handoverTarget finds the target gNB among the AMF's associations (TS
// 23.502 4.9.1.3.2 step 2: intra-AMF), or says why the handover cannot
// start and with which cause (TS 38.413 9.3.1.2).
func (n *NF) handoverTarget(ue *ueContext, req ngapx.HandoverRequired) (*gnb, ngapType.Cause, string) {
	switch {
	case ue.state != StateRegistered || ue.sec == nil:
		return nil, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified), "not-registered"
	case ue.mob.ho != nil:
		return nil, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified), "handover-running"
	}
	t := n.gnbByGlobalID(req.Target.GNB)
	if t == nil {
		return nil, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownTargetID), "unknown-target"
	}
	return t, ngapType.Cause{}, ""
}

// gnbByGlobalID finds a set-up association by the Global gNB ID its NG
// Setup Request announced.
func (n *NF) gnbByGlobalID(id ngapx.GlobalGNBID) *gnb {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, g := range n.gnbs {
		if p := g.global.Load(); p != nil && *p == id && g.ready.Load() {
			return g
		}
	}
	return nil
}

// rememberGlobalID keeps the Global gNB ID of an NG Setup Request, for
// handovers that name the gNB as their target.
func rememberGlobalID(g *gnb, req ngapx.NGSetupRequest) {
	if id, err := req.GlobalGNBID(); err == nil {
		g.global.Store(&id)
	}
}

// targetIDModel is the Target ID for the SMFs (TS 29.502 6.1.6.2.3 targetId).
func targetIDModel(t ngapx.Target) models.NgRanTargetId {
	return models.NgRanTargetId{RanNodeId: &models.GlobalRanNodeId{PlmnId: ptr(t.GNB.PLMN.ToModel()),
		GNbId: &models.GNbId{BitLength: int32(t.GNB.Bits), GNBValue: fmt.Sprintf("%0*x", (t.GNB.Bits+3)/4, t.GNB.ID)}},
		Tai: ptr(t.TAI.ToModel())}
}

// askPreparing: TS 23.502 4.9.1.3.2 step 3, TS 29.502 5.2.2.3.4.2.
func (n *NF) askPreparing(ue *ueContext, h *handover, t ngapx.SessionTransfer) {
	s := n.handedSession(ue, t.ID)
	if s == nil {
		n.log.Info("Handover Required names no PDU session of the UE", "amfUeNgapId", ue.amfID, "pduSessionId", t.ID)
		return
	}
	hs := &hoSession{id: s.ID}
	h.sessions = append(h.sessions, hs)
	data := models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_PREPARING, TargetId: &h.target5GC,
		N2SmInfoType: models.N2SmInfoType_HANDOVER_REQUIRED, UeLocation: userLocation(ue)}
	n.askSMF(ue, h, hs, data, t.Transfer, func(a SMAnswer) bool {
		return a.HoState == models.HoState_PREPARING && (a.N2Type == n2HandoverRequestType || a.N2Type == models.N2SmInfoType_PDU_RES_SETUP_REQ)
	}, n.onSMFsPreparing)
}

// askSMF sends one session's update and collects the answer: took says
// whether it keeps the session in the handover (its N2 goes on to the
// gNB); when the last answer is in, next runs.
func (n *NF) askSMF(ue *ueContext, h *handover, hs *hoSession, data models.SmfPduSessionSmContextUpdateData, n2 []byte,
	took func(SMAnswer) bool, next func(*ueContext, *handover)) {
	s := n.handedSession(ue, int64(hs.id))
	if s == nil {
		hs.ok = false
		return
	}
	h.pending++
	phase, sess, uri := h.phase, n.opts.Sessions, s.ContextURI
	n.smCall(ue, func(ctx context.Context) (SMAnswer, error) {
		return sess.UpdateSMContext(ctx, uri, data, nil, n2)
	}, func(ue *ueContext, a SMAnswer, err error) {
		if ue.mob.ho != h || h.phase != phase {
			return // the handover ended or moved on meanwhile
		}
		h.pending--
		hs.ok = err == nil && a.N2 != nil && took(a)
		if hs.ok {
			hs.transfer = a.N2
		} else {
			n.log.Info("PDU session left out of the handover", "supi", ue.supi, "pduSessionId", hs.id, "hoState", a.HoState,
				"type", a.N2Type, "err", err)
			hs.released = preparationUnsuccessful(a)
		}
		if h.pending == 0 {
			next(ue, h)
		}
	}, nil)
}

// preparationUnsuccessful is the SMF's Handover Preparation Unsuccessful
// Transfer for the source (TS 38.413 9.3.4.18), when it gave one.
func preparationUnsuccessful(a SMAnswer) []byte {
	if a.N2Type == models.N2SmInfoType_HANDOVER_PREP_FAIL {
		return a.N2
	}
	return nil
}

// onSMFsPreparing: every SMF answered; TS 23.502 4.9.1.3.2 step 9, TS
// 38.413 8.4.2.2: Handover Request to the target with the sessions the
// SMFs prepared.
func (n *NF) onSMFsPreparing(ue *ueContext, h *handover) {
	var list []ngapx.SessionResource
	for _, hs := range h.sessions {
		if s := ue.pdu.get(hs.id); hs.ok && s != nil {
			list = append(list, ngapx.SessionResource{ID: int64(hs.id), SNSSAI: s.SNSSAI, Transfer: hs.transfer})
		}
	}
	if len(list) == 0 {
		n.failPreparation(ue, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHoFailureInTarget5GCNgranNodeOrTargetSystem), "smf-refused")
		return
	}
	sec, err := n.nextHop(ue)
	var b []byte
	if err == nil {
		ul, dl := handoverAMBR(ue)
		b, err = ngapx.BuildHandoverRequest(ngapx.HandoverRequest{AMFUEID: ue.amfID, Cause: h.cause, AMBRUL: ul, AMBRDL: dl,
			SecurityCaps: securityCaps(ue), Security: sec, Sessions: list, Allowed: n.allowedFor(ue), Container: h.container, GUAMI: n.guami})
	}
	if err == nil {
		err = n.sendOnLeg(ue, h.target, b)
	}
	if err != nil {
		n.log.Error("Handover Request not sent", "amfUeNgapId", ue.amfID, "err", err)
		n.failPreparation(ue, ngapx.CauseMisc(ngapType.CauseMiscPresentUnspecified), "internal")
		return
	}
	h.phase = hoAllocating
}

// maxBitRate is the largest Bit Rate NGAP carries (TS 38.413 9.3.1.4).
const maxBitRate = 4_000_000_000_000

// handoverAMBR is the UE-AMBR for Handover Request, where it is mandatory
// (9.2.3.4); a UE whose subscription gave none (Initial Context Setup
// then omitted it) is not limited by the target either.
func handoverAMBR(ue *ueContext) (ul, dl int64) {
	if ue.ambrUL > 0 && ue.ambrDL > 0 {
		return ue.ambrUL, ue.ambrDL
	}
	return maxBitRate, maxBitRate
}

// onHandoverRequestAcknowledge: TS 38.413 8.4.2.2, TS 23.502 4.9.1.3.2
// steps 10-12: each admitted session's transfer to its SMF (PREPARED).
func (n *NF) onHandoverRequestAcknowledge(g *gnb, ue *ueContext, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	if err := fromTarget(g, ue, s, hoAllocating); err != nil {
		return err
	}
	h := ue.mob.ho
	ack, err := ngapx.ParseHandoverRequestAcknowledge(pdu)
	if err != nil {
		// The target holds a context the AMF cannot use: it is released,
		// the source hears the preparation failed, the target the error.
		h.target.ranID = max(s.RANUEID, -1)
		n.failPreparation(ue, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHoFailureInTarget5GCNgranNodeOrTargetSystem), "target-malformed")
		return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, err)
	}
	h.target.ranID, h.container, h.phase = ack.RANUEID, ack.Container, hoPrepared
	admitted := map[int64][]byte{}
	for _, a := range ack.Admitted {
		admitted[a.ID] = a.Transfer
	}
	failed := map[int64][]byte{}
	for _, f := range ack.Failed {
		failed[f.ID] = f.Transfer
	}
	for _, hs := range h.sessions {
		n.onTargetAnswer(ue, h, hs, admitted, failed)
	}
	if h.pending == 0 {
		n.onSMFsPrepared(ue, h)
	}
	return nil
}

// onTargetAnswer passes one session's outcome at the target to its SMF:
// admitted -> PREPARED + HANDOVER_REQ_ACK (awaited for the Handover
// Command Transfer); refused -> HANDOVER_RES_ALLOC_FAIL; not named -> CANCELLED.
func (n *NF) onTargetAnswer(ue *ueContext, h *handover, hs *hoSession, admitted, failed map[int64][]byte) {
	if !hs.ok {
		return
	}
	id := int64(hs.id)
	if tr, ok := admitted[id]; ok {
		data := models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_PREPARED, N2SmInfoType: models.N2SmInfoType_HANDOVER_REQ_ACK}
		n.askSMF(ue, h, hs, data, tr, func(a SMAnswer) bool { return a.N2Type == models.N2SmInfoType_HANDOVER_CMD }, n.onSMFsPrepared)
		return
	}
	hs.ok = false
	if tr, ok := failed[id]; ok {
		n.tellSMF(ue, id, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_PREPARED,
			N2SmInfoType: models.N2SmInfoType_HANDOVER_RES_ALLOC_FAIL}, tr)
		return
	}
	n.tellSMF(ue, id, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_CANCELLED}, nil)
}

// onSMFsPrepared: TS 38.413 8.4.1.2, TS 23.502 4.9.1.3.3 step 1: Handover
// Command to the source, and TNGRELOCoverall for the execution.
func (n *NF) onSMFsPrepared(ue *ueContext, h *handover) {
	sessions := h.inHandover()
	if len(sessions) == 0 {
		n.failPreparation(ue, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHoFailureInTarget5GCNgranNodeOrTargetSystem), "target-admitted-none")
		return
	}
	b, err := ngapx.BuildHandoverCommand(ngapx.HandoverCommandMsg{UEIDs: ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: h.source.ranID},
		Sessions: sessions, Released: h.releasedSessions(), Container: h.container})
	if err == nil {
		err = n.sendOnLeg(ue, h.source, b)
	}
	if err != nil {
		n.log.Error("Handover Command not sent", "amfUeNgapId", ue.amfID, "err", err)
		n.failPreparation(ue, ngapx.CauseMisc(ngapType.CauseMiscPresentUnspecified), "internal")
		return
	}
	h.phase = hoExecuting
	n.armHandoverTimer(ue, n.cfg.AMF.NGAP.TNGRELOCoverall, n.onOverallExpiry)
}

// onUplinkRANStatusTransfer relays the source's PDCP COUNTs to the target
// unchanged (TS 38.413 8.4.6.2, 8.4.7.2).
func (n *NF) onUplinkRANStatusTransfer(g *gnb, ue *ueContext, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	if err := fromSource(g, ue, s); err != nil {
		return err
	}
	h := ue.mob.ho
	if h == nil || h.kind != hoN2 || h.phase != hoExecuting {
		return protocolError(s, ngapType.CauseProtocolPresentMessageNotCompatibleWithReceiverState, errNoHandover)
	}
	up, err := ngapx.ParseUplinkRANStatusTransfer(pdu)
	if err != nil {
		return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, err)
	}
	b, err := ngapx.BuildDownlinkRANStatusTransfer(ngapx.RANStatusTransfer{UEIDs: ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: h.target.ranID},
		Container: up.Container})
	if err != nil {
		return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorFalselyConstructedMessage, err)
	}
	return n.sendOnLeg(ue, h.target, b)
}

// onHandoverNotify: TS 38.413 8.4.3, TS 23.502 4.9.1.3.3 steps 5-8: the UE
// is at the target; its SMFs switch the downlink (COMPLETED) and the
// source's context is released.
func (n *NF) onHandoverNotify(g *gnb, ue *ueContext, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	if err := fromTarget(g, ue, s, hoExecuting); err != nil {
		return err
	}
	h := ue.mob.ho
	_, cell, err := ngapx.ParseHandoverNotify(pdu)
	if err != nil {
		return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, err)
	}
	for _, t := range h.inHandover() {
		n.tellSMF(ue, t.ID, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_COMPLETED, UeLocation: locationAt(cell.TAI)}, nil)
	}
	n.moveTo(ue, h.target, cell.TAI)
	n.endHandover(ue, "")
	return nil
}

// onHandoverFailure: TS 38.413 8.4.2.3: the target refused; the source
// hears Handover Preparation Failure with the target's cause (8.4.1.3).
func (n *NF) onHandoverFailure(g *gnb, ue *ueContext, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	if err := fromTarget(g, ue, s, hoAllocating); err != nil {
		return err
	}
	_, cause, err := ngapx.ParseHandoverFailure(pdu)
	if err != nil {
		cause = ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHoFailureInTarget5GCNgranNodeOrTargetSystem)
	}
	// 8.4.2.3: the target kept no context for the UE: nothing to release.
	ue.mob.ho.targetRefused = true
	n.failPreparation(ue, cause, "target-refused")
	return nil
}

// onHandoverCancel: TS 38.413 8.4.5, TS 23.502 4.9.1.4: the source gives
// up; the SMFs and the target undo the preparation and the source is
// acknowledged (also when no handover runs any more: the outcomes crossed).
func (n *NF) onHandoverCancel(g *gnb, ue *ueContext, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	if err := fromSource(g, ue, s); err != nil {
		return err
	}
	if _, _, err := ngapx.ParseHandoverCancel(pdu); err != nil {
		return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, err)
	}
	if h := ue.mob.ho; h != nil && h.kind == hoN2 {
		n.undoPreparation(ue, h, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHandoverCancelled))
		n.endHandover(ue, "cancelled")
	}
	b, err := ngapx.BuildHandoverCancelAcknowledge(ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: ue.ranID})
	if err != nil {
		return err
	}
	return n.sendToUE(ue, b)
}

// onPreparationExpiry: TNGRELOCprep (TS 38.413 8.4.1.2) ran out before
// the Handover Command: the preparation fails and is undone.
func (n *NF) onPreparationExpiry(ue *ueContext) {
	if ue.mob.ho.phase == hoExecuting {
		return
	}
	n.failPreparation(ue, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentTngrelocprepExpiry), "prep-timeout")
}

// onOverallExpiry: no Handover Notify within TNGRELOCoverall (TS 38.413
// 8.4.1.2): the target's context is released, the SMFs cancel, and the UE
// stays with the source.
func (n *NF) onOverallExpiry(ue *ueContext) {
	h := ue.mob.ho
	n.undoPreparation(ue, h, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentTngrelocoverallExpiry))
	n.endHandover(ue, "overall-timeout")
}

// failPreparation ends a preparation with Handover Preparation Failure to
// the source (TS 38.413 8.4.1.3) and undoes it.
func (n *NF) failPreparation(ue *ueContext, cause ngapType.Cause, reason string) {
	h := ue.mob.ho
	n.undoPreparation(ue, h, cause)
	n.endHandover(ue, reason)
	n.sendPreparationFailure(ue, cause)
}

// undoPreparation: hoState CANCELLED to each SMF asked (TS 29.502
// 5.2.2.3.4.4), and UE Context Release Command to a target that holds a
// context (TS 23.502 4.9.1.4 step 3).
func (n *NF) undoPreparation(ue *ueContext, h *handover, cause ngapType.Cause) {
	for _, hs := range h.sessions {
		n.tellSMF(ue, int64(hs.id), models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_CANCELLED}, nil)
	}
	if h.phase >= hoAllocating && !h.targetRefused {
		n.releaseLeg(ue, h.target, cause)
	}
}

func (n *NF) sendPreparationFailure(ue *ueContext, cause ngapType.Cause) {
	b := n.built("HandoverPreparationFailure")(ngapx.BuildHandoverPreparationFailure(ngapx.HandoverPreparationFailure{
		UEIDs: ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: ue.ranID}, Cause: cause}))
	if b == nil {
		return
	}
	if err := n.sendToUE(ue, b); err != nil {
		n.log.Warn("Handover Preparation Failure not sent", "amfUeNgapId", ue.amfID, "err", err)
	}
}
