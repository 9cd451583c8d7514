package ngapx

import (
	"errors"

	"github.com/free5gc/ngap/ngapType"
)

// The gNB's side of the UE context procedures that carry PDU sessions
// (TS 38.413 8.3): Initial Context Setup Request with sessions to set up
// (a Service Request, TS 23.502 4.2.3.2 step 12), its response with the
// gNB's DL tunnels, and the UE context release messages naming the
// sessions whose user plane goes with the context (TS 23.502 4.2.6). The
// AMF builds the request in its own files; the transfers are the same
// codecs as for PDU Session Resource Setup (sm_transfer.go).

// RANInitialContext is what the gNB reads from Initial Context Setup
// Request (TS 38.413 9.2.2.1): the UE NGAP IDs, the NAS-PDU for the UE and
// the PDU sessions to set up, with their transfers decoded.
type RANInitialContext struct {
	AMFUEID, RANUEID int64
	NASPDU           []byte // nil when absent
	Sessions         []RANSessionSetup
	// Unreadable are sessions whose transfer does not decode; the gNB
	// reports them as failed to set up.
	Unreadable []uint8
}

// ParseRANInitialContextSetupRequest reads Initial Context Setup Request.
// A request without the PDU Session Resource Setup List (a registration)
// has no sessions.
func ParseRANInitialContextSetupRequest(pdu *ngapType.NGAPPDU) (out *RANInitialContext, err error) {
	defer ranSideRecover(&err, "Initial Context Setup Request")
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.InitialContextSetupRequest == nil {
		return nil, ErrNotThisMessage
	}
	out = &RANInitialContext{}
	if out.AMFUEID, out.RANUEID, out.NASPDU, err = ranSideUEIDs(pdu, "Initial Context Setup Request"); err != nil {
		return nil, err
	}
	for _, ie := range pdu.InitiatingMessage.Value.InitialContextSetupRequest.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceSetupListCxtReq; l != nil {
			out.readSessions(l)
		}
	}
	return out, nil
}

func (c *RANInitialContext) readSessions(l *ngapType.PDUSessionResourceSetupListCxtReq) {
	for _, item := range l.List {
		id := uint8(item.PDUSessionID.Value)
		s, err := DecodeSetupRequestTransfer(item.PDUSessionResourceSetupRequestTransfer)
		if err != nil {
			c.Unreadable = append(c.Unreadable, id)
			continue
		}
		s.ID = id
		if item.NASPDU != nil {
			s.NASPDU = item.NASPDU.Value
		}
		c.Sessions = append(c.Sessions, *s)
	}
}

