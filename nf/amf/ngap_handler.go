package amf

// N2 handlers (TS 38.413 8.7.1 NG Setup, 8.7.4 NG Reset, 8.7.5 Error
// Indication, 8.6 NAS transport, 8.3 UE context management).

import (
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/ratelimit"
)

// onPDU runs on the association's reader: it decodes just enough to find the
// key and hands the rest to the dispatcher.
func (n *NF) onPDU(g *gnb, b []byte, stream uint16) {
	gkey := ratelimit.GNB(g.id)
	pdu, err := ngapx.Decode(b)
	if err != nil {
		// TS 38.413 10.2: transfer syntax error -> Error Indication; the
		// association stays up.
		_ = n.disp.Dispatch(gkey, func() {
			n.log.Warn("malformed NGAP", "gnb", g.id, "stream", stream, "err", err)
			n.sendErrorIndication(g, -1, -1, ngapx.CauseProtocol(ngapType.CauseProtocolPresentTransferSyntaxError))
		})
		return
	}
	s, err := ngapx.Summarize(pdu)
	if err != nil {
		_ = n.disp.Dispatch(gkey, func() {
			n.sendErrorIndication(g, -1, -1, ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorFalselyConstructedMessage))
		})
		return
	}
	if s.Kind == ngapx.Initiating && s.Procedure == ngapType.ProcedureCodeInitialUEMessage {
		id := n.ues.allocID()
		_ = n.disp.Dispatch(ratelimit.UE(id), func() { n.onInitialUEMessage(g, id, pdu) })
		return
	}
	if s.AMFUEID >= 0 && s.Procedure != ngapType.ProcedureCodeErrorIndication {
		// Every message naming a UE runs on that UE's key, whatever its
		// procedure: an Error Indication is the gNB's report, logged on its key.
		_ = n.disp.Dispatch(ratelimit.UE(s.AMFUEID), func() { n.onUEAssociated(g, pdu, s) })
		return
	}
	_ = n.disp.Dispatch(gkey, func() { n.onNonUE(g, pdu, s) })
}

// onNonUE handles association-level signalling on the gNB's key.
func (n *NF) onNonUE(g *gnb, pdu *ngapType.NGAPPDU, s ngapx.Summary) {
	switch {
	case s.Kind == ngapx.Initiating && s.Procedure == ngapType.ProcedureCodeNGSetup:
		n.onNGSetup(g, pdu)
	case !g.ready.Load():
		// TS 38.413 8.7.1.1: nothing but NG Setup before the NG association exists.
		n.sendErrorIndication(g, s.AMFUEID, s.RANUEID, ngapx.CauseProtocol(ngapType.CauseProtocolPresentMessageNotCompatibleWithReceiverState))
	case s.Kind == ngapx.Initiating && s.Procedure == ngapType.ProcedureCodeNGReset:
		n.onNGReset(g, pdu)
	case s.Kind == ngapx.Initiating && s.Procedure == ngapType.ProcedureCodeRANConfigurationUpdate:
		n.onRANConfigurationUpdate(g, pdu)
	case s.Kind == ngapx.Initiating && s.Procedure == ngapType.ProcedureCodeErrorIndication:
		// TS 38.413 8.7.5.2: the receiver logs; no answer.
		n.log.Warn("Error Indication from gNB", "gnb", g.id, "amfUeNgapId", s.AMFUEID, "ranUeNgapId", s.RANUEID,
			"cause", ngapx.CauseString(s.Cause))
	case s.UEAssociated():
		// A UE-associated message without its mandatory AMF UE NGAP ID
		// (TS 38.413 10.3.5, 10.6): Error Indication.
		n.sendErrorIndication(g, s.AMFUEID, s.RANUEID, ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorReject))
	default:
		n.onProcedureNotImplemented(g, pdu, s)
	}
}

// onProcedureNotImplemented treats a procedure the AMF decodes but does not
// run by the criticality of its procedure code (TS 38.413 10.3.4.1): reject
// -> Error Indication; ignore and notify -> ignored, Error Indication;
// ignore -> ignored silently (e.g. a gNB's optional reports).
func (n *NF) onProcedureNotImplemented(g *gnb, pdu *ngapType.NGAPPDU, s ngapx.Summary) {
	switch ngapx.Criticality(pdu) {
	case ngapType.CriticalityPresentIgnore:
		n.log.Debug("NGAP procedure not implemented; ignored (criticality ignore)", "gnb", g.id, "message", s.Name,
			"amfUeNgapId", s.AMFUEID)
	case ngapType.CriticalityPresentNotify:
		n.log.Info("NGAP procedure not implemented; ignored and notified", "gnb", g.id, "message", s.Name)
		n.sendErrorIndication(g, s.AMFUEID, s.RANUEID, ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorIgnoreAndNotify))
	default:
		n.log.Info("NGAP procedure not implemented; rejected", "gnb", g.id, "message", s.Name)
		n.sendErrorIndication(g, s.AMFUEID, s.RANUEID, ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorReject))
	}
}

