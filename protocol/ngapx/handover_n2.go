package ngapx

// The N2 handover messages (TS 38.413 8.4.1 Handover Preparation, 8.4.2
// Handover Resource Allocation, 8.4.3 Handover Notification, 8.4.5
// Handover Cancel, 8.4.6/8.4.7 Uplink/Downlink RAN Status Transfer), both
// sides. The transparent containers between the gNBs' RRC are opaque.

import (
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
)

// snssaiOf gives the openapi model of an NGAP S-NSSAI.
func snssaiOf(x ngapType.SNSSAI) (models.Snssai, error) {
	s, err := domain.SNSSAIFromNGAP(x)
	if err != nil {
		return models.Snssai{}, err
	}
	return s.ToModel(), nil
}

// UEIDs is the UE-associated pair of a message (9.3.3.1, 9.3.3.2).
type UEIDs struct{ AMFUEID, RANUEID int64 }

func (u UEIDs) amf() *ngapType.AMFUENGAPID { return &ngapType.AMFUENGAPID{Value: u.AMFUEID} }
func (u UEIDs) ran() *ngapType.RANUENGAPID { return &ngapType.RANUENGAPID{Value: u.RANUEID} }

// HandoverRequired is HANDOVER REQUIRED (TS 38.413 9.2.3.1), source gNB to AMF.
type HandoverRequired struct {
	UEIDs
	Cause  ngapType.Cause
	Target Target
	// DirectForwarding says the source has a direct forwarding path to
	// the target (9.3.1.64).
	DirectForwarding bool
	// Sessions carry a Handover Required Transfer each (9.3.4.14).
	Sessions  []SessionTransfer
	Container []byte // Source to Target Transparent Container (9.3.1.20)
}

// BuildHandoverRequired builds HANDOVER REQUIRED (gNB side), handover type intra5gs.
func BuildHandoverRequired(h HandoverRequired) ([]byte, error) {
	if err := checkSessions("Handover Required", h.Sessions, false); err != nil {
		return nil, err
	}
	target, err := h.Target.ie()
	if err != nil {
		return nil, err
	}
	pdu := initiating(ngapType.ProcedureCodeHandoverPreparation, reject, ngapType.InitiatingMessagePresentHandoverRequired)
	m := &ngapType.HandoverRequired{}
	pdu.InitiatingMessage.Value.HandoverRequired = m
	add := func(ieID int64, crit ngapType.Criticality, v ngapType.HandoverRequiredIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.HandoverRequiredIEs{Id: id(ieID), Criticality: crit, Value: v})
	}
	cause := h.Cause
	add(ngapType.ProtocolIEIDAMFUENGAPID, reject, ngapType.HandoverRequiredIEsValue{Present: ngapType.HandoverRequiredIEsPresentAMFUENGAPID, AMFUENGAPID: h.amf()})
	add(ngapType.ProtocolIEIDRANUENGAPID, reject, ngapType.HandoverRequiredIEsValue{Present: ngapType.HandoverRequiredIEsPresentRANUENGAPID, RANUENGAPID: h.ran()})
	add(ngapType.ProtocolIEIDHandoverType, reject, ngapType.HandoverRequiredIEsValue{Present: ngapType.HandoverRequiredIEsPresentHandoverType,
		HandoverType: &ngapType.HandoverType{Value: ngapType.HandoverTypePresentIntra5gs}})
	add(ngapType.ProtocolIEIDCause, ignore, ngapType.HandoverRequiredIEsValue{Present: ngapType.HandoverRequiredIEsPresentCause, Cause: &cause})
	add(ngapType.ProtocolIEIDTargetID, reject, ngapType.HandoverRequiredIEsValue{Present: ngapType.HandoverRequiredIEsPresentTargetID, TargetID: target})
	if h.DirectForwarding {
		add(ngapType.ProtocolIEIDDirectForwardingPathAvailability, ignore, ngapType.HandoverRequiredIEsValue{
			Present:                          ngapType.HandoverRequiredIEsPresentDirectForwardingPathAvailability,
			DirectForwardingPathAvailability: &ngapType.DirectForwardingPathAvailability{Value: ngapType.DirectForwardingPathAvailabilityPresentDirectPathAvailable}})
	}
	list := &ngapType.PDUSessionResourceListHORqd{}
	for _, s := range h.Sessions {
		list.List = append(list.List, ngapType.PDUSessionResourceItemHORqd{PDUSessionID: ngapType.PDUSessionID{Value: s.ID}, HandoverRequiredTransfer: s.Transfer})
	}
	add(ngapType.ProtocolIEIDPDUSessionResourceListHORqd, reject, ngapType.HandoverRequiredIEsValue{
		Present: ngapType.HandoverRequiredIEsPresentPDUSessionResourceListHORqd, PDUSessionResourceListHORqd: list})
	add(ngapType.ProtocolIEIDSourceToTargetTransparentContainer, reject, ngapType.HandoverRequiredIEsValue{
		Present:                            ngapType.HandoverRequiredIEsPresentSourceToTargetTransparentContainer,
		SourceToTargetTransparentContainer: &ngapType.SourceToTargetTransparentContainer{Value: h.Container}})
	return Encode(pdu)
}

