package n2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The SCTP packet as it arrives from the network (RFC 4960 3), checked
// before anything is kept or answered: the user-space transports read
// packets from anyone.

// More SCTP chunk types, RFC 4960 3.2.
const (
	chunkData             = 0
	chunkAbort            = 6
	chunkShutdownAck      = 8
	chunkError            = 9
	chunkCookieAck        = 11
	chunkShutdownComplete = 14
)

// flagT is the T bit of ABORT and SHUTDOWN COMPLETE (RFC 4960 3.3.7,
// 3.3.13): the Verification Tag is the receiver's own, reflected.
const flagT = 0x01

// sctpPacket is a parsed SCTP packet: its common header and where each
// chunk lies in raw.
type sctpPacket struct {
	raw              []byte
	srcPort, dstPort uint16
	vtag             uint32
	chunks           []chunkRef
}

// chunkRef locates one chunk: raw[off:off+length] is its header and value,
// without padding.
type chunkRef struct {
	typ, flags uint8
	off        int
	length     int
}

func (c chunkRef) value(raw []byte) []byte { return raw[c.off+4 : c.off+c.length] }

var (
	errShortPacket = errors.New("shorter than the SCTP common header and one chunk")
	errChecksum    = errors.New("CRC32c checksum mismatch (RFC 4960 6.8)")
)

// parseSCTP checks the checksum and that every chunk lies within the
// packet; the chunk values are left to their handlers.
func parseSCTP(raw []byte) (sctpPacket, error) {
	p := sctpPacket{raw: raw}
	if len(raw) < commonHeaderLen+4 {
		return p, errShortPacket
	}
	if !checksumOK(raw) {
		return p, errChecksum
	}
	p.srcPort = binary.BigEndian.Uint16(raw[0:])
	p.dstPort = binary.BigEndian.Uint16(raw[2:])
	p.vtag = binary.BigEndian.Uint32(raw[4:])
	for off := commonHeaderLen; off < len(raw); {
		if off+4 > len(raw) {
			return p, fmt.Errorf("chunk header at byte %d runs past the packet's end (%d)", off, len(raw))
		}
		length := int(binary.BigEndian.Uint16(raw[off+2:]))
		if length < 4 || off+length > len(raw) {
			return p, fmt.Errorf("chunk type %d at byte %d: length %d outside the packet (%d bytes)", raw[off], off, length, len(raw))
		}
		p.chunks = append(p.chunks, chunkRef{typ: raw[off], flags: raw[off+1], off: off, length: length})
		off += (length + 3) &^ 3 // chunks are padded to 4 bytes (3.2)
	}
	return p, nil
}

func (p sctpPacket) first() chunkRef { return p.chunks[0] }

// has reports whether any chunk is of type typ.
func (p sctpPacket) has(typ uint8) bool {
	for _, c := range p.chunks {
		if c.typ == typ {
			return true
		}
	}
	return false
}

// buildPacket encodes a packet with the CRC32c of RFC 4960 6.8.
func buildPacket(srcPort, dstPort uint16, vtag uint32, chunks ...[]byte) []byte {
	b := make([]byte, commonHeaderLen, commonHeaderLen+64)
	binary.BigEndian.PutUint16(b[0:], srcPort)
	binary.BigEndian.PutUint16(b[2:], dstPort)
	binary.BigEndian.PutUint32(b[4:], vtag)
	for _, c := range chunks {
		b = append(b, c...)
	}
	fillChecksum(b)
	return b
}

// encodeChunk encodes one chunk padded to 4 bytes (RFC 4960 3.2).
func encodeChunk(typ, flags uint8, value []byte) []byte {
	return encodeTLV(typ, flags, value)
}

// encodeParam encodes one TLV parameter or error cause padded to 4 bytes
// (RFC 4960 3.2.1, 3.3.10).
func encodeParam(typ uint16, value []byte) []byte {
	return encodeTLV(byte(typ>>8), byte(typ), value)
}

// encodeTLV writes a chunk or parameter: two octets of type (a chunk's
// type and flags, or a parameter's 16-bit type), the length of header and
// value, the value, and zero padding to 4 octets that the length excludes.
func encodeTLV(t0, t1 byte, value []byte) []byte {
	b := make([]byte, 4, 4+len(value)+3)
	b[0], b[1] = t0, t1
	binary.BigEndian.PutUint16(b[2:], uint16(4+len(value)))
	b = append(b, value...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// fillChecksum writes the CRC32c of RFC 4960 6.8 into the common header.
func fillChecksum(b []byte) {
	binary.LittleEndian.PutUint32(b[8:], 0)
	binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(b, crc32c))
}

// setPorts rewrites a packet's ports and its checksum.
func setPorts(b []byte, src, dst uint16) {
	binary.BigEndian.PutUint16(b[0:], src)
	binary.BigEndian.PutUint16(b[2:], dst)
	fillChecksum(b)
}
