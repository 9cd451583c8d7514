package gtpu

import "net/netip"

// GPDU is a G-PDU carrying payload on tunnel teid with a PDU Session
// Container of the given direction and QFI (TS 29.281 5.2.2.7, TS 38.415).
func GPDU(teid uint32, pduType, qfi uint8, payload []byte) *Message {
	return &Message{Type: TypeGPDU, TEID: teid, Payload: payload,
		Session: &PDUSessionInfo{PDUType: pduType, QFI: qfi}}
}

// EchoRequest is an Echo Request (TS 29.281 7.2.1): TEID 0, sequence number set.
func EchoRequest(seq uint16) *Message {
	return &Message{Type: TypeEchoRequest, HasSeq: true, Seq: seq}
}

// EchoResponse answers an Echo Request with its sequence number and
// Recovery 0 (TS 29.281 7.2.2: the restart counter is not used, set to 0).
func EchoResponse(req *Message) *Message {
	return &Message{Type: TypeEchoResponse, HasSeq: true, Seq: req.Seq}
}

// ErrorIndication tells the sender of a G-PDU for an unknown TEID that the
// tunnel does not exist here (TS 29.281 7.3.1): TEID Data I is the TEID
// received, the peer address the receiving end's own (local) address.
func ErrorIndication(teid uint32, local netip.Addr) *Message {
	return &Message{Type: TypeErrorIndication, HasSeq: true, TEIDDataI: teid, PeerAddress: local}
}
