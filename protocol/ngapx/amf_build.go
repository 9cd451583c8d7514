package ngapx

import (
	"fmt"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
)

// Builders of the NGAP messages the AMF sends. Criticalities follow the
// message tables of TS 38.413 9.2.

var (
	reject = ngapType.Criticality{Value: ngapType.CriticalityPresentReject}
	ignore = ngapType.Criticality{Value: ngapType.CriticalityPresentIgnore}
)

func id(v int64) ngapType.ProtocolIEID { return ngapType.ProtocolIEID{Value: v} }

func initiating(code int64, crit ngapType.Criticality, present int) *ngapType.NGAPPDU {
	pdu := &ngapType.NGAPPDU{Present: ngapType.NGAPPDUPresentInitiatingMessage,
		InitiatingMessage: &ngapType.InitiatingMessage{ProcedureCode: ngapType.ProcedureCode{Value: code}, Criticality: crit}}
	pdu.InitiatingMessage.Value.Present = present
	return pdu
}

func successful(code int64, present int) *ngapType.NGAPPDU {
	pdu := &ngapType.NGAPPDU{Present: ngapType.NGAPPDUPresentSuccessfulOutcome,
		SuccessfulOutcome: &ngapType.SuccessfulOutcome{ProcedureCode: ngapType.ProcedureCode{Value: code}, Criticality: reject}}
	pdu.SuccessfulOutcome.Value.Present = present
	return pdu
}

func unsuccessful(code int64, present int) *ngapType.NGAPPDU {
	pdu := &ngapType.NGAPPDU{Present: ngapType.NGAPPDUPresentUnsuccessfulOutcome,
		UnsuccessfulOutcome: &ngapType.UnsuccessfulOutcome{ProcedureCode: ngapType.ProcedureCode{Value: code}, Criticality: reject}}
	pdu.UnsuccessfulOutcome.Value.Present = present
	return pdu
}

// Served is what the AMF announces in NG Setup Response (TS 38.413 9.2.6.2).
type Served struct {
	AMFName  string
	GUAMI    domain.GUAMI
	Capacity int64 // relative AMF capacity 0..255
	SNSSAIs  []models.Snssai
}

// BuildNGSetupResponse builds NG Setup Response (TS 38.413 8.7.1.2).
func BuildNGSetupResponse(s Served) ([]byte, error) {
	guami, err := s.GUAMI.ToNGAP()
	if err != nil {
		return nil, err
	}
	slices := ngapType.SliceSupportList{}
	for _, sn := range s.SNSSAIs {
		n, err := snssaiIE(sn)
		if err != nil {
			return nil, err
		}
		slices.List = append(slices.List, ngapType.SliceSupportItem{SNSSAI: n})
	}
	pdu := successful(ngapType.ProcedureCodeNGSetup, ngapType.SuccessfulOutcomePresentNGSetupResponse)
	r := &ngapType.NGSetupResponse{}
	pdu.SuccessfulOutcome.Value.NGSetupResponse = r
	add := func(ie ngapType.NGSetupResponseIEs) { r.ProtocolIEs.List = append(r.ProtocolIEs.List, ie) }
	add(ngapType.NGSetupResponseIEs{Id: id(ngapType.ProtocolIEIDAMFName), Criticality: reject,
		Value: ngapType.NGSetupResponseIEsValue{Present: ngapType.NGSetupResponseIEsPresentAMFName,
			AMFName: &ngapType.AMFName{Value: s.AMFName}}})
	add(ngapType.NGSetupResponseIEs{Id: id(ngapType.ProtocolIEIDServedGUAMIList), Criticality: reject,
		Value: ngapType.NGSetupResponseIEsValue{Present: ngapType.NGSetupResponseIEsPresentServedGUAMIList,
			ServedGUAMIList: &ngapType.ServedGUAMIList{List: []ngapType.ServedGUAMIItem{{GUAMI: guami}}}}})
	add(ngapType.NGSetupResponseIEs{Id: id(ngapType.ProtocolIEIDRelativeAMFCapacity), Criticality: ignore,
		Value: ngapType.NGSetupResponseIEsValue{Present: ngapType.NGSetupResponseIEsPresentRelativeAMFCapacity,
			RelativeAMFCapacity: &ngapType.RelativeAMFCapacity{Value: s.Capacity}}})
	add(ngapType.NGSetupResponseIEs{Id: id(ngapType.ProtocolIEIDPLMNSupportList), Criticality: reject,
		Value: ngapType.NGSetupResponseIEsValue{Present: ngapType.NGSetupResponseIEsPresentPLMNSupportList,
			PLMNSupportList: &ngapType.PLMNSupportList{List: []ngapType.PLMNSupportItem{
				{PLMNIdentity: guami.PLMNIdentity, SliceSupportList: slices}}}}})
	return Encode(pdu)
}

