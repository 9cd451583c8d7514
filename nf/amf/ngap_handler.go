package amf

// N2 handlers (TS 38.413 8.7.1 NG Setup, 8.7.4 NG Reset, 8.7.5 Error
// Indication, 8.6 NAS transport, 8.3 UE context management).

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/ratelimit"
)

// onPDU runs on the association's reader: it decodes just enough to find the
// key and hands the rest to the dispatcher. Handlers return an *ngapError;
// ngap_reply.go decides the answer.
func (n *NF) onPDU(g *gnb, b []byte, stream uint16) {
	at := n.trace.Now()
	gkey := ratelimit.GNB(g.id)
	unknown := ngapx.Summary{AMFUEID: -1, RANUEID: -1}
	pdu, err := ngapx.Decode(b)
	if err != nil {
		// TS 38.413 10.2: transfer syntax error; the association stays up.
		_ = n.disp.Dispatch(gkey, func() {
			n.answerNGAP(g, unknown, protocolError(unknown, ngapType.CauseProtocolPresentTransferSyntaxError,
				fmt.Errorf("stream %d: %w", stream, err)))
		})
		return
	}
	s, err := ngapx.Summarize(pdu)
	if err != nil {
		_ = n.disp.Dispatch(gkey, func() {
			n.answerNGAP(g, s, protocolError(unknown, ngapType.CauseProtocolPresentAbstractSyntaxErrorFalselyConstructedMessage, err))
		})
		return
	}
	if s.Kind == ngapx.Initiating && s.Procedure == ngapType.ProcedureCodeInitialUEMessage {
		id := n.ues.allocID()
		_ = n.disp.Dispatch(ratelimit.UE(id), n.trace.Received(at, n2Message(s, id), func() { n.answerIfFailed(g, s, n.onInitialUEMessage(g, id, pdu)) }))
		return
	}
	if s.AMFUEID >= 0 && s.Procedure != ngapType.ProcedureCodeErrorIndication {
		// Every message naming a UE runs on that UE's key, whatever its
		// procedure: an Error Indication is the gNB's report, logged on its key.
		_ = n.disp.Dispatch(ratelimit.UE(s.AMFUEID), n.trace.Received(at, n2Message(s, s.AMFUEID), func() { n.answerIfFailed(g, s, n.onUEAssociated(g, pdu, s)) }))
		return
	}
	_ = n.disp.Dispatch(gkey, n.trace.Received(at, n2Message(s, -1), func() { n.answerIfFailed(g, s, n.onNonUE(g, pdu, s)) }))
}

func (n *NF) answerIfFailed(g *gnb, s ngapx.Summary, err error) {
	if err != nil {
		n.answerNGAP(g, s, err)
	}
}

// onNonUE handles association-level signalling on the gNB's key.
func (n *NF) onNonUE(g *gnb, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	switch {
	case s.Kind == ngapx.Initiating && s.Procedure == ngapType.ProcedureCodeNGSetup:
		return n.onNGSetup(g, pdu, s)
	case !g.ready.Load():
		// TS 38.413 8.7.1.1: nothing but NG Setup before the NG association exists.
		return protocolError(s, ngapType.CauseProtocolPresentMessageNotCompatibleWithReceiverState, errors.New("no NG Setup yet"))
	case s.Kind == ngapx.Initiating && s.Procedure == ngapType.ProcedureCodeNGReset:
		return n.onNGReset(g, pdu, s)
	case s.Kind == ngapx.Initiating && s.Procedure == ngapType.ProcedureCodeRANConfigurationUpdate:
		return n.onRANConfigurationUpdate(g, pdu, s)
	case s.Kind == ngapx.Initiating && s.Procedure == ngapType.ProcedureCodeErrorIndication:
		// TS 38.413 8.7.5.2: the receiver logs; no answer.
		n.log.Warn("Error Indication from gNB", "gnb", g.id, "amfUeNgapId", s.AMFUEID, "ranUeNgapId", s.RANUEID,
			"cause", ngapx.CauseString(s.Cause))
		return nil
	case s.UEAssociated():
		// A UE-associated message without its mandatory AMF UE NGAP ID
		// (TS 38.413 10.3.5, 10.6).
		return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, errors.New("no AMF UE NGAP ID"))
	}
	return notImplemented(pdu, s)
}

