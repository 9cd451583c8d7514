package ngapx

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
)

// The N2 SM information transfers (TS 38.413 9.3.4): OCTET STRINGs the
// SMF builds and parses and the AMF carries opaquely between the SMF
// (Nsmf_PDUSession, Namf_Communication) and the gNB (PDU Session Resource
// Setup/Modify/Release). Each is APER-encoded on its own (TS 38.413 9.4,
// the *-Transfer containers).

// Tunnel is one GTP-U tunnel endpoint (TS 38.413 9.3.2.2 UP Transport
// Layer Information, GTP tunnel): IPv4 address and TEID.
type Tunnel struct {
	IPv4 netip.Addr
	TEID uint32
}

// FlowQoS is one QoS flow to set up or add (TS 38.413 9.3.1.12 QoS Flow
// Level QoS Parameters): a non-dynamic 5QI, ARP, and for a GBR flow its
// rates in bit/s.
type FlowQoS struct {
	QFI                     uint8
	FiveQI                  uint8
	ARPPriority             uint8 // 1..15
	PreemptionCapability    bool  // may trigger pre-emption
	PreemptionVulnerability bool  // pre-emptable
	GBR                     bool
	MFBRDown, MFBRUp        uint64
	GFBRDown, GFBRUp        uint64
}

// SetupRequestTransfer is PDU Session Resource Setup Request Transfer
// (TS 38.413 9.3.4.1) for an IPv4 session.
type SetupRequestTransfer struct {
	AMBRDown, AMBRUp uint64 // PDU Session Aggregate Maximum Bit Rate, bit/s
	UL               Tunnel // UL NG-U UP TNL Information: the UPF's N3 F-TEID
	Flows            []FlowQoS
}

func ie(id int64, crit aper.Enumerated) (ngapType.ProtocolIEID, ngapType.Criticality) {
	return ngapType.ProtocolIEID{Value: id}, ngapType.Criticality{Value: crit}
}

// BuildPDUSessionResourceSetupRequestTransfer encodes the transfer; every
// IE it carries is criticality reject (TS 38.413 9.3.4.1).
func BuildPDUSessionResourceSetupRequestTransfer(p SetupRequestTransfer) ([]byte, error) {
	if len(p.Flows) == 0 {
		return nil, fmt.Errorf("setup request transfer: at least one QoS flow is needed")
	}
	ul, err := upTNL(p.UL)
	if err != nil {
		return nil, err
	}
	flows, err := setupFlowList(p.Flows)
	if err != nil {
		return nil, err
	}
	var t ngapType.PDUSessionResourceSetupRequestTransfer
	add := func(id int64, v ngapType.PDUSessionResourceSetupRequestTransferIEsValue) {
		i, c := ie(id, ngapType.CriticalityPresentReject)
		t.ProtocolIEs.List = append(t.ProtocolIEs.List, ngapType.PDUSessionResourceSetupRequestTransferIEs{Id: i, Criticality: c, Value: v})
	}
	add(ngapType.ProtocolIEIDPDUSessionAggregateMaximumBitRate, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present:                           ngapType.PDUSessionResourceSetupRequestTransferIEsPresentPDUSessionAggregateMaximumBitRate,
		PDUSessionAggregateMaximumBitRate: ambr(p.AMBRDown, p.AMBRUp)})
	add(ngapType.ProtocolIEIDULNGUUPTNLInformation, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestTransferIEsPresentULNGUUPTNLInformation, ULNGUUPTNLInformation: ul})
	add(ngapType.ProtocolIEIDPDUSessionType, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present:        ngapType.PDUSessionResourceSetupRequestTransferIEsPresentPDUSessionType,
		PDUSessionType: &ngapType.PDUSessionType{Value: ngapType.PDUSessionTypePresentIpv4}})
	add(ngapType.ProtocolIEIDQosFlowSetupRequestList, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestTransferIEsPresentQosFlowSetupRequestList, QosFlowSetupRequestList: flows})
	return marshalTransfer(t, "PDU Session Resource Setup Request Transfer")
}

// marshalTransfer APER-encodes a transfer; the SEQUENCEs are extensible
// (TS 38.413 9.4: "..."), hence valueExt. The encoder can panic on a
// value outside its constraints: that is an error here, not a crash.
func marshalTransfer(v any, name string) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("encode %s: %v", name, r)
		}
	}()
	// The two transfers of every PDU session setup take the hand-written
	// encoder (fast_transfer*.go), octet-identical to the library's.
	if fast, ok := marshalTransferFast(v); ok {
		return fast, nil
	}
	b, err = aper.MarshalWithParams(v, "valueExt")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", name, err)
	}
	return b, nil
}