// BuildNGSetupFailure builds NG Setup Failure (TS 38.413 8.7.1.3).
func BuildNGSetupFailure(cause ngapType.Cause) ([]byte, error) {
	pdu := unsuccessful(ngapType.ProcedureCodeNGSetup, ngapType.UnsuccessfulOutcomePresentNGSetupFailure)
	f := &ngapType.NGSetupFailure{}
	f.ProtocolIEs.List = append(f.ProtocolIEs.List, ngapType.NGSetupFailureIEs{Id: id(ngapType.ProtocolIEIDCause),
		Criticality: ignore, Value: ngapType.NGSetupFailureIEsValue{Present: ngapType.NGSetupFailureIEsPresentCause, Cause: &cause}})
	pdu.UnsuccessfulOutcome.Value.NGSetupFailure = f
	return Encode(pdu)
}

// BuildRANConfigurationUpdateAcknowledge builds RAN Configuration Update
// Acknowledge (TS 38.413 8.7.2.2).
func BuildRANConfigurationUpdateAcknowledge() ([]byte, error) {
	pdu := successful(ngapType.ProcedureCodeRANConfigurationUpdate, ngapType.SuccessfulOutcomePresentRANConfigurationUpdateAcknowledge)
	pdu.SuccessfulOutcome.Value.RANConfigurationUpdateAcknowledge = &ngapType.RANConfigurationUpdateAcknowledge{}
	return Encode(pdu)
}

// BuildRANConfigurationUpdateFailure builds RAN Configuration Update
// Failure (TS 38.413 8.7.2.3).
func BuildRANConfigurationUpdateFailure(cause ngapType.Cause) ([]byte, error) {
	pdu := unsuccessful(ngapType.ProcedureCodeRANConfigurationUpdate, ngapType.UnsuccessfulOutcomePresentRANConfigurationUpdateFailure)
	f := &ngapType.RANConfigurationUpdateFailure{}
	f.ProtocolIEs.List = append(f.ProtocolIEs.List, ngapType.RANConfigurationUpdateFailureIEs{Id: id(ngapType.ProtocolIEIDCause),
		Criticality: ignore, Value: ngapType.RANConfigurationUpdateFailureIEsValue{Present: ngapType.RANConfigurationUpdateFailureIEsPresentCause, Cause: &cause}})
	pdu.UnsuccessfulOutcome.Value.RANConfigurationUpdateFailure = f
	return Encode(pdu)
}

