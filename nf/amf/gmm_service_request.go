package amf

// UE-triggered Service Request (TS 23.502 4.2.3.2; TS 24.501 5.6.1), also
// the answer to paging (4.2.3.3 step 6). The steps, in the order they run:
//
//	1-2    Service Request, 5G-S-TMSI   onServiceRequest, serviceFromIdle
//	       integrity check (4.4.6)       verified: serve; not: authenticate
//	                                     (gmm_auth.go), then serveAfterSecurity
//	4      PDU session status            releaseSessionsNotIn
//	4-11   Uplink data status            activate: UpdateSMContext ACTIVATING
//	12     Initial Context Setup Request acceptService, with Service Accept
//	       + N2 SM info per session      and the paging's kept transfers
//	13-16  the gNB's answer              forwardContextSetupOutcomes
//	                                     -> UpdateSMContext PDU_RES_SETUP_RSP
//
// Service Reject (5.6.1.5): #9 for a 5G-S-TMSI the AMF does not know, #10
// for a UE it deregistered implicitly, #22 at overload (ue_admission.go),
// the decoding causes for a malformed request.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

const procService = "service_request"

// serviceRequest is a Service Request being served.
type serviceRequest struct {
	req     nasx.ServiceRequest
	gen     uint64           // an answer of an older request is stale
	waiting int              // ACTIVATING answers awaited from the SMFs
	setup   map[uint8][]byte // N2 SM information (PDU_RES_SETUP_REQ) per session to set up
	n1      map[uint8][]byte // a 5GSM message to carry with the session's setup
	failed  nasx.PSISet      // sessions whose user plane could not be re-activated
}

func serviceReject(cause uint8, err error) error {
	return &gmmError{kind: replyServiceReject, cause: cause, err: err}
}

// onServiceRequest: a UE in CM-IDLE on a new N2 connection, or a connected
// one (TS 24.501 5.6.1.1).
func (n *NF) onServiceRequest(ue *ueContext, in *input) (State, error) {
	req, err := nasx.ParseServiceRequest(in.msg.m.ServiceRequest)
	if err == nil && ue.supi == "" {
		return n.serviceFromIdle(ue, req, in.msg.raw)
	}
	if ue.service == nil {
		// The procedure runs from here to its end (limiter_events.go: the
		// limiter's count of procedures in progress).
		n.startService(ue)
	}
	switch {
	case err != nil:
		return ue.state, serviceReject(nasx.CauseOf(err), err)
	case !ue.registered || ue.sec == nil:
		// TS 24.501 5.6.1.5: the network holds the UE as deregistered.
		return ue.state, serviceReject(nasx.CauseImplicitlyDeregistered, errors.New("Service Request from a UE not registered"))
	}
	if ue.service != nil {
		// TS 24.501 5.6.1.7 e): a second request while one is served is ignored.
		return ue.state, nil
	}
	return n.serve(ue, req)
}

// serviceFromIdle finds the parked context of the 5G-S-TMSI and checks the
// request's integrity with it (TS 24.501 4.4.6, 5.6.1.3).
func (n *NF) serviceFromIdle(ue *ueContext, req nasx.ServiceRequest, raw []byte) (State, error) {
	old, err := n.parkedFor(req.STMSI)
	if err != nil {
		n.startService(ue) // counted, rejected
		return ue.state, err
	}
	verified := old.sec.verifies(raw)
	n.adopt(ue, old) // with the paging's kept transfers
	// From here the procedure counts, with the paging's slot when it
	// answers one (limiter_events.go).
	n.startService(ue)
	if len(ue.paged) > 0 {
		n.metrics.pagingDone.WithLabelValues(resultSuccess).Inc()
	}
	ue.reg = registration{ngKSI: req.NgKSI, secCap: ue.capability, verified: verified, container: req.Container, started: ue.reg.started}
	if !verified {
		// TS 24.501 5.6.1.3, 4.4.6: the request did not pass the integrity
		// check of the kept context: authenticate and take a new one, then
		// serve (serveAfterSecurity).
		ue.sec = nil
		ue.service = n.newService(req)
		return n.startAuthentication(ue)
	}
	if req.Container != nil {
		full, err := n.fullServiceRequest(ue, req.Container)
		if err != nil {
			return ue.state, err
		}
		req = full
	}
	return n.serve(ue, req)
}

