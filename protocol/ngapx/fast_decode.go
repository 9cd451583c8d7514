package ngapx

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/perbits"
)

// The hand-written decoder of the same messages as fast_encode.go: what
// the AMF reads in a registration and a PDU session establishment (Initial
// UE Message, Uplink NAS Transport, Initial Context Setup Response, UE
// Radio Capability Info Indication, PDU Session Resource Setup Response),
// what the simulator reads (Downlink NAS Transport, Initial Context Setup
// Request, PDU Session Resource Setup Request, Paging), PDU Session Resource
// Release's and UE Context Release's messages. decodeFast reports false for anything else, or
// anything it is not sure of, and Decode then uses the library: the result
// is always the value ngap.Decoder gives (FuzzFastDecode checks it).

// minFieldOctets is the least a ProtocolIE-Field takes: id (2), criticality
// (1 with padding), open type length (1).
const minFieldOctets = 4

// decodeFast decodes b if it is one of the shapes covered.
func decodeFast(b []byte) (*ngapType.NGAPPDU, bool) {
	// The library's result never shares the caller's buffer (a transport
	// may reuse it): copy once, and let the values point into the copy.
	r := perbits.NewReader(append([]byte(nil), b...))
	noExt(r)
	present := int(r.Constrained(3)) + 1
	code := int64(r.Constrained(256))
	crit := getCriticality(r)
	body := r.Open()
	if r.Failed() || !r.Done() {
		return nil, false
	}
	pdu := &ngapType.NGAPPDU{Present: present}
	var ok bool
	switch present {
	case ngapType.NGAPPDUPresentInitiatingMessage:
		m := &ngapType.InitiatingMessage{ProcedureCode: ngapType.ProcedureCode{Value: code}, Criticality: ngapType.Criticality{Value: crit}}
		pdu.InitiatingMessage, ok = m, getInitiating(&body, code, &m.Value)
	case ngapType.NGAPPDUPresentSuccessfulOutcome:
		m := &ngapType.SuccessfulOutcome{ProcedureCode: ngapType.ProcedureCode{Value: code}, Criticality: ngapType.Criticality{Value: crit}}
		pdu.SuccessfulOutcome, ok = m, getSuccessful(&body, code, &m.Value)
	}
	if !ok || body.Failed() || !body.Done() {
		return nil, false
	}
	return pdu, true
}

func getInitiating(r *perbits.Reader, code int64, v *ngapType.InitiatingMessageValue) bool {
	switch code {
	case ngapType.ProcedureCodeInitialUEMessage:
		v.Present, v.InitialUEMessage = ngapType.InitiatingMessagePresentInitialUEMessage, getInitialUEMessage(r)
	case ngapType.ProcedureCodeUplinkNASTransport:
		v.Present, v.UplinkNASTransport = ngapType.InitiatingMessagePresentUplinkNASTransport, getUplinkNASTransport(r)
	case ngapType.ProcedureCodeDownlinkNASTransport:
		v.Present, v.DownlinkNASTransport = ngapType.InitiatingMessagePresentDownlinkNASTransport, getDownlinkNASTransport(r)
	case ngapType.ProcedureCodeInitialContextSetup:
		v.Present, v.InitialContextSetupRequest = ngapType.InitiatingMessagePresentInitialContextSetupRequest, getInitialContextSetupRequest(r)
	case ngapType.ProcedureCodePDUSessionResourceSetup:
		v.Present, v.PDUSessionResourceSetupRequest = ngapType.InitiatingMessagePresentPDUSessionResourceSetupRequest, getPDUSessionResourceSetupRequest(r)
	case ngapType.ProcedureCodeUEContextReleaseRequest:
		v.Present, v.UEContextReleaseRequest = ngapType.InitiatingMessagePresentUEContextReleaseRequest, getUEContextReleaseRequest(r)
	case ngapType.ProcedureCodeUEContextRelease:
		v.Present, v.UEContextReleaseCommand = ngapType.InitiatingMessagePresentUEContextReleaseCommand, getUEContextReleaseCommand(r)
	case ngapType.ProcedureCodePDUSessionResourceRelease:
		v.Present, v.PDUSessionResourceReleaseCommand = ngapType.InitiatingMessagePresentPDUSessionResourceReleaseCommand, getPDUSessionResourceReleaseCommand(r)
	case ngapType.ProcedureCodePaging:
		v.Present, v.Paging = ngapType.InitiatingMessagePresentPaging, getPaging(r)
	case ngapType.ProcedureCodeUERadioCapabilityInfoIndication:
		v.Present, v.UERadioCapabilityInfoIndication = ngapType.InitiatingMessagePresentUERadioCapabilityInfoIndication, getUERadioCapabilityInfoIndication(r)
	default:
		return false
	}
	return !r.Failed()
}

func getSuccessful(r *perbits.Reader, code int64, v *ngapType.SuccessfulOutcomeValue) bool {
	switch code {
	case ngapType.ProcedureCodeInitialContextSetup:
		v.Present, v.InitialContextSetupResponse = ngapType.SuccessfulOutcomePresentInitialContextSetupResponse, getInitialContextSetupResponse(r)
	case ngapType.ProcedureCodePDUSessionResourceRelease:
		v.Present, v.PDUSessionResourceReleaseResponse = ngapType.SuccessfulOutcomePresentPDUSessionResourceReleaseResponse, getPDUSessionResourceReleaseResponse(r)
	case ngapType.ProcedureCodeUEContextRelease:
		v.Present, v.UEContextReleaseComplete = ngapType.SuccessfulOutcomePresentUEContextReleaseComplete, getUEContextReleaseComplete(r)
	case ngapType.ProcedureCodePDUSessionResourceSetup:
		v.Present, v.PDUSessionResourceSetupResponse = ngapType.SuccessfulOutcomePresentPDUSessionResourceSetupResponse, getPDUSessionResourceSetupResponse(r)
	default:
		return false
	}
	return !r.Failed()
}

// getIEs reads a message's extension bit and ProtocolIE-Container
// (TS 38.413 9.4.3) into list, one IE for each field, which fills the IE
// from its id, criticality and value; it reports false for an id it does
// not cover. Any failure fails r. Every hot message shares this loop; only
// its switch on id is its own.
func getIEs[IE any](r *perbits.Reader, list *[]IE, field func(ie *IE, id int64, crit aper.Enumerated, v *perbits.Reader) bool) {
	noExt(r)
	n := int(r.Constrained(maxIEs + 1))
	if r.Failed() || n*minFieldOctets > r.Remaining() {
		r.Fail()
		return
	}
	*list = make([]IE, n)
	for i := range *list {
		id := int64(r.Constrained(maxIEs + 1))
		crit := getCriticality(r)
		v := r.Open()
		if r.Failed() || !field(&(*list)[i], id, crit, &v) || v.Failed() || !v.Done() {
			r.Fail()
			return
		}
	}
}
