// Package ngapxtest builds the AMF's PDU Session Resource requests for the
// tests of the gNB side (protocol/ngapx, test/ransim): what an AMF sends
// with the transfers an SMF writes (TS 38.413 9.2.1, 9.3.4), straight
// from the ASN.1 types so the tests do not read back their own builders.
package ngapxtest

import (
	"encoding/binary"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// Session is one PDU session the AMF asks the gNB to set up.
type Session struct {
	ID     uint8
	NASPDU []byte
	UL     ngapx.Tunnel // the UPF's N3 F-TEID
	QFIs   []uint8      // QoS flows, each with 5QI 9
}

func ie(v int64) ngapType.ProtocolIEID { return ngapType.ProtocolIEID{Value: v} }

var (
	reject = ngapType.Criticality{Value: ngapType.CriticalityPresentReject}
	ignore = ngapType.Criticality{Value: ngapType.CriticalityPresentIgnore}
)

func initiating(code int64, present int) *ngapType.NGAPPDU {
	return &ngapType.NGAPPDU{Present: ngapType.NGAPPDUPresentInitiatingMessage, InitiatingMessage: &ngapType.InitiatingMessage{
		ProcedureCode: ngapType.ProcedureCode{Value: code}, Criticality: reject, Value: ngapType.InitiatingMessageValue{Present: present}}}
}

// SetupRequestTransfer is the SMF's PDU Session Resource Setup Request
// Transfer (TS 38.413 9.3.4.1): AMBR, UL tunnel, IPv4, QoS flows.
func SetupRequestTransfer(s Session) ([]byte, error) {
	addr := s.UL.IPv4.As4()
	teid := make([]byte, 4)
	binary.BigEndian.PutUint32(teid, s.UL.TEID)
	flows := &ngapType.QosFlowSetupRequestList{}
	for _, q := range s.QFIs {
		flows.List = append(flows.List, ngapType.QosFlowSetupRequestItem{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(q)},
			QosFlowLevelQosParameters: qos(9)})
	}
	t := ngapType.PDUSessionResourceSetupRequestTransfer{}
	add := func(id int64, crit ngapType.Criticality, v ngapType.PDUSessionResourceSetupRequestTransferIEsValue) {
		t.ProtocolIEs.List = append(t.ProtocolIEs.List, ngapType.PDUSessionResourceSetupRequestTransferIEs{Id: ie(id), Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDPDUSessionAggregateMaximumBitRate, reject, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestTransferIEsPresentPDUSessionAggregateMaximumBitRate,
		PDUSessionAggregateMaximumBitRate: &ngapType.PDUSessionAggregateMaximumBitRate{
			PDUSessionAggregateMaximumBitRateDL: ngapType.BitRate{Value: 1_000_000_000}, PDUSessionAggregateMaximumBitRateUL: ngapType.BitRate{Value: 100_000_000}}})
	add(ngapType.ProtocolIEIDULNGUUPTNLInformation, reject, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestTransferIEsPresentULNGUUPTNLInformation,
		ULNGUUPTNLInformation: &ngapType.UPTransportLayerInformation{Present: ngapType.UPTransportLayerInformationPresentGTPTunnel,
			GTPTunnel: &ngapType.GTPTunnel{TransportLayerAddress: ngapType.TransportLayerAddress{Value: aper.BitString{Bytes: addr[:], BitLength: 32}},
				GTPTEID: ngapType.GTPTEID{Value: teid}}}})
	add(ngapType.ProtocolIEIDPDUSessionType, reject, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestTransferIEsPresentPDUSessionType, PDUSessionType: &ngapType.PDUSessionType{Value: ngapType.PDUSessionTypePresentIpv4}})
	add(ngapType.ProtocolIEIDQosFlowSetupRequestList, reject, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestTransferIEsPresentQosFlowSetupRequestList, QosFlowSetupRequestList: flows})
	return aper.MarshalWithParams(t, "valueExt")
}

