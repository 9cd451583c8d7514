package ngapx

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// Builders of the NGAP messages a gNB sends (the simulator in test/ransim
// and the AMF's tests). Criticalities follow TS 38.413 9.2.

// Cell is where a gNB's UEs are: the TAI and NR cell identity carried in
// User Location Information (TS 38.413 9.3.1.16).
type Cell struct {
	TAI    domain.TAI
	CellID uint64 // 36-bit NR Cell Identity
}

func (c Cell) userLocation() (*ngapType.UserLocationInformation, error) {
	tai, err := c.TAI.ToNGAP()
	if err != nil {
		return nil, err
	}
	nci := c.CellID << 4 // 36 bits, left-aligned in 5 octets
	return &ngapType.UserLocationInformation{Present: ngapType.UserLocationInformationPresentUserLocationInformationNR,
		UserLocationInformationNR: &ngapType.UserLocationInformationNR{TAI: tai, NRCGI: ngapType.NRCGI{PLMNIdentity: tai.PLMNIdentity,
			NRCellIdentity: ngapType.NRCellIdentity{Value: aper.BitString{
				Bytes: []byte{byte(nci >> 32), byte(nci >> 24), byte(nci >> 16), byte(nci >> 8), byte(nci)}, BitLength: 36}}}}}, nil
}

// GNB is what NG Setup Request announces (TS 38.413 9.2.6.1).
type GNB struct {
	PLMN    domain.PLMN
	ID      uint32 // gNB ID, 22..32 bits; sent as 24 bits here
	Name    string
	TACs    []domain.TAC
	SNSSAIs []models.Snssai
}

// BuildNGSetupRequest builds NG Setup Request (TS 38.413 8.7.1.2).
func BuildNGSetupRequest(g GNB) ([]byte, error) {
	plmn, err := g.PLMN.ToNGAP()
	if err != nil {
		return nil, err
	}
	tas, err := g.supportedTAs()
	if err != nil {
		return nil, err
	}
	pdu := initiating(ngapType.ProcedureCodeNGSetup, reject, ngapType.InitiatingMessagePresentNGSetupRequest)
	r := &ngapType.NGSetupRequest{}
	pdu.InitiatingMessage.Value.NGSetupRequest = r
	add := func(id int64, crit ngapType.Criticality, v ngapType.NGSetupRequestIEsValue) {
		r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.NGSetupRequestIEs{Id: ngapType.ProtocolIEID{Value: id}, Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDGlobalRANNodeID, reject, ngapType.NGSetupRequestIEsValue{Present: ngapType.NGSetupRequestIEsPresentGlobalRANNodeID,
		GlobalRANNodeID: &ngapType.GlobalRANNodeID{Present: ngapType.GlobalRANNodeIDPresentGlobalGNBID,
			GlobalGNBID: &ngapType.GlobalGNBID{PLMNIdentity: plmn, GNBID: ngapType.GNBID{Present: ngapType.GNBIDPresentGNBID,
				GNBID: &aper.BitString{Bytes: []byte{byte(g.ID >> 16), byte(g.ID >> 8), byte(g.ID)}, BitLength: 24}}}}})
	if g.Name != "" {
		add(ngapType.ProtocolIEIDRANNodeName, ignore, ngapType.NGSetupRequestIEsValue{Present: ngapType.NGSetupRequestIEsPresentRANNodeName,
			RANNodeName: &ngapType.RANNodeName{Value: g.Name}})
	}
	add(ngapType.ProtocolIEIDSupportedTAList, reject, ngapType.NGSetupRequestIEsValue{Present: ngapType.NGSetupRequestIEsPresentSupportedTAList,
		SupportedTAList: tas})
	add(ngapType.ProtocolIEIDDefaultPagingDRX, ignore, ngapType.NGSetupRequestIEsValue{Present: ngapType.NGSetupRequestIEsPresentDefaultPagingDRX,
		DefaultPagingDRX: &ngapType.PagingDRX{Value: ngapType.PagingDRXPresentV128}})
	return Encode(pdu)
}

// supportedTAs is the Supported TA List of g: each TAC broadcasts g's PLMN
// with all of g's slices (TS 38.413 9.3.1.97).
func (g GNB) supportedTAs() (*ngapType.SupportedTAList, error) {
	plmn, err := g.PLMN.ToNGAP()
	if err != nil {
		return nil, err
	}
	slices := ngapType.SliceSupportList{}
	for _, s := range g.SNSSAIs {
		n, err := snssaiIE(s)
		if err != nil {
			return nil, err
		}
		slices.List = append(slices.List, ngapType.SliceSupportItem{SNSSAI: n})
	}
	tas := &ngapType.SupportedTAList{}
	for _, t := range g.TACs {
		tac, err := t.ToNGAP()
		if err != nil {
			return nil, err
		}
		tas.List = append(tas.List, ngapType.SupportedTAItem{TAC: tac, BroadcastPLMNList: ngapType.BroadcastPLMNList{
			List: []ngapType.BroadcastPLMNItem{{PLMNIdentity: plmn, TAISliceSupportList: slices}}}})
	}
	return tas, nil
}

// BuildRANConfigurationUpdate builds RAN Configuration Update (TS 38.413
// 8.7.2.2) announcing g's name and Supported TA List, as a gNB does after a
// change of its cells.
func BuildRANConfigurationUpdate(g GNB) ([]byte, error) {
	tas, err := g.supportedTAs()
	if err != nil {
		return nil, err
	}
	pdu := initiating(ngapType.ProcedureCodeRANConfigurationUpdate, reject, ngapType.InitiatingMessagePresentRANConfigurationUpdate)
	r := &ngapType.RANConfigurationUpdate{}
	pdu.InitiatingMessage.Value.RANConfigurationUpdate = r
	if g.Name != "" {
		r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.RANConfigurationUpdateIEs{Id: id(ngapType.ProtocolIEIDRANNodeName),
			Criticality: ignore, Value: ngapType.RANConfigurationUpdateIEsValue{Present: ngapType.RANConfigurationUpdateIEsPresentRANNodeName,
				RANNodeName: &ngapType.RANNodeName{Value: g.Name}}})
	}
	r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.RANConfigurationUpdateIEs{Id: id(ngapType.ProtocolIEIDSupportedTAList),
		Criticality: reject, Value: ngapType.RANConfigurationUpdateIEsValue{Present: ngapType.RANConfigurationUpdateIEsPresentSupportedTAList,
			SupportedTAList: tas}})
	return Encode(pdu)
}

