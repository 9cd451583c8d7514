package pcf

// SM policy association procedures at the PCF (TS 23.502 4.16.4
// establishment, 4.16.5.1 modification initiated by the SMF, 4.16.6
// termination; TS 29.512 4.2.2, 4.2.4, 4.2.5): the PCF authorises the
// session AMBR and the default QoS flow's 5QI/ARP from the UE's
// subscription, as the SMF reports it from the UDM, within the UE's SM
// policy data in the UDR (TS 29.519 SmPolicyData).

import (
	"context"
	"net/http"
	"strconv"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/sbi"
)

// Application errors of Npcf_SMPolicyControl (TS 29.512 5.7.3).
const (
	causeUserUnknown           = "USER_UNKNOWN"             // 400
	causeErrorInitialParams    = "ERROR_INITIAL_PARAMETERS" // 400
	causePolicyContextDenied   = "POLICY_CONTEXT_DENIED"    // 403
	sessionRuleID              = "SessRule1"
	defaultSessionAMBRUplink   = "1 Gbps"
	defaultSessionAMBRDownlink = "2 Gbps"
	default5QI                 = 9
	defaultARPPriority         = 8
)

// defaultQoS is what the PCF authorises when the SMF reports no subscribed
// default QoS: the values the UDR provisions by default (5QI 9, ARP 8,
// TS 23.501 5.7.4), a flow that pre-empts nothing and may be pre-empted.
func defaultQoS() models.SubscribedDefaultQos {
	return models.SubscribedDefaultQos{Var5qi: default5QI, PriorityLevel: defaultARPPriority,
		Arp: &models.Arp{PriorityLevel: defaultARPPriority, PreemptCap: models.PreemptionCapability_NOT_PREEMPT, PreemptVuln: models.PreemptionVulnerability_PREEMPTABLE}}
}

// createSM establishes a PDU session's SM policy association:
//  1. the request carries the mandatory attributes (TS 29.512 5.6.2.3);
//  2. the UE's SM policy data for the slice and DNN, and its QoS flows,
//     come from the UDR (step 2 of 4.16.4; none stored: no UE-specific
//     policy);
//  3. the decision is made — a session rule, and a PCC rule per QoS flow
//     the subscriber has on the slice and DNN — and the association
//     stored (step 3).
func (n *NF) createSM(ctx context.Context, req *models.SmPolicyContextData) (string, *models.SmPolicyDecision, error) {
	if err := checkSMContext(req); err != nil {
		return "", nil, err
	}
	data, flows, err := n.policyDataOf(ctx, req)
	if err != nil {
		return "", nil, err
	}
	if err := authorisedByPolicyData(data, req.SliceInfo, req.Dnn); err != nil {
		return "", nil, err
	}
	d, err := decideSM(req)
	if err != nil {
		return "", nil, err
	}
	addPCCRules(&d, flows, req.SliceInfo, req.Dnn, d.SessRules[sessionRuleID].AuthDefQos.Arp, n.log)
	p := &smPolicy{context: req, data: data, flows: flows, decision: d}
	id, replaced := n.smPolicies.add(req.Supi+"/"+strconv.Itoa(int(req.PduSessionId)), p)
	if replaced != "" {
		n.log.Info("SM policy association replaced", "supi", req.Supi, "pduSessionId", req.PduSessionId, "old", replaced, "new", id)
	}
	return id, &d, nil
}

// policyDataOf reads the UE's SM policy data and QoS flows from the UDR,
// both at once: a session establishment waits for one UDR round trip, not
// two. The second read runs on a pooled goroutine: a fresh one grows its
// stack through the SBI client's JSON decoding on every session.
func (n *NF) policyDataOf(ctx context.Context, req *models.SmPolicyContextData) (*models.SmPolicyData, *policyFlows, error) {
	type flowsResult struct {
		flows *policyFlows
		err   error
	}
	ch := make(chan flowsResult, 1)
	n.workers.Go(func() {
		f, err := n.udr.policyFlows(ctx, req.Supi)
		ch <- flowsResult{f, err}
	})
	data, err := n.udr.smPolicyData(ctx, req.Supi, req.SliceInfo, req.Dnn)
	fr := <-ch
	if err != nil {
		return nil, nil, err
	}
	return data, fr.flows, fr.err
}

