package n2

import (
	"encoding/binary"
	"hash/crc32"
	"net"
	"testing"
	"time"
)

// rawPeer is a hand-driven SCTP-over-UDP endpoint for tests: it sends the
// chunks a kernel gNB would (its own stream counts, restarts, silence),
// which pion's client cannot be told to do.
type rawPeer struct {
	t       *testing.T
	conn    *net.UDPConn
	tag     uint32 // our Initiate Tag
	peerTag uint32 // the AMF's, from its INIT ACK
	tsn     uint32
	peer    initInfo // the AMF's INIT ACK
	port    uint16   // our SCTP port
}

const rawPeerPort = 38412 // SCTP ports inside the UDP payload

func dialRaw(t *testing.T, server net.Addr, local *net.UDPAddr) *rawPeer {
	t.Helper()
	c, err := net.DialUDP("udp", local, server.(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawPeer{t: t, conn: c, tag: uint32(time.Now().UnixNano()) | 1, tsn: 1000, port: rawPeerPort}
}

// send puts chunks in one packet with the CRC32c of RFC 4960 6.8.
func (r *rawPeer) send(vtag uint32, chunks ...[]byte) {
	b := make([]byte, commonHeaderLen)
	binary.BigEndian.PutUint16(b[0:], r.port)
	binary.BigEndian.PutUint16(b[2:], rawPeerPort)
	binary.BigEndian.PutUint32(b[4:], vtag)
	for _, c := range chunks {
		b = append(b, c...)
	}
	binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(b, crc32c))
	if _, err := r.conn.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

// read returns the next packet's chunks as (type, value) pairs.
func (r *rawPeer) read() (vtag uint32, chunks []rawChunk) {
	r.t.Helper()
	buf := make([]byte, maxDatagram)
	_ = r.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := r.conn.Read(buf)
	if err != nil {
		r.t.Fatalf("no answer from the AMF: %v", err)
	}
	b := buf[:n]
	for off := commonHeaderLen; off+4 <= len(b); {
		l := int(binary.BigEndian.Uint16(b[off+2:]))
		chunks = append(chunks, rawChunk{typ: b[off], value: b[off+4 : off+l]})
		off += (l + 3) &^ 3
	}
	return binary.BigEndian.Uint32(b[4:]), chunks
}

type rawChunk struct {
	typ   uint8
	value []byte
}

// readUntil skips packets until one carries a chunk of type typ.
func (r *rawPeer) readUntil(typ uint8) (uint32, rawChunk) {
	r.t.Helper()
	for i := 0; i < 100; i++ {
		vtag, chunks := r.read()
		for _, c := range chunks {
			if c.typ == typ {
				return vtag, c
			}
		}
	}
	r.t.Fatalf("no chunk of type %d from the AMF", typ)
	return 0, rawChunk{}
}

func initValue(tag uint32, os, mis uint16, tsn uint32) []byte {
	v := make([]byte, 16)
	binary.BigEndian.PutUint32(v[0:], tag)
	binary.BigEndian.PutUint32(v[4:], 1<<20) // a_rwnd
	binary.BigEndian.PutUint16(v[8:], os)
	binary.BigEndian.PutUint16(v[10:], mis)
	binary.BigEndian.PutUint32(v[12:], tsn)
	return v
}

// associate runs the four-way handshake (RFC 4960 5.1) announcing os
// outbound and mis inbound streams.
func (r *rawPeer) associate(os, mis uint16, params ...[]byte) {
	r.t.Helper()
	init := initValue(r.tag, os, mis, r.tsn)
	for _, p := range params {
		init = append(init, p...)
	}
	r.send(0, encodeChunk(chunkInit, 0, init))
	_, ack := r.readUntil(chunkInitAck)
	r.peerTag = binary.BigEndian.Uint32(ack.value[0:])
	r.peer = initInfo{tag: r.peerTag, outbound: binary.BigEndian.Uint16(ack.value[8:]), inbound: binary.BigEndian.Uint16(ack.value[10:])}
	r.send(r.peerTag, encodeChunk(chunkCookieEcho, 0, stateCookie(r.t, ack.value[16:])))
	r.readUntil(11) // COOKIE ACK
}

// stateCookie finds the State Cookie parameter (type 7) of an INIT ACK.
func stateCookie(t *testing.T, params []byte) []byte {
	for off := 0; off+4 <= len(params); {
		typ := binary.BigEndian.Uint16(params[off:])
		l := int(binary.BigEndian.Uint16(params[off+2:]))
		if l < 4 || off+l > len(params) {
			break
		}
		if typ == 7 {
			return params[off+4 : off+l]
		}
		off += (l + 3) &^ 3
	}
	t.Fatal("INIT ACK without a State Cookie")
	return nil
}

// sendData sends one NGAP message (PPID 60) on a stream.
func (r *rawPeer) sendData(stream uint16, pdu []byte) {
	v := make([]byte, 12, 12+len(pdu))
	binary.BigEndian.PutUint32(v[0:], r.tsn)
	binary.BigEndian.PutUint16(v[4:], stream)
	binary.BigEndian.PutUint32(v[8:], PPIDNGAP)
	r.tsn++
	r.send(r.peerTag, encodeChunk(0, 0x03, append(v, pdu...))) // B and E: one whole message
}

// answerHeartbeats answers n HEARTBEATs as a kernel peer would, failing on
// one without Heartbeat Info (Linux ABORTs the association on those).
func (r *rawPeer) answerHeartbeats(n int) {
	r.t.Helper()
	for i := 0; i < n; i++ {
		_, hb := r.readUntil(chunkHeartbeat)
		if len(hb.value) < 4 || binary.BigEndian.Uint16(hb.value) != 1 {
			r.t.Fatalf("HEARTBEAT without Heartbeat Info (RFC 4960 3.3.5): % x", hb.value)
		}
		r.send(r.peerTag, encodeChunk(chunkHeartbeatAck, 0, hb.value))
	}
}

// heartbeatPacketFor builds a HEARTBEAT as if a handshake had happened.
func (n *negotiation) heartbeatPacketFor(t *testing.T) []byte {
	n.peerTag, n.peerSrcPort, n.peerDstPort = 7, rawPeerPort, rawPeerPort
	pkt := n.heartbeatPacket(time.Now())
	if pkt == nil {
		t.Fatal("no HEARTBEAT built")
	}
	return pkt
}

// linuxInitParams are what Linux puts in an INIT (RFC 4960 3.3.2): its
// addresses, Supported Address Types (IPv4), ECN and Forward-TSN.
func linuxInitParams() [][]byte {
	return [][]byte{
		encodeParam(5, []byte{10, 0, 0, 1}), // IPv4 Address
		encodeParam(12, []byte{0, 5}),       // Supported Address Types: IPv4
		encodeParam(0x8000, nil),            // ECN Capable
		encodeParam(0xc000, nil),            // Forward-TSN Supported
	}
}
