package n2

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
)

// What the user-space transport needs to know of the SCTP packets pion
// exchanges but does not expose: the stream counts each side announced, our
// Initiate Tag, and whether the peer answers heartbeats.

// SCTP chunk types, RFC 4960 3.2.
const (
	chunkInit         = 1
	chunkInitAck      = 2
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
		if typ == chunkHeartbeatAck {
			p.heartbeat = true
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

	heartbeatAcks atomic.Uint64
}

func (n *negotiation) sent(pkt []byte) {
	p, ok := parsePacket(pkt)
	if !ok || !p.hasInit {
		return
	}
	n.mu.Lock()
	n.ourOS, n.localTag = p.init.outbound, p.init.tag
	n.mu.Unlock()
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
		n.peerMIS = p.init.inbound
		n.mu.Unlock()
	}
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

func (n *negotiation) tag() uint32 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.localTag
}

// observedConn is the client side's net.Conn under pion, watched.
type observedConn struct {
	*refusalTolerantConn
	neg *negotiation
}

func (o *observedConn) Read(b []byte) (int, error) {
	n, err := o.refusalTolerantConn.Read(b)
	if err == nil {
		o.neg.received(b[:n])
	}
	return n, err
}

func (o *observedConn) Write(b []byte) (int, error) {
	o.neg.sent(b)
	return o.refusalTolerantConn.Write(b)
}
