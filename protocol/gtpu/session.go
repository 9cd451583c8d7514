package gtpu

import "fmt"

// PDU types of the PDU Session Container (TS 38.415 5.5.3.1).
const (
	DLPDUSessionInformation uint8 = 0
	ULPDUSessionInformation uint8 = 1
)

// PDUSessionInfo is the PDU Session Container extension header of N3/N9
// (TS 29.281 5.2.2.7, content TS 38.415 5.5.2): DL or UL PDU SESSION
// INFORMATION with the QoS Flow Identifier of the packet.
type PDUSessionInfo struct {
	PDUType uint8 // DLPDUSessionInformation or ULPDUSessionInformation
	QFI     uint8 // 6 bits
	// RQI is the Reflective QoS Indicator (DL only, 5.5.3.4).
	RQI bool
	// HasPPI says the Paging Policy Indicator is present (DL only, PPP).
	HasPPI bool
	PPI    uint8 // 3 bits
	// Flags are the remaining flag bits of octet 1 (QMP, SNP, delay
	// indications) and octet 2 (UL: N3/N9 delay indication, new IE flag),
	// kept so that a container with optional fields survives a round trip;
	// Rest holds those optional fields and the padding.
	Flags1, Flags2 uint8
	Rest           []byte
}

// Masks of the flag bits held in Flags1 and Flags2 (TS 38.415 5.5.2.1, 5.5.2.2).
const (
	flags1Mask   = 0x0F // octet 1 below the PDU type
	ulFlags2Mask = 0xC0 // UL octet 2: N3/N9 delay ind, new IE flag
	dlPPP        = 0x80
	dlRQI        = 0x40
	qfiMask      = 0x3F
)

// marshal returns the container's content octets, padded so that with
// the length and next-type octets it fills whole 4-octet units (TS 29.281 5.2.1).
func (s *PDUSessionInfo) marshal() ([]byte, error) {
	if s.PDUType > 1 {
		return nil, fmt.Errorf("PDU Session Container: PDU type %d (want 0 DL or 1 UL)", s.PDUType)
	}
	if s.QFI > qfiMask {
		return nil, fmt.Errorf("PDU Session Container: QFI %d does not fit 6 bits", s.QFI)
	}
	c := []byte{s.PDUType<<4 | s.Flags1&flags1Mask, s.QFI}
	if s.PDUType == DLPDUSessionInformation {
		if s.RQI {
			c[1] |= dlRQI
		}
		if s.HasPPI {
			c[1] |= dlPPP
			c = append(c, (s.PPI&0x07)<<5)
		}
	} else {
		c[1] |= s.Flags2 & ulFlags2Mask
	}
	c = append(c, s.Rest...)
	for (len(c)+2)%4 != 0 {
		c = append(c, 0)
	}
	return c, nil
}

// parseSessionInfo reads the content octets of a PDU Session Container.
func parseSessionInfo(c []byte) (*PDUSessionInfo, error) {
	if len(c) < 2 {
		return nil, malformed("PDU Session Container of %d octets", len(c))
	}
	s := &PDUSessionInfo{PDUType: c[0] >> 4, Flags1: c[0] & flags1Mask, QFI: c[1] & qfiMask}
	rest := c[2:]
	switch s.PDUType {
	case DLPDUSessionInformation:
		s.RQI = c[1]&dlRQI != 0
		if c[1]&dlPPP != 0 {
			if len(rest) < 1 {
				return nil, malformed("PDU Session Container: PPP set without the PPI octet")
			}
			s.HasPPI, s.PPI = true, rest[0]>>5
			rest = rest[1:]
		}
	case ULPDUSessionInformation:
		s.Flags2 = c[1] & ulFlags2Mask
	default:
		// TS 38.415 5.5.3.1: other PDU types are reserved for later
		// versions; a receiver of this release cannot read the QFI.
		return nil, malformed("PDU Session Container: PDU type %d", s.PDUType)
	}
	if len(rest) > 0 {
		s.Rest = append([]byte(nil), rest...)
	}
	return s, nil
}
