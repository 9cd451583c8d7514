package n2

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The chunks of an association's data path (RFC 4960 3.3), as our own
// SCTP data path reads and writes them.

// More chunk types, RFC 4960 3.2.
const (
	chunkSack     = 3
	chunkShutdown = 7
)

// DATA chunk flags, RFC 4960 3.3.1.
const (
	flagDataEnd       = 0x01 // E: last fragment
	flagDataBegin     = 0x02 // B: first fragment
	flagDataUnordered = 0x04 // U
	// I: the receiver should SACK this at once (RFC 7053, now RFC 9260
	// 3.3.1); set by a sender that can send nothing more until it does.
	flagDataImmediate = 0x08
)

const (
	dataHeaderLen = 16 // chunk header, TSN, stream, SSN, PPID (3.3.1)
	sackFixedLen  = 16 // chunk header, cumulative TSN ack, a_rwnd, counts (3.3.4)
)

// sctpData is one DATA chunk; data points into the packet it came in.
type sctpData struct {
	flags  uint8
	tsn    uint32
	stream uint16
	ssn    uint16
	ppid   uint32
	data   []byte
}

var errNoUserData = errors.New("DATA chunk without user data (RFC 4960 3.3.1)")

// parseData reads a DATA chunk (header and value, no padding).
func parseData(chunk []byte) (sctpData, error) {
	if len(chunk) < dataHeaderLen {
		return sctpData{}, fmt.Errorf("DATA chunk of %d bytes, shorter than its %d-byte header", len(chunk), dataHeaderLen)
	}
	if len(chunk) == dataHeaderLen {
		return sctpData{}, errNoUserData
	}
	return sctpData{flags: chunk[1], tsn: binary.BigEndian.Uint32(chunk[4:]),
		stream: binary.BigEndian.Uint16(chunk[8:]), ssn: binary.BigEndian.Uint16(chunk[10:]),
		ppid: binary.BigEndian.Uint32(chunk[12:]), data: chunk[dataHeaderLen:]}, nil
}

