package ngapx

import (
	"errors"
	"fmt"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
)

// RANSessionModify is one PDU session of a Modify Request with its PDU
// Session Resource Modify Request Transfer read (TS 38.413 9.3.4.3).
type RANSessionModify struct {
	ID     uint8
	NASPDU []byte
	// UL is the UPF's new N3 tunnel when the transfer changes it (UL NG-U
	// UP TNL Modify List); nil: unchanged.
	UL *Tunnel
	// AMBR is the session's new PDU Session Aggregate Maximum Bit Rate
	// (TS 38.413 9.3.1.69); nil: unchanged.
	AMBR *AMBR
	// AddOrModify are QoS flows added or changed; Release the QFIs removed.
	AddOrModify []FlowQoS
	Release     []uint8
}

// RANModifyRequest is PDU Session Resource Modify Request (TS 38.413 9.2.1.3).
type RANModifyRequest struct {
	AMFUEID, RANUEID int64
	Sessions         []RANSessionModify
	Unreadable       []uint8
}

// ParseRANModifyRequest reads a PDU Session Resource Modify Request.
func ParseRANModifyRequest(pdu *ngapType.NGAPPDU) (out *RANModifyRequest, err error) {
	defer ranSideRecover(&err, "PDU Session Resource Modify Request")
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.PDUSessionResourceModifyRequest == nil {
		return nil, ErrNotThisMessage
	}
	out = &RANModifyRequest{}
	if out.AMFUEID, out.RANUEID, _, err = ranSideUEIDs(pdu, "PDU Session Resource Modify Request"); err != nil {
		return nil, err
	}
	var list *ngapType.PDUSessionResourceModifyListModReq
	for _, ie := range pdu.InitiatingMessage.Value.PDUSessionResourceModifyRequest.ProtocolIEs.List {
		if ie.Value.PDUSessionResourceModifyListModReq != nil {
			list = ie.Value.PDUSessionResourceModifyListModReq
		}
	}
	if list == nil {
		return nil, errors.New("PDU Session Resource Modify Request without the session list")
	}
	for _, item := range list.List {
		s, err := ranSideModifyRequestTransfer(item.PDUSessionResourceModifyRequestTransfer)
		if err != nil {
			out.Unreadable = append(out.Unreadable, uint8(item.PDUSessionID.Value))
			continue
		}
		s.ID = uint8(item.PDUSessionID.Value)
		if item.NASPDU != nil {
			s.NASPDU = item.NASPDU.Value
		}
		out.Sessions = append(out.Sessions, *s)
	}
	return out, nil
}

func ranSideModifyRequestTransfer(b []byte) (out *RANSessionModify, err error) {
	defer ranSideRecover(&err, "PDU Session Resource Modify Request Transfer")
	var t ngapType.PDUSessionResourceModifyRequestTransfer
	if err := aper.UnmarshalWithParams(b, &t, "valueExt"); err != nil {
		return nil, fmt.Errorf("PDU Session Resource Modify Request Transfer: %w", err)
	}
	m, ul, err := modifyRequestOf(&t)
	if err != nil {
		return nil, err
	}
	return &RANSessionModify{UL: ul, AMBR: m.AMBR, AddOrModify: m.AddOrModify, Release: m.Release}, nil
}

