package n2

import (
	"encoding/binary"
	"hash/crc32"
	"sync"
	"sync/atomic"
	"time"
)

var crc32c = crc32.MakeTable(crc32.Castagnoli) // RFC 4960 6.8

// What the user-space transport needs to know of the SCTP packets pion
// exchanges but does not expose: the stream counts each side announced, our
// Initiate Tag, and whether the peer answers heartbeats.

// SCTP chunk types, RFC 4960 3.2.
const (
	chunkInit         = 1
	chunkInitAck      = 2
	chunkHeartbeat    = 4
	chunkHeartbeatAck = 5
	chunkCookieEcho   = 10
)

const commonHeaderLen = 12 // RFC 4960 3.1

// packetInfo is what one SCTP packet tells us.
type packetInfo struct {
	vtag      uint32
	first     uint8 // type of the first chunk
	init      initInfo
	hasInit   bool // first chunk is INIT or INIT ACK, with its fixed parameters
	heartbeat bool // carries a HEARTBEAT ACK
	// bareHeartbeat: a HEARTBEAT without its mandatory Heartbeat Info
	// (RFC 4960 3.3.5), which pion v1.11.0 sends as an RTT probe.
	bareHeartbeat bool
}

// initInfo is the fixed part of INIT and INIT ACK (RFC 4960 3.3.2, 3.3.3).
type initInfo struct {
	tag      uint32 // Initiate Tag
	outbound uint16 // Number of Outbound Streams (OS)
	inbound  uint16 // Number of Inbound Streams (MIS)
}

// parsePacket reads the common header and walks the chunks; ok is false
// for anything too short to be SCTP or with a chunk running past the end.
func parsePacket(b []byte) (p packetInfo, ok bool) {
	if len(b) < commonHeaderLen+4 {
		return p, false
	}
	p.vtag = binary.BigEndian.Uint32(b[4:8])
	p.first = b[commonHeaderLen]
	for off := commonHeaderLen; off+4 <= len(b); {
		typ := b[off]
		length := int(binary.BigEndian.Uint16(b[off+2 : off+4]))
		if length < 4 || off+length > len(b) {
			return p, false
		}
		if off == commonHeaderLen && (typ == chunkInit || typ == chunkInitAck) && length >= 20 {
			v := b[off+4:]
			p.init = initInfo{tag: binary.BigEndian.Uint32(v[0:4]),
				outbound: binary.BigEndian.Uint16(v[8:10]), inbound: binary.BigEndian.Uint16(v[10:12])}
			p.hasInit = true
		}
		switch {
		case typ == chunkHeartbeatAck:
			p.heartbeat = true
		case typ == chunkHeartbeat && length < 8:
			p.bareHeartbeat = true
		}
		off += (length + 3) &^ 3 // chunks are padded to 4 bytes
	}
	return p, true
}

// negotiation watches one association's packets in both directions.
type negotiation struct {
	mu       sync.Mutex
	ourOS    uint16 // OS in the INIT or INIT ACK we sent
	peerMIS  uint16 // MIS in the INIT or INIT ACK the peer sent
	localTag uint32 // our Initiate Tag: the peer's packets carry it
	peerTag  uint32 // the peer's Initiate Tag: ours carry it
	// SCTP ports of the peer's packets (inside the UDP payload)
	peerSrcPort, peerDstPort uint16

	heartbeatAcks atomic.Uint64
}

// sent notes an outgoing packet and says whether to send it at all: a bare
// HEARTBEAT is not, since Linux ABORTs the association on it (its
// sctp_sf_beat_8_3 checks the chunk length), and our own heartbeats do the
// probing.
func (n *negotiation) sent(pkt []byte) (send bool) {
	p, ok := parsePacket(pkt)
	if ok && p.bareHeartbeat {
		return false
	}
	if ok && p.hasInit {
		n.mu.Lock()
		n.ourOS, n.localTag = p.init.outbound, p.init.tag
		n.mu.Unlock()
	}
	return true
}

func (n *negotiation) received(pkt []byte) {
	p, ok := parsePacket(pkt)
	if !ok {
		return
	}
	if p.heartbeat {
		n.heartbeatAcks.Add(1)
	}
	if p.hasInit {
		n.mu.Lock()
		n.peerMIS, n.peerTag = p.init.inbound, p.init.tag
		n.peerSrcPort = binary.BigEndian.Uint16(pkt[0:2])
		n.peerDstPort = binary.BigEndian.Uint16(pkt[2:4])
		n.mu.Unlock()
	}
}