// onNGSetup: TS 38.413 8.7.1.2/8.7.1.3. The gNB must serve at least one of
// our TAs in our PLMN, else NG Setup Failure (unknown PLMN).
func (n *NF) onNGSetup(g *gnb, pdu *ngapType.NGAPPDU) {
	start := time.Now()
	req, err := ngapx.ParseNGSetupRequest(pdu)
	if err != nil {
		n.log.Warn("NG Setup Request invalid", "gnb", g.id, "err", err)
		n.metrics.done(procNGSetup, resultFailure, start)
		n.sendNonUE(g, must(ngapx.BuildNGSetupFailure(ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorReject))))
		return
	}
	if !n.servesAny(req.TAs) {
		n.log.Warn("NG Setup rejected: no TA of ours", "gnb", g.id, "plmn", req.PLMN.MCC+req.PLMN.MNC)
		n.metrics.done(procNGSetup, resultReject, start)
		n.sendNonUE(g, must(ngapx.BuildNGSetupFailure(ngapx.CauseMisc(ngapType.CauseMiscPresentUnknownPLMN))))
		return
	}
	b, err := ngapx.BuildNGSetupResponse(ngapx.Served{AMFName: n.cfg.AMF.Name, GUAMI: n.guami,
		Capacity: int64(n.cfg.AMF.Relative), SNSSAIs: n.servedSlices()})
	if err != nil {
		n.log.Error("NG Setup Response", "err", err)
		return
	}
	g.name = req.Name
	if !g.ready.Swap(true) {
		n.metrics.gnbs.Inc()
	}
	n.sendNonUE(g, b)
	n.metrics.done(procNGSetup, resultSuccess, start)
	n.log.Info("NG Setup", "gnb", g.id, "name", req.Name, "tas", len(req.TAs))
}