// onNGSetup: TS 38.413 8.7.1.2/8.7.1.3. The gNB must serve at least one of
// our TAs in our PLMN, else NG Setup Failure (unknown PLMN).
func (n *NF) onNGSetup(g *gnb, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	start := time.Now()
	req, err := ngapx.ParseNGSetupRequest(pdu)
	if err != nil {
		n.metrics.done(procNGSetup, resultFailure, start)
		return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, err)
	}
	if !n.servesAny(req.TAs) {
		n.metrics.done(procNGSetup, resultReject, start)
		return ngapFail(s, ngapx.CauseMisc(ngapType.CauseMiscPresentUnknownPLMN),
			fmt.Errorf("no TA of ours (PLMN %s%s)", req.PLMN.MCC, req.PLMN.MNC))
	}
	b, err := ngapx.BuildNGSetupResponse(ngapx.Served{AMFName: n.cfg.AMF.Name, GUAMI: n.guami,
		Capacity: int64(n.cfg.AMF.Relative), SNSSAIs: n.servedSlices()})
	if err != nil {
		return fmt.Errorf("NG Setup Response: %w", err)
	}
	g.name = req.Name
	tais := n.servedTAIs(req.TAs)
	g.tais.Store(&tais)
	rememberGlobalID(g, req)
	if !g.ready.Swap(true) {
		n.metrics.gnbs.Inc()
	}
	// Logged before the answer leaves: a reader of the log (and the log
	// test) sees the setup before the gNB can act on it.
	n.log.Info("NG Setup", "gnb", g.id, "name", req.Name, "tas", len(req.TAs))
	n.sendNonUE(g, b)
	n.metrics.done(procNGSetup, resultSuccess, start)
	return nil
}

// onRANConfigurationUpdate: TS 38.413 8.7.2. A gNB that changed its cells
// announces them again; the AMF takes the new name and acknowledges, unless
// the new Supported TA List leaves none of our TAs (8.7.2.3: failure, and
// the NG association keeps its previous configuration).
func (n *NF) onRANConfigurationUpdate(g *gnb, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	upd, err := ngapx.ParseRANConfigurationUpdate(pdu)
	if err != nil {
		return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, err)
	}
	if upd.TAs != nil && !n.servesAny(upd.TAs) {
		return ngapFail(s, ngapx.CauseMisc(ngapType.CauseMiscPresentUnknownPLMN), errors.New("no TA of ours"))
	}
	if upd.Name != "" {
		g.name = upd.Name
	}
	if upd.TAs != nil {
		tais := n.servedTAIs(upd.TAs)
		g.tais.Store(&tais)
	}
	n.sendNonUE(g, n.built("RANConfigurationUpdateAcknowledge")(ngapx.BuildRANConfigurationUpdateAcknowledge()))
	n.log.Info("RAN Configuration Update", "gnb", g.id, "name", g.name, "tas", len(upd.TAs))
	return nil
}

func (n *NF) servesAny(tas []ngapx.SupportedTA) bool {
	for _, ta := range tas {
		for _, p := range ta.PLMNs {
			if slices.Contains(n.tais, domain.TAI{PLMN: p.PLMN, TAC: ta.TAC}) {
				return true
			}
		}
	}
	return false
}

