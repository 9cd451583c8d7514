package ngapx

// The AN release that puts a UE in CM-IDLE before it can be paged (TS
// 23.502 4.2.6; TS 38.413 8.3.2): the gNB's UE Context Release Request
// with the PDU sessions whose user plane it had active (PDU Session
// Resource List, 9.2.3.4), which the AMF has deactivated at their SMFs.

import (
	"errors"

	"github.com/free5gc/ngap/ngapType"
)

// BuildUEContextReleaseRequestWithSessions builds UE Context Release
// Request (TS 38.413 9.2.2.4) listing the PDU sessions with an active user
// plane; no ids leaves the list out.
func BuildUEContextReleaseRequestWithSessions(amfUEID, ranUEID int64, cause ngapType.Cause, ids []uint8) ([]byte, error) {
	pdu := initiating(ngapType.ProcedureCodeUEContextReleaseRequest, ignore, ngapType.InitiatingMessagePresentUEContextReleaseRequest)
	r := &ngapType.UEContextReleaseRequest{}
	pdu.InitiatingMessage.Value.UEContextReleaseRequest = r
	add := func(ieID int64, crit ngapType.Criticality, v ngapType.UEContextReleaseRequestIEsValue) {
		r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.UEContextReleaseRequestIEs{Id: id(ieID), Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, reject, ngapType.UEContextReleaseRequestIEsValue{
		Present: ngapType.UEContextReleaseRequestIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, reject, ngapType.UEContextReleaseRequestIEsValue{
		Present: ngapType.UEContextReleaseRequestIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}})
	if len(ids) > 0 {
		l := &ngapType.PDUSessionResourceListCxtRelReq{}
		for _, s := range ids {
			l.List = append(l.List, ngapType.PDUSessionResourceItemCxtRelReq{PDUSessionID: ngapType.PDUSessionID{Value: int64(s)}})
		}
		add(ngapType.ProtocolIEIDPDUSessionResourceListCxtRelReq, reject, ngapType.UEContextReleaseRequestIEsValue{
			Present: ngapType.UEContextReleaseRequestIEsPresentPDUSessionResourceListCxtRelReq, PDUSessionResourceListCxtRelReq: l})
	}
	add(ngapType.ProtocolIEIDCause, ignore, ngapType.UEContextReleaseRequestIEsValue{
		Present: ngapType.UEContextReleaseRequestIEsPresentCause, Cause: &cause})
	return Encode(pdu)
}

// ReleaseRequestSessions reads the PDU Session Resource List of a UE
// Context Release Request (the AMF's side); listed says whether the gNB
// sent one (without it, the AMF deactivates every session it holds).
func ReleaseRequestSessions(pdu *ngapType.NGAPPDU) (ids []int64, listed bool, err error) {
	if pdu == nil || pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.UEContextReleaseRequest == nil {
		return nil, false, errors.New("not a UE Context Release Request")
	}
	for _, ie := range pdu.InitiatingMessage.Value.UEContextReleaseRequest.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceListCxtRelReq; l != nil {
			listed = true
			for _, it := range l.List {
				ids = append(ids, it.PDUSessionID.Value)
			}
		}
	}
	return ids, listed, nil
}