// BuildNGResetAcknowledge builds NG Reset Acknowledge (TS 38.413 8.7.4.2.2);
// for a partial reset, the UE-associated connections reset are listed back.
func BuildNGResetAcknowledge(partial []ngapType.UEAssociatedLogicalNGConnectionItem) ([]byte, error) {
	pdu := successful(ngapType.ProcedureCodeNGReset, ngapType.SuccessfulOutcomePresentNGResetAcknowledge)
	a := &ngapType.NGResetAcknowledge{}
	if len(partial) > 0 {
		a.ProtocolIEs.List = append(a.ProtocolIEs.List, ngapType.NGResetAcknowledgeIEs{
			Id: id(ngapType.ProtocolIEIDUEAssociatedLogicalNGConnectionList), Criticality: ignore,
			Value: ngapType.NGResetAcknowledgeIEsValue{Present: ngapType.NGResetAcknowledgeIEsPresentUEAssociatedLogicalNGConnectionList,
				UEAssociatedLogicalNGConnectionList: &ngapType.UEAssociatedLogicalNGConnectionList{List: partial}}})
	}
	pdu.SuccessfulOutcome.Value.NGResetAcknowledge = a
	return Encode(pdu)
}

// BuildErrorIndication builds Error Indication (TS 38.413 8.7.5); amfUEID
// and ranUEID are included when >= 0.
func BuildErrorIndication(amfUEID, ranUEID int64, cause ngapType.Cause) ([]byte, error) {
	pdu := initiating(ngapType.ProcedureCodeErrorIndication, ignore, ngapType.InitiatingMessagePresentErrorIndication)
	e := &ngapType.ErrorIndication{}
	add := func(ie ngapType.ErrorIndicationIEs) { e.ProtocolIEs.List = append(e.ProtocolIEs.List, ie) }
	if amfUEID >= 0 {
		add(ngapType.ErrorIndicationIEs{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: ignore,
			Value: ngapType.ErrorIndicationIEsValue{Present: ngapType.ErrorIndicationIEsPresentAMFUENGAPID,
				AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}})
	}
	if ranUEID >= 0 {
		add(ngapType.ErrorIndicationIEs{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: ignore,
			Value: ngapType.ErrorIndicationIEsValue{Present: ngapType.ErrorIndicationIEsPresentRANUENGAPID,
				RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}})
	}
	add(ngapType.ErrorIndicationIEs{Id: id(ngapType.ProtocolIEIDCause), Criticality: ignore,
		Value: ngapType.ErrorIndicationIEsValue{Present: ngapType.ErrorIndicationIEsPresentCause, Cause: &cause}})
	pdu.InitiatingMessage.Value.ErrorIndication = e
	return Encode(pdu)
}

// BuildDownlinkNASTransport builds Downlink NAS Transport (TS 38.413 8.6.2).
func BuildDownlinkNASTransport(amfUEID, ranUEID int64, nasPDU []byte) ([]byte, error) {
	pdu := initiating(ngapType.ProcedureCodeDownlinkNASTransport, ignore, ngapType.InitiatingMessagePresentDownlinkNASTransport)
	d := &ngapType.DownlinkNASTransport{}
	add := func(ie ngapType.DownlinkNASTransportIEs) { d.ProtocolIEs.List = append(d.ProtocolIEs.List, ie) }
	add(ngapType.DownlinkNASTransportIEs{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: reject,
		Value: ngapType.DownlinkNASTransportIEsValue{Present: ngapType.DownlinkNASTransportIEsPresentAMFUENGAPID,
			AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}})
	add(ngapType.DownlinkNASTransportIEs{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: reject,
		Value: ngapType.DownlinkNASTransportIEsValue{Present: ngapType.DownlinkNASTransportIEsPresentRANUENGAPID,
			RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}})
	add(ngapType.DownlinkNASTransportIEs{Id: id(ngapType.ProtocolIEIDNASPDU), Criticality: reject,
		Value: ngapType.DownlinkNASTransportIEsValue{Present: ngapType.DownlinkNASTransportIEsPresentNASPDU,
			NASPDU: &ngapType.NASPDU{Value: nasPDU}}})
	pdu.InitiatingMessage.Value.DownlinkNASTransport = d
	return Encode(pdu)
}