// onNGReset: TS 38.413 8.7.4.2.2. Every UE context of the gNB (or of the
// listed connections) is released locally; the acknowledgement follows the
// last release. Nothing waits: each UE's reset runs on its own key and the
// last one to finish queues the acknowledgement on the gNB's key.
func (n *NF) onNGReset(g *gnb, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	all, part, err := ngapx.ResetAll(pdu)
	if err != nil {
		return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, err)
	}
	var ids []int64
	if all {
		ids = n.ues.ofGNB(g.id)
	} else {
		for _, item := range part {
			if ue := n.lookupItem(g, item); ue != nil {
				ids = append(ids, ue.amfID)
			}
		}
	}
	n.log.Info("NG Reset", "gnb", g.id, "all", all, "ues", len(ids))
	// The list comes from the gNB: its acknowledgement may fail to build.
	ack := func() { n.sendNonUE(g, n.built("NGResetAcknowledge")(ngapx.BuildNGResetAcknowledge(part))) }
	if len(ids) == 0 {
		ack()
		return nil
	}
	var left atomic.Int64
	left.Store(int64(len(ids)))
	last := func() {
		if left.Add(-1) == 0 {
			_ = n.disp.Dispatch(ratelimit.GNB(g.id), ack)
		}
	}
	for _, id := range ids {
		n.dispatchUE(id, EvReset, &input{done: last})
	}
	return nil
}

func (n *NF) lookupItem(g *gnb, item ngapType.UEAssociatedLogicalNGConnectionItem) *ueContext {
	if item.AMFUENGAPID != nil {
		if ue := n.ues.get(item.AMFUENGAPID.Value); ue != nil && ue.gnbID == g.id {
			return ue
		}
	}
	if item.RANUENGAPID != nil {
		return n.ues.findRAN(g.id, item.RANUENGAPID.Value)
	}
	return nil
}

// onInitialUEMessage creates the UE's N2 connection and hands its NAS
// message to 5GMM (TS 38.413 8.6.1).
func (n *NF) onInitialUEMessage(g *gnb, id int64, pdu *ngapType.NGAPPDU) error {
	noUE := ngapx.Summary{AMFUEID: -1, RANUEID: -1}
	if !g.ready.Load() {
		return protocolError(noUE, ngapType.CauseProtocolPresentMessageNotCompatibleWithReceiverState, errors.New("no NG Setup yet"))
	}
	m, err := ngapx.ParseInitialUEMessage(pdu)
	if err != nil {
		noUE.RANUEID = max(m.RANUEID, -1)
		return protocolError(noUE, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, err)
	}
	typ, answer, why := screenInitialNAS(m.NASPDU)
	if why != admitted {
		n.refuseInitial(g, id, m.RANUEID, answer, causeNasUnspecified(), why)
		return nil
	}
	ue := &ueContext{amfID: id, ranID: m.RANUEID, gnbID: g.id, tai: m.TAI}
	if !n.admitUE(g, ue, typ) {
		return nil
	}
	if n.waitForRelease(g, ue, m.NASPDU) {
		return nil // its UE's old connection is still being released (an_release_window.go)
	}
	n.onUplinkNAS(ue, m.NASPDU, true)
	n.keepIfStarted(g, ue)
	return nil
}

