package ngapx

import (
	"errors"
	"fmt"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
)

// The gNB's side of the PDU Session Resource procedures (TS 38.413 8.2):
// Setup, Modify and Release requests read into plain structs with their
// transfers decoded, and the responses with their transfers built. The
// AMF and SMF build the requests in their own files.

// RANSessionSetup is one PDU session of a Setup Request with its
// PDU Session Resource Setup Request Transfer read (TS 38.413 9.3.4.1).
type RANSessionSetup struct {
	ID     uint8
	NASPDU []byte // the 5GSM message for the UE; nil when absent
	UL     Tunnel
	Type   aper.Enumerated // PDU Session Type (9.3.1.52): ipv4 0, ipv6 1, ipv4v6 2, ethernet 3, unstructured 4
	Flows  []FlowQoS
	// AMBR is the PDU Session Aggregate Maximum Bit Rate in bit/s (9.3.1.102), 0 when absent.
	AMBRUplink, AMBRDownlink int64
}

// RANSetupRequest is PDU Session Resource Setup Request (TS 38.413 9.2.1.1).
type RANSetupRequest struct {
	AMFUEID, RANUEID int64
	NASPDU           []byte // a NAS-PDU for the UE outside the sessions; nil when absent
	Sessions         []RANSessionSetup
	// Unreadable are sessions whose transfer does not decode; the gNB
	// reports them as failed to set up.
	Unreadable []uint8
}

// ErrNotThisMessage is a PDU of another procedure than the reader's.
var ErrNotThisMessage = errors.New("NGAP: not the expected message")

// ParseRANSetupRequest reads a PDU Session Resource Setup Request.
func ParseRANSetupRequest(pdu *ngapType.NGAPPDU) (out *RANSetupRequest, err error) {
	defer ranSideRecover(&err, "PDU Session Resource Setup Request")
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.PDUSessionResourceSetupRequest == nil {
		return nil, ErrNotThisMessage
	}
	out = &RANSetupRequest{}
	if out.AMFUEID, out.RANUEID, out.NASPDU, err = ranSideUEIDs(pdu, "PDU Session Resource Setup Request"); err != nil {
		return nil, err
	}
	var list *ngapType.PDUSessionResourceSetupListSUReq
	for _, ie := range pdu.InitiatingMessage.Value.PDUSessionResourceSetupRequest.ProtocolIEs.List {
		if ie.Value.PDUSessionResourceSetupListSUReq != nil {
			list = ie.Value.PDUSessionResourceSetupListSUReq
		}
	}
	if list == nil {
		return nil, errors.New("PDU Session Resource Setup Request without the session list")
	}
	for _, item := range list.List {
		s, err := DecodeSetupRequestTransfer(item.PDUSessionResourceSetupRequestTransfer)
		if err != nil {
			out.Unreadable = append(out.Unreadable, uint8(item.PDUSessionID.Value))
			continue
		}
		s.ID = uint8(item.PDUSessionID.Value)
		if item.PDUSessionNASPDU != nil {
			s.NASPDU = item.PDUSessionNASPDU.Value
		}
		out.Sessions = append(out.Sessions, *s)
	}
	return out, nil
}

// ranSideUEIDs reads the UE NGAP IDs, both mandatory in the requests of
// TS 38.413 9.2.1, and the message-level NAS-PDU of a request.
func ranSideUEIDs(pdu *ngapType.NGAPPDU, what string) (amfUEID, ranUEID int64, nasPDU []byte, err error) {
	s, err := Summarize(pdu)
	if err != nil {
		return 0, 0, nil, err
	}
	if s.AMFUEID < 0 || s.RANUEID < 0 {
		return 0, 0, nil, fmt.Errorf("%s without the AMF or RAN UE NGAP ID", what)
	}
	return s.AMFUEID, s.RANUEID, s.NASPDU, nil
}

// DecodeSetupRequestTransfer reads PDU Session Resource Setup Request
// Transfer (TS 38.413 9.3.4.1): the UPF's N3 F-TEID, the PDU session type,
// the QoS flows and the session AMBR.
func DecodeSetupRequestTransfer(b []byte) (out *RANSessionSetup, err error) {
	defer ranSideRecover(&err, "PDU Session Resource Setup Request Transfer")
	var t ngapType.PDUSessionResourceSetupRequestTransfer
	if !unmarshalTransferFast(b, &t) {
		if err := aper.UnmarshalWithParams(b, &t, "valueExt"); err != nil {
			return nil, fmt.Errorf("PDU Session Resource Setup Request Transfer: %w", err)
		}
	}
	out = &RANSessionSetup{}
	var haveUL, haveType, haveFlows bool
	for _, ie := range t.ProtocolIEs.List {
		v := ie.Value
		switch {
		case v.ULNGUUPTNLInformation != nil:
			if out.UL, err = tunnelOf(v.ULNGUUPTNLInformation); err != nil {
				return nil, fmt.Errorf("UL NG-U UP TNL Information: %w", err)
			}
			haveUL = true
		case v.PDUSessionType != nil:
			out.Type, haveType = v.PDUSessionType.Value, true
		case v.QosFlowSetupRequestList != nil:
			for _, f := range v.QosFlowSetupRequestList.List {
				out.Flows = append(out.Flows, flowOf(f.QosFlowIdentifier.Value, &f.QosFlowLevelQosParameters))
			}
			haveFlows = len(out.Flows) > 0
		case v.PDUSessionAggregateMaximumBitRate != nil:
			out.AMBRUplink = v.PDUSessionAggregateMaximumBitRate.PDUSessionAggregateMaximumBitRateUL.Value
			out.AMBRDownlink = v.PDUSessionAggregateMaximumBitRate.PDUSessionAggregateMaximumBitRateDL.Value
		}
	}
	if !haveUL || !haveType || !haveFlows {
		// TS 38.413 9.3.4.1: all three are mandatory.
		return nil, errors.New("PDU Session Resource Setup Request Transfer: UL NG-U UP TNL Information, PDU Session Type or QoS Flow Setup Request List missing")
	}
	return out, nil
}