// checkSMContext: supi, pduSessionId, pduSessionType, dnn, notificationUri
// and sliceInfo are mandatory (TS 29.512 5.6.2.3), and each must be well
// formed; else 400 MANDATORY_IE_MISSING or MANDATORY_IE_INCORRECT.
func checkSMContext(req *models.SmPolicyContextData) error {
	if req.Supi == "" || req.PduSessionId == 0 || req.PduSessionType == "" || req.Dnn == "" || req.NotificationUri == "" || req.SliceInfo == nil {
		return sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "supi, pduSessionId, pduSessionType, dnn, notificationUri and sliceInfo are mandatory (TS 29.512 5.6.2.3)")
	}
	if _, err := domain.ParseSUPI(req.Supi); err != nil {
		return sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "supi: %v", err)
	}
	if err := domain.CheckPDUSessionID(req.PduSessionId); err != nil {
		return sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "pduSessionId: %v", err)
	}
	if _, err := domain.ParseDNN(req.Dnn); err != nil {
		return sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "dnn: %v", err)
	}
	if _, err := domain.SNSSAIFromModel(*req.SliceInfo); err != nil {
		return sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "sliceInfo: %v", err)
	}
	return nil
}

// authorisedByPolicyData: UE policy data that lists slices and DNNs lists
// the ones the UE may use; a session on another is not authorised (TS
// 29.512 4.2.2.2: 403 POLICY_CONTEXT_DENIED). Without policy data the
// subscription checked by the SMF is all there is.
func authorisedByPolicyData(data *models.SmPolicyData, slice *models.Snssai, dnn string) error {
	if data == nil {
		return nil
	}
	for _, sd := range data.SmPolicySnssaiData {
		if sd.Snssai == nil || !domain.SameModelSNSSAI(*sd.Snssai, *slice) {
			continue
		}
		for d := range sd.SmPolicyDnnData {
			if domain.DNN(d).Match(domain.DNN(dnn)) {
				return nil
			}
		}
	}
	return sbi.Rejectf(http.StatusForbidden, causePolicyContextDenied, "the UE's policy data authorises no DNN %s on slice %d/%s", dnn, slice.Sst, slice.Sd)
}

// decideSM is the PCF's SM policy (TS 23.503 6.3, TS 29.512 4.2.2.4 and
// 4.2.2.5): one session rule authorising the subscribed session AMBR and
// default QoS (the PCF's defaults when the SMF reports none), and the
// triggers on which the SMF must report their change (SE_AMBR_CH,
// DEF_QOS_CH, TS 29.512 4.2.4.x). No optional feature is supported.
func decideSM(req *models.SmPolicyContextData) (models.SmPolicyDecision, error) {
	ambr, err := authorisedAMBR(req.SubsSessAmbr)
	if err != nil {
		return models.SmPolicyDecision{}, err
	}
	qos, err := authorisedDefaultQoS(req.SubsDefQos)
	if err != nil {
		return models.SmPolicyDecision{}, err
	}
	rule := &models.SessionRule{SessRuleId: sessionRuleID, AuthSessAmbr: ambr, AuthDefQos: qos}
	return models.SmPolicyDecision{
		SessRules: map[string]*models.SessionRule{sessionRuleID: rule},
		PolicyCtrlReqTriggers: []models.PolicyControlRequestTrigger{
			models.PolicyControlRequestTrigger_SE_AMBR_CH, models.PolicyControlRequestTrigger_DEF_QOS_CH,
		},
	}, nil
}

