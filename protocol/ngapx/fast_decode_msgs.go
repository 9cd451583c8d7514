package ngapx

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/perbits"
)

// One decoder per hot message, the mirror of fast_encode_msgs.go: an IE id
// not listed here sends the PDU to the library.

// getInitialUEMessage: TS 38.413 9.2.5.1.
func getInitialUEMessage(r *perbits.Reader) *ngapType.InitialUEMessage {
	m := &ngapType.InitialUEMessage{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.InitialUEMessageIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDRANUENGAPID:
			x.Present, x.RANUENGAPID = ngapType.InitialUEMessageIEsPresentRANUENGAPID, getRANUEID(v)
		case ngapType.ProtocolIEIDNASPDU:
			x.Present, x.NASPDU = ngapType.InitialUEMessageIEsPresentNASPDU, getNASPDU(v)
		case ngapType.ProtocolIEIDUserLocationInformation:
			x.Present, x.UserLocationInformation = ngapType.InitialUEMessageIEsPresentUserLocationInformation, getUserLocation(v)
		case ngapType.ProtocolIEIDRRCEstablishmentCause:
			x.Present, x.RRCEstablishmentCause = ngapType.InitialUEMessageIEsPresentRRCEstablishmentCause, getRRCCause(v)
		case ngapType.ProtocolIEIDFiveGSTMSI:
			x.Present, x.FiveGSTMSI = ngapType.InitialUEMessageIEsPresentFiveGSTMSI, getFiveGSTMSI(v)
		case ngapType.ProtocolIEIDUEContextRequest:
			x.Present, x.UEContextRequest = ngapType.InitialUEMessageIEsPresentUEContextRequest, getUEContextRequest(v)
		case ngapType.ProtocolIEIDAllowedNSSAI:
			x.Present, x.AllowedNSSAI = ngapType.InitialUEMessageIEsPresentAllowedNSSAI, getAllowedNSSAI(v)
		default:
			return false
		}
		return true
	})
	return m
}

// getUplinkNASTransport: TS 38.413 9.2.5.3.
func getUplinkNASTransport(r *perbits.Reader) *ngapType.UplinkNASTransport {
	m := &ngapType.UplinkNASTransport{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.UplinkNASTransportIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDAMFUENGAPID:
			x.Present, x.AMFUENGAPID = ngapType.UplinkNASTransportIEsPresentAMFUENGAPID, getAMFUEID(v)
		case ngapType.ProtocolIEIDRANUENGAPID:
			x.Present, x.RANUENGAPID = ngapType.UplinkNASTransportIEsPresentRANUENGAPID, getRANUEID(v)
		case ngapType.ProtocolIEIDNASPDU:
			x.Present, x.NASPDU = ngapType.UplinkNASTransportIEsPresentNASPDU, getNASPDU(v)
		case ngapType.ProtocolIEIDUserLocationInformation:
			x.Present, x.UserLocationInformation = ngapType.UplinkNASTransportIEsPresentUserLocationInformation, getUserLocation(v)
		default:
			return false
		}
		return true
	})
	return m
}

// getDownlinkNASTransport: TS 38.413 9.2.5.2.
func getDownlinkNASTransport(r *perbits.Reader) *ngapType.DownlinkNASTransport {
	m := &ngapType.DownlinkNASTransport{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.DownlinkNASTransportIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDAMFUENGAPID:
			x.Present, x.AMFUENGAPID = ngapType.DownlinkNASTransportIEsPresentAMFUENGAPID, getAMFUEID(v)
		case ngapType.ProtocolIEIDRANUENGAPID:
			x.Present, x.RANUENGAPID = ngapType.DownlinkNASTransportIEsPresentRANUENGAPID, getRANUEID(v)
		case ngapType.ProtocolIEIDNASPDU:
			x.Present, x.NASPDU = ngapType.DownlinkNASTransportIEsPresentNASPDU, getNASPDU(v)
		case ngapType.ProtocolIEIDUEAggregateMaximumBitRate:
			x.Present, x.UEAggregateMaximumBitRate = ngapType.DownlinkNASTransportIEsPresentUEAggregateMaximumBitRate, getUEAMBR(v)
		case ngapType.ProtocolIEIDAllowedNSSAI:
			x.Present, x.AllowedNSSAI = ngapType.DownlinkNASTransportIEsPresentAllowedNSSAI, getAllowedNSSAI(v)
		default:
			return false
		}
		return true
	})
	return m
}

