package ngapxtest

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// InitialContextSetupRequest is Initial Context Setup Request (TS 38.413
// 9.2.2.1) as an AMF sends it for a Service Request (TS 23.502 4.2.3.2
// step 12): the mandatory IEs of a UE context, the NAS-PDU (Service
// Accept) and the PDU sessions to set up (slice 1/010203); a session whose
// transfer is raw takes it as given.
func InitialContextSetupRequest(amfUEID, ranUEID int64, nasPDU []byte, sessions []Session, raw map[uint8][]byte) ([]byte, error) {
	list := &ngapType.PDUSessionResourceSetupListCxtReq{}
	for _, s := range sessions {
		t, ok := raw[s.ID]
		if !ok {
			var err error
			if t, err = SetupRequestTransfer(s); err != nil {
				return nil, err
			}
		}
		item := ngapType.PDUSessionResourceSetupItemCxtReq{PDUSessionID: ngapType.PDUSessionID{Value: int64(s.ID)},
			SNSSAI:                                 ngapType.SNSSAI{SST: ngapType.SST{Value: []byte{1}}, SD: &ngapType.SD{Value: []byte{1, 2, 3}}},
			PDUSessionResourceSetupRequestTransfer: t}
		if s.NASPDU != nil {
			item.NASPDU = &ngapType.NASPDU{Value: s.NASPDU}
		}
		list.List = append(list.List, item)
	}
	pdu := initiating(ngapType.ProcedureCodeInitialContextSetup, ngapType.InitiatingMessagePresentInitialContextSetupRequest)
	r := &ngapType.InitialContextSetupRequest{}
	pdu.InitiatingMessage.Value.InitialContextSetupRequest = r
	add := func(id int64, crit ngapType.Criticality, v ngapType.InitialContextSetupRequestIEsValue) {
		r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.InitialContextSetupRequestIEs{Id: ie(id), Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present: ngapType.InitialContextSetupRequestIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present: ngapType.InitialContextSetupRequestIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}})
	add(ngapType.ProtocolIEIDGUAMI, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present: ngapType.InitialContextSetupRequestIEsPresentGUAMI, GUAMI: &ngapType.GUAMI{
			PLMNIdentity: ngapType.PLMNIdentity{Value: []byte{0x02, 0xF8, 0x39}},
			AMFRegionID:  ngapType.AMFRegionID{Value: bits([]byte{0xCA}, 8)},
			AMFSetID:     ngapType.AMFSetID{Value: bits([]byte{0xFE, 0x00}, 10)},
			AMFPointer:   ngapType.AMFPointer{Value: bits([]byte{0x00}, 6)}}})
	add(ngapType.ProtocolIEIDPDUSessionResourceSetupListCxtReq, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present: ngapType.InitialContextSetupRequestIEsPresentPDUSessionResourceSetupListCxtReq, PDUSessionResourceSetupListCxtReq: list})
	add(ngapType.ProtocolIEIDAllowedNSSAI, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present: ngapType.InitialContextSetupRequestIEsPresentAllowedNSSAI, AllowedNSSAI: &ngapType.AllowedNSSAI{List: []ngapType.AllowedNSSAIItem{
			{SNSSAI: ngapType.SNSSAI{SST: ngapType.SST{Value: []byte{1}}, SD: &ngapType.SD{Value: []byte{1, 2, 3}}}}}}})
	add(ngapType.ProtocolIEIDUESecurityCapabilities, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present: ngapType.InitialContextSetupRequestIEsPresentUESecurityCapabilities, UESecurityCapabilities: &ngapType.UESecurityCapabilities{
			NRencryptionAlgorithms:             ngapType.NRencryptionAlgorithms{Value: bits([]byte{0xC0, 0x00}, 16)},
			NRintegrityProtectionAlgorithms:    ngapType.NRintegrityProtectionAlgorithms{Value: bits([]byte{0xC0, 0x00}, 16)},
			EUTRAencryptionAlgorithms:          ngapType.EUTRAencryptionAlgorithms{Value: bits([]byte{0x00, 0x00}, 16)},
			EUTRAintegrityProtectionAlgorithms: ngapType.EUTRAintegrityProtectionAlgorithms{Value: bits([]byte{0x00, 0x00}, 16)}}})
	add(ngapType.ProtocolIEIDSecurityKey, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present: ngapType.InitialContextSetupRequestIEsPresentSecurityKey, SecurityKey: &ngapType.SecurityKey{Value: bits(make([]byte, 32), 256)}})
	if nasPDU != nil {
		add(ngapType.ProtocolIEIDNASPDU, ignore, ngapType.InitialContextSetupRequestIEsValue{
			Present: ngapType.InitialContextSetupRequestIEsPresentNASPDU, NASPDU: &ngapType.NASPDU{Value: nasPDU}})
	}
	return ngapx.Encode(pdu)
}

func bits(b []byte, n uint64) aper.BitString { return aper.BitString{Bytes: b, BitLength: n} }