// heartbeatPacket is a HEARTBEAT (RFC 4960 3.3.5) whose Heartbeat Info
// (parameter type 1) is the send time, the 8-byte form pion's HEARTBEAT ACK
// handler reads as an RTT sample. It is nil before the handshake.
func (n *negotiation) heartbeatPacket(now time.Time) []byte {
	n.mu.Lock()
	tag, src, dst := n.peerTag, n.peerDstPort, n.peerSrcPort
	n.mu.Unlock()
	if tag == 0 {
		return nil
	}
	b := make([]byte, commonHeaderLen+16)
	binary.BigEndian.PutUint16(b[0:], src)
	binary.BigEndian.PutUint16(b[2:], dst)
	binary.BigEndian.PutUint32(b[4:], tag)
	c := b[commonHeaderLen:]
	c[0] = chunkHeartbeat
	binary.BigEndian.PutUint16(c[2:], 16)
	binary.BigEndian.PutUint16(c[4:], 1) // Heartbeat Info
	binary.BigEndian.PutUint16(c[6:], 12)
	binary.BigEndian.PutUint64(c[8:], uint64(now.UnixNano()))
	binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(b, crc32c)) // RFC 4960 6.8
	return b
}

// outboundStreams is how many streams we may send on: no more than we
// announced and no more than the peer accepts (RFC 4960 5.1.1), and at most
// udpStreams, which is plenty for NGAP and bounds our per-stream readers.
func (n *negotiation) outboundStreams() uint16 {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := min(n.ourOS, n.peerMIS, udpStreams)
	return max(s, 1)
}

// tags are our Initiate Tag and the peer's.
func (n *negotiation) tags() (local, peer uint32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.localTag, n.peerTag
}

func (n *negotiation) tag() uint32 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.localTag
}

// observedConn is the client side's net.Conn under pion, watched.
type observedConn struct {
	*refusalConn
	neg *negotiation
}

func (o *observedConn) Read(b []byte) (int, error) {
	n, err := o.refusalConn.Read(b)
	if err == nil {
		o.neg.received(b[:n])
	}
	return n, err
}

func (o *observedConn) Write(b []byte) (int, error) {
	if !o.neg.sent(b) {
		return len(b), nil
	}
	return o.refusalConn.Write(b)
}

// stripInitParams removes from an INIT the RFC 4960 parameters pion
// v1.11.0 does not know and therefore, their type's top bits being 00,
// rejects the whole INIT for (3.2.1): IPv4 and IPv6 Address (5, 6), Cookie
// Preservative (9), Host Name Address (11) and Supported Address Types
// (12). Linux puts Supported Address Types in every INIT, and its addresses
// when bound to several. Over UDP we answer the packet's source only, so
// dropping them loses nothing. Anything else, or a packet whose checksum is
// wrong, is returned unchanged.
func stripInitParams(pkt []byte) []byte {
	const fixed = commonHeaderLen + 4 + 16 // common header, chunk header, INIT's fixed part
	if len(pkt) < fixed || pkt[commonHeaderLen] != chunkInit || !checksumOK(pkt) {
		return pkt
	}
	chunkLen := int(binary.BigEndian.Uint16(pkt[commonHeaderLen+2:]))
	if chunkLen < fixed-commonHeaderLen || commonHeaderLen+chunkLen > len(pkt) {
		return pkt
	}
	out := append([]byte(nil), pkt[:fixed]...)
	end, lastPad, stripped := commonHeaderLen+chunkLen, 0, false
	for off := fixed; off+4 <= end; {
		typ, l := binary.BigEndian.Uint16(pkt[off:]), int(binary.BigEndian.Uint16(pkt[off+2:]))
		if l < 4 || off+l > end {
			return pkt
		}
		padded := min((l+3)&^3, end-off)
		switch typ {
		case 5, 6, 9, 11, 12:
			stripped = true
		default:
			out = append(out, pkt[off:off+padded]...)
			for len(out)%4 != 0 {
				out = append(out, 0)
			}
			lastPad = (l+3)&^3 - l
		}
		off += (l + 3) &^ 3
	}
	if !stripped {
		return pkt
	}
	if len(out) == fixed {
		lastPad = 0
	}
	binary.BigEndian.PutUint16(out[commonHeaderLen+2:], uint16(len(out)-commonHeaderLen-lastPad))
	binary.LittleEndian.PutUint32(out[8:], 0)
	binary.LittleEndian.PutUint32(out[8:], crc32.Checksum(out, crc32c))
	return out
}

// checksumOK verifies the CRC32c of RFC 4960 6.8.
func checksumOK(pkt []byte) bool {
	if len(pkt) < commonHeaderLen {
		return false
	}
	want := binary.LittleEndian.Uint32(pkt[8:])
	var zero [4]byte // the checksum field counts as zero
	sum := crc32.Update(0, crc32c, pkt[:8])
	sum = crc32.Update(sum, crc32c, zero[:])
	return crc32.Update(sum, crc32c, pkt[12:]) == want
}