// parkedFor takes the parked context of the 5G-S-TMSI, or says why the
// request is rejected (TS 24.501 5.6.1.5: #9 unknown, #10 implicitly
// deregistered).
func (n *NF) parkedFor(s nasx.STMSI) (*ueContext, error) {
	ours := n.guami.AMFID
	if s.SetID != ours.SetID || s.Pointer != ours.Pointer {
		return nil, serviceReject(nasx.CauseUEIdentityCannotBeDerived, fmt.Errorf("5G-S-TMSI of AMF set %d pointer %d", s.SetID, s.Pointer))
	}
	old, _ := n.ues.takeIdleIf(s.TMSI, func(*ueContext) bool { return true })
	if old != nil {
		return old, nil
	}
	if n.ues.deregistered.has(s.TMSI) {
		return nil, serviceReject(nasx.CauseImplicitlyDeregistered, fmt.Errorf("5G-TMSI %08x deregistered implicitly", s.TMSI))
	}
	return nil, serviceReject(nasx.CauseUEIdentityCannotBeDerived, fmt.Errorf("5G-TMSI %08x unknown", s.TMSI))
}

// fullServiceRequest reads the whole Service Request from the ciphered NAS
// message container of a cleartext one (TS 24.501 4.4.6).
func (n *NF) fullServiceRequest(ue *ueContext, container []byte) (nasx.ServiceRequest, error) {
	plain, err := ue.sec.nas.DecipherContainer(container)
	if err != nil {
		return nasx.ServiceRequest{}, serviceReject(nasx.CauseSemanticallyIncorrect, err)
	}
	return n.serviceRequestIn(plain)
}

func (n *NF) serviceRequestIn(plain []byte) (nasx.ServiceRequest, error) {
	m, err := nasx.Decode(plain)
	if err != nil || m.ServiceRequest == nil {
		return nasx.ServiceRequest{}, serviceReject(nasx.CauseOf(err), fmt.Errorf("NAS message container: %v", err))
	}
	full, err := nasx.ParseServiceRequest(m.ServiceRequest)
	if err != nil {
		return full, serviceReject(nasx.CauseOf(err), err)
	}
	return full, nil
}

// serveAfterSecurity goes on with the Service Request once security mode
// completed (onSecurityModeComplete); the container, when the UE sent it,
// holds the whole request.
func (n *NF) serveAfterSecurity(ue *ueContext, c *nasMessage.SecurityModeComplete) (State, error) {
	req := ue.service.req
	if c.NASMessageContainer != nil {
		full, err := n.serviceRequestIn(c.NASMessageContainer.Buffer)
		if err != nil {
			return ue.state, err
		}
		req = full
	}
	n.persistUE(ue) // the new security context
	return n.serve(ue, req)
}

func (n *NF) newService(req nasx.ServiceRequest) *serviceRequest {
	return &serviceRequest{req: req, gen: n.callGen.Add(1),
		setup: map[uint8][]byte{}, n1: map[uint8][]byte{}}
}

// serve activates what the request asks for (TS 23.502 4.2.3.2 steps 4-11)
// and accepts once the SMFs answered.
func (n *NF) serve(ue *ueContext, req nasx.ServiceRequest) (State, error) {
	sv := n.newService(req)
	ue.service = sv
	if !ue.reg.secCap.Valid() {
		ue.reg.secCap = ue.capability
	}
	if req.PDUSessionStatus != nil {
		n.releaseSessionsNotIn(ue, *req.PDUSessionStatus)
	}
	n.takePagedSetups(ue, sv)
	if req.UplinkDataStatus != nil {
		for _, id := range req.UplinkDataStatus.IDs() {
			n.activate(ue, sv, id)
		}
	}
	if sv.waiting > 0 {
		return StateRegistered, nil
	}
	return n.acceptService(ue)
}

// releaseSessionsNotIn: TS 23.502 4.2.3.2 step 4 — the sessions the UE no
// longer has (PDU session status) are released locally at their SMFs.
func (n *NF) releaseSessionsNotIn(ue *ueContext, status nasx.PSISet) {
	for id, s := range ue.pdu.sessions {
		if status.Has(id) {
			continue
		}
		n.log.Info("PDU session not in the UE's status: released", "supi", ue.supi, "pduSessionId", id)
		n.releaseSMContext(ue.supi, s, models.SmfPduSessionSmContextReleaseData{})
		ue.pdu.remove(id)
		delete(ue.paged, id)
	}
}

// takePagedSetups puts the N2 SM information kept by paging into the
// request (TS 23.502 4.2.3.3 step 6: the SMF's PDU_RES_SETUP_REQ).
func (n *NF) takePagedSetups(ue *ueContext, sv *serviceRequest) {
	for id, t := range ue.paged {
		if ue.pdu.get(id) == nil || t.n2Type != models.N2SmInfoType_PDU_RES_SETUP_REQ || t.n2 == nil {
			continue // delivered after the setup (deliverPaged)
		}
		sv.setup[id] = t.n2
		if t.n1 != nil {
			sv.n1[id] = t.n1
		}
		delete(ue.paged, id)
	}
}