// BuildInitialUEMessage builds Initial UE Message (TS 38.413 8.6.1), with
// the 5G-S-TMSI when the UE is known to the AMF (stmsi not nil).
func BuildInitialUEMessage(ranUEID int64, nasPDU []byte, cell Cell, stmsi *nasx.STMSI) ([]byte, error) {
	return BuildInitialUEMessageWithCause(ranUEID, nasPDU, cell, stmsi, ngapType.RRCEstablishmentCausePresentMoSignalling)
}

// BuildInitialUEMessageWithCause builds Initial UE Message with the RRC
// establishment cause the UE gave (TS 38.413 9.3.1.111), e.g. mt-Access for
// the Service Request that answers paging (TS 38.331 5.3.3).
func BuildInitialUEMessageWithCause(ranUEID int64, nasPDU []byte, cell Cell, stmsi *nasx.STMSI, rrcCause aper.Enumerated) ([]byte, error) {
	uli, err := cell.userLocation()
	if err != nil {
		return nil, err
	}
	pdu := initiating(ngapType.ProcedureCodeInitialUEMessage, ignore, ngapType.InitiatingMessagePresentInitialUEMessage)
	m := &ngapType.InitialUEMessage{}
	pdu.InitiatingMessage.Value.InitialUEMessage = m
	add := func(id int64, crit ngapType.Criticality, v ngapType.InitialUEMessageIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.InitialUEMessageIEs{Id: ngapType.ProtocolIEID{Value: id}, Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDRANUENGAPID, reject, ngapType.InitialUEMessageIEsValue{Present: ngapType.InitialUEMessageIEsPresentRANUENGAPID,
		RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}})
	add(ngapType.ProtocolIEIDNASPDU, reject, ngapType.InitialUEMessageIEsValue{Present: ngapType.InitialUEMessageIEsPresentNASPDU,
		NASPDU: &ngapType.NASPDU{Value: nasPDU}})
	add(ngapType.ProtocolIEIDUserLocationInformation, reject, ngapType.InitialUEMessageIEsValue{
		Present: ngapType.InitialUEMessageIEsPresentUserLocationInformation, UserLocationInformation: uli})
	add(ngapType.ProtocolIEIDRRCEstablishmentCause, ignore, ngapType.InitialUEMessageIEsValue{Present: ngapType.InitialUEMessageIEsPresentRRCEstablishmentCause,
		RRCEstablishmentCause: &ngapType.RRCEstablishmentCause{Value: rrcCause}})
	if stmsi != nil {
		s := FiveGSTMSI(*stmsi)
		add(ngapType.ProtocolIEIDFiveGSTMSI, reject, ngapType.InitialUEMessageIEsValue{Present: ngapType.InitialUEMessageIEsPresentFiveGSTMSI,
			FiveGSTMSI: &s})
	}
	add(ngapType.ProtocolIEIDUEContextRequest, ignore, ngapType.InitialUEMessageIEsValue{Present: ngapType.InitialUEMessageIEsPresentUEContextRequest,
		UEContextRequest: &ngapType.UEContextRequest{Value: ngapType.UEContextRequestPresentRequested}})
	return Encode(pdu)
}

