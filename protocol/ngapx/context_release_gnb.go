package ngapx

import (
	"errors"

	"github.com/free5gc/ngap/ngapType"
)

// The gNB's UE Context Release Complete naming the PDU sessions whose user
// plane went with the context (TS 38.413 8.3.3; TS 23.502 4.2.6). The
// request's list is paging_release.go's.

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