// authorisedAMBR is the subscribed session AMBR, checked as TS 29.571
// BitRate strings; 400 ERROR_INITIAL_PARAMETERS when malformed.
func authorisedAMBR(sub *models.Ambr) (*models.Ambr, error) {
	if sub == nil {
		return &models.Ambr{Uplink: defaultSessionAMBRUplink, Downlink: defaultSessionAMBRDownlink}, nil
	}
	if _, err := domain.ParseBitRate(sub.Uplink); err != nil {
		return nil, sbi.Rejectf(http.StatusBadRequest, causeErrorInitialParams, "subsSessAmbr.uplink: %v", err)
	}
	if _, err := domain.ParseBitRate(sub.Downlink); err != nil {
		return nil, sbi.Rejectf(http.StatusBadRequest, causeErrorInitialParams, "subsSessAmbr.downlink: %v", err)
	}
	a := *sub
	return &a, nil
}

// authorisedDefaultQoS is the subscribed default QoS: a non-GBR 5QI and an
// ARP (TS 23.501 5.7.2.2, 5.7.2.7); 400 ERROR_INITIAL_PARAMETERS when it
// cannot be a default QoS flow's.
func authorisedDefaultQoS(sub *models.SubscribedDefaultQos) (*models.AuthorizedDefaultQos, error) {
	q := defaultQoS()
	if sub != nil {
		q = *sub
	}
	if err := domain.CheckDefault5QI(int(q.Var5qi)); err != nil {
		return nil, sbi.Rejectf(http.StatusBadRequest, causeErrorInitialParams, "subsDefQos.5qi: %v", err)
	}
	if q.Arp == nil {
		return nil, sbi.Rejectf(http.StatusBadRequest, causeErrorInitialParams, "subsDefQos.arp is mandatory (TS 29.571 SubscribedDefaultQos)")
	}
	if err := domain.CheckARPPriority(int(q.Arp.PriorityLevel)); err != nil {
		return nil, sbi.Rejectf(http.StatusBadRequest, causeErrorInitialParams, "subsDefQos.arp.priorityLevel: %v", err)
	}
	arp := *q.Arp
	if arp.PreemptCap == "" {
		arp.PreemptCap = models.PreemptionCapability_NOT_PREEMPT
	}
	if arp.PreemptVuln == "" {
		arp.PreemptVuln = models.PreemptionVulnerability_PREEMPTABLE
	}
	return &models.AuthorizedDefaultQos{Var5qi: q.Var5qi, Arp: &arp, PriorityLevel: q.PriorityLevel}, nil
}

// updateSM is the SMF-initiated modification (TS 29.512 4.2.4.1): a
// changed subscribed session AMBR or default QoS replaces the reported one
// and the decision is made again; the new decision is answered. False when
// the association does not exist.
func (n *NF) updateSM(id string, upd *models.SmPolicyUpdateContextData) (models.SmPolicyDecision, bool, error) {
	var (
		d    models.SmPolicyDecision
		derr error
	)
	ok := n.smPolicies.update(id, func(p *smPolicy) {
		ctx := *p.context // a copy: what was handed out keeps the old context
		applySMUpdate(&ctx, upd)
		if d, derr = decideSM(&ctx); derr == nil {
			addPCCRules(&d, p.flows, ctx.SliceInfo, ctx.Dnn, d.SessRules[sessionRuleID].AuthDefQos.Arp, n.log)
			p.context, p.decision = &ctx, d
		}
	})
	return d, ok, derr
}

// applySMUpdate copies what an update reports (TS 29.512 5.6.2.x
// SmPolicyUpdateContextData) over the association's context.
func applySMUpdate(c *models.SmPolicyContextData, upd *models.SmPolicyUpdateContextData) {
	if upd.SubsSessAmbr != nil {
		c.SubsSessAmbr = upd.SubsSessAmbr
	}
	if upd.SubsDefQos != nil {
		c.SubsDefQos = upd.SubsDefQos
	}
	if upd.Ipv4Address != "" {
		c.Ipv4Address = upd.Ipv4Address
	}
	if upd.RelIpv4Address != "" && upd.RelIpv4Address == c.Ipv4Address {
		c.Ipv4Address = ""
	}
	if upd.UserLocationInfo != nil {
		c.UserLocationInfo = upd.UserLocationInfo
	}
	if upd.RatType != "" {
		c.RatType = upd.RatType
	}
	if upd.AccessType != "" {
		c.AccessType = upd.AccessType
	}
}