// ParseHandoverRequired reads HANDOVER REQUIRED (AMF side). The UE IDs are
// set even when an error is returned, for the failure message.
func ParseHandoverRequired(pdu *ngapType.NGAPPDU) (out HandoverRequired, err error) {
	const what = "Handover Required"
	out.UEIDs = UEIDs{-1, -1}
	defer handoverRecover(&err, what)
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.HandoverRequired == nil {
		return out, ErrNotThisMessage
	}
	var haveType, haveCause, haveTarget, haveContainer bool
	for _, ie := range pdu.InitiatingMessage.Value.HandoverRequired.ProtocolIEs.List {
		switch v := ie.Value; {
		case v.AMFUENGAPID != nil:
			out.AMFUEID = v.AMFUENGAPID.Value
		case v.RANUENGAPID != nil:
			out.RANUEID = v.RANUENGAPID.Value
		case v.HandoverType != nil:
			haveType = v.HandoverType.Value == ngapType.HandoverTypePresentIntra5gs
		case v.Cause != nil:
			out.Cause, haveCause = *v.Cause, true
		case v.TargetID != nil:
			if out.Target, err = targetOf(v.TargetID); err != nil {
				return out, err
			}
			haveTarget = true
		case v.DirectForwardingPathAvailability != nil:
			out.DirectForwarding = true
		case v.PDUSessionResourceListHORqd != nil:
			for _, it := range v.PDUSessionResourceListHORqd.List {
				out.Sessions = append(out.Sessions, SessionTransfer{it.PDUSessionID.Value, it.HandoverRequiredTransfer})
			}
		case v.SourceToTargetTransparentContainer != nil:
			out.Container, haveContainer = v.SourceToTargetTransparentContainer.Value, true
		}
	}
	// TS 38.413 9.2.3.1: the session list is mandatory for intra5gs.
	if out.AMFUEID < 0 || out.RANUEID < 0 || !haveType || !haveCause || !haveTarget || !haveContainer || len(out.Sessions) == 0 {
		return out, missing(what, "AMF UE NGAP ID", "RAN UE NGAP ID", "Handover Type intra5gs", "Cause", "Target ID",
			"PDU Session Resource List", "Source to Target Transparent Container")
	}
	return out, nil
}

// HandoverRequest is HANDOVER REQUEST (TS 38.413 9.2.3.4), AMF to target gNB.
type HandoverRequest struct {
	AMFUEID        int64
	Cause          ngapType.Cause
	AMBRUL, AMBRDL int64 // UE Aggregate Maximum Bit Rate, bit/s
	SecurityCaps   SecurityCapabilities
	Security       SecurityContext
	// Sessions carry a Handover Request Transfer each (the SMF's PDU
	// Session Resource Setup Request Transfer, 9.3.4.1) and the S-NSSAI.
	Sessions  []SessionResource
	Allowed   []models.Snssai
	Container []byte // Source to Target Transparent Container
	GUAMI     domain.GUAMI
}

// BuildHandoverRequest builds HANDOVER REQUEST (AMF side).
func BuildHandoverRequest(r HandoverRequest) ([]byte, error) {
	if err := (SessionResourceRequest{Sessions: r.Sessions}).check("Handover Request"); err != nil {
		return nil, err
	}
	sec, err := r.Security.ie()
	if err != nil {
		return nil, err
	}
	allowed, err := allowedNSSAI(r.Allowed)
	if err != nil {
		return nil, err
	}
	guami, err := r.GUAMI.ToNGAP()
	if err != nil {
		return nil, err
	}
	list := &ngapType.PDUSessionResourceSetupListHOReq{}
	for _, s := range r.Sessions {
		sn, err := snssaiIE(s.SNSSAI)
		if err != nil {
			return nil, err
		}
		list.List = append(list.List, ngapType.PDUSessionResourceSetupItemHOReq{PDUSessionID: ngapType.PDUSessionID{Value: s.ID}, SNSSAI: sn,
			HandoverRequestTransfer: s.Transfer})
	}
	pdu := initiating(ngapType.ProcedureCodeHandoverResourceAllocation, reject, ngapType.InitiatingMessagePresentHandoverRequest)
	m := &ngapType.HandoverRequest{}
	pdu.InitiatingMessage.Value.HandoverRequest = m
	add := func(ieID int64, crit ngapType.Criticality, v ngapType.HandoverRequestIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.HandoverRequestIEs{Id: id(ieID), Criticality: crit, Value: v})
	}
	cause := r.Cause
	add(ngapType.ProtocolIEIDAMFUENGAPID, reject, ngapType.HandoverRequestIEsValue{Present: ngapType.HandoverRequestIEsPresentAMFUENGAPID,
		AMFUENGAPID: &ngapType.AMFUENGAPID{Value: r.AMFUEID}})
	add(ngapType.ProtocolIEIDHandoverType, reject, ngapType.HandoverRequestIEsValue{Present: ngapType.HandoverRequestIEsPresentHandoverType,
		HandoverType: &ngapType.HandoverType{Value: ngapType.HandoverTypePresentIntra5gs}})
	add(ngapType.ProtocolIEIDCause, ignore, ngapType.HandoverRequestIEsValue{Present: ngapType.HandoverRequestIEsPresentCause, Cause: &cause})
	add(ngapType.ProtocolIEIDUEAggregateMaximumBitRate, reject, ngapType.HandoverRequestIEsValue{
		Present: ngapType.HandoverRequestIEsPresentUEAggregateMaximumBitRate, UEAggregateMaximumBitRate: &ngapType.UEAggregateMaximumBitRate{
			UEAggregateMaximumBitRateDL: ngapType.BitRate{Value: r.AMBRDL}, UEAggregateMaximumBitRateUL: ngapType.BitRate{Value: r.AMBRUL}}})
	add(ngapType.ProtocolIEIDUESecurityCapabilities, reject, ngapType.HandoverRequestIEsValue{
		Present: ngapType.HandoverRequestIEsPresentUESecurityCapabilities, UESecurityCapabilities: r.SecurityCaps.ie()})
	add(ngapType.ProtocolIEIDSecurityContext, reject, ngapType.HandoverRequestIEsValue{
		Present: ngapType.HandoverRequestIEsPresentSecurityContext, SecurityContext: sec})
	add(ngapType.ProtocolIEIDPDUSessionResourceSetupListHOReq, reject, ngapType.HandoverRequestIEsValue{
		Present: ngapType.HandoverRequestIEsPresentPDUSessionResourceSetupListHOReq, PDUSessionResourceSetupListHOReq: list})
	add(ngapType.ProtocolIEIDAllowedNSSAI, reject, ngapType.HandoverRequestIEsValue{
		Present: ngapType.HandoverRequestIEsPresentAllowedNSSAI, AllowedNSSAI: allowed})
	add(ngapType.ProtocolIEIDSourceToTargetTransparentContainer, reject, ngapType.HandoverRequestIEsValue{
		Present:                            ngapType.HandoverRequestIEsPresentSourceToTargetTransparentContainer,
		SourceToTargetTransparentContainer: &ngapType.SourceToTargetTransparentContainer{Value: r.Container}})
	add(ngapType.ProtocolIEIDGUAMI, reject, ngapType.HandoverRequestIEsValue{Present: ngapType.HandoverRequestIEsPresentGUAMI, GUAMI: &guami})
	return Encode(pdu)
}