// InitialContext is what Initial Context Setup Request carries (TS 38.413 9.2.2.1).
type InitialContext struct {
	AMFUEID, RANUEID int64
	GUAMI            domain.GUAMI
	Allowed          []models.Snssai
	// NREncryption/NRIntegrity (and EUTRA*) are the 16-bit bitmaps of
	// TS 38.413 9.3.1.86, e.g. from nasx.SecurityCapability.NRBits.
	NREncryption, NRIntegrity       [2]byte
	EUTRAEncryption, EUTRAIntegrity [2]byte
	KgNB                            []byte // 32 octets (TS 33.501 A.9)
	AMBRUL, AMBRDL                  int64  // bit/s; 0 = absent
	NASPDU                          []byte // nil = absent
	// RadioCapability is the UE Radio Capability the AMF kept from an
	// earlier UE Radio Capability Info Indication (TS 23.501 5.4.4.1): the
	// gNB then need not ask the UE again (TS 38.413 8.3.1.2). nil = absent.
	RadioCapability []byte
	// Sessions are the PDU sessions whose user plane the request sets up
	// (PDU Session Resource Setup Request List, 9.2.2.1): a Service Request
	// activating them (TS 23.502 4.2.3.2 step 12).
	Sessions []SessionResource
}

// BuildInitialContextSetupRequest builds Initial Context Setup Request (TS 38.413 8.3.1).
func BuildInitialContextSetupRequest(c InitialContext) ([]byte, error) {
	if len(c.KgNB) != 32 {
		return nil, fmt.Errorf("initial context setup: KgNB of %d octets", len(c.KgNB))
	}
	guami, err := c.GUAMI.ToNGAP()
	if err != nil {
		return nil, err
	}
	allowed := ngapType.AllowedNSSAI{}
	for _, s := range c.Allowed {
		n, err := snssaiIE(s)
		if err != nil {
			return nil, err
		}
		allowed.List = append(allowed.List, ngapType.AllowedNSSAIItem{SNSSAI: n})
	}
	pdu := initiating(ngapType.ProcedureCodeInitialContextSetup, reject, ngapType.InitiatingMessagePresentInitialContextSetupRequest)
	r := &ngapType.InitialContextSetupRequest{}
	add := func(ieID int64, crit ngapType.Criticality, v ngapType.InitialContextSetupRequestIEsValue) {
		r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.InitialContextSetupRequestIEs{Id: id(ieID), Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present: ngapType.InitialContextSetupRequestIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: c.AMFUEID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present: ngapType.InitialContextSetupRequestIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: c.RANUEID}})
	if c.AMBRUL > 0 && c.AMBRDL > 0 {
		add(ngapType.ProtocolIEIDUEAggregateMaximumBitRate, reject, ngapType.InitialContextSetupRequestIEsValue{
			Present: ngapType.InitialContextSetupRequestIEsPresentUEAggregateMaximumBitRate,
			UEAggregateMaximumBitRate: &ngapType.UEAggregateMaximumBitRate{
				UEAggregateMaximumBitRateDL: ngapType.BitRate{Value: c.AMBRDL},
				UEAggregateMaximumBitRateUL: ngapType.BitRate{Value: c.AMBRUL}}})
	}
	add(ngapType.ProtocolIEIDGUAMI, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present: ngapType.InitialContextSetupRequestIEsPresentGUAMI, GUAMI: &guami})
	if len(c.Sessions) > 0 {
		list, err := setupListCxtReq(c.Sessions)
		if err != nil {
			return nil, err
		}
		add(ngapType.ProtocolIEIDPDUSessionResourceSetupListCxtReq, reject, ngapType.InitialContextSetupRequestIEsValue{
			Present: ngapType.InitialContextSetupRequestIEsPresentPDUSessionResourceSetupListCxtReq, PDUSessionResourceSetupListCxtReq: list})
	}
	add(ngapType.ProtocolIEIDAllowedNSSAI, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present: ngapType.InitialContextSetupRequestIEsPresentAllowedNSSAI, AllowedNSSAI: &allowed})
	add(ngapType.ProtocolIEIDUESecurityCapabilities, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present: ngapType.InitialContextSetupRequestIEsPresentUESecurityCapabilities,
		UESecurityCapabilities: &ngapType.UESecurityCapabilities{
			NRencryptionAlgorithms:             ngapType.NRencryptionAlgorithms{Value: bits16(c.NREncryption)},
			NRintegrityProtectionAlgorithms:    ngapType.NRintegrityProtectionAlgorithms{Value: bits16(c.NRIntegrity)},
			EUTRAencryptionAlgorithms:          ngapType.EUTRAencryptionAlgorithms{Value: bits16(c.EUTRAEncryption)},
			EUTRAintegrityProtectionAlgorithms: ngapType.EUTRAintegrityProtectionAlgorithms{Value: bits16(c.EUTRAIntegrity)}}})
	add(ngapType.ProtocolIEIDSecurityKey, reject, ngapType.InitialContextSetupRequestIEsValue{
		Present:     ngapType.InitialContextSetupRequestIEsPresentSecurityKey,
		SecurityKey: &ngapType.SecurityKey{Value: aper.BitString{Bytes: append([]byte(nil), c.KgNB...), BitLength: 256}}})
	if c.RadioCapability != nil {
		add(ngapType.ProtocolIEIDUERadioCapability, ignore, ngapType.InitialContextSetupRequestIEsValue{
			Present: ngapType.InitialContextSetupRequestIEsPresentUERadioCapability, UERadioCapability: &ngapType.UERadioCapability{Value: c.RadioCapability}})
	}
	if c.NASPDU != nil {
		add(ngapType.ProtocolIEIDNASPDU, ignore, ngapType.InitialContextSetupRequestIEsValue{
			Present: ngapType.InitialContextSetupRequestIEsPresentNASPDU, NASPDU: &ngapType.NASPDU{Value: c.NASPDU}})
	}
	pdu.InitiatingMessage.Value.InitialContextSetupRequest = r
	return Encode(pdu)
}