// onUEAssociated handles UE-associated NGAP on the UE's key.
func (n *NF) onUEAssociated(g *gnb, pdu *ngapType.NGAPPDU, s ngapx.Summary) error {
	ue := n.ues.get(s.AMFUEID)
	if handled, err := n.onMobility(g, ue, pdu, s); handled {
		return err // a handover message, from either gNB of the UE (ngap_handover_common.go)
	}
	switch {
	case ue == nil && s.Procedure == ngapType.ProcedureCodeUEContextRelease && s.Kind == ngapx.Successful:
		// The Complete of a release the AMF finished locally: a refused
		// InitialUEMessage (ue_admission.go) or an expired release guard.
		// The gNB has released too; there is nothing to report.
		return nil
	case ue == nil || ue.gnbID != g.id:
		// TS 38.413 10.6: the AMF UE NGAP ID (our local id) is unknown on this association.
		return ngapFail(s, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownLocalUENGAPID),
			errors.New("unknown AMF UE NGAP ID"))
	case s.RANUEID >= 0 && s.RANUEID != ue.ranID:
		// TS 38.413 10.6: known AMF UE NGAP ID, but not with this RAN UE NGAP ID.
		return ngapFail(s, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentInconsistentRemoteUENGAPID),
			fmt.Errorf("RAN UE NGAP ID %d, the UE has %d", s.RANUEID, ue.ranID))
	}
	switch {
	case s.Procedure == ngapType.ProcedureCodeUplinkNASTransport:
		if s.NASPDU == nil {
			return protocolError(s, ngapType.CauseProtocolPresentAbstractSyntaxErrorReject, errors.New("no NAS-PDU"))
		}
		n.onUplinkNAS(ue, s.NASPDU, false)
	case s.Procedure == ngapType.ProcedureCodeInitialContextSetup && s.Kind == ngapx.Successful:
		n.serviceSetupAnswered(ue, resultSuccess)
		n.forwardContextSetupOutcomes(ue, pdu)
		n.step(ue, EvContextSetupResponse, &input{})
	case s.Procedure == ngapType.ProcedureCodeInitialContextSetup && s.Kind == ngapx.Unsuccessful:
		n.serviceSetupAnswered(ue, resultFailure)
		n.forwardContextSetupOutcomes(ue, pdu)
		n.step(ue, EvContextSetupFailure, &input{cause: s.Cause})
	case s.Procedure == ngapType.ProcedureCodeUEContextReleaseRequest:
		n.readActiveUP(ue, pdu)
		n.step(ue, EvReleaseRequest, &input{cause: s.Cause})
	case s.Procedure == ngapType.ProcedureCodeUEContextRelease && s.Kind == ngapx.Successful:
		n.step(ue, EvReleaseComplete, &input{})
	case ngapx.IsPDUSessionResourceAnswer(s):
		return n.onSessionResourceAnswer(ue, pdu, s)
	case s.Procedure == ngapType.ProcedureCodeUERadioCapabilityInfoIndication:
		n.onRadioCapability(ue, pdu)
	case s.Procedure == ngapType.ProcedureCodeNASNonDeliveryIndication:
		// TS 38.413 8.6.4: the gNB could not deliver a downlink NAS PDU. The
		// NAS procedure that sent it retransmits on its timer (TS 24.501
		// 5.4.1.3.7, 5.4.2.7, 5.4.3.7, 5.5.1.2.8); nothing else to do.
		n.log.Info("NAS Non Delivery Indication", "amfUeNgapId", ue.amfID, "state", ue.state, "cause", ngapx.CauseString(s.Cause))
	default:
		return notImplemented(pdu, s)
	}
	return nil
}

// onRadioCapability keeps the UE Radio Capability the gNB reports after
// Initial Context Setup (TS 38.413 8.14.1.2; TS 23.501 5.4.4.1: the AMF
// stores it with the UE's context, so it outlives CM-IDLE).
func (n *NF) onRadioCapability(ue *ueContext, pdu *ngapType.NGAPPDU) {
	c, err := ngapx.ParseUERadioCapability(pdu)
	if err != nil || c == nil {
		n.log.Debug("UE Radio Capability Info Indication without UE Radio Capability", "amfUeNgapId", ue.amfID, "err", err)
		return
	}
	ue.radioCapability = c
}

func (n *NF) onContextSetupFailure(ue *ueContext, in *input) (State, error) {
	n.log.Warn("Initial Context Setup failed", "amfUeNgapId", ue.amfID, "cause", ngapx.CauseString(in.cause))
	n.finishProcedure(ue, procedureOf(ue.state), resultFailure)
	return n.release(ue, causeNasUnspecified())
}

// onReleaseRequest: TS 38.413 8.3.2 -> UE Context Release Command.
func (n *NF) onReleaseRequest(ue *ueContext, in *input) (State, error) {
	cause := causeNasUnspecified()
	if in.cause != nil {
		cause = *in.cause
	}
	if ue.state != StateRegistered {
		n.finishProcedure(ue, procedureOf(ue.state), resultFailure)
	}
	return n.release(ue, cause)
}

