package ngapx

import (
	"errors"

	"github.com/free5gc/ngap/ngapType"
)

// The gNB's UE context release messages naming the PDU sessions whose user
// plane goes with the context (TS 38.413 8.3.2, 8.3.3; TS 23.502 4.2.6), so
// that the AMF deactivates them at the SMF and the UE goes CM-IDLE with
// its sessions kept.

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
