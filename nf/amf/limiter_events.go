package amf

// The Service Request, UE- and network-triggered, in the limiter's count (DESIGN.md
// "AMF limiter and overload"; issue 14 "Events, not messages"):
//
//	Service Request (TS 23.502 4.2.3.2)  gated on the UE's key like a
//	                                     Registration Request; counted from
//	                                     the request to Service Accept
//	                                     (connected UE), to the Initial
//	                                     Context Setup answer (from CM-IDLE),
//	                                     or to the Service Reject
//	network-triggered Service Request    counted from the N1N2MessageTransfer
//	(4.2.3.3, paging)                    that starts paging; the UE's Service
//	                                     Request that answers it is step 6 of
//	                                     the same procedure: it is not gated
//	                                     and carries on with the paging's
//	                                     slot (one event, one slot); paging
//	                                     failure ends it
//
// Handover Required and Path Switch Request: limiter_mobility.go.
//
// Paging is not gated: the parked context has no key to hold and the SMF
// waits for the 202; it is counted at once (Limiter.Force).

import (
	"time"

	"github.com/free5gc/nas"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/ratelimit"
)

// kindPaging labels the network-triggered Service Request (TS 23.502
// 4.2.3.3), also once the UE's Service Request carries it on.
const kindPaging = "network_service_request"

// gatedKind is initiatingKind for the message as it arrives: a Service
// Request that answers a running paging is a follow-up of the network's
// procedure (TS 23.502 4.2.3.3 step 6), never held behind the gate.
func (n *NF) gatedKind(ev Event, m *nas.Message) (string, bool) {
	kind, ok := initiatingKind(ev, m)
	if ok && kind == kindServiceRequest && n.answersPaging(m) {
		return "", false
	}
	return kind, ok
}

// answersPaging says whether a Service Request names a parked UE of this
// AMF that is being paged.
func (n *NF) answersPaging(m *nas.Message) bool {
	if m == nil || m.GmmMessage == nil || m.ServiceRequest == nil {
		return false
	}
	req, err := nasx.ParseServiceRequest(m.ServiceRequest)
	if err != nil {
		return false
	}
	s, ours := req.STMSI, n.guami.AMFID
	if s.SetID != ours.SetID || s.Pointer != ours.Pointer {
		return false
	}
	paged := false
	n.ues.editIdleTMSI(s.TMSI, func(ue *ueContext) { paged = ue.idle.paging != nil })
	return paged
}

// startService counts a Service Request from here on (TS 24.501 5.6.1):
// with the slot of the paging it answers, if any, else with the gate's.
// A gated request that meets a paging started meanwhile ends the paging's
// slot: the UE was reached, and its own slot counts the rest.
func (n *NF) startService(ue *ueContext) {
	ue.reg.started = time.Now()
	if p := ue.lim.paging; p != nil {
		ue.lim.paging = nil
		if ue.lim.ticket == nil && !p.Done() {
			ue.lim.ticket = p
		} else {
			p.Finish(ratelimit.ResultSuccess)
		}
	}
	n.claimProcedure(ue, mmKey(kindServiceRequest), kindServiceRequest)
}

// endPagedProcedure: the context took over a paging its UE did not answer
// with a Service Request (it registered instead, or its connection ended):
// the network-triggered Service Request has failed.
func (n *NF) endPagedProcedure(ue *ueContext, result string) {
	if p := ue.lim.paging; p != nil {
		ue.lim.paging = nil
		p.Finish(result)
	}
}

// serviceSetupAnswered: the gNB's Initial Context Setup answer completes a
// Service Request from CM-IDLE (TS 23.502 4.2.3.2 steps 12-13); for any
// other Initial Context Setup it changes nothing. It runs before the
// sessions' outcomes go to their SMFs (steps 14-17 belong to each
// session's own update, which the SMF answers on its own time).
func (n *NF) serviceSetupAnswered(ue *ueContext, result string) {
	if ue.openKind(mmKey(kindServiceRequest)) != "" {
		n.finishProcedure(ue, procService, result)
	}
}