// BuildRANInitialContextSetupResponse builds Initial Context Setup
// Response (TS 38.413 9.2.2.2) with the sessions set up (their response
// transfers: the gNB's DL tunnel) and those that failed (an unsuccessful
// transfer with the cause); each list only when it has an item.
func BuildRANInitialContextSetupResponse(amfUEID, ranUEID int64, results []RANSessionResult) ([]byte, error) {
	pdu := successful(ngapType.ProcedureCodeInitialContextSetup, ngapType.SuccessfulOutcomePresentInitialContextSetupResponse)
	r := &ngapType.InitialContextSetupResponse{}
	pdu.SuccessfulOutcome.Value.InitialContextSetupResponse = r
	add := func(ieID int64, v ngapType.InitialContextSetupResponseIEsValue) {
		r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.InitialContextSetupResponseIEs{Id: id(ieID), Criticality: ignore, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, ngapType.InitialContextSetupResponseIEsValue{
		Present: ngapType.InitialContextSetupResponseIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, ngapType.InitialContextSetupResponseIEsValue{
		Present: ngapType.InitialContextSetupResponseIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}})
	ok, failed, err := contextSetupLists(results)
	if err != nil {
		return nil, err
	}
	if len(ok.List) > 0 {
		add(ngapType.ProtocolIEIDPDUSessionResourceSetupListCxtRes, ngapType.InitialContextSetupResponseIEsValue{
			Present: ngapType.InitialContextSetupResponseIEsPresentPDUSessionResourceSetupListCxtRes, PDUSessionResourceSetupListCxtRes: ok})
	}
	if len(failed.List) > 0 {
		add(ngapType.ProtocolIEIDPDUSessionResourceFailedToSetupListCxtRes, ngapType.InitialContextSetupResponseIEsValue{
			Present: ngapType.InitialContextSetupResponseIEsPresentPDUSessionResourceFailedToSetupListCxtRes, PDUSessionResourceFailedToSetupListCxtRes: failed})
	}
	return Encode(pdu)
}

func contextSetupLists(results []RANSessionResult) (*ngapType.PDUSessionResourceSetupListCxtRes, *ngapType.PDUSessionResourceFailedToSetupListCxtRes, error) {
	ok, failed := &ngapType.PDUSessionResourceSetupListCxtRes{}, &ngapType.PDUSessionResourceFailedToSetupListCxtRes{}
	for _, res := range results {
		psi := ngapType.PDUSessionID{Value: int64(res.ID)}
		if res.Cause != nil {
			t, err := BuildPDUSessionResourceSetupUnsuccessfulTransfer(*res.Cause)
			if err != nil {
				return nil, nil, err
			}
			failed.List = append(failed.List, ngapType.PDUSessionResourceFailedToSetupItemCxtRes{PDUSessionID: psi, PDUSessionResourceSetupUnsuccessfulTransfer: t})
			continue
		}
		t, err := EncodeSetupResponseTransfer(res.DL, res.QFIs)
		if err != nil {
			return nil, nil, err
		}
		ok.List = append(ok.List, ngapType.PDUSessionResourceSetupItemCxtRes{PDUSessionID: psi, PDUSessionResourceSetupResponseTransfer: t})
	}
	return ok, failed, nil
}

// BuildRANContextReleaseRequest builds UE Context Release Request
// (TS 38.413 9.2.2.4) naming the PDU sessions with an active N3 user plane
// (TS 23.502 4.2.6 step 1), so that the AMF deactivates them at the SMF.
func BuildRANContextReleaseRequest(amfUEID, ranUEID int64, sessions []uint8, cause ngapType.Cause) ([]byte, error) {
	if len(sessions) == 0 {
		return BuildUEContextReleaseRequest(amfUEID, ranUEID, cause)
	}
	if len(sessions) > 256 {
		return nil, errors.New("UE Context Release Request: more than 256 PDU sessions")
	}
	pdu := initiating(ngapType.ProcedureCodeUEContextReleaseRequest, ignore, ngapType.InitiatingMessagePresentUEContextReleaseRequest)
	list := &ngapType.PDUSessionResourceListCxtRelReq{}
	for _, s := range sessions {
		list.List = append(list.List, ngapType.PDUSessionResourceItemCxtRelReq{PDUSessionID: ngapType.PDUSessionID{Value: int64(s)}})
	}
	r := &ngapType.UEContextReleaseRequest{}
	r.ProtocolIEs.List = []ngapType.UEContextReleaseRequestIEs{
		{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: reject, Value: ngapType.UEContextReleaseRequestIEsValue{
			Present: ngapType.UEContextReleaseRequestIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
		{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: reject, Value: ngapType.UEContextReleaseRequestIEsValue{
			Present: ngapType.UEContextReleaseRequestIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}},
		{Id: id(ngapType.ProtocolIEIDPDUSessionResourceListCxtRelReq), Criticality: reject, Value: ngapType.UEContextReleaseRequestIEsValue{
			Present: ngapType.UEContextReleaseRequestIEsPresentPDUSessionResourceListCxtRelReq, PDUSessionResourceListCxtRelReq: list}},
		{Id: id(ngapType.ProtocolIEIDCause), Criticality: ignore, Value: ngapType.UEContextReleaseRequestIEsValue{
			Present: ngapType.UEContextReleaseRequestIEsPresentCause, Cause: &cause}},
	}
	pdu.InitiatingMessage.Value.UEContextReleaseRequest = r
	return Encode(pdu)
}

// BuildRANContextReleaseComplete builds UE Context Release Complete
// (TS 38.413 9.2.2.5) naming the PDU sessions whose resources the gNB
// released with the context (TS 23.502 4.2.6 step 5: the AMF asks the SMF
// to deactivate each).
func BuildRANContextReleaseComplete(amfUEID, ranUEID int64, sessions []uint8) ([]byte, error) {
	if len(sessions) == 0 {
		return BuildUEContextReleaseComplete(amfUEID, ranUEID)
	}
	if len(sessions) > 256 {
		return nil, errors.New("UE Context Release Complete: more than 256 PDU sessions")
	}
	pdu := successful(ngapType.ProcedureCodeUEContextRelease, ngapType.SuccessfulOutcomePresentUEContextReleaseComplete)
	list := &ngapType.PDUSessionResourceListCxtRelCpl{}
	for _, s := range sessions {
		list.List = append(list.List, ngapType.PDUSessionResourceItemCxtRelCpl{PDUSessionID: ngapType.PDUSessionID{Value: int64(s)}})
	}
	c := &ngapType.UEContextReleaseComplete{}
	c.ProtocolIEs.List = []ngapType.UEContextReleaseCompleteIEs{
		{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: ignore, Value: ngapType.UEContextReleaseCompleteIEsValue{
			Present: ngapType.UEContextReleaseCompleteIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
		{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: ignore, Value: ngapType.UEContextReleaseCompleteIEsValue{
			Present: ngapType.UEContextReleaseCompleteIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}},
		{Id: id(ngapType.ProtocolIEIDPDUSessionResourceListCxtRelCpl), Criticality: reject, Value: ngapType.UEContextReleaseCompleteIEsValue{
			Present: ngapType.UEContextReleaseCompleteIEsPresentPDUSessionResourceListCxtRelCpl, PDUSessionResourceListCxtRelCpl: list}},
	}
	pdu.SuccessfulOutcome.Value.UEContextReleaseComplete = c
	return Encode(pdu)
}