// ParseHandoverRequest reads HANDOVER REQUEST (gNB side).
func ParseHandoverRequest(pdu *ngapType.NGAPPDU) (out HandoverRequest, err error) {
	const what = "Handover Request"
	out.AMFUEID = -1
	defer handoverRecover(&err, what)
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.HandoverRequest == nil {
		return out, ErrNotThisMessage
	}
	seen := map[int64]bool{}
	for _, ie := range pdu.InitiatingMessage.Value.HandoverRequest.ProtocolIEs.List {
		if err := out.readIE(ie.Value); err != nil {
			return out, err
		}
		seen[ie.Id.Value] = true
	}
	for _, ie := range []int64{ngapType.ProtocolIEIDSecurityContext, ngapType.ProtocolIEIDUESecurityCapabilities, ngapType.ProtocolIEIDGUAMI,
		ngapType.ProtocolIEIDSourceToTargetTransparentContainer} {
		if !seen[ie] {
			return out, missing(what, "Security Context", "UE Security Capabilities", "GUAMI", "Source to Target Transparent Container")
		}
	}
	if out.AMFUEID < 0 || len(out.Sessions) == 0 || len(out.Allowed) == 0 {
		return out, missing(what, "AMF UE NGAP ID", "PDU Session Resource Setup List", "Allowed NSSAI")
	}
	return out, nil
}

func (out *HandoverRequest) readIE(v ngapType.HandoverRequestIEsValue) (err error) {
	switch {
	case v.AMFUENGAPID != nil:
		out.AMFUEID = v.AMFUENGAPID.Value
	case v.Cause != nil:
		out.Cause = *v.Cause
	case v.UEAggregateMaximumBitRate != nil:
		out.AMBRUL, out.AMBRDL = v.UEAggregateMaximumBitRate.UEAggregateMaximumBitRateUL.Value, v.UEAggregateMaximumBitRate.UEAggregateMaximumBitRateDL.Value
	case v.UESecurityCapabilities != nil:
		out.SecurityCaps = securityCapabilitiesOf(v.UESecurityCapabilities)
	case v.SecurityContext != nil:
		out.Security, err = securityContextOf(v.SecurityContext)
	case v.PDUSessionResourceSetupListHOReq != nil:
		for _, it := range v.PDUSessionResourceSetupListHOReq.List {
			sn, err := snssaiOf(it.SNSSAI)
			if err != nil {
				return err
			}
			out.Sessions = append(out.Sessions, SessionResource{ID: it.PDUSessionID.Value, SNSSAI: sn, Transfer: it.HandoverRequestTransfer})
		}
	case v.AllowedNSSAI != nil:
		out.Allowed, err = allowedOf(v.AllowedNSSAI)
	case v.SourceToTargetTransparentContainer != nil:
		out.Container = v.SourceToTargetTransparentContainer.Value
	case v.GUAMI != nil:
		out.GUAMI, err = domain.GUAMIFromNGAP(*v.GUAMI)
	}
	return err
}

// HandoverRequestAcknowledge is HANDOVER REQUEST ACKNOWLEDGE (TS 38.413
// 9.2.3.5), target gNB to AMF.
type HandoverRequestAcknowledge struct {
	UEIDs
	// Admitted carry a Handover Request Acknowledge Transfer each
	// (9.3.4.11), Failed a Handover Resource Allocation Unsuccessful
	// Transfer (9.3.4.17).
	Admitted  []SessionTransfer
	Failed    []SessionTransfer
	Container []byte // Target to Source Transparent Container (9.3.1.21)
}