// BuildUplinkNASTransport builds Uplink NAS Transport (TS 38.413 8.6.3).
func BuildUplinkNASTransport(amfUEID, ranUEID int64, nasPDU []byte, cell Cell) ([]byte, error) {
	uli, err := cell.userLocation()
	if err != nil {
		return nil, err
	}
	pdu := initiating(ngapType.ProcedureCodeUplinkNASTransport, ignore, ngapType.InitiatingMessagePresentUplinkNASTransport)
	m := &ngapType.UplinkNASTransport{}
	pdu.InitiatingMessage.Value.UplinkNASTransport = m
	add := func(id int64, crit ngapType.Criticality, v ngapType.UplinkNASTransportIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.UplinkNASTransportIEs{Id: ngapType.ProtocolIEID{Value: id}, Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, reject, ngapType.UplinkNASTransportIEsValue{Present: ngapType.UplinkNASTransportIEsPresentAMFUENGAPID,
		AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, reject, ngapType.UplinkNASTransportIEsValue{Present: ngapType.UplinkNASTransportIEsPresentRANUENGAPID,
		RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}})
	add(ngapType.ProtocolIEIDNASPDU, reject, ngapType.UplinkNASTransportIEsValue{Present: ngapType.UplinkNASTransportIEsPresentNASPDU,
		NASPDU: &ngapType.NASPDU{Value: nasPDU}})
	add(ngapType.ProtocolIEIDUserLocationInformation, ignore, ngapType.UplinkNASTransportIEsValue{
		Present: ngapType.UplinkNASTransportIEsPresentUserLocationInformation, UserLocationInformation: uli})
	return Encode(pdu)
}

// BuildInitialContextSetupResponse builds Initial Context Setup Response
// (TS 38.413 8.3.1.2) with no PDU sessions.
func BuildInitialContextSetupResponse(amfUEID, ranUEID int64) ([]byte, error) {
	pdu := successful(ngapType.ProcedureCodeInitialContextSetup, ngapType.SuccessfulOutcomePresentInitialContextSetupResponse)
	r := &ngapType.InitialContextSetupResponse{}
	pdu.SuccessfulOutcome.Value.InitialContextSetupResponse = r
	r.ProtocolIEs.List = []ngapType.InitialContextSetupResponseIEs{
		{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: ignore, Value: ngapType.InitialContextSetupResponseIEsValue{
			Present: ngapType.InitialContextSetupResponseIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
		{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: ignore, Value: ngapType.InitialContextSetupResponseIEsValue{
			Present: ngapType.InitialContextSetupResponseIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}},
	}
	return Encode(pdu)
}

// BuildUEContextReleaseRequest builds UE Context Release Request
// (TS 38.413 8.3.2), e.g. on user inactivity.
func BuildUEContextReleaseRequest(amfUEID, ranUEID int64, cause ngapType.Cause) ([]byte, error) {
	pdu := initiating(ngapType.ProcedureCodeUEContextReleaseRequest, ignore, ngapType.InitiatingMessagePresentUEContextReleaseRequest)
	r := &ngapType.UEContextReleaseRequest{}
	pdu.InitiatingMessage.Value.UEContextReleaseRequest = r
	r.ProtocolIEs.List = []ngapType.UEContextReleaseRequestIEs{
		{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: reject, Value: ngapType.UEContextReleaseRequestIEsValue{
			Present: ngapType.UEContextReleaseRequestIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
		{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: reject, Value: ngapType.UEContextReleaseRequestIEsValue{
			Present: ngapType.UEContextReleaseRequestIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}},
		{Id: id(ngapType.ProtocolIEIDCause), Criticality: ignore, Value: ngapType.UEContextReleaseRequestIEsValue{
			Present: ngapType.UEContextReleaseRequestIEsPresentCause, Cause: &cause}},
	}
	return Encode(pdu)
}

// BuildUEContextReleaseComplete builds UE Context Release Complete
// (TS 38.413 8.3.3.2).
func BuildUEContextReleaseComplete(amfUEID, ranUEID int64) ([]byte, error) {
	pdu := successful(ngapType.ProcedureCodeUEContextRelease, ngapType.SuccessfulOutcomePresentUEContextReleaseComplete)
	c := &ngapType.UEContextReleaseComplete{}
	pdu.SuccessfulOutcome.Value.UEContextReleaseComplete = c
	c.ProtocolIEs.List = []ngapType.UEContextReleaseCompleteIEs{
		{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: ignore, Value: ngapType.UEContextReleaseCompleteIEsValue{
			Present: ngapType.UEContextReleaseCompleteIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
		{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: ignore, Value: ngapType.UEContextReleaseCompleteIEsValue{
			Present: ngapType.UEContextReleaseCompleteIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}},
	}
	return Encode(pdu)
}

// BuildNGReset builds NG Reset of the whole interface (TS 38.413 8.7.4).
func BuildNGReset(cause ngapType.Cause) ([]byte, error) {
	pdu := initiating(ngapType.ProcedureCodeNGReset, reject, ngapType.InitiatingMessagePresentNGReset)
	r := &ngapType.NGReset{}
	pdu.InitiatingMessage.Value.NGReset = r
	r.ProtocolIEs.List = []ngapType.NGResetIEs{
		{Id: id(ngapType.ProtocolIEIDCause), Criticality: ignore, Value: ngapType.NGResetIEsValue{
			Present: ngapType.NGResetIEsPresentCause, Cause: &cause}},
		{Id: id(ngapType.ProtocolIEIDResetType), Criticality: reject, Value: ngapType.NGResetIEsValue{
			Present: ngapType.NGResetIEsPresentResetType, ResetType: &ngapType.ResetType{Present: ngapType.ResetTypePresentNGInterface,
				NGInterface: &ngapType.ResetAll{Value: ngapType.ResetAllPresentResetAll}}}},
	}
	return Encode(pdu)
}

// BuildUERadioCapabilityInfoIndication builds UE Radio Capability Info
// Indication (TS 38.413 8.14.1, 9.2.13.1): what a gNB sends after Initial
// Context Setup once it has the UE's capability (the UERadioCapability
// octets are the RRC container of TS 38.331, opaque here).
func BuildUERadioCapabilityInfoIndication(amfUEID, ranUEID int64, capability []byte) ([]byte, error) {
	pdu := initiating(ngapType.ProcedureCodeUERadioCapabilityInfoIndication, ignore, ngapType.InitiatingMessagePresentUERadioCapabilityInfoIndication)
	m := &ngapType.UERadioCapabilityInfoIndication{}
	pdu.InitiatingMessage.Value.UERadioCapabilityInfoIndication = m
	m.ProtocolIEs.List = []ngapType.UERadioCapabilityInfoIndicationIEs{
		{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: reject, Value: ngapType.UERadioCapabilityInfoIndicationIEsValue{
			Present: ngapType.UERadioCapabilityInfoIndicationIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
		{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: reject, Value: ngapType.UERadioCapabilityInfoIndicationIEsValue{
			Present: ngapType.UERadioCapabilityInfoIndicationIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}},
		{Id: id(ngapType.ProtocolIEIDUERadioCapability), Criticality: ignore, Value: ngapType.UERadioCapabilityInfoIndicationIEsValue{
			Present: ngapType.UERadioCapabilityInfoIndicationIEsPresentUERadioCapability, UERadioCapability: &ngapType.UERadioCapability{Value: capability}}},
	}
	return Encode(pdu)
}

// BuildNASNonDeliveryIndication builds NAS Non Delivery Indication
// (TS 38.413 8.6.4, 9.2.5.4): the gNB could not deliver a downlink NAS PDU.
func BuildNASNonDeliveryIndication(amfUEID, ranUEID int64, nasPDU []byte, cause ngapType.Cause) ([]byte, error) {
	pdu := initiating(ngapType.ProcedureCodeNASNonDeliveryIndication, ignore, ngapType.InitiatingMessagePresentNASNonDeliveryIndication)
	m := &ngapType.NASNonDeliveryIndication{}
	pdu.InitiatingMessage.Value.NASNonDeliveryIndication = m
	m.ProtocolIEs.List = []ngapType.NASNonDeliveryIndicationIEs{
		{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: reject, Value: ngapType.NASNonDeliveryIndicationIEsValue{
			Present: ngapType.NASNonDeliveryIndicationIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
		{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: reject, Value: ngapType.NASNonDeliveryIndicationIEsValue{
			Present: ngapType.NASNonDeliveryIndicationIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}},
		{Id: id(ngapType.ProtocolIEIDNASPDU), Criticality: ignore, Value: ngapType.NASNonDeliveryIndicationIEsValue{
			Present: ngapType.NASNonDeliveryIndicationIEsPresentNASPDU, NASPDU: &ngapType.NASPDU{Value: nasPDU}}},
		{Id: id(ngapType.ProtocolIEIDCause), Criticality: ignore, Value: ngapType.NASNonDeliveryIndicationIEsValue{
			Present: ngapType.NASNonDeliveryIndicationIEsPresentCause, Cause: &cause}},
	}
	return Encode(pdu)
}
