package n2

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/pion/sctp"
)

// The user-space SCTP endpoint shared by the udp and raw transports: one
// socket, many associations told apart by the peer's address and SCTP
// port. The handshake's server side is ours, not pion's: an INIT is
// answered with a signed State Cookie and forgotten (RFC 4960 5.1.3), and
// pion starts only for a valid COOKIE ECHO, already established (its SNAP
// mode, given both INITs). Packets for no association get the answers of
// RFC 4960 8.4, so a gNB learns at once that the AMF restarted.

// packetLayer is how SCTP packets reach the network: as UDP payloads
// (RFC 6951) or as IP protocol 132 over a raw socket.
type packetLayer interface {
	readPacket(buf []byte) (n int, from netip.AddrPort, err error)
	writePacket(pkt []byte, to netip.AddrPort) error
	netAddr(a netip.AddrPort) net.Addr
	localAddr() net.Addr
	close() error
}

// DefaultMaxAssociations caps the associations one listener serves.
const DefaultMaxAssociations = 1024

// DefaultMaxMessageSize is the largest NGAP PDU received; a UE Radio
// Capability can exceed SCTP-over-UDP's old 64 KiB.
const DefaultMaxMessageSize = 256 << 10

// RFC 4960 3.3.10 error causes.
const causeOutOfResource = 4

type sctpListener struct {
	pl   packetLayer
	port uint16 // SCTP port packets must be addressed to; 0 takes any (UDP: the UDP port already chose us)
	opts Options
	jar  cookieJar

	accepted chan Conn
	done     chan struct{}
	once     sync.Once

	mu     sync.Mutex
	assocs map[endpoint]*peerConn // established associations only
}

// endpoint names a remote SCTP endpoint: its address (UDP address, or IP
// with port 0 over raw IP) and its SCTP port. A Linux host sends all its
// encapsulated associations from one UDP port (RFC 6951 5.1), so the
// address alone does not tell its gNBs apart.
type endpoint struct {
	addr     netip.AddrPort
	sctpPort uint16
}

func newSCTPListener(pl packetLayer, port uint16, o Options) *sctpListener {
	l := &sctpListener{pl: pl, port: port, opts: o, jar: newCookieJar(),
		accepted: make(chan Conn, 64), done: make(chan struct{}), assocs: map[endpoint]*peerConn{}}
	go l.readLoop()
	return l
}

func (l *sctpListener) readLoop() {
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := l.pl.readPacket(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. ICMP port unreachable surfaced on Linux: not fatal
		}
		l.handle(from, buf[:n])
	}
}

// handle routes one packet; raw is reused after it returns.
func (l *sctpListener) handle(from netip.AddrPort, raw []byte) {
	pkt, err := parseSCTP(raw)
	if err != nil || (l.port != 0 && pkt.dstPort != l.port) {
		return // RFC 4960 6.8: a packet with a bad checksum is discarded
	}
	key := endpoint{addr: from, sctpPort: pkt.srcPort}
	p := l.association(key)
	switch pkt.first().typ {
	case chunkInit:
		l.answerInit(from, pkt)
		return
	case chunkCookieEcho:
		l.cookieEcho(from, key, pkt, p)
		return
	}
	if p == nil {
		l.outOfTheBlue(from, pkt)
		return
	}
	switch {
	case !p.ownsTag(pkt):
	case p.own != nil:
		p.own.receive(pkt, 0) // the own data path: straight in, no queue
	default:
		p.deliver(append([]byte(nil), raw...))
	}
}

func (l *sctpListener) association(key endpoint) *peerConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.assocs[key]
}