// appendData appends a DATA chunk, padded to 4 bytes, to b.
func appendData(b []byte, d sctpData) []byte {
	var h [dataHeaderLen]byte
	h[0], h[1] = chunkData, d.flags
	binary.BigEndian.PutUint16(h[2:], uint16(dataHeaderLen+len(d.data)))
	binary.BigEndian.PutUint32(h[4:], d.tsn)
	binary.BigEndian.PutUint16(h[8:], d.stream)
	binary.BigEndian.PutUint16(h[10:], d.ssn)
	binary.BigEndian.PutUint32(h[12:], d.ppid)
	b = append(append(b, h[:]...), d.data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// gapBlock is a Gap Ack Block: TSNs cumTSN+start .. cumTSN+end arrived (3.3.4).
type gapBlock struct{ start, end uint16 }

// sack is a SACK chunk's content (RFC 4960 3.3.4).
type sack struct {
	cumTSN uint32
	rwnd   uint32
	gaps   []gapBlock
	dups   []uint32
}

// parseSack reads a SACK chunk (header and value).
func parseSack(chunk []byte) (sack, error) {
	if len(chunk) < sackFixedLen {
		return sack{}, fmt.Errorf("SACK chunk of %d bytes, shorter than %d", len(chunk), sackFixedLen)
	}
	s := sack{cumTSN: binary.BigEndian.Uint32(chunk[4:]), rwnd: binary.BigEndian.Uint32(chunk[8:])}
	nGaps, nDups := int(binary.BigEndian.Uint16(chunk[12:])), int(binary.BigEndian.Uint16(chunk[14:]))
	if sackFixedLen+4*(nGaps+nDups) != len(chunk) {
		return sack{}, fmt.Errorf("SACK chunk of %d bytes does not hold its %d gap blocks and %d duplicate TSNs", len(chunk), nGaps, nDups)
	}
	off := sackFixedLen
	for range nGaps {
		g := gapBlock{binary.BigEndian.Uint16(chunk[off:]), binary.BigEndian.Uint16(chunk[off+2:])}
		if g.start == 0 || g.end < g.start {
			return sack{}, fmt.Errorf("SACK gap block %d-%d is not a range after the cumulative TSN", g.start, g.end)
		}
		s.gaps = append(s.gaps, g)
		off += 4
	}
	for range nDups {
		s.dups = append(s.dups, binary.BigEndian.Uint32(chunk[off:]))
		off += 4
	}
	return s, nil
}

// appendSack appends a SACK chunk to b.
func appendSack(b []byte, s sack) []byte {
	n := sackFixedLen + 4*(len(s.gaps)+len(s.dups))
	off := len(b)
	b = append(b, make([]byte, n)...)
	c := b[off:]
	c[0] = chunkSack
	binary.BigEndian.PutUint16(c[2:], uint16(n))
	binary.BigEndian.PutUint32(c[4:], s.cumTSN)
	binary.BigEndian.PutUint32(c[8:], s.rwnd)
	binary.BigEndian.PutUint16(c[12:], uint16(len(s.gaps)))
	binary.BigEndian.PutUint16(c[14:], uint16(len(s.dups)))
	p := sackFixedLen
	for _, g := range s.gaps {
		binary.BigEndian.PutUint16(c[p:], g.start)
		binary.BigEndian.PutUint16(c[p+2:], g.end)
		p += 4
	}
	for _, d := range s.dups {
		binary.BigEndian.PutUint32(c[p:], d)
		p += 4
	}
	return b
}

// tsnBefore is a < b in serial number arithmetic (RFC 4960 1.6, RFC 1982).
func tsnBefore(a, b uint32) bool { return int32(a-b) < 0 }

// initChunk is the fixed part of INIT and INIT ACK (RFC 4960 3.3.2, 3.3.3).
type initChunk struct {
	tag        uint32
	rwnd       uint32
	outbound   uint16
	inbound    uint16
	initialTSN uint32
}

// readInitChunk reads an INIT or INIT ACK chunk's fixed part.
func readInitChunk(chunk []byte) (initChunk, error) {
	if len(chunk) < initChunkLen {
		return initChunk{}, fmt.Errorf("INIT chunk of %d bytes, shorter than %d", len(chunk), initChunkLen)
	}
	return initChunk{tag: binary.BigEndian.Uint32(chunk[4:]), rwnd: binary.BigEndian.Uint32(chunk[8:]),
		outbound: binary.BigEndian.Uint16(chunk[12:]), inbound: binary.BigEndian.Uint16(chunk[14:]),
		initialTSN: binary.BigEndian.Uint32(chunk[16:])}, nil
}

// encodeInit is an INIT (or INIT ACK, by typ) chunk with no optional
// parameters but extra, already encoded.
func encodeInit(typ uint8, in initChunk, extra []byte) []byte {
	v := make([]byte, 16, 16+len(extra))
	binary.BigEndian.PutUint32(v[0:], in.tag)
	binary.BigEndian.PutUint32(v[4:], in.rwnd)
	binary.BigEndian.PutUint16(v[8:], in.outbound)
	binary.BigEndian.PutUint16(v[10:], in.inbound)
	binary.BigEndian.PutUint32(v[12:], in.initialTSN)
	return encodeChunk(typ, 0, append(v, extra...))
}

// initAckCookie finds the State Cookie parameter (type 7) of an INIT ACK.
func initAckCookie(chunk []byte) ([]byte, bool) {
	for off := initChunkLen; off+4 <= len(chunk); {
		typ, l := binary.BigEndian.Uint16(chunk[off:]), int(binary.BigEndian.Uint16(chunk[off+2:]))
		if l < 4 || off+l > len(chunk) {
			return nil, false
		}
		if typ == 7 {
			return chunk[off+4 : off+l], true
		}
		off += (l + 3) &^ 3
	}
	return nil, false
}
