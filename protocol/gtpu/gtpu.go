// Package gtpu encodes and decodes GTP-U (TS 29.281): G-PDUs with their
// extension headers, among them the PDU Session Container of N3/N9
// (TS 38.415), Echo Request/Response and Error Indication. The simulator's
// gNB speaks it on N3; the decoder takes bytes from the network and answers
// malformed input with an error, never a panic.
package gtpu

import (
	"errors"
	"fmt"
	"net/netip"
)

// Port is the registered GTP-U UDP port (TS 29.281 4.4.2.3).
const Port = 2152

// Message types of TS 29.281 6.1.
const (
	TypeEchoRequest             uint8 = 1
	TypeEchoResponse            uint8 = 2
	TypeErrorIndication         uint8 = 26
	TypeSupportedExtHeadersNote uint8 = 31
	TypeEndMarker               uint8 = 254
	TypeGPDU                    uint8 = 255
)

// Extension header types of TS 29.281 5.2.1.
const (
	ExtNone                uint8 = 0x00
	ExtUDPPort             uint8 = 0x40
	ExtPDCPPDUNumber       uint8 = 0xC0
	ExtPDUSessionContainer uint8 = 0x85
)

// Information element types of TS 29.281 8.
const (
	ieRecovery    uint8 = 14  // TV, 1 octet (8.2)
	ieTEIDDataI   uint8 = 16  // TV, 4 octets (8.3)
	iePeerAddress uint8 = 133 // TLV (8.4)
	iePrivateExt  uint8 = 255 // TLV (8.6)
	headerLen           = 8   // mandatory part (5.1)
	optionalLen         = 4   // sequence number, N-PDU number, next extension header type
	flagVersion1        = 0x20
	flagPT              = 0x10
	flagE               = 0x04
	flagS               = 0x02
	flagPN              = 0x01
)

// ErrMalformed marks input that is not a GTP-U message we can read.
var ErrMalformed = errors.New("malformed GTP-U")

func malformed(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, a...))
}

// Extension is an extension header this package does not interpret,
// kept as its content octets (TS 29.281 5.2.1: length in 4-octet units,
// minus the length octet and the next-type octet).
type Extension struct {
	Type    uint8
	Content []byte
}

// Message is one GTP-U message (TS 29.281 5.1). Payload is the T-PDU of a
// G-PDU, or the information elements of a signalling message that are not
// read into fields.
type Message struct {
	Type uint8
	TEID uint32
	// HasSeq says the S flag is set; Echo and Error Indication must set it
	// (TS 29.281 5.1).
	HasSeq bool
	Seq    uint16
	// HasNPDU says the PN flag is set.
	HasNPDU bool
	NPDU    uint8
	// Session is the PDU Session Container (TS 38.415 5.5.2); nil: none.
	Session *PDUSessionInfo
	// Extensions are the other extension headers, in order after Session.
	Extensions []Extension
	Payload    []byte

	// Recovery is the Recovery IE of Echo Response (TS 29.281 7.2.2; always 0).
	Recovery uint8
	// TEIDDataI and PeerAddress are the IEs of Error Indication (7.3.1).
	TEIDDataI   uint32
	PeerAddress netip.Addr
}