// answerInit sends an INIT ACK whose State Cookie holds both INITs and
// keeps nothing (RFC 4960 5.1.3). The same answer serves an INIT for an
// existing association, a peer restarting on its address and port: our
// new Initiate Tag differs from the association's (5.2.2) and the old
// association goes only when the cookie comes back (5.2.4).
func (l *sctpListener) answerInit(from netip.AddrPort, pkt sctpPacket) {
	c := pkt.first()
	if pkt.vtag != 0 || len(pkt.chunks) != 1 || c.length < initChunkLen {
		return // RFC 4960 8.5.1 A, 6.10: INIT has tag 0 and travels alone
	}
	remote := initForSNAP(pkt.raw[c.off : c.off+c.length])
	peer := readInit(remote)
	if peer.tag == 0 || peer.outbound == 0 || peer.inbound == 0 || len(remote) > maxInitChunk {
		return // 3.3.2: zero tag or streams is invalid; we do not try to explain
	}
	local, err := l.localInit(peer)
	if l.opts.ownDataPath() {
		local, err = l.ownLocalInit(peer), nil
	}
	if err != nil {
		return
	}
	ck := l.jar.seal(from, cookie{created: time.Now(), localPort: pkt.dstPort, peerPort: pkt.srcPort, local: local, remote: remote})
	ack := append(append([]byte(nil), local[4:]...), encodeParam(7, ck)...) // 7: State Cookie
	_ = l.pl.writePacket(buildPacket(pkt.dstPort, pkt.srcPort, peer.tag, encodeChunk(chunkInitAck, 0, ack)), from)
}

// localInit is our side of a new association, made by pion so that its
// SNAP mode takes it back later: a fresh Initiate Tag and initial TSN, and
// the peer's own stream counts mirrored, as pion's INIT ACK did (a Linux
// gNB asking 2/2 gets 2/2; RFC 4960 5.1.1 then takes the minimum).
func (l *sctpListener) localInit(peer initInfo) ([]byte, error) {
	local, err := sctp.GenerateOutOfBandToken(sctp.WithMaxReceiveBufferSize(l.opts.receiveBuffer()))
	if err != nil || len(local) < initChunkLen {
		return nil, errCookieShape
	}
	binary.BigEndian.PutUint16(local[12:], min(binary.BigEndian.Uint16(local[12:]), peer.outbound))
	binary.BigEndian.PutUint16(local[14:], min(binary.BigEndian.Uint16(local[14:]), peer.inbound))
	return local, nil
}

// initForSNAP is an INIT chunk without the parameters pion rejects it for.
func initForSNAP(chunk []byte) []byte {
	pkt := make([]byte, commonHeaderLen, commonHeaderLen+len(chunk))
	pkt = append(pkt, chunk...)
	fillChecksum(pkt)
	stripped := stripInitParams(pkt)
	n := int(binary.BigEndian.Uint16(stripped[commonHeaderLen+2:]))
	return append([]byte(nil), stripped[commonHeaderLen:commonHeaderLen+n]...)
}

// cookieEcho sets up the association a valid cookie describes (RFC 4960
// 5.1.5) and hands it to Accept; anything else in the packet (DATA may be
// bundled, 6.10) goes to the new association.
func (l *sctpListener) cookieEcho(from netip.AddrPort, key endpoint, pkt sctpPacket, old *peerConn) {
	ck, err := l.jar.open(from, pkt.first().value(pkt.raw), time.Now())
	if err != nil || pkt.vtag != ck.localInit().tag {
		return // 5.1.5: a cookie that fails the checks is silently discarded
	}
	if old != nil && old.neg.tag() == ck.localInit().tag {
		// 5.2.4 action D: the peer lost our COOKIE ACK; the association stands.
		_ = l.pl.writePacket(buildPacket(ck.localPort, ck.peerPort, ck.remoteInit().tag, encodeChunk(chunkCookieAck, 0, nil)), from)
		old.deliverRest(pkt)
		return
	}
	if !l.hasRoom(old) {
		cause := encodeParam(causeOutOfResource, nil)
		_ = l.pl.writePacket(buildPacket(ck.localPort, ck.peerPort, ck.remoteInit().tag, encodeChunk(chunkAbort, 0, cause)), from)
		return
	}
	start := l.start
	if l.opts.ownDataPath() {
		start = l.startOwn
	}
	p, c, err := start(from, key, ck)
	if err != nil {
		return
	}
	if old != nil && old.assoc != nil {
		old.assoc.drop(errPeerRestarted) // 5.2.4 action A: its UEs go with it
	}
	_ = l.pl.writePacket(buildPacket(ck.localPort, ck.peerPort, ck.remoteInit().tag, encodeChunk(chunkCookieAck, 0, nil)), from)
	p.deliverRest(pkt)
	go func() {
		select {
		case l.accepted <- c:
		case <-l.done:
			c.Close()
		}
	}()
}