// getInitialContextSetupRequest: TS 38.413 9.2.2.1.
func getInitialContextSetupRequest(r *perbits.Reader) *ngapType.InitialContextSetupRequest {
	m := &ngapType.InitialContextSetupRequest{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.InitialContextSetupRequestIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDAMFUENGAPID:
			x.Present, x.AMFUENGAPID = ngapType.InitialContextSetupRequestIEsPresentAMFUENGAPID, getAMFUEID(v)
		case ngapType.ProtocolIEIDRANUENGAPID:
			x.Present, x.RANUENGAPID = ngapType.InitialContextSetupRequestIEsPresentRANUENGAPID, getRANUEID(v)
		case ngapType.ProtocolIEIDUEAggregateMaximumBitRate:
			x.Present, x.UEAggregateMaximumBitRate = ngapType.InitialContextSetupRequestIEsPresentUEAggregateMaximumBitRate, getUEAMBR(v)
		case ngapType.ProtocolIEIDGUAMI:
			x.Present, x.GUAMI = ngapType.InitialContextSetupRequestIEsPresentGUAMI, getGUAMI(v)
		case ngapType.ProtocolIEIDPDUSessionResourceSetupListCxtReq:
			x.Present, x.PDUSessionResourceSetupListCxtReq = ngapType.InitialContextSetupRequestIEsPresentPDUSessionResourceSetupListCxtReq, getSetupListCxtReq(v)
		case ngapType.ProtocolIEIDAllowedNSSAI:
			x.Present, x.AllowedNSSAI = ngapType.InitialContextSetupRequestIEsPresentAllowedNSSAI, getAllowedNSSAI(v)
		case ngapType.ProtocolIEIDUESecurityCapabilities:
			x.Present, x.UESecurityCapabilities = ngapType.InitialContextSetupRequestIEsPresentUESecurityCapabilities, getUESecurityCapabilities(v)
		case ngapType.ProtocolIEIDSecurityKey:
			x.Present, x.SecurityKey = ngapType.InitialContextSetupRequestIEsPresentSecurityKey, getSecurityKey(v)
		case ngapType.ProtocolIEIDUERadioCapability:
			x.Present, x.UERadioCapability = ngapType.InitialContextSetupRequestIEsPresentUERadioCapability, &ngapType.UERadioCapability{Value: getOctets(v)}
		case ngapType.ProtocolIEIDNASPDU:
			x.Present, x.NASPDU = ngapType.InitialContextSetupRequestIEsPresentNASPDU, getNASPDU(v)
		default:
			return false
		}
		return true
	})
	return m
}

// getInitialContextSetupResponse: TS 38.413 9.2.2.2, with the sessions
// set up but no failed ones.
func getInitialContextSetupResponse(r *perbits.Reader) *ngapType.InitialContextSetupResponse {
	m := &ngapType.InitialContextSetupResponse{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.InitialContextSetupResponseIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDAMFUENGAPID:
			x.Present, x.AMFUENGAPID = ngapType.InitialContextSetupResponseIEsPresentAMFUENGAPID, getAMFUEID(v)
		case ngapType.ProtocolIEIDRANUENGAPID:
			x.Present, x.RANUENGAPID = ngapType.InitialContextSetupResponseIEsPresentRANUENGAPID, getRANUEID(v)
		case ngapType.ProtocolIEIDPDUSessionResourceSetupListCxtRes:
			x.Present, x.PDUSessionResourceSetupListCxtRes = ngapType.InitialContextSetupResponseIEsPresentPDUSessionResourceSetupListCxtRes, getSetupListCxtRes(v)
		default:
			return false
		}
		return true
	})
	return m
}