// EncodeSetupResponseTransfer builds PDU Session Resource Setup Response
// Transfer (TS 38.413 9.3.4.2): the gNB's DL tunnel and the QoS flows it
// carries (the SMF reads it with ParsePDUSessionResourceSetupResponseTransfer).
func EncodeSetupResponseTransfer(dl Tunnel, qfis []uint8) ([]byte, error) {
	return BuildPDUSessionResourceSetupResponseTransfer(SetupResponse{DL: dl, QFIs: qfis})
}

// RANSessionResult is the gNB's answer for one PDU session: set up (or
// modified) with DL and QFIs, or failed with Cause.
type RANSessionResult struct {
	ID    uint8
	DL    Tunnel
	QFIs  []uint8
	Cause *ngapType.Cause // not nil: failed
}

// BuildRANSetupResponse builds PDU Session Resource Setup Response
// (TS 38.413 9.2.1.2): the sessions set up with their response transfers,
// the failed ones with an unsuccessful transfer and its cause.
func BuildRANSetupResponse(amfUEID, ranUEID int64, results []RANSessionResult) ([]byte, error) {
	pdu := successful(ngapType.ProcedureCodePDUSessionResourceSetup, ngapType.SuccessfulOutcomePresentPDUSessionResourceSetupResponse)
	r := &ngapType.PDUSessionResourceSetupResponse{}
	pdu.SuccessfulOutcome.Value.PDUSessionResourceSetupResponse = r
	add := func(ieID int64, v ngapType.PDUSessionResourceSetupResponseIEsValue) {
		r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.PDUSessionResourceSetupResponseIEs{Id: id(ieID), Criticality: ignore, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, ngapType.PDUSessionResourceSetupResponseIEsValue{
		Present: ngapType.PDUSessionResourceSetupResponseIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, ngapType.PDUSessionResourceSetupResponseIEsValue{
		Present: ngapType.PDUSessionResourceSetupResponseIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}})
	var ok ngapType.PDUSessionResourceSetupListSURes
	var failed ngapType.PDUSessionResourceFailedToSetupListSURes
	for _, res := range results {
		if res.Cause != nil {
			t, err := BuildPDUSessionResourceSetupUnsuccessfulTransfer(*res.Cause)
			if err != nil {
				return nil, err
			}
			failed.List = append(failed.List, ngapType.PDUSessionResourceFailedToSetupItemSURes{
				PDUSessionID: ngapType.PDUSessionID{Value: int64(res.ID)}, PDUSessionResourceSetupUnsuccessfulTransfer: t})
			continue
		}
		t, err := EncodeSetupResponseTransfer(res.DL, res.QFIs)
		if err != nil {
			return nil, err
		}
		ok.List = append(ok.List, ngapType.PDUSessionResourceSetupItemSURes{
			PDUSessionID: ngapType.PDUSessionID{Value: int64(res.ID)}, PDUSessionResourceSetupResponseTransfer: t})
	}
	// TS 38.413 9.2.1.2: each list is present only with at least one item.
	if len(ok.List) > 0 {
		add(ngapType.ProtocolIEIDPDUSessionResourceSetupListSURes, ngapType.PDUSessionResourceSetupResponseIEsValue{
			Present: ngapType.PDUSessionResourceSetupResponseIEsPresentPDUSessionResourceSetupListSURes, PDUSessionResourceSetupListSURes: &ok})
	}
	if len(failed.List) > 0 {
		add(ngapType.ProtocolIEIDPDUSessionResourceFailedToSetupListSURes, ngapType.PDUSessionResourceSetupResponseIEsValue{
			Present: ngapType.PDUSessionResourceSetupResponseIEsPresentPDUSessionResourceFailedToSetupListSURes, PDUSessionResourceFailedToSetupListSURes: &failed})
	}
	return Encode(pdu)
}

// ranSideRecover turns a panic of free5gc's APER coder on crafted input into an
// error naming what was being read.
func ranSideRecover(err *error, what string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %s: coder panic: %v", ErrTransferSyntax, what, r)
	}
}
