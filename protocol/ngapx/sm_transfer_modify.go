package ngapx

import (
	"fmt"

	"github.com/free5gc/ngap/ngapType"
)

// PDU Session Resource Modify Request Transfer (TS 38.413 9.3.4.3), the
// SMF's N2 part of a network-requested PDU session modification (TS
// 23.502 4.3.3.2 step 3b): a new PDU Session Aggregate Maximum Bit Rate,
// QoS flows added or changed, QoS flows released.

// AMBR is a PDU Session Aggregate Maximum Bit Rate (TS 38.413 9.3.1.69)
// in bit/s.
type AMBR struct {
	Down, Up uint64
}

// ModifyRequestTransfer is what the SMF asks of the gNB. At least one part
// is present (the transfer has no mandatory IE, but an empty one asks for
// nothing).
type ModifyRequestTransfer struct {
	AMBR        *AMBR     // nil: unchanged
	AddOrModify []FlowQoS // QoS Flow Add or Modify Request List
	Release     []uint8   // QoS Flow to Release List, each with cause NAS normal release
}

// BuildModifyRequestTransfer encodes the transfer; every IE it carries is
// criticality reject (TS 38.413 9.3.4.3), in the order of the ASN.1
// container (AMBR first, the flows to release last).
func BuildModifyRequestTransfer(m ModifyRequestTransfer) ([]byte, error) {
	if m.AMBR == nil && len(m.AddOrModify) == 0 && len(m.Release) == 0 {
		return nil, fmt.Errorf("modify request transfer: nothing to modify")
	}
	var t ngapType.PDUSessionResourceModifyRequestTransfer
	put := func(id int64, v ngapType.PDUSessionResourceModifyRequestTransferIEsValue) {
		i, c := ie(id, ngapType.CriticalityPresentReject)
		t.ProtocolIEs.List = append(t.ProtocolIEs.List, ngapType.PDUSessionResourceModifyRequestTransferIEs{Id: i, Criticality: c, Value: v})
	}
	if m.AMBR != nil {
		if m.AMBR.Down == 0 || m.AMBR.Up == 0 {
			return nil, fmt.Errorf("modify request transfer: PDU session AMBR %d/%d bit/s, both directions must be set", m.AMBR.Up, m.AMBR.Down)
		}
		put(ngapType.ProtocolIEIDPDUSessionAggregateMaximumBitRate, ngapType.PDUSessionResourceModifyRequestTransferIEsValue{
			Present:                           ngapType.PDUSessionResourceModifyRequestTransferIEsPresentPDUSessionAggregateMaximumBitRate,
			PDUSessionAggregateMaximumBitRate: ambr(m.AMBR.Down, m.AMBR.Up)})
	}
	if len(m.AddOrModify) > 0 {
		l, err := addOrModifyList(m.AddOrModify)
		if err != nil {
			return nil, err
		}
		put(ngapType.ProtocolIEIDQosFlowAddOrModifyRequestList, ngapType.PDUSessionResourceModifyRequestTransferIEsValue{
			Present: ngapType.PDUSessionResourceModifyRequestTransferIEsPresentQosFlowAddOrModifyRequestList, QosFlowAddOrModifyRequestList: l})
	}
	if len(m.Release) > 0 {
		put(ngapType.ProtocolIEIDQosFlowToReleaseList, ngapType.PDUSessionResourceModifyRequestTransferIEsValue{
			Present: ngapType.PDUSessionResourceModifyRequestTransferIEsPresentQosFlowToReleaseList, QosFlowToReleaseList: releaseList(m.Release)})
	}
	return marshalTransfer(t, "PDU Session Resource Modify Request Transfer")
}

func addOrModifyList(flows []FlowQoS) (*ngapType.QosFlowAddOrModifyRequestList, error) {
	l := &ngapType.QosFlowAddOrModifyRequestList{}
	for _, f := range flows {
		p, err := flowParameters(f)
		if err != nil {
			return nil, err
		}
		l.List = append(l.List, ngapType.QosFlowAddOrModifyRequestItem{
			QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(f.QFI)}, QosFlowLevelQosParameters: &p})
	}
	return l, nil
}

func releaseList(qfis []uint8) *ngapType.QosFlowListWithCause {
	l := &ngapType.QosFlowListWithCause{}
	for _, q := range qfis {
		l.List = append(l.List, ngapType.QosFlowWithCauseItem{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(q)},
			Cause: CauseNas(ngapType.CauseNasPresentNormalRelease)})
	}
	return l
}

// ParseModifyRequestTransfer reads a modify request transfer (tests check
// what the SMF built with it; the gNB's reading is ranSideModifyRequestTransfer).
func ParseModifyRequestTransfer(b []byte) (ModifyRequestTransfer, error) {
	var t ngapType.PDUSessionResourceModifyRequestTransfer
	if err := unmarshalTransfer(b, &t, "PDU Session Resource Modify Request Transfer"); err != nil {
		return ModifyRequestTransfer{}, err
	}
	out, _, err := modifyRequestOf(&t)
	return out, err
}

// modifyRequestOf reads the transfer's IEs, and the UPF's new uplink
// tunnel (UL NG-U UP TNL Modify List) when it has one: the SMF's parser
// and the gNB's (pdu_session_gnb_modrel.go) both read it here.
func modifyRequestOf(t *ngapType.PDUSessionResourceModifyRequestTransfer) (out ModifyRequestTransfer, ul *Tunnel, err error) {
	for _, f := range t.ProtocolIEs.List {
		switch v := f.Value; {
		case v.PDUSessionAggregateMaximumBitRate != nil:
			out.AMBR = ambrOf(v.PDUSessionAggregateMaximumBitRate)
		case v.ULNGUUPTNLModifyList != nil && len(v.ULNGUUPTNLModifyList.List) > 0:
			tun, err := tunnelOf(&v.ULNGUUPTNLModifyList.List[0].ULNGUUPTNLInformation)
			if err != nil {
				return out, nil, fmt.Errorf("UL NG-U UP TNL Modify List: %w", err)
			}
			ul = &tun
		case v.QosFlowAddOrModifyRequestList != nil:
			for _, it := range v.QosFlowAddOrModifyRequestList.List {
				out.AddOrModify = append(out.AddOrModify, flowOf(it.QosFlowIdentifier.Value, it.QosFlowLevelQosParameters))
			}
		case v.QosFlowToReleaseList != nil:
			for _, it := range v.QosFlowToReleaseList.List {
				out.Release = append(out.Release, uint8(it.QosFlowIdentifier.Value))
			}
		}
	}
	return out, ul, nil
}

func ambrOf(a *ngapType.PDUSessionAggregateMaximumBitRate) *AMBR {
	return &AMBR{Down: uint64(a.PDUSessionAggregateMaximumBitRateDL.Value), Up: uint64(a.PDUSessionAggregateMaximumBitRateUL.Value)}
}

// BuildPDUSessionResourceModifyRequestTransfer encodes a transfer that
// only adds QoS flows (QoS Flow Add or Modify Request List).
func BuildPDUSessionResourceModifyRequestTransfer(add []FlowQoS) ([]byte, error) {
	if len(add) == 0 {
		return nil, fmt.Errorf("modify request transfer: no QoS flow to add")
	}
	return BuildModifyRequestTransfer(ModifyRequestTransfer{AddOrModify: add})
}

// ParsePDUSessionResourceModifyRequestTransfer reads the flows a modify
// request transfer adds or changes.
func ParsePDUSessionResourceModifyRequestTransfer(b []byte) ([]FlowQoS, error) {
	m, err := ParseModifyRequestTransfer(b)
	return m.AddOrModify, err
}
