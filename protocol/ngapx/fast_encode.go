package ngapx

import (
	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/perbits"
)

// The hand-written encoder of the messages of a registration, a PDU
// session establishment and release, paging and the AN release (TS 23.502 4.2.2.2.2,
// 4.3.2.2.1, 4.3.4.2, 4.2.3.3, 4.2.6), in both directions: the AMF's and the
// simulator's. free5gc/aper encodes by
// reflection at 10-70 µs a message; these write the same octets directly.
// encodeFast reports false for any other message or shape, and Encode then
// falls back to the library. The equality is checked byte for byte against
// ngap.Encoder by fast_codec_test.go, fast_edge_test.go and FuzzFastEncode.

// encodeFast encodes pdu if it is one of the shapes covered.
func encodeFast(pdu *ngapType.NGAPPDU) ([]byte, bool) {
	w := perbits.NewWriter(256)
	var ok bool
	switch pdu.Present {
	case ngapType.NGAPPDUPresentInitiatingMessage:
		m := pdu.InitiatingMessage
		ok = m != nil && putHeader(w, pdu.Present, m.ProcedureCode.Value, m.Criticality.Value) && putOpen(w, func() bool {
			return putInitiating(w, m.ProcedureCode.Value, &m.Value)
		})
	case ngapType.NGAPPDUPresentSuccessfulOutcome:
		m := pdu.SuccessfulOutcome
		ok = m != nil && putHeader(w, pdu.Present, m.ProcedureCode.Value, m.Criticality.Value) && putOpen(w, func() bool {
			return putSuccessful(w, m.ProcedureCode.Value, &m.Value)
		})
	}
	if !ok {
		return nil, false
	}
	return w.Bytes(), true
}

// putHeader writes NGAP-PDU's choice (extensible, 3 root alternatives) and
// the message's procedure code and criticality (TS 38.413 9.4.2).
func putHeader(w *perbits.Writer, present int, code int64, crit aper.Enumerated) bool {
	if code < 0 || code > 255 {
		return false
	}
	w.Bit(false)
	w.Constrained(uint64(present-1), 3)
	w.Constrained(uint64(code), 256)
	return putCriticality(w, crit)
}

// putOpen writes what body writes as an open type (X.691 10.2).
func putOpen(w *perbits.Writer, body func() bool) bool {
	mark := w.OpenStart()
	return body() && w.OpenEnd(mark)
}

// putContainer writes a message's extension bit and the size of its
// ProtocolIE-Container (TS 38.413 9.4.3: 0..maxProtocolIEs).
func putContainer(w *perbits.Writer, n int) bool {
	if n > maxIEs {
		return false
	}
	w.Bit(false)
	w.Constrained(uint64(n), maxIEs+1)
	return true
}

// putIEs writes a message's ProtocolIE-Container (TS 38.413 9.4.3): its
// size, then each IE in the order given, by field, which picks the IE's
// value writer from its Present and writes it with putField. Every hot
// message shares this loop; only its switch on Present is its own.
func putIEs[IE any](w *perbits.Writer, list []IE, field func(ie *IE) bool) bool {
	if !putContainer(w, len(list)) {
		return false
	}
	for i := range list {
		if !field(&list[i]) {
			return false
		}
	}
	return true
}

// putField writes one ProtocolIE-Field: its id, criticality and value as
// an open type. want is the id the value's type belongs to: the library
// refuses a mismatch, so the fast path leaves it to the library.
func putField(w *perbits.Writer, id, want int64, crit aper.Enumerated, value func() bool) bool {
	if id != want {
		return false
	}
	w.Constrained(uint64(id), maxIEs+1)
	return putCriticality(w, crit) && putOpen(w, value)
}

func putInitiating(w *perbits.Writer, code int64, v *ngapType.InitiatingMessageValue) bool {
	switch v.Present {
	case ngapType.InitiatingMessagePresentDownlinkNASTransport:
		return code == ngapType.ProcedureCodeDownlinkNASTransport && putDownlinkNASTransport(w, v.DownlinkNASTransport)
	case ngapType.InitiatingMessagePresentInitialContextSetupRequest:
		return code == ngapType.ProcedureCodeInitialContextSetup && putInitialContextSetupRequest(w, v.InitialContextSetupRequest)
	case ngapType.InitiatingMessagePresentPDUSessionResourceSetupRequest:
		return code == ngapType.ProcedureCodePDUSessionResourceSetup && putPDUSessionResourceSetupRequest(w, v.PDUSessionResourceSetupRequest)
	case ngapType.InitiatingMessagePresentInitialUEMessage:
		return code == ngapType.ProcedureCodeInitialUEMessage && putInitialUEMessage(w, v.InitialUEMessage)
	case ngapType.InitiatingMessagePresentUplinkNASTransport:
		return code == ngapType.ProcedureCodeUplinkNASTransport && putUplinkNASTransport(w, v.UplinkNASTransport)
	case ngapType.InitiatingMessagePresentUEContextReleaseRequest:
		return code == ngapType.ProcedureCodeUEContextReleaseRequest && putUEContextReleaseRequest(w, v.UEContextReleaseRequest)
	case ngapType.InitiatingMessagePresentUEContextReleaseCommand:
		return code == ngapType.ProcedureCodeUEContextRelease && putUEContextReleaseCommand(w, v.UEContextReleaseCommand)
	case ngapType.InitiatingMessagePresentPDUSessionResourceReleaseCommand:
		return code == ngapType.ProcedureCodePDUSessionResourceRelease && putPDUSessionResourceReleaseCommand(w, v.PDUSessionResourceReleaseCommand)
	case ngapType.InitiatingMessagePresentPaging:
		return code == ngapType.ProcedureCodePaging && putPaging(w, v.Paging)
	case ngapType.InitiatingMessagePresentUERadioCapabilityInfoIndication:
		return code == ngapType.ProcedureCodeUERadioCapabilityInfoIndication && putUERadioCapabilityInfoIndication(w, v.UERadioCapabilityInfoIndication)
	}
	return false
}

func putSuccessful(w *perbits.Writer, code int64, v *ngapType.SuccessfulOutcomeValue) bool {
	switch v.Present {
	case ngapType.SuccessfulOutcomePresentInitialContextSetupResponse:
		return code == ngapType.ProcedureCodeInitialContextSetup && putInitialContextSetupResponse(w, v.InitialContextSetupResponse)
	case ngapType.SuccessfulOutcomePresentPDUSessionResourceReleaseResponse:
		return code == ngapType.ProcedureCodePDUSessionResourceRelease && putPDUSessionResourceReleaseResponse(w, v.PDUSessionResourceReleaseResponse)
	case ngapType.SuccessfulOutcomePresentUEContextReleaseComplete:
		return code == ngapType.ProcedureCodeUEContextRelease && putUEContextReleaseComplete(w, v.UEContextReleaseComplete)
	case ngapType.SuccessfulOutcomePresentPDUSessionResourceSetupResponse:
		return code == ngapType.ProcedureCodePDUSessionResourceSetup && putPDUSessionResourceSetupResponse(w, v.PDUSessionResourceSetupResponse)
	}
	return false
}