func bits16(b [2]byte) aper.BitString {
	return aper.BitString{Bytes: []byte{b[0], b[1]}, BitLength: 16}
}

// BuildUEContextReleaseCommand builds UE Context Release Command (TS 38.413
// 8.3.3); ranUEID < 0 sends the AMF UE NGAP ID alone.
func BuildUEContextReleaseCommand(amfUEID, ranUEID int64, cause ngapType.Cause) ([]byte, error) {
	pdu := initiating(ngapType.ProcedureCodeUEContextRelease, reject, ngapType.InitiatingMessagePresentUEContextReleaseCommand)
	ids := ngapType.UENGAPIDs{Present: ngapType.UENGAPIDsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}
	if ranUEID >= 0 {
		ids = ngapType.UENGAPIDs{Present: ngapType.UENGAPIDsPresentUENGAPIDPair, UENGAPIDPair: &ngapType.UENGAPIDPair{
			AMFUENGAPID: ngapType.AMFUENGAPID{Value: amfUEID}, RANUENGAPID: ngapType.RANUENGAPID{Value: ranUEID}}}
	}
	c := &ngapType.UEContextReleaseCommand{}
	c.ProtocolIEs.List = append(c.ProtocolIEs.List,
		ngapType.UEContextReleaseCommandIEs{Id: id(ngapType.ProtocolIEIDUENGAPIDs), Criticality: reject,
			Value: ngapType.UEContextReleaseCommandIEsValue{Present: ngapType.UEContextReleaseCommandIEsPresentUENGAPIDs, UENGAPIDs: &ids}},
		ngapType.UEContextReleaseCommandIEs{Id: id(ngapType.ProtocolIEIDCause), Criticality: ignore,
			Value: ngapType.UEContextReleaseCommandIEsValue{Present: ngapType.UEContextReleaseCommandIEsPresentCause, Cause: &cause}})
	pdu.InitiatingMessage.Value.UEContextReleaseCommand = c
	return Encode(pdu)
}