// unmarshalTransfer decodes a transfer from the network; it never panics.
func unmarshalTransfer(b []byte, v any, name string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decode %s: %v", name, r)
		}
	}()
	if len(b) == 0 {
		return fmt.Errorf("decode %s: empty", name)
	}
	if unmarshalTransferFast(b, v) {
		return nil
	}
	if err := aper.UnmarshalWithParams(b, v, "valueExt"); err != nil {
		return fmt.Errorf("decode %s: %w", name, err)
	}
	return nil
}

func ambr(down, up uint64) *ngapType.PDUSessionAggregateMaximumBitRate {
	return &ngapType.PDUSessionAggregateMaximumBitRate{
		PDUSessionAggregateMaximumBitRateDL: ngapType.BitRate{Value: int64(down)},
		PDUSessionAggregateMaximumBitRateUL: ngapType.BitRate{Value: int64(up)}}
}

func upTNL(t Tunnel) (*ngapType.UPTransportLayerInformation, error) {
	if !t.IPv4.Is4() {
		return nil, fmt.Errorf("tunnel address %v is not IPv4", t.IPv4)
	}
	teid := binary.BigEndian.AppendUint32(nil, t.TEID)
	return &ngapType.UPTransportLayerInformation{
		Present: ngapType.UPTransportLayerInformationPresentGTPTunnel,
		GTPTunnel: &ngapType.GTPTunnel{
			TransportLayerAddress: ngapType.TransportLayerAddress{Value: aper.BitString{Bytes: t.IPv4.AsSlice(), BitLength: 32}},
			GTPTEID:               ngapType.GTPTEID{Value: teid}}}, nil
}

// tunnelOf reads a GTP tunnel (TS 38.413 9.3.2.2); the transport layer
// address may hold IPv4 (32 bits) or IPv4 and IPv6 (160 bits): the IPv4
// part is taken.
func tunnelOf(u *ngapType.UPTransportLayerInformation) (Tunnel, error) {
	if u == nil || u.Present != ngapType.UPTransportLayerInformationPresentGTPTunnel || u.GTPTunnel == nil {
		return Tunnel{}, fmt.Errorf("UP transport layer information is not a GTP tunnel")
	}
	g := u.GTPTunnel
	a := g.TransportLayerAddress.Value
	if (a.BitLength != 32 && a.BitLength != 160) || len(a.Bytes) < 4 || len(g.GTPTEID.Value) != 4 {
		return Tunnel{}, fmt.Errorf("GTP tunnel: address of %d bits, TEID of %d octets: want an IPv4 address and 4 octets", a.BitLength, len(g.GTPTEID.Value))
	}
	return Tunnel{IPv4: netip.AddrFrom4([4]byte(a.Bytes[:4])), TEID: binary.BigEndian.Uint32(g.GTPTEID.Value)}, nil
}

func flowParameters(f FlowQoS) (ngapType.QosFlowLevelQosParameters, error) {
	if f.QFI > 63 || f.ARPPriority < 1 || f.ARPPriority > 15 {
		return ngapType.QosFlowLevelQosParameters{}, fmt.Errorf("QoS flow %d: QFI 0..63 and ARP priority 1..15, got ARP %d", f.QFI, f.ARPPriority)
	}
	p := ngapType.QosFlowLevelQosParameters{
		QosCharacteristics: ngapType.QosCharacteristics{Present: ngapType.QosCharacteristicsPresentNonDynamic5QI,
			NonDynamic5QI: &ngapType.NonDynamic5QIDescriptor{FiveQI: ngapType.FiveQI{Value: int64(f.FiveQI)}}},
		AllocationAndRetentionPriority: ngapType.AllocationAndRetentionPriority{
			PriorityLevelARP:        ngapType.PriorityLevelARP{Value: int64(f.ARPPriority)},
			PreEmptionCapability:    ngapType.PreEmptionCapability{Value: enumOf(f.PreemptionCapability)},
			PreEmptionVulnerability: ngapType.PreEmptionVulnerability{Value: enumOf(f.PreemptionVulnerability)}}}
	if f.GBR {
		p.GBRQosInformation = &ngapType.GBRQosInformation{
			MaximumFlowBitRateDL: ngapType.BitRate{Value: int64(f.MFBRDown)}, MaximumFlowBitRateUL: ngapType.BitRate{Value: int64(f.MFBRUp)},
			GuaranteedFlowBitRateDL: ngapType.BitRate{Value: int64(f.GFBRDown)}, GuaranteedFlowBitRateUL: ngapType.BitRate{Value: int64(f.GFBRUp)}}
	}
	return p, nil
}

func enumOf(b bool) aper.Enumerated {
	if b {
		return 1
	}
	return 0
}

