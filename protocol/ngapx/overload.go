package ngapx

// NGAP Overload Start and Overload Stop (TS 38.413 8.7.6, 8.7.7): the AMF
// asks its gNBs to shed signalling while it is overloaded, and to stop.

import (
	"errors"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
)

// Overload actions of TS 38.413 9.3.1.105.
const (
	OverloadRejectNonEmergencyMODT = aper.Enumerated(ngapType.OverloadActionPresentRejectNonEmergencyMoDt)
	OverloadRejectRRCSignalling    = aper.Enumerated(ngapType.OverloadActionPresentRejectRrcCrSignalling)
)

// Overload is what Overload Start asks of the gNB: its action and, when
// not 0, the percentage (1-99) of signalling to shed (TS 38.413 9.3.1.106).
type Overload struct {
	Action    aper.Enumerated
	NoAction  bool // parsed: the optional AMF Overload Response was absent
	Reduction int64
}

// BuildOverloadStart builds Overload Start (TS 38.413 9.2.6.14) without an
// S-NSSAI list: the whole AMF is overloaded.
func BuildOverloadStart(o Overload) ([]byte, error) {
	if o.Reduction < 0 || o.Reduction > 99 {
		return nil, errors.New("traffic load reduction must be 1-99 %, or 0 for none")
	}
	pdu := initiating(ngapType.ProcedureCodeOverloadStart, ignore, ngapType.InitiatingMessagePresentOverloadStart)
	m := &ngapType.OverloadStart{}
	add := func(ie ngapType.OverloadStartIEs) { m.ProtocolIEs.List = append(m.ProtocolIEs.List, ie) }
	add(ngapType.OverloadStartIEs{Id: id(ngapType.ProtocolIEIDAMFOverloadResponse), Criticality: reject,
		Value: ngapType.OverloadStartIEsValue{Present: ngapType.OverloadStartIEsPresentAMFOverloadResponse,
			AMFOverloadResponse: &ngapType.OverloadResponse{Present: ngapType.OverloadResponsePresentOverloadAction,
				OverloadAction: &ngapType.OverloadAction{Value: o.Action}}}})
	if o.Reduction > 0 {
		add(ngapType.OverloadStartIEs{Id: id(ngapType.ProtocolIEIDAMFTrafficLoadReductionIndication), Criticality: ignore,
			Value: ngapType.OverloadStartIEsValue{Present: ngapType.OverloadStartIEsPresentAMFTrafficLoadReductionIndication,
				AMFTrafficLoadReductionIndication: &ngapType.TrafficLoadReductionIndication{Value: o.Reduction}}})
	}
	pdu.InitiatingMessage.Value.OverloadStart = m
	return Encode(pdu)
}

// BuildOverloadStop builds Overload Stop (TS 38.413 9.2.6.15), which has
// no IEs.
func BuildOverloadStop() ([]byte, error) {
	pdu := initiating(ngapType.ProcedureCodeOverloadStop, reject, ngapType.InitiatingMessagePresentOverloadStop)
	pdu.InitiatingMessage.Value.OverloadStop = &ngapType.OverloadStop{}
	return Encode(pdu)
}

// ParseOverloadStart reads Overload Start (the gNB's side).
func ParseOverloadStart(pdu *ngapType.NGAPPDU) (Overload, error) {
	var o Overload
	if pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.OverloadStart == nil {
		return o, errors.New("not Overload Start")
	}
	o.NoAction = true
	for _, ie := range pdu.InitiatingMessage.Value.OverloadStart.ProtocolIEs.List {
		switch v := ie.Value; {
		case v.AMFOverloadResponse != nil && v.AMFOverloadResponse.OverloadAction != nil:
			o.Action, o.NoAction = v.AMFOverloadResponse.OverloadAction.Value, false
		case v.AMFTrafficLoadReductionIndication != nil:
			o.Reduction = v.AMFTrafficLoadReductionIndication.Value
		}
	}
	return o, nil
}
