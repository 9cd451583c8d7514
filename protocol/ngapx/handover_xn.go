package ngapx

// Path Switch Request (TS 38.413 8.4.4, 9.2.3.8-9.2.3.10): after an Xn
// handover the target gNB asks the AMF to switch the downlink of the UE's
// PDU sessions to it. Both sides: the gNB builds the request and reads the
// answers, the AMF the reverse.

import (
	"errors"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"
)

// PathSwitchRequestMsg is PATH SWITCH REQUEST (TS 38.413 9.2.3.8).
type PathSwitchRequestMsg struct {
	RANUEID       int64 // the target gNB's new RAN UE NGAP ID
	SourceAMFUEID int64 // the AMF UE NGAP ID the source gNB used
	Cell          Cell
	SecurityCaps  SecurityCapabilities
	// ToSwitch carries a Path Switch Request Transfer per session
	// (9.3.4.8); Failed a Path Switch Request Setup Failed Transfer
	// (9.3.4.15) per session the target could not set up.
	ToSwitch []SessionTransfer
	Failed   []SessionTransfer
}

// BuildPathSwitchRequest builds PATH SWITCH REQUEST (gNB side).
func BuildPathSwitchRequest(r PathSwitchRequestMsg) ([]byte, error) {
	if err := checkSessions("Path Switch Request", r.ToSwitch, false); err != nil {
		return nil, err
	}
	if err := checkSessions("Path Switch Request failed list", r.Failed, true); err != nil {
		return nil, err
	}
	uli, err := r.Cell.userLocation()
	if err != nil {
		return nil, err
	}
	pdu := initiating(ngapType.ProcedureCodePathSwitchRequest, reject, ngapType.InitiatingMessagePresentPathSwitchRequest)
	m := &ngapType.PathSwitchRequest{}
	pdu.InitiatingMessage.Value.PathSwitchRequest = m
	add := func(ieID int64, crit ngapType.Criticality, v ngapType.PathSwitchRequestIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.PathSwitchRequestIEs{Id: id(ieID), Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDRANUENGAPID, reject, ngapType.PathSwitchRequestIEsValue{Present: ngapType.PathSwitchRequestIEsPresentRANUENGAPID,
		RANUENGAPID: &ngapType.RANUENGAPID{Value: r.RANUEID}})
	add(ngapType.ProtocolIEIDSourceAMFUENGAPID, reject, ngapType.PathSwitchRequestIEsValue{Present: ngapType.PathSwitchRequestIEsPresentSourceAMFUENGAPID,
		SourceAMFUENGAPID: &ngapType.AMFUENGAPID{Value: r.SourceAMFUEID}})
	add(ngapType.ProtocolIEIDUserLocationInformation, ignore, ngapType.PathSwitchRequestIEsValue{
		Present: ngapType.PathSwitchRequestIEsPresentUserLocationInformation, UserLocationInformation: uli})
	add(ngapType.ProtocolIEIDUESecurityCapabilities, ignore, ngapType.PathSwitchRequestIEsValue{
		Present: ngapType.PathSwitchRequestIEsPresentUESecurityCapabilities, UESecurityCapabilities: r.SecurityCaps.ie()})
	dl := &ngapType.PDUSessionResourceToBeSwitchedDLList{}
	for _, s := range r.ToSwitch {
		dl.List = append(dl.List, ngapType.PDUSessionResourceToBeSwitchedDLItem{PDUSessionID: ngapType.PDUSessionID{Value: s.ID},
			PathSwitchRequestTransfer: s.Transfer})
	}
	add(ngapType.ProtocolIEIDPDUSessionResourceToBeSwitchedDLList, reject, ngapType.PathSwitchRequestIEsValue{
		Present: ngapType.PathSwitchRequestIEsPresentPDUSessionResourceToBeSwitchedDLList, PDUSessionResourceToBeSwitchedDLList: dl})
	if len(r.Failed) > 0 {
		f := &ngapType.PDUSessionResourceFailedToSetupListPSReq{}
		for _, s := range r.Failed {
			f.List = append(f.List, ngapType.PDUSessionResourceFailedToSetupItemPSReq{PDUSessionID: ngapType.PDUSessionID{Value: s.ID},
				PathSwitchRequestSetupFailedTransfer: s.Transfer})
		}
		add(ngapType.ProtocolIEIDPDUSessionResourceFailedToSetupListPSReq, ignore, ngapType.PathSwitchRequestIEsValue{
			Present: ngapType.PathSwitchRequestIEsPresentPDUSessionResourceFailedToSetupListPSReq, PDUSessionResourceFailedToSetupListPSReq: f})
	}
	return Encode(pdu)
}

// ParsePathSwitchRequest reads PATH SWITCH REQUEST (AMF side). An error
// wrapping ErrMissingIE means a mandatory IE was absent; the IDs read so
// far are in the result either way, for the failure message.
func ParsePathSwitchRequest(pdu *ngapType.NGAPPDU) (out PathSwitchRequestMsg, err error) {
	const what = "Path Switch Request"
	out.RANUEID, out.SourceAMFUEID = -1, -1
	defer handoverRecover(&err, what)
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.PathSwitchRequest == nil {
		return out, ErrNotThisMessage
	}
	var haveULI, haveCaps, haveList bool
	for _, ie := range pdu.InitiatingMessage.Value.PathSwitchRequest.ProtocolIEs.List {
		switch v := ie.Value; {
		case v.RANUENGAPID != nil:
			out.RANUEID = v.RANUENGAPID.Value
		case v.SourceAMFUENGAPID != nil:
			out.SourceAMFUEID = v.SourceAMFUENGAPID.Value
		case v.UserLocationInformation != nil:
			if out.Cell, err = cellOf(v.UserLocationInformation); err != nil {
				return out, err
			}
			haveULI = true
		case v.UESecurityCapabilities != nil:
			out.SecurityCaps, haveCaps = securityCapabilitiesOf(v.UESecurityCapabilities), true
		case v.PDUSessionResourceToBeSwitchedDLList != nil:
			for _, it := range v.PDUSessionResourceToBeSwitchedDLList.List {
				out.ToSwitch = append(out.ToSwitch, SessionTransfer{it.PDUSessionID.Value, it.PathSwitchRequestTransfer})
			}
			haveList = len(out.ToSwitch) > 0
		case v.PDUSessionResourceFailedToSetupListPSReq != nil:
			for _, it := range v.PDUSessionResourceFailedToSetupListPSReq.List {
				out.Failed = append(out.Failed, SessionTransfer{it.PDUSessionID.Value, it.PathSwitchRequestSetupFailedTransfer})
			}
		}
	}
	if out.RANUEID < 0 || out.SourceAMFUEID < 0 || !haveULI || !haveCaps || !haveList {
		return out, missing(what, "RAN UE NGAP ID", "Source AMF UE NGAP ID", "User Location Information",
			"UE Security Capabilities", "PDU Session Resource To Be Switched in Downlink List")
	}
	return out, nil
}

// PathSwitchRequestAcknowledge is PATH SWITCH REQUEST ACKNOWLEDGE (TS 38.413 9.2.3.9).
type PathSwitchRequestAcknowledge struct {
	AMFUEID, RANUEID int64
	// SecurityCaps is sent when the AMF's copy differs from what the gNB
	// reported (8.4.4.2); nil: absent.
	SecurityCaps *SecurityCapabilities
	Security     SecurityContext
	// Switched carries a Path Switch Request Acknowledge Transfer per
	// session (9.3.4.9), Released a Path Switch Request Unsuccessful
	// Transfer (9.3.4.10) per session the SMF could not switch.
	Switched []SessionTransfer
	Released []SessionTransfer
	Allowed  []models.Snssai
}

// BuildPathSwitchRequestAcknowledge builds PATH SWITCH REQUEST ACKNOWLEDGE (AMF side).
func BuildPathSwitchRequestAcknowledge(a PathSwitchRequestAcknowledge) ([]byte, error) {
	if err := checkSessions("Path Switch Request Acknowledge", a.Switched, false); err != nil {
		return nil, err
	}
	if err := checkSessions("Path Switch Request Acknowledge released list", a.Released, true); err != nil {
		return nil, err
	}
	sec, err := a.Security.ie()
	if err != nil {
		return nil, err
	}
	allowed, err := allowedNSSAI(a.Allowed)
	if err != nil {
		return nil, err
	}
	pdu := successful(ngapType.ProcedureCodePathSwitchRequest, ngapType.SuccessfulOutcomePresentPathSwitchRequestAcknowledge)
	m := &ngapType.PathSwitchRequestAcknowledge{}
	pdu.SuccessfulOutcome.Value.PathSwitchRequestAcknowledge = m
	add := func(ieID int64, crit ngapType.Criticality, v ngapType.PathSwitchRequestAcknowledgeIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.PathSwitchRequestAcknowledgeIEs{Id: id(ieID), Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, ignore, ngapType.PathSwitchRequestAcknowledgeIEsValue{
		Present: ngapType.PathSwitchRequestAcknowledgeIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: a.AMFUEID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, ignore, ngapType.PathSwitchRequestAcknowledgeIEsValue{
		Present: ngapType.PathSwitchRequestAcknowledgeIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: a.RANUEID}})
	if a.SecurityCaps != nil {
		add(ngapType.ProtocolIEIDUESecurityCapabilities, reject, ngapType.PathSwitchRequestAcknowledgeIEsValue{
			Present: ngapType.PathSwitchRequestAcknowledgeIEsPresentUESecurityCapabilities, UESecurityCapabilities: a.SecurityCaps.ie()})
	}
	add(ngapType.ProtocolIEIDSecurityContext, reject, ngapType.PathSwitchRequestAcknowledgeIEsValue{
		Present: ngapType.PathSwitchRequestAcknowledgeIEsPresentSecurityContext, SecurityContext: sec})
	sw := &ngapType.PDUSessionResourceSwitchedList{}
	for _, s := range a.Switched {
		sw.List = append(sw.List, ngapType.PDUSessionResourceSwitchedItem{PDUSessionID: ngapType.PDUSessionID{Value: s.ID},
			PathSwitchRequestAcknowledgeTransfer: s.Transfer})
	}
	add(ngapType.ProtocolIEIDPDUSessionResourceSwitchedList, ignore, ngapType.PathSwitchRequestAcknowledgeIEsValue{
		Present: ngapType.PathSwitchRequestAcknowledgeIEsPresentPDUSessionResourceSwitchedList, PDUSessionResourceSwitchedList: sw})
	if len(a.Released) > 0 {
		rel := &ngapType.PDUSessionResourceReleasedListPSAck{}
		for _, s := range a.Released {
			rel.List = append(rel.List, ngapType.PDUSessionResourceReleasedItemPSAck{PDUSessionID: ngapType.PDUSessionID{Value: s.ID},
				PathSwitchRequestUnsuccessfulTransfer: s.Transfer})
		}
		add(ngapType.ProtocolIEIDPDUSessionResourceReleasedListPSAck, ignore, ngapType.PathSwitchRequestAcknowledgeIEsValue{
			Present: ngapType.PathSwitchRequestAcknowledgeIEsPresentPDUSessionResourceReleasedListPSAck, PDUSessionResourceReleasedListPSAck: rel})
	}
	add(ngapType.ProtocolIEIDAllowedNSSAI, reject, ngapType.PathSwitchRequestAcknowledgeIEsValue{
		Present: ngapType.PathSwitchRequestAcknowledgeIEsPresentAllowedNSSAI, AllowedNSSAI: allowed})
	return Encode(pdu)
}

// ParsePathSwitchRequestAcknowledge reads PATH SWITCH REQUEST ACKNOWLEDGE (gNB side).
func ParsePathSwitchRequestAcknowledge(pdu *ngapType.NGAPPDU) (out PathSwitchRequestAcknowledge, err error) {
	const what = "Path Switch Request Acknowledge"
	out.AMFUEID, out.RANUEID = -1, -1
	defer handoverRecover(&err, what)
	if pdu.SuccessfulOutcome == nil || pdu.SuccessfulOutcome.Value.PathSwitchRequestAcknowledge == nil {
		return out, ErrNotThisMessage
	}
	var haveSec, haveAllowed bool
	for _, ie := range pdu.SuccessfulOutcome.Value.PathSwitchRequestAcknowledge.ProtocolIEs.List {
		switch v := ie.Value; {
		case v.AMFUENGAPID != nil:
			out.AMFUEID = v.AMFUENGAPID.Value
		case v.RANUENGAPID != nil:
			out.RANUEID = v.RANUENGAPID.Value
		case v.UESecurityCapabilities != nil:
			c := securityCapabilitiesOf(v.UESecurityCapabilities)
			out.SecurityCaps = &c
		case v.SecurityContext != nil:
			if out.Security, err = securityContextOf(v.SecurityContext); err != nil {
				return out, err
			}
			haveSec = true
		case v.PDUSessionResourceSwitchedList != nil:
			for _, it := range v.PDUSessionResourceSwitchedList.List {
				out.Switched = append(out.Switched, SessionTransfer{it.PDUSessionID.Value, it.PathSwitchRequestAcknowledgeTransfer})
			}
		case v.PDUSessionResourceReleasedListPSAck != nil:
			for _, it := range v.PDUSessionResourceReleasedListPSAck.List {
				out.Released = append(out.Released, SessionTransfer{it.PDUSessionID.Value, it.PathSwitchRequestUnsuccessfulTransfer})
			}
		case v.AllowedNSSAI != nil:
			if out.Allowed, err = allowedOf(v.AllowedNSSAI); err != nil {
				return out, err
			}
			haveAllowed = true
		}
	}
	if out.AMFUEID < 0 || out.RANUEID < 0 || !haveSec || len(out.Switched) == 0 || !haveAllowed {
		return out, missing(what, "AMF UE NGAP ID", "RAN UE NGAP ID", "Security Context", "PDU Session Resource Switched List", "Allowed NSSAI")
	}
	return out, nil
}

// PathSwitchRequestFailure is PATH SWITCH REQUEST FAILURE (TS 38.413
// 9.2.3.10): every session listed as released, each with a Path Switch
// Request Unsuccessful Transfer (9.3.4.10).
type PathSwitchRequestFailure struct {
	AMFUEID, RANUEID int64
	Released         []SessionTransfer
}

// BuildPathSwitchRequestFailure builds PATH SWITCH REQUEST FAILURE (AMF side).
func BuildPathSwitchRequestFailure(f PathSwitchRequestFailure) ([]byte, error) {
	if err := checkSessions("Path Switch Request Failure", f.Released, false); err != nil {
		return nil, err
	}
	pdu := unsuccessful(ngapType.ProcedureCodePathSwitchRequest, ngapType.UnsuccessfulOutcomePresentPathSwitchRequestFailure)
	m := &ngapType.PathSwitchRequestFailure{}
	pdu.UnsuccessfulOutcome.Value.PathSwitchRequestFailure = m
	rel := &ngapType.PDUSessionResourceReleasedListPSFail{}
	for _, s := range f.Released {
		rel.List = append(rel.List, ngapType.PDUSessionResourceReleasedItemPSFail{PDUSessionID: ngapType.PDUSessionID{Value: s.ID},
			PathSwitchRequestUnsuccessfulTransfer: s.Transfer})
	}
	m.ProtocolIEs.List = []ngapType.PathSwitchRequestFailureIEs{
		{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: ignore, Value: ngapType.PathSwitchRequestFailureIEsValue{
			Present: ngapType.PathSwitchRequestFailureIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: f.AMFUEID}}},
		{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: ignore, Value: ngapType.PathSwitchRequestFailureIEsValue{
			Present: ngapType.PathSwitchRequestFailureIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: f.RANUEID}}},
		{Id: id(ngapType.ProtocolIEIDPDUSessionResourceReleasedListPSFail), Criticality: ignore, Value: ngapType.PathSwitchRequestFailureIEsValue{
			Present: ngapType.PathSwitchRequestFailureIEsPresentPDUSessionResourceReleasedListPSFail, PDUSessionResourceReleasedListPSFail: rel}},
	}
	return Encode(pdu)
}