func setupFlowList(flows []FlowQoS) (*ngapType.QosFlowSetupRequestList, error) {
	l := &ngapType.QosFlowSetupRequestList{}
	for _, f := range flows {
		p, err := flowParameters(f)
		if err != nil {
			return nil, err
		}
		l.List = append(l.List, ngapType.QosFlowSetupRequestItem{
			QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(f.QFI)}, QosFlowLevelQosParameters: p})
	}
	return l, nil
}

// ParsePDUSessionResourceSetupRequestTransfer reads a setup request
// transfer (the gNB's side; tests check what the SMF built with it).
func ParsePDUSessionResourceSetupRequestTransfer(b []byte) (SetupRequestTransfer, error) {
	var t ngapType.PDUSessionResourceSetupRequestTransfer
	var out SetupRequestTransfer
	if err := unmarshalTransfer(b, &t, "PDU Session Resource Setup Request Transfer"); err != nil {
		return out, err
	}
	haveUL := false
	for _, f := range t.ProtocolIEs.List {
		v := f.Value
		switch {
		case v.PDUSessionAggregateMaximumBitRate != nil:
			out.AMBRDown = uint64(v.PDUSessionAggregateMaximumBitRate.PDUSessionAggregateMaximumBitRateDL.Value)
			out.AMBRUp = uint64(v.PDUSessionAggregateMaximumBitRate.PDUSessionAggregateMaximumBitRateUL.Value)
		case v.ULNGUUPTNLInformation != nil:
			ul, err := tunnelOf(v.ULNGUUPTNLInformation)
			if err != nil {
				return out, err
			}
			out.UL, haveUL = ul, true
		case v.QosFlowSetupRequestList != nil:
			for _, it := range v.QosFlowSetupRequestList.List {
				out.Flows = append(out.Flows, flowOf(it.QosFlowIdentifier.Value, &it.QosFlowLevelQosParameters))
			}
		}
	}
	if !haveUL || len(out.Flows) == 0 {
		return out, fmt.Errorf("PDU Session Resource Setup Request Transfer: UL NG-U UP TNL information or QoS flows missing")
	}
	return out, nil
}

func flowOf(qfi int64, p *ngapType.QosFlowLevelQosParameters) FlowQoS {
	f := FlowQoS{QFI: uint8(qfi)}
	if p == nil {
		return f
	}
	if nd := p.QosCharacteristics.NonDynamic5QI; nd != nil {
		f.FiveQI = uint8(nd.FiveQI.Value)
	}
	a := p.AllocationAndRetentionPriority
	f.ARPPriority = uint8(a.PriorityLevelARP.Value)
	f.PreemptionCapability = a.PreEmptionCapability.Value == 1
	f.PreemptionVulnerability = a.PreEmptionVulnerability.Value == 1
	if g := p.GBRQosInformation; g != nil {
		f.GBR = true
		f.MFBRDown, f.MFBRUp = uint64(g.MaximumFlowBitRateDL.Value), uint64(g.MaximumFlowBitRateUL.Value)
		f.GFBRDown, f.GFBRUp = uint64(g.GuaranteedFlowBitRateDL.Value), uint64(g.GuaranteedFlowBitRateUL.Value)
	}
	return f
}

// SetupResponse is what the SMF reads of PDU Session Resource Setup
// Response Transfer (TS 38.413 9.3.4.2): the gNB's downlink tunnel and
// the QoS flows it accepted and failed.
type SetupResponse struct {
	DL         Tunnel
	QFIs       []uint8
	FailedQFIs []uint8
}

// BuildPDUSessionResourceSetupResponseTransfer encodes the gNB's answer.
func BuildPDUSessionResourceSetupResponseTransfer(r SetupResponse) ([]byte, error) {
	dl, err := upTNL(r.DL)
	if err != nil {
		return nil, err
	}
	t := ngapType.PDUSessionResourceSetupResponseTransfer{
		DLQosFlowPerTNLInformation: ngapType.QosFlowPerTNLInformation{UPTransportLayerInformation: *dl}}
	for _, q := range r.QFIs {
		t.DLQosFlowPerTNLInformation.AssociatedQosFlowList.List = append(t.DLQosFlowPerTNLInformation.AssociatedQosFlowList.List,
			ngapType.AssociatedQosFlowItem{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(q)}})
	}
	return marshalTransfer(t, "PDU Session Resource Setup Response Transfer")
}

// ParsePDUSessionResourceSetupResponseTransfer reads the gNB's answer.
func ParsePDUSessionResourceSetupResponseTransfer(b []byte) (SetupResponse, error) {
	var t ngapType.PDUSessionResourceSetupResponseTransfer
	var out SetupResponse
	if err := unmarshalTransfer(b, &t, "PDU Session Resource Setup Response Transfer"); err != nil {
		return out, err
	}
	dl, err := tunnelOf(&t.DLQosFlowPerTNLInformation.UPTransportLayerInformation)
	if err != nil {
		return out, fmt.Errorf("PDU Session Resource Setup Response Transfer: DL QoS flow per TNL information: %w", err)
	}
	out.DL = dl
	for _, it := range t.DLQosFlowPerTNLInformation.AssociatedQosFlowList.List {
		out.QFIs = append(out.QFIs, uint8(it.QosFlowIdentifier.Value))
	}
	if t.QosFlowFailedToSetupList != nil {
		for _, it := range t.QosFlowFailedToSetupList.List {
			out.FailedQFIs = append(out.FailedQFIs, uint8(it.QosFlowIdentifier.Value))
		}
	}
	return out, nil
}