func qos(fiveQI int64) ngapType.QosFlowLevelQosParameters {
	return ngapType.QosFlowLevelQosParameters{
		QosCharacteristics: ngapType.QosCharacteristics{Present: ngapType.QosCharacteristicsPresentNonDynamic5QI,
			NonDynamic5QI: &ngapType.NonDynamic5QIDescriptor{FiveQI: ngapType.FiveQI{Value: fiveQI}}},
		AllocationAndRetentionPriority: ngapType.AllocationAndRetentionPriority{PriorityLevelARP: ngapType.PriorityLevelARP{Value: 8},
			PreEmptionCapability:    ngapType.PreEmptionCapability{Value: ngapType.PreEmptionCapabilityPresentShallNotTriggerPreEmption},
			PreEmptionVulnerability: ngapType.PreEmptionVulnerability{Value: ngapType.PreEmptionVulnerabilityPresentNotPreEmptable}}}
}

// SetupRequest is PDU Session Resource Setup Request (TS 38.413 9.2.1.1)
// for slice 1/010203; a session whose transfer is raw takes it as given.
func SetupRequest(amfUEID, ranUEID int64, sessions []Session, raw map[uint8][]byte) ([]byte, error) {
	pdu := initiating(ngapType.ProcedureCodePDUSessionResourceSetup, ngapType.InitiatingMessagePresentPDUSessionResourceSetupRequest)
	r := &ngapType.PDUSessionResourceSetupRequest{}
	pdu.InitiatingMessage.Value.PDUSessionResourceSetupRequest = r
	list := &ngapType.PDUSessionResourceSetupListSUReq{}
	for _, s := range sessions {
		t, ok := raw[s.ID]
		if !ok {
			var err error
			if t, err = SetupRequestTransfer(s); err != nil {
				return nil, err
			}
		}
		item := ngapType.PDUSessionResourceSetupItemSUReq{PDUSessionID: ngapType.PDUSessionID{Value: int64(s.ID)},
			SNSSAI:                                 ngapType.SNSSAI{SST: ngapType.SST{Value: []byte{1}}, SD: &ngapType.SD{Value: []byte{1, 2, 3}}},
			PDUSessionResourceSetupRequestTransfer: t}
		if s.NASPDU != nil {
			item.PDUSessionNASPDU = &ngapType.NASPDU{Value: s.NASPDU}
		}
		list.List = append(list.List, item)
	}
	r.ProtocolIEs.List = []ngapType.PDUSessionResourceSetupRequestIEs{
		{Id: ie(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: reject, Value: ngapType.PDUSessionResourceSetupRequestIEsValue{
			Present: ngapType.PDUSessionResourceSetupRequestIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
		{Id: ie(ngapType.ProtocolIEIDRANUENGAPID), Criticality: reject, Value: ngapType.PDUSessionResourceSetupRequestIEsValue{
			Present: ngapType.PDUSessionResourceSetupRequestIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}},
		{Id: ie(ngapType.ProtocolIEIDPDUSessionResourceSetupListSUReq), Criticality: reject, Value: ngapType.PDUSessionResourceSetupRequestIEsValue{
			Present: ngapType.PDUSessionResourceSetupRequestIEsPresentPDUSessionResourceSetupListSUReq, PDUSessionResourceSetupListSUReq: list}},
	}
	return ngapx.Encode(pdu)
}

// ModifyRequest is PDU Session Resource Modify Request (TS 38.413 9.2.1.3)
// adding QoS flows (5QI 9) to one session, with the 5GSM command.
func ModifyRequest(amfUEID, ranUEID int64, sessionID uint8, nasPDU []byte, addQFIs []uint8) ([]byte, error) {
	t := ngapType.PDUSessionResourceModifyRequestTransfer{}
	flows := &ngapType.QosFlowAddOrModifyRequestList{}
	for _, q := range addQFIs {
		p := qos(9)
		flows.List = append(flows.List, ngapType.QosFlowAddOrModifyRequestItem{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(q)},
			QosFlowLevelQosParameters: &p})
	}
	t.ProtocolIEs.List = append(t.ProtocolIEs.List, ngapType.PDUSessionResourceModifyRequestTransferIEs{
		Id: ie(ngapType.ProtocolIEIDQosFlowAddOrModifyRequestList), Criticality: reject,
		Value: ngapType.PDUSessionResourceModifyRequestTransferIEsValue{
			Present: ngapType.PDUSessionResourceModifyRequestTransferIEsPresentQosFlowAddOrModifyRequestList, QosFlowAddOrModifyRequestList: flows}})
	tb, err := aper.MarshalWithParams(t, "valueExt")
	if err != nil {
		return nil, err
	}
	pdu := initiating(ngapType.ProcedureCodePDUSessionResourceModify, ngapType.InitiatingMessagePresentPDUSessionResourceModifyRequest)
	r := &ngapType.PDUSessionResourceModifyRequest{}
	pdu.InitiatingMessage.Value.PDUSessionResourceModifyRequest = r
	item := ngapType.PDUSessionResourceModifyItemModReq{PDUSessionID: ngapType.PDUSessionID{Value: int64(sessionID)},
		PDUSessionResourceModifyRequestTransfer: tb}
	if nasPDU != nil {
		item.NASPDU = &ngapType.NASPDU{Value: nasPDU}
	}
	r.ProtocolIEs.List = []ngapType.PDUSessionResourceModifyRequestIEs{
		{Id: ie(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: reject, Value: ngapType.PDUSessionResourceModifyRequestIEsValue{
			Present: ngapType.PDUSessionResourceModifyRequestIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
		{Id: ie(ngapType.ProtocolIEIDRANUENGAPID), Criticality: reject, Value: ngapType.PDUSessionResourceModifyRequestIEsValue{
			Present: ngapType.PDUSessionResourceModifyRequestIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}},
		{Id: ie(ngapType.ProtocolIEIDPDUSessionResourceModifyListModReq), Criticality: reject, Value: ngapType.PDUSessionResourceModifyRequestIEsValue{
			Present:                            ngapType.PDUSessionResourceModifyRequestIEsPresentPDUSessionResourceModifyListModReq,
			PDUSessionResourceModifyListModReq: &ngapType.PDUSessionResourceModifyListModReq{List: []ngapType.PDUSessionResourceModifyItemModReq{item}}}},
	}
	return ngapx.Encode(pdu)
}

// ReleaseCommand is PDU Session Resource Release Command (TS 38.413
// 9.2.1.5) with the 5GSM Release Command and cause nas normal-release.
func ReleaseCommand(amfUEID, ranUEID int64, nasPDU []byte, ids ...uint8) ([]byte, error) {
	cause := ngapx.CauseNas(ngapType.CauseNasPresentNormalRelease)
	tb, err := aper.MarshalWithParams(ngapType.PDUSessionResourceReleaseCommandTransfer{Cause: cause}, "valueExt")
	if err != nil {
		return nil, err
	}
	list := &ngapType.PDUSessionResourceToReleaseListRelCmd{}
	for _, sid := range ids {
		list.List = append(list.List, ngapType.PDUSessionResourceToReleaseItemRelCmd{PDUSessionID: ngapType.PDUSessionID{Value: int64(sid)},
			PDUSessionResourceReleaseCommandTransfer: tb})
	}
	pdu := initiating(ngapType.ProcedureCodePDUSessionResourceRelease, ngapType.InitiatingMessagePresentPDUSessionResourceReleaseCommand)
	r := &ngapType.PDUSessionResourceReleaseCommand{}
	pdu.InitiatingMessage.Value.PDUSessionResourceReleaseCommand = r
	r.ProtocolIEs.List = []ngapType.PDUSessionResourceReleaseCommandIEs{
		{Id: ie(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: reject, Value: ngapType.PDUSessionResourceReleaseCommandIEsValue{
			Present: ngapType.PDUSessionResourceReleaseCommandIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
		{Id: ie(ngapType.ProtocolIEIDRANUENGAPID), Criticality: reject, Value: ngapType.PDUSessionResourceReleaseCommandIEsValue{
			Present: ngapType.PDUSessionResourceReleaseCommandIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}},
	}
	if nasPDU != nil {
		r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.PDUSessionResourceReleaseCommandIEs{Id: ie(ngapType.ProtocolIEIDNASPDU), Criticality: ignore,
			Value: ngapType.PDUSessionResourceReleaseCommandIEsValue{Present: ngapType.PDUSessionResourceReleaseCommandIEsPresentNASPDU,
				NASPDU: &ngapType.NASPDU{Value: nasPDU}}})
	}
	r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.PDUSessionResourceReleaseCommandIEs{Id: ie(ngapType.ProtocolIEIDPDUSessionResourceToReleaseListRelCmd),
		Criticality: reject, Value: ngapType.PDUSessionResourceReleaseCommandIEsValue{
			Present: ngapType.PDUSessionResourceReleaseCommandIEsPresentPDUSessionResourceToReleaseListRelCmd, PDUSessionResourceToReleaseListRelCmd: list}})
	return ngapx.Encode(pdu)
}