// activate asks the SMF of session id to activate its user plane (TS 29.502
// 5.2.2.3.2.2: upCnxState ACTIVATING); its answer carries the N2 SM
// information for the gNB.
func (n *NF) activate(ue *ueContext, sv *serviceRequest, id uint8) {
	s := ue.pdu.get(id)
	if _, kept := sv.setup[id]; kept {
		return
	}
	if s == nil || !s.created() {
		sv.failed = sv.failed.With(id) // TS 24.501 5.6.1.4.1: reactivation result, failed
		return
	}
	sv.waiting++
	sess, uri, gen, deactivated := n.opts.Sessions, s.ContextURI, sv.gen, s.deactivated
	data := models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_ACTIVATING, UeLocation: userLocation(ue),
		AnType: models.AccessType__3_GPP_ACCESS}
	n.smCall(ue, func(ctx context.Context) (SMAnswer, error) {
		if deactivated != nil {
			select { // the AN release's deactivation first (pdu_session.go)
			case <-deactivated:
			case <-ctx.Done():
				return SMAnswer{}, ctx.Err()
			}
		}
		return sess.UpdateSMContext(ctx, uri, data, nil, nil)
	}, func(ue *ueContext, a SMAnswer, err error) {
		n.onActivated(ue, gen, id, uri, a, err)
	}, nil)
}

// onActivated: one SMF's answer; the last one accepts the request.
func (n *NF) onActivated(ue *ueContext, gen uint64, id uint8, uri string, a SMAnswer, err error) {
	sv := ue.service
	if sv == nil || sv.gen != gen {
		return // released or superseded meanwhile
	}
	sv.waiting--
	switch {
	case err != nil:
		n.log.Warn("user plane activation refused", "supi", ue.supi, "pduSessionId", id, "err", err)
		sv.failed = sv.failed.With(id)
		if isContextGone(err) {
			ue.pdu.forgetContext(id, uri)
		}
	case a.N2 == nil || a.N2Type != models.N2SmInfoType_PDU_RES_SETUP_REQ:
		n.log.Warn("user plane activation without PDU_RES_SETUP_REQ", "supi", ue.supi, "pduSessionId", id, "type", a.N2Type)
		sv.failed = sv.failed.With(id)
	default:
		sv.setup[id] = a.N2
	}
	if sv.waiting > 0 {
		return
	}
	if _, err := n.acceptService(ue); err != nil {
		n.log.Warn("Service Accept not sent", "supi", ue.supi, "err", err)
		n.finishProcedure(ue, procService, resultFailure)
		ue.service = nil
		ue.state, _ = n.release(ue, causeNasUnspecified())
	}
}

// acceptService sends Service Accept (TS 24.501 5.6.1.4) with the sessions
// to set up: in Initial Context Setup Request from CM-IDLE (TS 23.502
// 4.2.3.2 step 12), in Downlink NAS Transport and PDU Session Resource
// Setup Request in CM-CONNECTED.
func (n *NF) acceptService(ue *ueContext) (State, error) {
	sv := ue.service
	status := n.sessionStatus(ue)
	accept := nasx.ServiceAccept{PDUSessionStatus: &status}
	if sv.req.UplinkDataStatus != nil {
		// TS 24.501 5.6.1.4.1: the reactivation result answers the uplink data status.
		failed := sv.failed
		accept.ReactivationResult = &failed
	}
	plain, err := nasx.BuildServiceAccept(accept)
	if err != nil {
		return ue.state, err
	}
	connected := ue.contextSetup
	if connected {
		err = n.acceptConnected(ue, sv, plain)
	} else {
		err = n.acceptFromIdle(ue, sv, plain)
	}
	if err != nil {
		return ue.state, err
	}
	if connected {
		n.finishProcedure(ue, procService, resultSuccess)
	} // else it ends with the gNB's answer (serviceSetupAnswered, TS 23.502 4.2.3.2 step 13)
	ue.service = nil
	n.deliverPaged(ue)
	return StateRegistered, nil
}

// acceptFromIdle: one Initial Context Setup Request carries Service Accept
// and every session's N2 SM information.
func (n *NF) acceptFromIdle(ue *ueContext, sv *serviceRequest, plain []byte) error {
	pdu, err := ue.sec.protect(plain, false)
	if err != nil {
		return err
	}
	sessions, err := n.setupResources(ue, sv)
	if err != nil {
		return err
	}
	ics, err := n.initialContext(ue, pdu, sessions...)
	if err != nil {
		return err
	}
	if err := n.sendToUE(ue, ics); err != nil {
		return err
	}
	ue.contextSetup = true
	return nil
}