// release stops timers and commands the gNB to release the UE's N2 connection
// (TS 38.413 8.3.3); the context goes on UE Context Release Complete.
func (n *NF) release(ue *ueContext, cause ngapType.Cause) (State, error) {
	n.stopTimer(ue)
	n.cancelCall(ue)
	if g := n.gnb(ue.gnbID); g != nil {
		n.sendReleaseCommand(g, ue.amfID, ue.ranID, cause)
	}
	n.startGuard(ue, guardRelease)
	n.noteRelease(ue) // what names the UE meanwhile waits for the end (an_release_window.go)
	return StateReleasing, nil
}

// onReleaseComplete ends the N2 connection: a registered UE keeps its 5GMM
// context, parked under its 5G-TMSI (CM-IDLE); any other UE is forgotten.
func (n *NF) onReleaseComplete(ue *ueContext, _ *input) (State, error) {
	return n.dropConnection(ue), nil
}

// onReset: the gNB reset (or lost) the connection; no message goes to it.
func (n *NF) onReset(ue *ueContext, _ *input) (State, error) {
	n.stopTimer(ue)
	if ue.state != StateRegistered && ue.state != StateReleasing {
		n.finishProcedure(ue, procedureOf(ue.state), resultFailure)
	}
	return n.dropConnection(ue), nil
}

func (n *NF) dropConnection(ue *ueContext) State {
	// Deferred first, so it runs last: what waited for the release meets
	// one that is over (an_release_window.go).
	defer n.releaseEnded(ue)
	defer n.endProcedures(ue, ratelimit.ResultGone) // after the deregistration below is counted
	n.stopTimer(ue)
	n.stopGuard(ue)
	n.cancelCall(ue)
	n.abandonHandover(ue) // ngap_handover_common.go
	n.endSuperseded(ue)
	if ue.registered {
		n.failPaged(ue, models.N1N2MessageTransferCause_UE_NOT_RESPONDING)
		ue.service = nil
		n.deactivateSessions(ue)
		n.persistUE(ue) // before park: once parked, another event may adopt it
		n.ues.park(ue)
		n.startReachability(ue) // TS 24.501 5.3.7 (mobile_reachable.go)
		return StateRegistered
	}
	// A context that never completed a registration (Initial Context Setup
	// failed, the gNB released or reset mid-procedure) may hold SBI state.
	n.endContext(ue)
	n.ues.remove(ue.amfID)
	if ue.deregistering {
		n.finishProcedure(ue, procDeregistration, resultSuccess)
	}
	return StateDeregistered
}

// endSuperseded: a registered UE whose connection ends after the UE has
// registered afresh on a new one (initial registration with SUCI while
// the old connection was still being released, TS 23.502 4.2.2.2.2) is
// not parked: that would leave two contexts of one SUPI, and the SMF's
// transfers for the new sessions could reach the old one (the QoS e2e
// test's lost session 1). Its 5GMM context ends; the UDM registration is
// the newer context's now (its Nudm_UECM_Registration replaced this one,
// TS 23.502 4.2.2.2.2 step 14), so it is not purged.
func (n *NF) endSuperseded(ue *ueContext) {
	if !ue.registered || ue.supi == "" || !n.ues.superseded(ue) {
		return
	}
	n.log.Info("UE context replaced by a newer registration: not kept", "supi", ue.supi, "amfUeNgapId", ue.amfID)
	ue.udmRegistered = false
	n.endContext(ue)
}

func causeNasUnspecified() ngapType.Cause {
	return ngapx.CauseNas(ngapType.CauseNasPresentUnspecified)
}

func causeNasDeregister() ngapType.Cause {
	return ngapx.CauseNas(ngapType.CauseNasPresentDeregister)
}