// onRANConfigurationUpdate: TS 38.413 8.7.2. A gNB that changed its cells
// announces them again; the AMF takes the new name and acknowledges, unless
// the new Supported TA List leaves none of our TAs (8.7.2.3: failure, and
// the NG association keeps its previous configuration).
func (n *NF) onRANConfigurationUpdate(g *gnb, pdu *ngapType.NGAPPDU) {
	upd, err := ngapx.ParseRANConfigurationUpdate(pdu)
	if err != nil {
		n.log.Warn("RAN Configuration Update invalid", "gnb", g.id, "err", err)
		n.sendNonUE(g, must(ngapx.BuildRANConfigurationUpdateFailure(ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorReject))))
		return
	}
	if upd.TAs != nil && !n.servesAny(upd.TAs) {
		n.log.Warn("RAN Configuration Update rejected: no TA of ours", "gnb", g.id)
		n.sendNonUE(g, must(ngapx.BuildRANConfigurationUpdateFailure(ngapx.CauseMisc(ngapType.CauseMiscPresentUnknownPLMN))))
		return
	}
	if upd.Name != "" {
		g.name = upd.Name
	}
	n.sendNonUE(g, must(ngapx.BuildRANConfigurationUpdateAcknowledge()))
	n.log.Info("RAN Configuration Update", "gnb", g.id, "name", g.name, "tas", len(upd.TAs))
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
func (n *NF) onNGReset(g *gnb, pdu *ngapType.NGAPPDU) {
	all, part, err := ngapx.ResetAll(pdu)
	if err != nil {
		n.sendErrorIndication(g, -1, -1, ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorReject))
		return
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
	ack := func() { n.sendNonUE(g, must(ngapx.BuildNGResetAcknowledge(part))) }
	if len(ids) == 0 {
		ack()
		return
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
func (n *NF) onInitialUEMessage(g *gnb, id int64, pdu *ngapType.NGAPPDU) {
	if !g.ready.Load() {
		n.sendErrorIndication(g, -1, -1, ngapx.CauseProtocol(ngapType.CauseProtocolPresentMessageNotCompatibleWithReceiverState))
		return
	}
	m, err := ngapx.ParseInitialUEMessage(pdu)
	if err != nil {
		n.log.Warn("Initial UE Message invalid", "gnb", g.id, "err", err)
		ran := int64(-1)
		if m.RANUEID >= 0 {
			ran = m.RANUEID
		}
		n.sendErrorIndication(g, -1, ran, ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorReject))
		return
	}
	ue := &ueContext{amfID: id, ranID: m.RANUEID, gnbID: g.id, tai: m.TAI}
	n.ues.put(ue)
	n.onUplinkNAS(ue, m.NASPDU, true)
}

// onUEAssociated handles UE-associated NGAP on the UE's key.
func (n *NF) onUEAssociated(g *gnb, pdu *ngapType.NGAPPDU, s ngapx.Summary) {
	ue := n.ues.get(s.AMFUEID)
	switch {
	case ue == nil || ue.gnbID != g.id:
		// TS 38.413 10.6: the AMF UE NGAP ID (our local id) is unknown on this association.
		n.sendErrorIndication(g, s.AMFUEID, s.RANUEID, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownLocalUENGAPID))
		return
	case s.RANUEID >= 0 && s.RANUEID != ue.ranID:
		// TS 38.413 10.6: known AMF UE NGAP ID, but not with this RAN UE NGAP ID.
		n.sendErrorIndication(g, s.AMFUEID, s.RANUEID, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentInconsistentRemoteUENGAPID))
		return
	}
	switch {
	case s.Procedure == ngapType.ProcedureCodeUplinkNASTransport:
		if s.NASPDU == nil {
			n.sendErrorIndication(g, s.AMFUEID, s.RANUEID, ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorReject))
			return
		}
		n.onUplinkNAS(ue, s.NASPDU, false)
	case s.Procedure == ngapType.ProcedureCodeInitialContextSetup && s.Kind == ngapx.Successful:
		n.step(ue, EvContextSetupResponse, &input{})
	case s.Procedure == ngapType.ProcedureCodeInitialContextSetup && s.Kind == ngapx.Unsuccessful:
		n.step(ue, EvContextSetupFailure, &input{cause: s.Cause})
	case s.Procedure == ngapType.ProcedureCodeUEContextReleaseRequest:
		n.step(ue, EvReleaseRequest, &input{cause: s.Cause})
	case s.Procedure == ngapType.ProcedureCodeUEContextRelease && s.Kind == ngapx.Successful:
		n.step(ue, EvReleaseComplete, &input{})
	case s.Procedure == ngapType.ProcedureCodeUERadioCapabilityInfoIndication:
		n.onRadioCapability(ue, pdu)
	case s.Procedure == ngapType.ProcedureCodeNASNonDeliveryIndication:
		// TS 38.413 8.6.4: the gNB could not deliver a downlink NAS PDU. The
		// NAS procedure that sent it retransmits on its timer (TS 24.501
		// 5.4.1.3.7, 5.4.2.7, 5.4.3.7, 5.5.1.2.8); nothing else to do.
		n.log.Info("NAS Non Delivery Indication", "amfUeNgapId", ue.amfID, "state", ue.state, "cause", ngapx.CauseString(s.Cause))
	default:
		n.onProcedureNotImplemented(g, pdu, s)
	}
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
	if g := n.gnb(ue.gnbID); g != nil {
		n.sendReleaseCommand(g, ue.amfID, ue.ranID, cause)
	}
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
	n.stopTimer(ue)
	if ue.registered {
		n.ues.park(ue)
		return StateRegistered
	}
	// A context that never completed a registration (Initial Context Setup
	// failed, the gNB released or reset mid-procedure) may hold SBI state.
	n.endContext(ue)
	n.ues.remove(ue.amfID)
	if ue.deregistering {
		n.metrics.done(procDeregistration, resultSuccess, ue.reg.started)
	}
	return StateDeregistered
}

func causeNasUnspecified() ngapType.Cause {
	return ngapx.CauseNas(ngapType.CauseNasPresentUnspecified)
}

func causeNasDeregister() ngapType.Cause {
	return ngapx.CauseNas(ngapType.CauseNasPresentDeregister)
}

// must is for builders whose inputs are the AMF's own, already validated.
func must(b []byte, err error) []byte {
	if err != nil {
		panic(errors.Join(errors.New("amf: building an NGAP message from valid input"), err))
	}
	return b
}

var _ = aper.Enumerated(0)