// hasRoom says whether one more association fits under MaxAssociations;
// one replacing old (a restart) always fits.
func (l *sctpListener) hasRoom(old *peerConn) bool {
	if old != nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.assocs) < l.opts.maxAssociations()
}

// start runs pion on an established association.
func (l *sctpListener) start(from netip.AddrPort, key endpoint, ck cookie) (*peerConn, Conn, error) {
	p := newPeerConn(l.pl, from, ck.localPort, ck.peerPort)
	p.onClose = func() { l.forget(key, p) }
	local, remote := ck.localInit(), ck.remoteInit()
	p.neg.ourOS, p.neg.peerMIS = local.outbound, remote.inbound
	p.neg.localTag, p.neg.peerTag = local.tag, remote.tag
	p.neg.peerSrcPort, p.neg.peerDstPort = ck.peerPort, ck.localPort
	opts := []sctp.ClientOption{sctp.WithNetConn(p), sctp.WithSNAP(ck.local, ck.remote),
		sctp.WithLoggerFactory(quietLogs()), sctp.WithName("amf"),
		sctp.WithMaxReceiveBufferSize(l.opts.receiveBuffer()), sctp.WithMaxMessageSize(l.opts.maxMessageSize())}
	if ms := l.opts.rtoMaxMillis(); ms > 0 {
		opts = append(opts, sctp.WithRTOMax(ms))
	}
	a, err := sctp.ClientWithOptions(opts...)
	if err != nil {
		p.Close()
		return nil, nil, err
	}
	c := newAssocConn(a, p, &p.neg, l.opts, nil)
	l.mu.Lock()
	p.assoc = c
	l.assocs[key] = p
	l.mu.Unlock()
	return p, c, nil
}

// forget drops a closed association.
func (l *sctpListener) forget(key endpoint, p *peerConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.assocs[key] == p {
		delete(l.assocs, key)
	}
}

// outOfTheBlue answers a packet no association owns, RFC 4960 8.4.
func (l *sctpListener) outOfTheBlue(from netip.AddrPort, pkt sctpPacket) {
	if !from.Addr().IsGlobalUnicast() && !from.Addr().IsLoopback() && !from.Addr().IsPrivate() {
		return // 8.4 (1): not to a non-unicast source
	}
	switch {
	case pkt.has(chunkAbort), pkt.has(chunkShutdownComplete), pkt.has(chunkCookieAck), pkt.has(chunkError):
		// 8.4 (2), (6), (7): never answered. An ERROR is answered only
		// when it is a Stale Cookie error, which (7) also says to drop;
		// any other ERROR is (8), left unanswered here to keep the rule simple.
		return
	case pkt.has(chunkShutdownAck):
		// 8.4 (5): SHUTDOWN COMPLETE with the T bit, the tag reflected.
		_ = l.pl.writePacket(buildPacket(pkt.dstPort, pkt.srcPort, pkt.vtag, encodeChunk(chunkShutdownComplete, flagT, nil)), from)
	default:
		// 8.4 (8): ABORT with the T bit, the tag reflected; the peer's
		// association with our earlier incarnation ends at once.
		_ = l.pl.writePacket(buildPacket(pkt.dstPort, pkt.srcPort, pkt.vtag, encodeChunk(chunkAbort, flagT, nil)), from)
	}
}

func (l *sctpListener) Accept() (Conn, error) {
	select {
	case c := <-l.accepted:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *sctpListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.mu.Lock()
		peers := make([]*peerConn, 0, len(l.assocs))
		for _, p := range l.assocs {
			peers = append(peers, p)
		}
		l.mu.Unlock()
		for _, p := range peers { // outside the lock: Close calls forget
			if p.assoc != nil {
				p.assoc.drop(net.ErrClosed)
			}
			p.Close()
		}
	})
	return l.pl.close()
}