// BuildRANModifyResponse builds PDU Session Resource Modify Response
// (TS 38.413 9.2.1.4) for the sessions modified (results without a cause;
// QFIs are the flows added or modified) and those that failed.
func BuildRANModifyResponse(amfUEID, ranUEID int64, results []RANSessionResult) ([]byte, error) {
	pdu := successful(ngapType.ProcedureCodePDUSessionResourceModify, ngapType.SuccessfulOutcomePresentPDUSessionResourceModifyResponse)
	r := &ngapType.PDUSessionResourceModifyResponse{}
	pdu.SuccessfulOutcome.Value.PDUSessionResourceModifyResponse = r
	add := func(ieID int64, v ngapType.PDUSessionResourceModifyResponseIEsValue) {
		r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.PDUSessionResourceModifyResponseIEs{Id: id(ieID), Criticality: ignore, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, ngapType.PDUSessionResourceModifyResponseIEsValue{
		Present: ngapType.PDUSessionResourceModifyResponseIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, ngapType.PDUSessionResourceModifyResponseIEsValue{
		Present: ngapType.PDUSessionResourceModifyResponseIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}})
	var ok ngapType.PDUSessionResourceModifyListModRes
	var failed ngapType.PDUSessionResourceFailedToModifyListModRes
	for _, res := range results {
		if res.Cause != nil {
			t, err := marshalTransfer(ngapType.PDUSessionResourceModifyUnsuccessfulTransfer{Cause: *res.Cause}, "PDU Session Resource Modify Unsuccessful Transfer")
			if err != nil {
				return nil, err
			}
			failed.List = append(failed.List, ngapType.PDUSessionResourceFailedToModifyItemModRes{
				PDUSessionID: ngapType.PDUSessionID{Value: int64(res.ID)}, PDUSessionResourceModifyUnsuccessfulTransfer: t})
			continue
		}
		t, err := BuildPDUSessionResourceModifyResponseTransfer(ModifyResponse{QFIs: res.QFIs})
		if err != nil {
			return nil, err
		}
		ok.List = append(ok.List, ngapType.PDUSessionResourceModifyItemModRes{
			PDUSessionID: ngapType.PDUSessionID{Value: int64(res.ID)}, PDUSessionResourceModifyResponseTransfer: t})
	}
	if len(ok.List) > 0 {
		add(ngapType.ProtocolIEIDPDUSessionResourceModifyListModRes, ngapType.PDUSessionResourceModifyResponseIEsValue{
			Present: ngapType.PDUSessionResourceModifyResponseIEsPresentPDUSessionResourceModifyListModRes, PDUSessionResourceModifyListModRes: &ok})
	}
	if len(failed.List) > 0 {
		add(ngapType.ProtocolIEIDPDUSessionResourceFailedToModifyListModRes, ngapType.PDUSessionResourceModifyResponseIEsValue{
			Present: ngapType.PDUSessionResourceModifyResponseIEsPresentPDUSessionResourceFailedToModifyListModRes, PDUSessionResourceFailedToModifyListModRes: &failed})
	}
	return Encode(pdu)
}

// RANReleaseCommand is PDU Session Resource Release Command (TS 38.413
// 9.2.1.5): the sessions to release, each with the cause of its transfer.
type RANReleaseCommand struct {
	AMFUEID, RANUEID int64
	NASPDU           []byte // the 5GSM Release Command for the UE; nil when absent
	IDs              []uint8
	Causes           []*ngapType.Cause // per ID; nil where the transfer did not decode
}

// ParseRANReleaseCommand reads a PDU Session Resource Release Command.
func ParseRANReleaseCommand(pdu *ngapType.NGAPPDU) (out *RANReleaseCommand, err error) {
	defer ranSideRecover(&err, "PDU Session Resource Release Command")
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.PDUSessionResourceReleaseCommand == nil {
		return nil, ErrNotThisMessage
	}
	out = &RANReleaseCommand{}
	if out.AMFUEID, out.RANUEID, out.NASPDU, err = ranSideUEIDs(pdu, "PDU Session Resource Release Command"); err != nil {
		return nil, err
	}
	var list *ngapType.PDUSessionResourceToReleaseListRelCmd
	for _, ie := range pdu.InitiatingMessage.Value.PDUSessionResourceReleaseCommand.ProtocolIEs.List {
		if ie.Value.PDUSessionResourceToReleaseListRelCmd != nil {
			list = ie.Value.PDUSessionResourceToReleaseListRelCmd
		}
	}
	if list == nil {
		return nil, errors.New("PDU Session Resource Release Command without the session list")
	}
	for _, item := range list.List {
		out.IDs = append(out.IDs, uint8(item.PDUSessionID.Value))
		out.Causes = append(out.Causes, ranSideReleaseCause(item.PDUSessionResourceReleaseCommandTransfer))
	}
	return out, nil
}

func ranSideReleaseCause(b []byte) (c *ngapType.Cause) {
	defer func() {
		if recover() != nil {
			c = nil
		}
	}()
	var t ngapType.PDUSessionResourceReleaseCommandTransfer
	if !unmarshalTransferFast(b, &t) && aper.UnmarshalWithParams(b, &t, "valueExt") != nil {
		return nil
	}
	return &t.Cause
}

// BuildRANReleaseResponse builds PDU Session Resource Release Response
// (TS 38.413 9.2.1.6) for the sessions released, each with an empty
// PDU Session Resource Release Response Transfer (9.3.4.21).
func BuildRANReleaseResponse(amfUEID, ranUEID int64, ids []uint8) ([]byte, error) {
	pdu := successful(ngapType.ProcedureCodePDUSessionResourceRelease, ngapType.SuccessfulOutcomePresentPDUSessionResourceReleaseResponse)
	r := &ngapType.PDUSessionResourceReleaseResponse{}
	pdu.SuccessfulOutcome.Value.PDUSessionResourceReleaseResponse = r
	empty, err := ranSideReleaseResponseTransfer()
	if err != nil {
		return nil, err
	}
	var list ngapType.PDUSessionResourceReleasedListRelRes
	for _, sid := range ids {
		list.List = append(list.List, ngapType.PDUSessionResourceReleasedItemRelRes{PDUSessionID: ngapType.PDUSessionID{Value: int64(sid)},
			PDUSessionResourceReleaseResponseTransfer: empty})
	}
	r.ProtocolIEs.List = []ngapType.PDUSessionResourceReleaseResponseIEs{
		{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: ignore, Value: ngapType.PDUSessionResourceReleaseResponseIEsValue{
			Present: ngapType.PDUSessionResourceReleaseResponseIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
		{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: ignore, Value: ngapType.PDUSessionResourceReleaseResponseIEsValue{
			Present: ngapType.PDUSessionResourceReleaseResponseIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}},
		{Id: id(ngapType.ProtocolIEIDPDUSessionResourceReleasedListRelRes), Criticality: ignore, Value: ngapType.PDUSessionResourceReleaseResponseIEsValue{
			Present: ngapType.PDUSessionResourceReleaseResponseIEsPresentPDUSessionResourceReleasedListRelRes, PDUSessionResourceReleasedListRelRes: &list}},
	}
	return Encode(pdu)
}

func ranSideReleaseResponseTransfer() (b []byte, err error) {
	defer ranSideRecover(&err, "PDU Session Resource Release Response Transfer")
	if fast, ok := marshalTransferFast(ngapType.PDUSessionResourceReleaseResponseTransfer{}); ok {
		return fast, nil
	}
	return aper.MarshalWithParams(ngapType.PDUSessionResourceReleaseResponseTransfer{}, "valueExt")
}