// ParsePathSwitchRequestFailure reads PATH SWITCH REQUEST FAILURE (gNB side).
func ParsePathSwitchRequestFailure(pdu *ngapType.NGAPPDU) (out PathSwitchRequestFailure, err error) {
	const what = "Path Switch Request Failure"
	out.AMFUEID, out.RANUEID = -1, -1
	defer handoverRecover(&err, what)
	if pdu.UnsuccessfulOutcome == nil || pdu.UnsuccessfulOutcome.Value.PathSwitchRequestFailure == nil {
		return out, ErrNotThisMessage
	}
	for _, ie := range pdu.UnsuccessfulOutcome.Value.PathSwitchRequestFailure.ProtocolIEs.List {
		switch v := ie.Value; {
		case v.AMFUENGAPID != nil:
			out.AMFUEID = v.AMFUENGAPID.Value
		case v.RANUENGAPID != nil:
			out.RANUEID = v.RANUENGAPID.Value
		case v.PDUSessionResourceReleasedListPSFail != nil:
			for _, it := range v.PDUSessionResourceReleasedListPSFail.List {
				out.Released = append(out.Released, SessionTransfer{it.PDUSessionID.Value, it.PathSwitchRequestUnsuccessfulTransfer})
			}
		}
	}
	if out.AMFUEID < 0 || out.RANUEID < 0 || len(out.Released) == 0 {
		return out, missing(what, "AMF UE NGAP ID", "RAN UE NGAP ID", "PDU Session Resource Released List")
	}
	return out, nil
}

// allowedNSSAI is the Allowed NSSAI IE (9.3.1.31): 1..8 S-NSSAIs.
func allowedNSSAI(list []models.Snssai) (*ngapType.AllowedNSSAI, error) {
	if len(list) == 0 || len(list) > 8 {
		return nil, errors.New("Allowed NSSAI: want 1-8 S-NSSAIs")
	}
	out := &ngapType.AllowedNSSAI{}
	for _, s := range list {
		n, err := snssaiIE(s)
		if err != nil {
			return nil, err
		}
		out.List = append(out.List, ngapType.AllowedNSSAIItem{SNSSAI: n})
	}
	return out, nil
}

func allowedOf(x *ngapType.AllowedNSSAI) ([]models.Snssai, error) {
	var out []models.Snssai
	for _, it := range x.List {
		s, err := snssaiOf(it.SNSSAI)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
