package gtpu

import (
	"encoding/binary"
	"net/netip"
)

// Marshal encodes m (TS 29.281 5.1, 5.2, and 7 for the IEs of Echo
// Response and Error Indication).
func (m *Message) Marshal() ([]byte, error) { return m.AppendTo(nil) }

// AppendTo appends m's encoding to b, so a sender can reuse one buffer.
func (m *Message) AppendTo(b []byte) ([]byte, error) {
	exts, err := m.extensions()
	if err != nil {
		return nil, err
	}
	body := m.Payload
	switch m.Type {
	case TypeEchoResponse:
		body = append([]byte{ieRecovery, m.Recovery}, m.Payload...)
	case TypeErrorIndication:
		if body, err = m.errorIndicationIEs(); err != nil {
			return nil, err
		}
	}
	flags := byte(flagVersion1 | flagPT)
	if len(exts) > 0 {
		flags |= flagE
	}
	if m.HasSeq {
		flags |= flagS
	}
	if m.HasNPDU {
		flags |= flagPN
	}
	optional := flags&(flagE|flagS|flagPN) != 0
	length := len(body)
	if optional {
		length += optionalLen
	}
	for _, e := range exts {
		length += len(e.Content) + 2
	}
	if length > 0xFFFF {
		return nil, malformed("message of %d octets after the mandatory header", length)
	}
	start := len(b)
	b = append(b, flags, m.Type, 0, 0, 0, 0, 0, 0)
	binary.BigEndian.PutUint16(b[start+2:], uint16(length))
	binary.BigEndian.PutUint32(b[start+4:], m.TEID)
	if optional {
		next := ExtNone
		if len(exts) > 0 {
			next = exts[0].Type
		}
		b = append(b, byte(m.Seq>>8), byte(m.Seq), m.NPDU, next)
	}
	for i, e := range exts {
		next := ExtNone
		if i+1 < len(exts) {
			next = exts[i+1].Type
		}
		b = append(b, byte((len(e.Content)+2)/4))
		b = append(b, e.Content...)
		b = append(b, next)
	}
	return append(b, body...), nil
}

// extensions lists the extension headers to send, the PDU Session
// Container first, each checked to fill whole 4-octet units.
func (m *Message) extensions() ([]Extension, error) {
	var out []Extension
	if m.Session != nil {
		c, err := m.Session.marshal()
		if err != nil {
			return nil, err
		}
		out = append(out, Extension{Type: ExtPDUSessionContainer, Content: c})
	}
	for _, e := range m.Extensions {
		if e.Type == ExtNone || (len(e.Content)+2)%4 != 0 || len(e.Content)+2 > 255*4 {
			return nil, malformed("extension header type %#x with %d content octets (want 4n-2)", e.Type, len(e.Content))
		}
		out = append(out, e)
	}
	return out, nil
}

func (m *Message) errorIndicationIEs() ([]byte, error) {
	addr := m.PeerAddress.Unmap()
	if !addr.IsValid() {
		return nil, malformed("Error Indication without a GTP-U peer address")
	}
	raw := addr.AsSlice()
	b := []byte{ieTEIDDataI, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], m.TEIDDataI)
	b = append(b, iePeerAddress, 0, byte(len(raw)))
	b = append(b, raw...)
	return append(b, m.Payload...), nil
}