// BuildPDUSessionResourceSetupUnsuccessfulTransfer encodes a gNB's refusal
// (TS 38.413 9.3.4.16).
func BuildPDUSessionResourceSetupUnsuccessfulTransfer(cause ngapType.Cause) ([]byte, error) {
	return marshalTransfer(ngapType.PDUSessionResourceSetupUnsuccessfulTransfer{Cause: cause}, "PDU Session Resource Setup Unsuccessful Transfer")
}

// ParsePDUSessionResourceSetupUnsuccessfulTransfer reads the gNB's cause.
func ParsePDUSessionResourceSetupUnsuccessfulTransfer(b []byte) (ngapType.Cause, error) {
	var t ngapType.PDUSessionResourceSetupUnsuccessfulTransfer
	err := unmarshalTransfer(b, &t, "PDU Session Resource Setup Unsuccessful Transfer")
	return t.Cause, err
}

// ModifyResponse is what the SMF reads of PDU Session Resource Modify
// Response Transfer (TS 38.413 9.3.4.4): the flows added and failed.
type ModifyResponse struct {
	QFIs       []uint8
	FailedQFIs []uint8
}

// BuildPDUSessionResourceModifyResponseTransfer encodes the gNB's answer.
func BuildPDUSessionResourceModifyResponseTransfer(r ModifyResponse) ([]byte, error) {
	var t ngapType.PDUSessionResourceModifyResponseTransfer
	if len(r.QFIs) > 0 {
		t.QosFlowAddOrModifyResponseList = &ngapType.QosFlowAddOrModifyResponseList{}
		for _, q := range r.QFIs {
			t.QosFlowAddOrModifyResponseList.List = append(t.QosFlowAddOrModifyResponseList.List,
				ngapType.QosFlowAddOrModifyResponseItem{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(q)}})
		}
	}
	if len(r.FailedQFIs) > 0 {
		// TS 38.413 9.3.4.4: each with its cause; the gNB's reason is
		// its own, so "unspecified" (a simulator has no radio to blame).
		t.QosFlowFailedToAddOrModifyList = &ngapType.QosFlowListWithCause{}
		for _, q := range r.FailedQFIs {
			t.QosFlowFailedToAddOrModifyList.List = append(t.QosFlowFailedToAddOrModifyList.List, ngapType.QosFlowWithCauseItem{
				QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(q)}, Cause: CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified)})
		}
	}
	return marshalTransfer(t, "PDU Session Resource Modify Response Transfer")
}

// ParsePDUSessionResourceModifyResponseTransfer reads the gNB's answer.
func ParsePDUSessionResourceModifyResponseTransfer(b []byte) (ModifyResponse, error) {
	var t ngapType.PDUSessionResourceModifyResponseTransfer
	var out ModifyResponse
	if err := unmarshalTransfer(b, &t, "PDU Session Resource Modify Response Transfer"); err != nil {
		return out, err
	}
	if l := t.QosFlowAddOrModifyResponseList; l != nil {
		for _, it := range l.List {
			out.QFIs = append(out.QFIs, uint8(it.QosFlowIdentifier.Value))
		}
	}
	if l := t.QosFlowFailedToAddOrModifyList; l != nil {
		for _, it := range l.List {
			out.FailedQFIs = append(out.FailedQFIs, uint8(it.QosFlowIdentifier.Value))
		}
	}
	return out, nil
}

// BuildPDUSessionResourceReleaseCommandTransfer encodes PDU Session
// Resource Release Command Transfer (TS 38.413 9.3.4.12) with its cause.
func BuildPDUSessionResourceReleaseCommandTransfer(cause ngapType.Cause) ([]byte, error) {
	return marshalTransfer(ngapType.PDUSessionResourceReleaseCommandTransfer{Cause: cause}, "PDU Session Resource Release Command Transfer")
}

// ParsePDUSessionResourceReleaseCommandTransfer reads the cause.
func ParsePDUSessionResourceReleaseCommandTransfer(b []byte) (ngapType.Cause, error) {
	var t ngapType.PDUSessionResourceReleaseCommandTransfer
	err := unmarshalTransfer(b, &t, "PDU Session Resource Release Command Transfer")
	return t.Cause, err
}