// BuildHandoverRequestAcknowledge builds HANDOVER REQUEST ACKNOWLEDGE (gNB side).
func BuildHandoverRequestAcknowledge(a HandoverRequestAcknowledge) ([]byte, error) {
	if err := checkSessions("Handover Request Acknowledge", a.Admitted, false); err != nil {
		return nil, err
	}
	if err := checkSessions("Handover Request Acknowledge failed list", a.Failed, true); err != nil {
		return nil, err
	}
	pdu := successful(ngapType.ProcedureCodeHandoverResourceAllocation, ngapType.SuccessfulOutcomePresentHandoverRequestAcknowledge)
	m := &ngapType.HandoverRequestAcknowledge{}
	pdu.SuccessfulOutcome.Value.HandoverRequestAcknowledge = m
	add := func(ieID int64, crit ngapType.Criticality, v ngapType.HandoverRequestAcknowledgeIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.HandoverRequestAcknowledgeIEs{Id: id(ieID), Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, ignore, ngapType.HandoverRequestAcknowledgeIEsValue{Present: ngapType.HandoverRequestAcknowledgeIEsPresentAMFUENGAPID, AMFUENGAPID: a.amf()})
	add(ngapType.ProtocolIEIDRANUENGAPID, ignore, ngapType.HandoverRequestAcknowledgeIEsValue{Present: ngapType.HandoverRequestAcknowledgeIEsPresentRANUENGAPID, RANUENGAPID: a.ran()})
	adm := &ngapType.PDUSessionResourceAdmittedList{}
	for _, s := range a.Admitted {
		adm.List = append(adm.List, ngapType.PDUSessionResourceAdmittedItem{PDUSessionID: ngapType.PDUSessionID{Value: s.ID}, HandoverRequestAcknowledgeTransfer: s.Transfer})
	}
	add(ngapType.ProtocolIEIDPDUSessionResourceAdmittedList, ignore, ngapType.HandoverRequestAcknowledgeIEsValue{
		Present: ngapType.HandoverRequestAcknowledgeIEsPresentPDUSessionResourceAdmittedList, PDUSessionResourceAdmittedList: adm})
	if len(a.Failed) > 0 {
		f := &ngapType.PDUSessionResourceFailedToSetupListHOAck{}
		for _, s := range a.Failed {
			f.List = append(f.List, ngapType.PDUSessionResourceFailedToSetupItemHOAck{PDUSessionID: ngapType.PDUSessionID{Value: s.ID},
				HandoverResourceAllocationUnsuccessfulTransfer: s.Transfer})
		}
		add(ngapType.ProtocolIEIDPDUSessionResourceFailedToSetupListHOAck, ignore, ngapType.HandoverRequestAcknowledgeIEsValue{
			Present: ngapType.HandoverRequestAcknowledgeIEsPresentPDUSessionResourceFailedToSetupListHOAck, PDUSessionResourceFailedToSetupListHOAck: f})
	}
	add(ngapType.ProtocolIEIDTargetToSourceTransparentContainer, reject, ngapType.HandoverRequestAcknowledgeIEsValue{
		Present:                            ngapType.HandoverRequestAcknowledgeIEsPresentTargetToSourceTransparentContainer,
		TargetToSourceTransparentContainer: &ngapType.TargetToSourceTransparentContainer{Value: a.Container}})
	return Encode(pdu)
}

// ParseHandoverRequestAcknowledge reads HANDOVER REQUEST ACKNOWLEDGE (AMF side).
func ParseHandoverRequestAcknowledge(pdu *ngapType.NGAPPDU) (out HandoverRequestAcknowledge, err error) {
	const what = "Handover Request Acknowledge"
	out.UEIDs = UEIDs{-1, -1}
	defer handoverRecover(&err, what)
	if pdu.SuccessfulOutcome == nil || pdu.SuccessfulOutcome.Value.HandoverRequestAcknowledge == nil {
		return out, ErrNotThisMessage
	}
	haveContainer := false
	for _, ie := range pdu.SuccessfulOutcome.Value.HandoverRequestAcknowledge.ProtocolIEs.List {
		switch v := ie.Value; {
		case v.AMFUENGAPID != nil:
			out.AMFUEID = v.AMFUENGAPID.Value
		case v.RANUENGAPID != nil:
			out.RANUEID = v.RANUENGAPID.Value
		case v.PDUSessionResourceAdmittedList != nil:
			for _, it := range v.PDUSessionResourceAdmittedList.List {
				out.Admitted = append(out.Admitted, SessionTransfer{it.PDUSessionID.Value, it.HandoverRequestAcknowledgeTransfer})
			}
		case v.PDUSessionResourceFailedToSetupListHOAck != nil:
			for _, it := range v.PDUSessionResourceFailedToSetupListHOAck.List {
				out.Failed = append(out.Failed, SessionTransfer{it.PDUSessionID.Value, it.HandoverResourceAllocationUnsuccessfulTransfer})
			}
		case v.TargetToSourceTransparentContainer != nil:
			out.Container, haveContainer = v.TargetToSourceTransparentContainer.Value, true
		}
	}
	if out.AMFUEID < 0 || out.RANUEID < 0 || len(out.Admitted) == 0 || !haveContainer {
		return out, missing(what, "AMF UE NGAP ID", "RAN UE NGAP ID", "PDU Session Resource Admitted List", "Target to Source Transparent Container")
	}
	return out, nil
}

// HandoverCommandMsg is HANDOVER COMMAND (TS 38.413 9.2.3.2), AMF to source gNB.
type HandoverCommandMsg struct {
	UEIDs
	// Sessions carry a Handover Command Transfer each (9.3.4.10),
	// Released a Handover Preparation Unsuccessful Transfer (9.3.4.18).
	Sessions  []SessionTransfer
	Released  []SessionTransfer
	Container []byte // Target to Source Transparent Container
}

// BuildHandoverCommand builds HANDOVER COMMAND (AMF side).
func BuildHandoverCommand(c HandoverCommandMsg) ([]byte, error) {
	if err := checkSessions("Handover Command", c.Sessions, true); err != nil {
		return nil, err
	}
	if err := checkSessions("Handover Command released list", c.Released, true); err != nil {
		return nil, err
	}
	pdu := successful(ngapType.ProcedureCodeHandoverPreparation, ngapType.SuccessfulOutcomePresentHandoverCommand)
	m := &ngapType.HandoverCommand{}
	pdu.SuccessfulOutcome.Value.HandoverCommand = m
	add := func(ieID int64, crit ngapType.Criticality, v ngapType.HandoverCommandIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.HandoverCommandIEs{Id: id(ieID), Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, reject, ngapType.HandoverCommandIEsValue{Present: ngapType.HandoverCommandIEsPresentAMFUENGAPID, AMFUENGAPID: c.amf()})
	add(ngapType.ProtocolIEIDRANUENGAPID, reject, ngapType.HandoverCommandIEsValue{Present: ngapType.HandoverCommandIEsPresentRANUENGAPID, RANUENGAPID: c.ran()})
	add(ngapType.ProtocolIEIDHandoverType, reject, ngapType.HandoverCommandIEsValue{Present: ngapType.HandoverCommandIEsPresentHandoverType,
		HandoverType: &ngapType.HandoverType{Value: ngapType.HandoverTypePresentIntra5gs}})
	if len(c.Sessions) > 0 {
		l := &ngapType.PDUSessionResourceHandoverList{}
		for _, s := range c.Sessions {
			l.List = append(l.List, ngapType.PDUSessionResourceHandoverItem{PDUSessionID: ngapType.PDUSessionID{Value: s.ID}, HandoverCommandTransfer: s.Transfer})
		}
		add(ngapType.ProtocolIEIDPDUSessionResourceHandoverList, ignore, ngapType.HandoverCommandIEsValue{
			Present: ngapType.HandoverCommandIEsPresentPDUSessionResourceHandoverList, PDUSessionResourceHandoverList: l})
	}
	if len(c.Released) > 0 {
		l := &ngapType.PDUSessionResourceToReleaseListHOCmd{}
		for _, s := range c.Released {
			l.List = append(l.List, ngapType.PDUSessionResourceToReleaseItemHOCmd{PDUSessionID: ngapType.PDUSessionID{Value: s.ID},
				HandoverPreparationUnsuccessfulTransfer: s.Transfer})
		}
		add(ngapType.ProtocolIEIDPDUSessionResourceToReleaseListHOCmd, ignore, ngapType.HandoverCommandIEsValue{
			Present: ngapType.HandoverCommandIEsPresentPDUSessionResourceToReleaseListHOCmd, PDUSessionResourceToReleaseListHOCmd: l})
	}
	add(ngapType.ProtocolIEIDTargetToSourceTransparentContainer, reject, ngapType.HandoverCommandIEsValue{
		Present:                            ngapType.HandoverCommandIEsPresentTargetToSourceTransparentContainer,
		TargetToSourceTransparentContainer: &ngapType.TargetToSourceTransparentContainer{Value: c.Container}})
	return Encode(pdu)
}

// ParseHandoverCommand reads HANDOVER COMMAND (gNB side).
func ParseHandoverCommand(pdu *ngapType.NGAPPDU) (out HandoverCommandMsg, err error) {
	const what = "Handover Command"
	out.UEIDs = UEIDs{-1, -1}
	defer handoverRecover(&err, what)
	if pdu.SuccessfulOutcome == nil || pdu.SuccessfulOutcome.Value.HandoverCommand == nil {
		return out, ErrNotThisMessage
	}
	haveContainer := false
	for _, ie := range pdu.SuccessfulOutcome.Value.HandoverCommand.ProtocolIEs.List {
		switch v := ie.Value; {
		case v.AMFUENGAPID != nil:
			out.AMFUEID = v.AMFUENGAPID.Value
		case v.RANUENGAPID != nil:
			out.RANUEID = v.RANUENGAPID.Value
		case v.PDUSessionResourceHandoverList != nil:
			for _, it := range v.PDUSessionResourceHandoverList.List {
				out.Sessions = append(out.Sessions, SessionTransfer{it.PDUSessionID.Value, it.HandoverCommandTransfer})
			}
		case v.PDUSessionResourceToReleaseListHOCmd != nil:
			for _, it := range v.PDUSessionResourceToReleaseListHOCmd.List {
				out.Released = append(out.Released, SessionTransfer{it.PDUSessionID.Value, it.HandoverPreparationUnsuccessfulTransfer})
			}
		case v.TargetToSourceTransparentContainer != nil:
			out.Container, haveContainer = v.TargetToSourceTransparentContainer.Value, true
		}
	}
	if out.AMFUEID < 0 || out.RANUEID < 0 || !haveContainer {
		return out, missing(what, "AMF UE NGAP ID", "RAN UE NGAP ID", "Target to Source Transparent Container")
	}
	return out, nil
}

// HandoverPreparationFailure is HANDOVER PREPARATION FAILURE (TS 38.413
// 9.2.3.3), AMF to source gNB.
type HandoverPreparationFailure struct {
	UEIDs
	Cause ngapType.Cause
}

// BuildHandoverPreparationFailure builds HANDOVER PREPARATION FAILURE (AMF side).
func BuildHandoverPreparationFailure(f HandoverPreparationFailure) ([]byte, error) {
	pdu := unsuccessful(ngapType.ProcedureCodeHandoverPreparation, ngapType.UnsuccessfulOutcomePresentHandoverPreparationFailure)
	cause := f.Cause
	pdu.UnsuccessfulOutcome.Value.HandoverPreparationFailure = &ngapType.HandoverPreparationFailure{
		ProtocolIEs: ngapType.ProtocolIEContainerHandoverPreparationFailureIEs{List: []ngapType.HandoverPreparationFailureIEs{
			{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: ignore, Value: ngapType.HandoverPreparationFailureIEsValue{
				Present: ngapType.HandoverPreparationFailureIEsPresentAMFUENGAPID, AMFUENGAPID: f.amf()}},
			{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: ignore, Value: ngapType.HandoverPreparationFailureIEsValue{
				Present: ngapType.HandoverPreparationFailureIEsPresentRANUENGAPID, RANUENGAPID: f.ran()}},
			{Id: id(ngapType.ProtocolIEIDCause), Criticality: ignore, Value: ngapType.HandoverPreparationFailureIEsValue{
				Present: ngapType.HandoverPreparationFailureIEsPresentCause, Cause: &cause}},
		}}}
	return Encode(pdu)
}

// ParseHandoverPreparationFailure reads HANDOVER PREPARATION FAILURE (gNB side).
func ParseHandoverPreparationFailure(pdu *ngapType.NGAPPDU) (out HandoverPreparationFailure, err error) {
	const what = "Handover Preparation Failure"
	out.UEIDs = UEIDs{-1, -1}
	defer handoverRecover(&err, what)
	if pdu.UnsuccessfulOutcome == nil || pdu.UnsuccessfulOutcome.Value.HandoverPreparationFailure == nil {
		return out, ErrNotThisMessage
	}
	haveCause := false
	for _, ie := range pdu.UnsuccessfulOutcome.Value.HandoverPreparationFailure.ProtocolIEs.List {
		switch v := ie.Value; {
		case v.AMFUENGAPID != nil:
			out.AMFUEID = v.AMFUENGAPID.Value
		case v.RANUENGAPID != nil:
			out.RANUEID = v.RANUENGAPID.Value
		case v.Cause != nil:
			out.Cause, haveCause = *v.Cause, true
		}
	}
	if out.AMFUEID < 0 || out.RANUEID < 0 || !haveCause {
		return out, missing(what, "AMF UE NGAP ID", "RAN UE NGAP ID", "Cause")
	}
	return out, nil
}

// BuildHandoverFailure builds HANDOVER FAILURE (TS 38.413 9.2.3.6, gNB
// side): the target could not admit the UE.
func BuildHandoverFailure(amfUEID int64, cause ngapType.Cause) ([]byte, error) {
	pdu := unsuccessful(ngapType.ProcedureCodeHandoverResourceAllocation, ngapType.UnsuccessfulOutcomePresentHandoverFailure)
	pdu.UnsuccessfulOutcome.Value.HandoverFailure = &ngapType.HandoverFailure{
		ProtocolIEs: ngapType.ProtocolIEContainerHandoverFailureIEs{List: []ngapType.HandoverFailureIEs{
			{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: ignore, Value: ngapType.HandoverFailureIEsValue{
				Present: ngapType.HandoverFailureIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
			{Id: id(ngapType.ProtocolIEIDCause), Criticality: ignore, Value: ngapType.HandoverFailureIEsValue{
				Present: ngapType.HandoverFailureIEsPresentCause, Cause: &cause}},
		}}}
	return Encode(pdu)
}

// ParseHandoverFailure reads HANDOVER FAILURE (AMF side).
func ParseHandoverFailure(pdu *ngapType.NGAPPDU) (amfUEID int64, cause ngapType.Cause, err error) {
	const what = "Handover Failure"
	amfUEID = -1
	defer handoverRecover(&err, what)
	if pdu.UnsuccessfulOutcome == nil || pdu.UnsuccessfulOutcome.Value.HandoverFailure == nil {
		return amfUEID, cause, ErrNotThisMessage
	}
	haveCause := false
	for _, ie := range pdu.UnsuccessfulOutcome.Value.HandoverFailure.ProtocolIEs.List {
		switch v := ie.Value; {
		case v.AMFUENGAPID != nil:
			amfUEID = v.AMFUENGAPID.Value
		case v.Cause != nil:
			cause, haveCause = *v.Cause, true
		}
	}
	if amfUEID < 0 || !haveCause {
		return amfUEID, cause, missing(what, "AMF UE NGAP ID", "Cause")
	}
	return amfUEID, cause, nil
}

// BuildHandoverNotify builds HANDOVER NOTIFY (TS 38.413 9.2.3.7, gNB
// side): the UE arrived at the target, in cell.
func BuildHandoverNotify(ids UEIDs, cell Cell) ([]byte, error) {
	uli, err := cell.userLocation()
	if err != nil {
		return nil, err
	}
	pdu := initiating(ngapType.ProcedureCodeHandoverNotification, ignore, ngapType.InitiatingMessagePresentHandoverNotify)
	pdu.InitiatingMessage.Value.HandoverNotify = &ngapType.HandoverNotify{
		ProtocolIEs: ngapType.ProtocolIEContainerHandoverNotifyIEs{List: []ngapType.HandoverNotifyIEs{
			{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: reject, Value: ngapType.HandoverNotifyIEsValue{
				Present: ngapType.HandoverNotifyIEsPresentAMFUENGAPID, AMFUENGAPID: ids.amf()}},
			{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: reject, Value: ngapType.HandoverNotifyIEsValue{
				Present: ngapType.HandoverNotifyIEsPresentRANUENGAPID, RANUENGAPID: ids.ran()}},
			{Id: id(ngapType.ProtocolIEIDUserLocationInformation), Criticality: ignore, Value: ngapType.HandoverNotifyIEsValue{
				Present: ngapType.HandoverNotifyIEsPresentUserLocationInformation, UserLocationInformation: uli}},
		}}}
	return Encode(pdu)
}

// ParseHandoverNotify reads HANDOVER NOTIFY (AMF side).
func ParseHandoverNotify(pdu *ngapType.NGAPPDU) (ids UEIDs, cell Cell, err error) {
	const what = "Handover Notify"
	ids = UEIDs{-1, -1}
	defer handoverRecover(&err, what)
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.HandoverNotify == nil {
		return ids, cell, ErrNotThisMessage
	}
	haveULI := false
	for _, ie := range pdu.InitiatingMessage.Value.HandoverNotify.ProtocolIEs.List {
		switch v := ie.Value; {
		case v.AMFUENGAPID != nil:
			ids.AMFUEID = v.AMFUENGAPID.Value
		case v.RANUENGAPID != nil:
			ids.RANUEID = v.RANUENGAPID.Value
		case v.UserLocationInformation != nil:
			if cell, err = cellOf(v.UserLocationInformation); err != nil {
				return ids, cell, err
			}
			haveULI = true
		}
	}
	if ids.AMFUEID < 0 || ids.RANUEID < 0 || !haveULI {
		return ids, cell, missing(what, "AMF UE NGAP ID", "RAN UE NGAP ID", "User Location Information")
	}
	return ids, cell, nil
}

// BuildHandoverCancel builds HANDOVER CANCEL (TS 38.413 9.2.3.11, gNB side).
func BuildHandoverCancel(ids UEIDs, cause ngapType.Cause) ([]byte, error) {
	pdu := initiating(ngapType.ProcedureCodeHandoverCancel, reject, ngapType.InitiatingMessagePresentHandoverCancel)
	pdu.InitiatingMessage.Value.HandoverCancel = &ngapType.HandoverCancel{
		ProtocolIEs: ngapType.ProtocolIEContainerHandoverCancelIEs{List: []ngapType.HandoverCancelIEs{
			{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: reject, Value: ngapType.HandoverCancelIEsValue{
				Present: ngapType.HandoverCancelIEsPresentAMFUENGAPID, AMFUENGAPID: ids.amf()}},
			{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: reject, Value: ngapType.HandoverCancelIEsValue{
				Present: ngapType.HandoverCancelIEsPresentRANUENGAPID, RANUENGAPID: ids.ran()}},
			{Id: id(ngapType.ProtocolIEIDCause), Criticality: ignore, Value: ngapType.HandoverCancelIEsValue{
				Present: ngapType.HandoverCancelIEsPresentCause, Cause: &cause}},
		}}}
	return Encode(pdu)
}

// ParseHandoverCancel reads HANDOVER CANCEL (AMF side).
func ParseHandoverCancel(pdu *ngapType.NGAPPDU) (ids UEIDs, cause ngapType.Cause, err error) {
	const what = "Handover Cancel"
	ids = UEIDs{-1, -1}
	defer handoverRecover(&err, what)
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.HandoverCancel == nil {
		return ids, cause, ErrNotThisMessage
	}
	haveCause := false
	for _, ie := range pdu.InitiatingMessage.Value.HandoverCancel.ProtocolIEs.List {
		switch v := ie.Value; {
		case v.AMFUENGAPID != nil:
			ids.AMFUEID = v.AMFUENGAPID.Value
		case v.RANUENGAPID != nil:
			ids.RANUEID = v.RANUENGAPID.Value
		case v.Cause != nil:
			cause, haveCause = *v.Cause, true
		}
	}
	if ids.AMFUEID < 0 || ids.RANUEID < 0 || !haveCause {
		return ids, cause, missing(what, "AMF UE NGAP ID", "RAN UE NGAP ID", "Cause")
	}
	return ids, cause, nil
}

// BuildHandoverCancelAcknowledge builds HANDOVER CANCEL ACKNOWLEDGE
// (TS 38.413 9.2.3.12, AMF side).
func BuildHandoverCancelAcknowledge(ids UEIDs) ([]byte, error) {
	pdu := successful(ngapType.ProcedureCodeHandoverCancel, ngapType.SuccessfulOutcomePresentHandoverCancelAcknowledge)
	pdu.SuccessfulOutcome.Value.HandoverCancelAcknowledge = &ngapType.HandoverCancelAcknowledge{
		ProtocolIEs: ngapType.ProtocolIEContainerHandoverCancelAcknowledgeIEs{List: []ngapType.HandoverCancelAcknowledgeIEs{
			{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: ignore, Value: ngapType.HandoverCancelAcknowledgeIEsValue{
				Present: ngapType.HandoverCancelAcknowledgeIEsPresentAMFUENGAPID, AMFUENGAPID: ids.amf()}},
			{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: ignore, Value: ngapType.HandoverCancelAcknowledgeIEsValue{
				Present: ngapType.HandoverCancelAcknowledgeIEsPresentRANUENGAPID, RANUENGAPID: ids.ran()}},
		}}}
	return Encode(pdu)
}

// ParseHandoverCancelAcknowledge reads HANDOVER CANCEL ACKNOWLEDGE (gNB side).
func ParseHandoverCancelAcknowledge(pdu *ngapType.NGAPPDU) (ids UEIDs, err error) {
	defer handoverRecover(&err, "Handover Cancel Acknowledge")
	if pdu.SuccessfulOutcome == nil || pdu.SuccessfulOutcome.Value.HandoverCancelAcknowledge == nil {
		return UEIDs{-1, -1}, ErrNotThisMessage
	}
	s, err := Summarize(pdu)
	if err != nil {
		return UEIDs{-1, -1}, err
	}
	if s.AMFUEID < 0 || s.RANUEID < 0 {
		return UEIDs{s.AMFUEID, s.RANUEID}, missing("Handover Cancel Acknowledge", "AMF UE NGAP ID", "RAN UE NGAP ID")
	}
	return UEIDs{s.AMFUEID, s.RANUEID}, nil
}

// RANStatusTransfer is UPLINK RAN STATUS TRANSFER (TS 38.413 9.2.3.13,
// source gNB to AMF) or DOWNLINK RAN STATUS TRANSFER (9.2.3.14, AMF to
// target gNB): the PDCP COUNTs the target continues from. The AMF relays
// the container unchanged (8.4.6.2, 8.4.7.2).
type RANStatusTransfer struct {
	UEIDs
	Container ngapType.RANStatusTransferTransparentContainer
}

// BuildUplinkRANStatusTransfer builds UPLINK RAN STATUS TRANSFER (gNB side).
func BuildUplinkRANStatusTransfer(t RANStatusTransfer) ([]byte, error) {
	c := t.Container
	pdu := initiating(ngapType.ProcedureCodeUplinkRANStatusTransfer, ignore, ngapType.InitiatingMessagePresentUplinkRANStatusTransfer)
	pdu.InitiatingMessage.Value.UplinkRANStatusTransfer = &ngapType.UplinkRANStatusTransfer{
		ProtocolIEs: ngapType.ProtocolIEContainerUplinkRANStatusTransferIEs{List: []ngapType.UplinkRANStatusTransferIEs{
			{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: reject, Value: ngapType.UplinkRANStatusTransferIEsValue{
				Present: ngapType.UplinkRANStatusTransferIEsPresentAMFUENGAPID, AMFUENGAPID: t.amf()}},
			{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: reject, Value: ngapType.UplinkRANStatusTransferIEsValue{
				Present: ngapType.UplinkRANStatusTransferIEsPresentRANUENGAPID, RANUENGAPID: t.ran()}},
			{Id: id(ngapType.ProtocolIEIDRANStatusTransferTransparentContainer), Criticality: reject, Value: ngapType.UplinkRANStatusTransferIEsValue{
				Present: ngapType.UplinkRANStatusTransferIEsPresentRANStatusTransferTransparentContainer, RANStatusTransferTransparentContainer: &c}},
		}}}
	return Encode(pdu)
}

// ParseUplinkRANStatusTransfer reads UPLINK RAN STATUS TRANSFER (AMF side).
func ParseUplinkRANStatusTransfer(pdu *ngapType.NGAPPDU) (out RANStatusTransfer, err error) {
	const what = "Uplink RAN Status Transfer"
	defer handoverRecover(&err, what)
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.UplinkRANStatusTransfer == nil {
		return RANStatusTransfer{UEIDs: UEIDs{-1, -1}}, ErrNotThisMessage
	}
	var c *ngapType.RANStatusTransferTransparentContainer
	for _, ie := range pdu.InitiatingMessage.Value.UplinkRANStatusTransfer.ProtocolIEs.List {
		if ie.Value.RANStatusTransferTransparentContainer != nil {
			c = ie.Value.RANStatusTransferTransparentContainer
		}
	}
	return ranStatusOf(pdu, what, c)
}

// ranStatusOf completes a RAN Status Transfer read: the UE NGAP IDs (read
// as Summarize does) and the container, all mandatory (9.2.3.13, 9.2.3.14).
func ranStatusOf(pdu *ngapType.NGAPPDU, what string, c *ngapType.RANStatusTransferTransparentContainer) (RANStatusTransfer, error) {
	out := RANStatusTransfer{UEIDs: UEIDs{-1, -1}}
	s, err := Summarize(pdu)
	if err != nil {
		return out, err
	}
	out.UEIDs = UEIDs{s.AMFUEID, s.RANUEID}
	if s.AMFUEID < 0 || s.RANUEID < 0 || c == nil {
		return out, missing(what, "AMF UE NGAP ID", "RAN UE NGAP ID", "RAN Status Transfer Transparent Container")
	}
	out.Container = *c
	return out, nil
}

// BuildDownlinkRANStatusTransfer builds DOWNLINK RAN STATUS TRANSFER (AMF side).
func BuildDownlinkRANStatusTransfer(t RANStatusTransfer) ([]byte, error) {
	c := t.Container
	pdu := initiating(ngapType.ProcedureCodeDownlinkRANStatusTransfer, ignore, ngapType.InitiatingMessagePresentDownlinkRANStatusTransfer)
	pdu.InitiatingMessage.Value.DownlinkRANStatusTransfer = &ngapType.DownlinkRANStatusTransfer{
		ProtocolIEs: ngapType.ProtocolIEContainerDownlinkRANStatusTransferIEs{List: []ngapType.DownlinkRANStatusTransferIEs{
			{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: reject, Value: ngapType.DownlinkRANStatusTransferIEsValue{
				Present: ngapType.DownlinkRANStatusTransferIEsPresentAMFUENGAPID, AMFUENGAPID: t.amf()}},
			{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: reject, Value: ngapType.DownlinkRANStatusTransferIEsValue{
				Present: ngapType.DownlinkRANStatusTransferIEsPresentRANUENGAPID, RANUENGAPID: t.ran()}},
			{Id: id(ngapType.ProtocolIEIDRANStatusTransferTransparentContainer), Criticality: reject, Value: ngapType.DownlinkRANStatusTransferIEsValue{
				Present: ngapType.DownlinkRANStatusTransferIEsPresentRANStatusTransferTransparentContainer, RANStatusTransferTransparentContainer: &c}},
		}}}
	return Encode(pdu)
}

// ParseDownlinkRANStatusTransfer reads DOWNLINK RAN STATUS TRANSFER (gNB side).
func ParseDownlinkRANStatusTransfer(pdu *ngapType.NGAPPDU) (out RANStatusTransfer, err error) {
	const what = "Downlink RAN Status Transfer"
	defer handoverRecover(&err, what)
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.DownlinkRANStatusTransfer == nil {
		return RANStatusTransfer{UEIDs: UEIDs{-1, -1}}, ErrNotThisMessage
	}
	var c *ngapType.RANStatusTransferTransparentContainer
	for _, ie := range pdu.InitiatingMessage.Value.DownlinkRANStatusTransfer.ProtocolIEs.List {
		if ie.Value.RANStatusTransferTransparentContainer != nil {
			c = ie.Value.RANStatusTransferTransparentContainer
		}
	}
	return ranStatusOf(pdu, what, c)
}