// Parse decodes one GTP-U message. Payload aliases b.
func Parse(b []byte) (*Message, error) {
	if len(b) < headerLen {
		return nil, malformed("%d octets, shorter than the 8-octet header", len(b))
	}
	flags := b[0]
	if flags>>5 != 1 || flags&flagPT == 0 {
		// TS 29.281 5.1: version 1 and PT 1; PT 0 is GTP' (not on N3).
		return nil, malformed("version %d, PT %d (want GTPv1-U)", flags>>5, flags&flagPT>>4)
	}
	m := &Message{Type: b[1], TEID: binary.BigEndian.Uint32(b[4:8])}
	length := int(binary.BigEndian.Uint16(b[2:4]))
	if headerLen+length > len(b) {
		return nil, malformed("length %d beyond the %d octets received", length, len(b)-headerLen)
	}
	rest := b[headerLen : headerLen+length]
	if flags&(flagE|flagS|flagPN) != 0 {
		if len(rest) < optionalLen {
			return nil, malformed("optional header fields cut short")
		}
		m.HasSeq, m.Seq = flags&flagS != 0, binary.BigEndian.Uint16(rest)
		m.HasNPDU, m.NPDU = flags&flagPN != 0, rest[2]
		next := rest[3]
		rest = rest[optionalLen:]
		if flags&flagE == 0 {
			next = ExtNone // TS 29.281 5.1: the field is there but not to be read
		}
		var err error
		if rest, err = m.parseExtensions(next, rest); err != nil {
			return nil, err
		}
	}
	m.Payload = rest
	return m, m.parseIEs()
}

// parseExtensions walks the chain of extension headers (TS 29.281 5.2.1).
func (m *Message) parseExtensions(next uint8, rest []byte) ([]byte, error) {
	for next != ExtNone {
		if len(rest) < 1 || rest[0] == 0 {
			return nil, malformed("extension header %#x without a length", next)
		}
		n := int(rest[0]) * 4
		if n > len(rest) {
			return nil, malformed("extension header %#x of %d octets, %d left", next, n, len(rest))
		}
		content := rest[1 : n-1]
		if next == ExtPDUSessionContainer {
			if m.Session != nil {
				return nil, malformed("two PDU Session Containers")
			}
			s, err := parseSessionInfo(content)
			if err != nil {
				return nil, err
			}
			m.Session = s
		} else {
			m.Extensions = append(m.Extensions, Extension{Type: next, Content: append([]byte(nil), content...)})
		}
		next, rest = rest[n-1], rest[n:]
	}
	return rest, nil
}

// parseIEs reads the IEs of the signalling messages this package knows
// (TS 29.281 7.2, 7.3); a G-PDU's payload is left as it is.
func (m *Message) parseIEs() error {
	switch m.Type {
	case TypeEchoResponse:
		if len(m.Payload) < 2 || m.Payload[0] != ieRecovery {
			return malformed("Echo Response without the Recovery IE")
		}
		m.Recovery, m.Payload = m.Payload[1], m.Payload[2:]
	case TypeErrorIndication:
		return m.parseErrorIndication()
	}
	return nil
}

// parseErrorIndication reads TEID Data I and GTP-U Peer Address, both
// mandatory (TS 29.281 7.3.1), skipping others it does not know.
func (m *Message) parseErrorIndication() error {
	p := m.Payload
	var teid, peer bool
	for len(p) > 0 {
		switch t := p[0]; {
		case t == ieTEIDDataI:
			if len(p) < 5 {
				return malformed("TEID Data I cut short")
			}
			m.TEIDDataI, teid, p = binary.BigEndian.Uint32(p[1:5]), true, p[5:]
		case t == ieRecovery:
			if len(p) < 2 {
				return malformed("Recovery cut short")
			}
			p = p[2:]
		case t >= 128: // TLV IEs (TS 29.281 8.1)
			if len(p) < 3 {
				return malformed("IE %d cut short", t)
			}
			n := int(binary.BigEndian.Uint16(p[1:3]))
			if 3+n > len(p) {
				return malformed("IE %d of %d octets, %d left", t, n, len(p)-3)
			}
			if t == iePeerAddress {
				addr, ok := netip.AddrFromSlice(p[3 : 3+n])
				if !ok {
					return malformed("GTP-U peer address of %d octets", n)
				}
				m.PeerAddress, peer = addr, true
			}
			p = p[3+n:]
		default:
			return malformed("unknown TV IE %d in Error Indication", t)
		}
	}
	if !teid || !peer {
		return malformed("Error Indication without TEID Data I or GTP-U peer address")
	}
	m.Payload = nil
	return nil
}