// acceptConnected: Service Accept, then one PDU Session Resource Setup
// Request per session (TS 24.501 5.6.1.1: a connected UE's request).
func (n *NF) acceptConnected(ue *ueContext, sv *serviceRequest, plain []byte) error {
	if err := n.sendNAS(ue, plain, false); err != nil {
		return err
	}
	for _, id := range sortedIDs(sv.setup) {
		s := ue.pdu.get(id)
		if s == nil {
			continue
		}
		if err := n.deliverSM(ue, s, sv.n1[id], sv.setup[id], models.N2SmInfoType_PDU_RES_SETUP_REQ); err != nil {
			return err
		}
	}
	return nil
}

// setupResources lists the sessions of the Initial Context Setup Request,
// each with its 5GSM message (if any) under the UE's security context.
func (n *NF) setupResources(ue *ueContext, sv *serviceRequest) ([]ngapx.SessionResource, error) {
	var out []ngapx.SessionResource
	for _, id := range sortedIDs(sv.setup) {
		s := ue.pdu.get(id)
		if s == nil {
			continue
		}
		r := ngapx.SessionResource{ID: int64(id), SNSSAI: s.SNSSAI, Transfer: sv.setup[id]}
		if n1 := sv.n1[id]; n1 != nil {
			var err error
			if r.NASPDU, err = n.protectN1(ue, id, n1); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// deliverPaged sends on the kept transfers that were no session setup
// (a 5GSM message alone, a modification) once the UE is connected.
func (n *NF) deliverPaged(ue *ueContext) {
	for _, id := range sortedIDs(ue.paged) {
		t := ue.paged[id]
		delete(ue.paged, id)
		s := ue.pdu.get(id)
		if s == nil {
			continue
		}
		if err := n.deliverSM(ue, s, t.n1, t.n2, t.n2Type); err != nil {
			n.log.Warn("kept transfer not delivered", "supi", ue.supi, "transfer", t, "err", err)
			go n.notifyTransferFailed(ue.supi, t, models.N1N2MessageTransferCause_UE_NOT_RESPONDING)
		}
	}
}

// holdForService: a transfer arriving while a Service Request waits for
// its SMFs' answers joins the Initial Context Setup rather than reaching a
// gNB that has no context for the UE yet.
func (n *NF) holdForService(ue *ueContext, t transfer) bool {
	sv := ue.service
	if sv == nil || ue.contextSetup || t.n2Type != models.N2SmInfoType_PDU_RES_SETUP_REQ || t.n2 == nil {
		return false
	}
	sv.setup[t.id] = t.n2
	if t.n1 != nil {
		sv.n1[t.id] = t.n1
	}
	return true
}

// sessionStatus is the PDU session status the AMF holds for the UE.
func (n *NF) sessionStatus(ue *ueContext) nasx.PSISet {
	var s nasx.PSISet
	for id := range ue.pdu.sessions {
		s = s.With(id)
	}
	return s
}

// rejectService sends Service Reject (TS 24.501 5.6.1.5); a UE without an
// N2 context of its own (CM-IDLE, unknown) is released after it.
func (n *NF) rejectService(ue *ueContext, cause uint8) {
	r := nasx.ServiceReject{Cause: cause}
	if ue.registered {
		status := n.sessionStatus(ue)
		r.PDUSessionStatus = &status
	}
	n.sendPlainOrProtected(ue, n.built("ServiceReject")(nasx.BuildServiceRejectWith(r)))
	ue.service = nil
	n.finishProcedure(ue, procService, resultReject)
	if !ue.contextSetup {
		ue.state, _ = n.release(ue, causeNasUnspecified())
	}
}

// forwardContextSetupOutcomes forwards the sessions of an Initial Context
// Setup Response or Failure to their SMFs (TS 23.502 4.2.3.2 steps 13-14:
// PDU_RES_SETUP_RSP / PDU_RES_SETUP_FAIL).
func (n *NF) forwardContextSetupOutcomes(ue *ueContext, pdu *ngapType.NGAPPDU) {
	outcomes, err := ngapx.ParseInitialContextSetupOutcomes(pdu)
	if err != nil {
		n.log.Info("Initial Context Setup answer unreadable", "amfUeNgapId", ue.amfID, "err", err)
		return
	}
	for _, o := range outcomes {
		n.answerToSMF(ue, o)
	}
}

func sortedIDs[V any](m map[uint8]V) []uint8 {
	ids := make([]uint8, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// readActiveUP keeps the PDU Session Resource List of a UE Context Release
// Request: the sessions with an active user plane, the ones the AMF
// deactivates at their SMFs (TS 23.502 4.2.6 step 4). A gNB that lists
// none leaves all of them to deactivate.
func (n *NF) readActiveUP(ue *ueContext, pdu *ngapType.NGAPPDU) {
	ids, listed, err := ngapx.ReleaseRequestSessions(pdu)
	if err != nil || !listed {
		return
	}
	var set nasx.PSISet
	for _, id := range ids {
		if id >= 1 && id <= 15 {
			set = set.With(uint8(id))
		}
	}
	ue.activeUP = &set
}