// getPDUSessionResourceSetupRequest: TS 38.413 9.2.1.1.
func getPDUSessionResourceSetupRequest(r *perbits.Reader) *ngapType.PDUSessionResourceSetupRequest {
	m := &ngapType.PDUSessionResourceSetupRequest{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.PDUSessionResourceSetupRequestIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDAMFUENGAPID:
			x.Present, x.AMFUENGAPID = ngapType.PDUSessionResourceSetupRequestIEsPresentAMFUENGAPID, getAMFUEID(v)
		case ngapType.ProtocolIEIDRANUENGAPID:
			x.Present, x.RANUENGAPID = ngapType.PDUSessionResourceSetupRequestIEsPresentRANUENGAPID, getRANUEID(v)
		case ngapType.ProtocolIEIDNASPDU:
			x.Present, x.NASPDU = ngapType.PDUSessionResourceSetupRequestIEsPresentNASPDU, getNASPDU(v)
		case ngapType.ProtocolIEIDPDUSessionResourceSetupListSUReq:
			x.Present, x.PDUSessionResourceSetupListSUReq = ngapType.PDUSessionResourceSetupRequestIEsPresentPDUSessionResourceSetupListSUReq, getSetupListSUReq(v)
		case ngapType.ProtocolIEIDUEAggregateMaximumBitRate:
			x.Present, x.UEAggregateMaximumBitRate = ngapType.PDUSessionResourceSetupRequestIEsPresentUEAggregateMaximumBitRate, getUEAMBR(v)
		default:
			return false
		}
		return true
	})
	return m
}

// getPDUSessionResourceSetupResponse: TS 38.413 9.2.1.2, the sessions set up.
func getPDUSessionResourceSetupResponse(r *perbits.Reader) *ngapType.PDUSessionResourceSetupResponse {
	m := &ngapType.PDUSessionResourceSetupResponse{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.PDUSessionResourceSetupResponseIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDAMFUENGAPID:
			x.Present, x.AMFUENGAPID = ngapType.PDUSessionResourceSetupResponseIEsPresentAMFUENGAPID, getAMFUEID(v)
		case ngapType.ProtocolIEIDRANUENGAPID:
			x.Present, x.RANUENGAPID = ngapType.PDUSessionResourceSetupResponseIEsPresentRANUENGAPID, getRANUEID(v)
		case ngapType.ProtocolIEIDPDUSessionResourceSetupListSURes:
			x.Present, x.PDUSessionResourceSetupListSURes = ngapType.PDUSessionResourceSetupResponseIEsPresentPDUSessionResourceSetupListSURes, getSetupListSURes(v)
		default:
			return false
		}
		return true
	})
	return m
}

// getUERadioCapabilityInfoIndication: TS 38.413 9.2.13.1, without the
// capability for paging.
func getUERadioCapabilityInfoIndication(r *perbits.Reader) *ngapType.UERadioCapabilityInfoIndication {
	m := &ngapType.UERadioCapabilityInfoIndication{}
	getIEs(r, &m.ProtocolIEs.List, func(ie *ngapType.UERadioCapabilityInfoIndicationIEs, id int64, crit aper.Enumerated, v *perbits.Reader) bool {
		ie.Id.Value, ie.Criticality.Value = id, crit
		x := &ie.Value
		switch id {
		case ngapType.ProtocolIEIDAMFUENGAPID:
			x.Present, x.AMFUENGAPID = ngapType.UERadioCapabilityInfoIndicationIEsPresentAMFUENGAPID, getAMFUEID(v)
		case ngapType.ProtocolIEIDRANUENGAPID:
			x.Present, x.RANUENGAPID = ngapType.UERadioCapabilityInfoIndicationIEsPresentRANUENGAPID, getRANUEID(v)
		case ngapType.ProtocolIEIDUERadioCapability:
			x.Present, x.UERadioCapability = ngapType.UERadioCapabilityInfoIndicationIEsPresentUERadioCapability, &ngapType.UERadioCapability{Value: getOctets(v)}
		default:
			return false
		}
		return true
	})
	return m
}