func (l *sctpListener) Addr() net.Addr { return l.pl.localAddr() }

// associations is how many associations are up (tests, metrics).
func (l *sctpListener) associations() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.assocs)
}

// peerConn is the net.Conn pion runs an association on: packets from one
// remote endpoint in, packets to it out over the shared socket.
type peerConn struct {
	pl                  packetLayer
	to                  netip.AddrPort
	localPort, peerPort uint16 // SCTP ports; pion's SNAP mode writes 5000
	in                  chan []byte
	closed              chan struct{}
	once                sync.Once
	onClose             func()
	neg                 negotiation
	assoc               dropper   // set once when started
	own                 *ownAssoc // set once when started on the own data path
}

// dropper is an association that can end without SHUTDOWN.
type dropper interface{ drop(why error) }

// peerQueue is how many packets wait for pion per association before
// drops (SCTP retransmits); small, since every association has one.
const peerQueue = 256

func newPeerConn(pl packetLayer, to netip.AddrPort, localPort, peerPort uint16) *peerConn {
	return &peerConn{pl: pl, to: to, localPort: localPort, peerPort: peerPort,
		in: make(chan []byte, peerQueue), closed: make(chan struct{})}
}

// ownsTag applies RFC 4960 8.5: a packet belongs to the association when it
// carries our tag, or, for ABORT and SHUTDOWN COMPLETE with the T bit, the
// peer's.
func (p *peerConn) ownsTag(pkt sctpPacket) bool { return ownsTag(&p.neg, pkt) }

func ownsTag(neg *negotiation, pkt sctpPacket) bool {
	c := pkt.first()
	local, peer := neg.tags()
	if (c.typ == chunkAbort || c.typ == chunkShutdownComplete) && c.flags&flagT != 0 {
		return pkt.vtag == peer
	}
	return pkt.vtag == local
}

func (p *peerConn) deliver(pkt []byte) {
	select {
	case p.in <- pkt:
	case <-p.closed:
	default: // queue full: drop like a full socket buffer would; SCTP retransmits
	}
}

// deliverRest hands pion the chunks bundled after a COOKIE ECHO.
func (p *peerConn) deliverRest(pkt sctpPacket) {
	if len(pkt.chunks) < 2 {
		return
	}
	if p.own != nil {
		p.own.receive(pkt, 1)
		return
	}
	rest := append([]byte(nil), pkt.raw[:commonHeaderLen]...)
	rest = append(rest, pkt.raw[pkt.chunks[1].off:]...)
	fillChecksum(rest)
	p.deliver(rest)
}

func (p *peerConn) Read(b []byte) (int, error) {
	select {
	case pkt := <-p.in:
		p.neg.received(pkt)
		return copy(b, pkt), nil
	case <-p.closed:
		return 0, io.EOF
	}
}

func (p *peerConn) Write(b []byte) (int, error) {
	select {
	case <-p.closed:
		return 0, net.ErrClosed
	default:
	}
	if len(b) < commonHeaderLen || !p.neg.sent(b) {
		return len(b), nil
	}
	out := append([]byte(nil), b...)
	setPorts(out, p.localPort, p.peerPort)
	if err := p.pl.writePacket(out, p.to); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (p *peerConn) Close() error {
	p.once.Do(func() {
		close(p.closed)
		if p.onClose != nil {
			p.onClose()
		}
	})
	return nil
}

func (p *peerConn) LocalAddr() net.Addr              { return p.pl.localAddr() }
func (p *peerConn) RemoteAddr() net.Addr             { return p.pl.netAddr(p.to) }
func (p *peerConn) SetDeadline(time.Time) error      { return nil }
func (p *peerConn) SetReadDeadline(time.Time) error  { return nil }
func (p *peerConn) SetWriteDeadline(time.Time) error { return nil }
