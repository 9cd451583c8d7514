package ngapx

import (
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/perbits"
)

// One encoder per hot message: its IEs in the order they are given, each
// checked against the id its type belongs to (TS 38.413 9.2). An IE not
// listed here sends the message to the library.

// putDownlinkNASTransport: TS 38.413 9.2.5.2.
func putDownlinkNASTransport(w *perbits.Writer, m *ngapType.DownlinkNASTransport) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.DownlinkNASTransportIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.DownlinkNASTransportIEsPresentAMFUENGAPID:
			want, put = ngapType.ProtocolIEIDAMFUENGAPID, func() bool { return putAMFUEID(w, v.AMFUENGAPID) }
		case ngapType.DownlinkNASTransportIEsPresentRANUENGAPID:
			want, put = ngapType.ProtocolIEIDRANUENGAPID, func() bool { return putRANUEID(w, v.RANUENGAPID) }
		case ngapType.DownlinkNASTransportIEsPresentNASPDU:
			want, put = ngapType.ProtocolIEIDNASPDU, func() bool { return putNASPDU(w, v.NASPDU) }
		case ngapType.DownlinkNASTransportIEsPresentUEAggregateMaximumBitRate:
			want, put = ngapType.ProtocolIEIDUEAggregateMaximumBitRate, func() bool { return putUEAMBR(w, v.UEAggregateMaximumBitRate) }
		case ngapType.DownlinkNASTransportIEsPresentAllowedNSSAI:
			want, put = ngapType.ProtocolIEIDAllowedNSSAI, func() bool { return putAllowedNSSAI(w, v.AllowedNSSAI) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

// putUplinkNASTransport: TS 38.413 9.2.5.3.
func putUplinkNASTransport(w *perbits.Writer, m *ngapType.UplinkNASTransport) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.UplinkNASTransportIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.UplinkNASTransportIEsPresentAMFUENGAPID:
			want, put = ngapType.ProtocolIEIDAMFUENGAPID, func() bool { return putAMFUEID(w, v.AMFUENGAPID) }
		case ngapType.UplinkNASTransportIEsPresentRANUENGAPID:
			want, put = ngapType.ProtocolIEIDRANUENGAPID, func() bool { return putRANUEID(w, v.RANUENGAPID) }
		case ngapType.UplinkNASTransportIEsPresentNASPDU:
			want, put = ngapType.ProtocolIEIDNASPDU, func() bool { return putNASPDU(w, v.NASPDU) }
		case ngapType.UplinkNASTransportIEsPresentUserLocationInformation:
			want, put = ngapType.ProtocolIEIDUserLocationInformation, func() bool { return putUserLocation(w, v.UserLocationInformation) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

// putInitialUEMessage: TS 38.413 9.2.5.1.
func putInitialUEMessage(w *perbits.Writer, m *ngapType.InitialUEMessage) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.InitialUEMessageIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.InitialUEMessageIEsPresentRANUENGAPID:
			want, put = ngapType.ProtocolIEIDRANUENGAPID, func() bool { return putRANUEID(w, v.RANUENGAPID) }
		case ngapType.InitialUEMessageIEsPresentNASPDU:
			want, put = ngapType.ProtocolIEIDNASPDU, func() bool { return putNASPDU(w, v.NASPDU) }
		case ngapType.InitialUEMessageIEsPresentUserLocationInformation:
			want, put = ngapType.ProtocolIEIDUserLocationInformation, func() bool { return putUserLocation(w, v.UserLocationInformation) }
		case ngapType.InitialUEMessageIEsPresentRRCEstablishmentCause:
			want, put = ngapType.ProtocolIEIDRRCEstablishmentCause, func() bool { return putRRCCause(w, v.RRCEstablishmentCause) }
		case ngapType.InitialUEMessageIEsPresentFiveGSTMSI:
			want, put = ngapType.ProtocolIEIDFiveGSTMSI, func() bool { return putFiveGSTMSI(w, v.FiveGSTMSI) }
		case ngapType.InitialUEMessageIEsPresentUEContextRequest:
			want, put = ngapType.ProtocolIEIDUEContextRequest, func() bool { return putUEContextRequest(w, v.UEContextRequest) }
		case ngapType.InitialUEMessageIEsPresentAllowedNSSAI:
			want, put = ngapType.ProtocolIEIDAllowedNSSAI, func() bool { return putAllowedNSSAI(w, v.AllowedNSSAI) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

// putInitialContextSetupRequest: TS 38.413 9.2.2.1.
func putInitialContextSetupRequest(w *perbits.Writer, m *ngapType.InitialContextSetupRequest) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.InitialContextSetupRequestIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.InitialContextSetupRequestIEsPresentAMFUENGAPID:
			want, put = ngapType.ProtocolIEIDAMFUENGAPID, func() bool { return putAMFUEID(w, v.AMFUENGAPID) }
		case ngapType.InitialContextSetupRequestIEsPresentRANUENGAPID:
			want, put = ngapType.ProtocolIEIDRANUENGAPID, func() bool { return putRANUEID(w, v.RANUENGAPID) }
		case ngapType.InitialContextSetupRequestIEsPresentUEAggregateMaximumBitRate:
			want, put = ngapType.ProtocolIEIDUEAggregateMaximumBitRate, func() bool { return putUEAMBR(w, v.UEAggregateMaximumBitRate) }
		case ngapType.InitialContextSetupRequestIEsPresentGUAMI:
			want, put = ngapType.ProtocolIEIDGUAMI, func() bool { return putGUAMI(w, v.GUAMI) }
		case ngapType.InitialContextSetupRequestIEsPresentPDUSessionResourceSetupListCxtReq:
			want, put = ngapType.ProtocolIEIDPDUSessionResourceSetupListCxtReq, func() bool { return putSetupListCxtReq(w, v.PDUSessionResourceSetupListCxtReq) }
		case ngapType.InitialContextSetupRequestIEsPresentAllowedNSSAI:
			want, put = ngapType.ProtocolIEIDAllowedNSSAI, func() bool { return putAllowedNSSAI(w, v.AllowedNSSAI) }
		case ngapType.InitialContextSetupRequestIEsPresentUESecurityCapabilities:
			want, put = ngapType.ProtocolIEIDUESecurityCapabilities, func() bool { return putUESecurityCapabilities(w, v.UESecurityCapabilities) }
		case ngapType.InitialContextSetupRequestIEsPresentSecurityKey:
			want, put = ngapType.ProtocolIEIDSecurityKey, func() bool { return putSecurityKey(w, v.SecurityKey) }
		case ngapType.InitialContextSetupRequestIEsPresentUERadioCapability:
			want, put = ngapType.ProtocolIEIDUERadioCapability, func() bool { return v.UERadioCapability != nil && putOctets(w, v.UERadioCapability.Value) }
		case ngapType.InitialContextSetupRequestIEsPresentNASPDU:
			want, put = ngapType.ProtocolIEIDNASPDU, func() bool { return putNASPDU(w, v.NASPDU) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

// putInitialContextSetupResponse: TS 38.413 9.2.2.2, with the sessions
// set up (a Service Request's, fast_paging.go) but no failed ones.
func putInitialContextSetupResponse(w *perbits.Writer, m *ngapType.InitialContextSetupResponse) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.InitialContextSetupResponseIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.InitialContextSetupResponseIEsPresentAMFUENGAPID:
			want, put = ngapType.ProtocolIEIDAMFUENGAPID, func() bool { return putAMFUEID(w, v.AMFUENGAPID) }
		case ngapType.InitialContextSetupResponseIEsPresentRANUENGAPID:
			want, put = ngapType.ProtocolIEIDRANUENGAPID, func() bool { return putRANUEID(w, v.RANUENGAPID) }
		case ngapType.InitialContextSetupResponseIEsPresentPDUSessionResourceSetupListCxtRes:
			want, put = ngapType.ProtocolIEIDPDUSessionResourceSetupListCxtRes, func() bool { return putSetupListCxtRes(w, v.PDUSessionResourceSetupListCxtRes) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

// putPDUSessionResourceSetupRequest: TS 38.413 9.2.1.1.
func putPDUSessionResourceSetupRequest(w *perbits.Writer, m *ngapType.PDUSessionResourceSetupRequest) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.PDUSessionResourceSetupRequestIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.PDUSessionResourceSetupRequestIEsPresentAMFUENGAPID:
			want, put = ngapType.ProtocolIEIDAMFUENGAPID, func() bool { return putAMFUEID(w, v.AMFUENGAPID) }
		case ngapType.PDUSessionResourceSetupRequestIEsPresentRANUENGAPID:
			want, put = ngapType.ProtocolIEIDRANUENGAPID, func() bool { return putRANUEID(w, v.RANUENGAPID) }
		case ngapType.PDUSessionResourceSetupRequestIEsPresentNASPDU:
			want, put = ngapType.ProtocolIEIDNASPDU, func() bool { return putNASPDU(w, v.NASPDU) }
		case ngapType.PDUSessionResourceSetupRequestIEsPresentPDUSessionResourceSetupListSUReq:
			want, put = ngapType.ProtocolIEIDPDUSessionResourceSetupListSUReq, func() bool { return putSetupListSUReq(w, v.PDUSessionResourceSetupListSUReq) }
		case ngapType.PDUSessionResourceSetupRequestIEsPresentUEAggregateMaximumBitRate:
			want, put = ngapType.ProtocolIEIDUEAggregateMaximumBitRate, func() bool { return putUEAMBR(w, v.UEAggregateMaximumBitRate) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

// putPDUSessionResourceSetupResponse: TS 38.413 9.2.1.2, the sessions set up.
func putPDUSessionResourceSetupResponse(w *perbits.Writer, m *ngapType.PDUSessionResourceSetupResponse) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.PDUSessionResourceSetupResponseIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.PDUSessionResourceSetupResponseIEsPresentAMFUENGAPID:
			want, put = ngapType.ProtocolIEIDAMFUENGAPID, func() bool { return putAMFUEID(w, v.AMFUENGAPID) }
		case ngapType.PDUSessionResourceSetupResponseIEsPresentRANUENGAPID:
			want, put = ngapType.ProtocolIEIDRANUENGAPID, func() bool { return putRANUEID(w, v.RANUENGAPID) }
		case ngapType.PDUSessionResourceSetupResponseIEsPresentPDUSessionResourceSetupListSURes:
			want, put = ngapType.ProtocolIEIDPDUSessionResourceSetupListSURes, func() bool { return putSetupListSURes(w, v.PDUSessionResourceSetupListSURes) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}

// putUERadioCapabilityInfoIndication: TS 38.413 9.2.13.1, without the
// capability for paging.
func putUERadioCapabilityInfoIndication(w *perbits.Writer, m *ngapType.UERadioCapabilityInfoIndication) bool {
	return m != nil && putIEs(w, m.ProtocolIEs.List, func(ie *ngapType.UERadioCapabilityInfoIndicationIEs) bool {
		v := &ie.Value
		var want int64
		var put func() bool
		switch v.Present {
		case ngapType.UERadioCapabilityInfoIndicationIEsPresentAMFUENGAPID:
			want, put = ngapType.ProtocolIEIDAMFUENGAPID, func() bool { return putAMFUEID(w, v.AMFUENGAPID) }
		case ngapType.UERadioCapabilityInfoIndicationIEsPresentRANUENGAPID:
			want, put = ngapType.ProtocolIEIDRANUENGAPID, func() bool { return putRANUEID(w, v.RANUENGAPID) }
		case ngapType.UERadioCapabilityInfoIndicationIEsPresentUERadioCapability:
			want, put = ngapType.ProtocolIEIDUERadioCapability, func() bool { return v.UERadioCapability != nil && putOctets(w, v.UERadioCapability.Value) }
		default:
			return false
		}
		return putField(w, ie.Id.Value, want, ie.Criticality.Value, put)
	})
}
