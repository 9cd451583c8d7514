package n2

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/pion/logging"
	"github.com/pion/sctp"
)

// Tunables of the user-space transport.
const (
	udpStreams       = 32               // most streams we send on, even if more were negotiated
	peerQueue        = 4096             // datagrams buffered per association before drops (SCTP retransmits)
	handshakeTimeout = 10 * time.Second // a peer that sends no valid INIT is forgotten
	maxDatagram      = 64 * 1024
)

// quietLogs keeps pion's own logging out of the NF logs.
func quietLogs() logging.LoggerFactory {
	f := logging.NewDefaultLoggerFactory()
	f.DefaultLogLevel = logging.LogLevelDisabled
	return f
}

func sctpConfig(nc net.Conn, name string) sctp.Config {
	return sctp.Config{NetConn: nc, LoggerFactory: quietLogs(), Name: name, MaxReceiveBufferSize: 4 << 20}
}

// udpListener demultiplexes one UDP socket into associations by remote UDP
// address and the peer's SCTP port: a Linux host sends all its encapsulated
// associations from one UDP port (RFC 6951 5.1, net.sctp.udp_port), so the
// UDP address alone does not tell its gNBs apart.
type udpListener struct {
	pc       *net.UDPConn
	opts     Options
	accepted chan Conn
	done     chan struct{}

	mu    sync.Mutex
	peers map[endpoint]*remote
	once  sync.Once
}

// endpoint names a remote SCTP endpoint over UDP.
type endpoint struct {
	udp      netip.AddrPort
	sctpPort uint16
}

// remote is what one remote endpoint (UDP address, SCTP port) has: its
// association and, while that peer may be restarting, the handshake of a
// replacement (RFC 4960 5.2.2).
type remote struct {
	current   *peerConn
	candidate *peerConn
}

func listenUDP(addr string, o Options) (Listener, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("n2: %w", err)
	}
	pc, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("n2: listen %s: %w", addr, err)
	}
	_ = pc.SetReadBuffer(8 << 20)
	_ = pc.SetWriteBuffer(8 << 20)
	l := &udpListener{pc: pc, opts: o, accepted: make(chan Conn, 64), done: make(chan struct{}), peers: map[endpoint]*remote{}}
	go l.readLoop()
	return l, nil
}

func (l *udpListener) readLoop() {
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := l.pc.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. ICMP port unreachable surfaced on Linux: not fatal
		}
		pkt := append([]byte(nil), buf[:n]...)
		l.route(from, pkt).deliver(pkt)
	}
}

// route picks the association a packet from a remote address belongs to,
// creating one (which waits for the peer's INIT in the background) for a
// new address.
//
// An INIT for an established association is a peer that restarted on the
// same address and port, or a stale or forged INIT. RFC 4960 5.2.2 answers
// it with an INIT ACK carrying a new tag, and 5.2.4 restarts the association
// only when the peer echoes that cookie, which a forger cannot. So the INIT
// goes to a separate candidate association; packets with the candidate's
// tag follow it; the old association ends only when the candidate is up.
func (l *udpListener) route(from *net.UDPAddr, pkt []byte) *peerConn {
	info, ok := parsePacket(pkt)
	key := endpoint{udp: from.AddrPort()}
	if len(pkt) >= 2 {
		key.sctpPort = binary.BigEndian.Uint16(pkt) // the peer's SCTP source port
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.peers[key]
	if r == nil {
		r = &remote{}
		l.peers[key] = r
	}
	switch {
	case r.current == nil:
		r.current = l.startHandshake(key, from)
		return r.current
	case ok && info.first == chunkInit && r.current.established():
		if r.candidate == nil {
			r.candidate = l.startHandshake(key, from)
		}
		return r.candidate
	case ok && r.candidate != nil && info.vtag != 0 && info.vtag == r.candidate.neg.tag():
		return r.candidate
	}
	return r.current
}

// startHandshake runs a new association's handshake; the caller holds l.mu.
func (l *udpListener) startHandshake(key endpoint, from *net.UDPAddr) *peerConn {
	p := newPeerConn(l.pc, from, nil)
	p.onClose = func() { l.forget(key, p) }
	go l.handshake(key, p)
	return p
}

// forget drops a closed association from its address.
func (l *udpListener) forget(key endpoint, p *peerConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.peers[key]
	if r == nil {
		return
	}
	if r.candidate == p {
		r.candidate = nil
	}
	if r.current == p {
		r.current = nil
	}
	if r.current == nil && r.candidate == nil {
		delete(l.peers, key)
	}
}

func (l *udpListener) handshake(key endpoint, p *peerConn) {
	timer := time.AfterFunc(handshakeTimeout, func() { p.Close() })
	assoc, err := sctp.Server(sctpConfig(p, "amf"))
	if !timer.Stop() || err != nil {
		p.Close() // garbage, or a peer that never completed the handshake
		return
	}
	c := newAssocConn(assoc, p, &p.neg, l.opts)
	if old := l.establish(key, p, c); old != nil {
		old.drop(errPeerRestarted) // its UEs go with it: the AMF sees the association end
	}
	select {
	case l.accepted <- c:
	case <-l.done:
		c.Close()
	}
}

// establish records an association as up; when it replaces one of a
// restarted peer (RFC 4960 5.2.4 action A), it returns the old one.
func (l *udpListener) establish(key endpoint, p *peerConn, c *assocConn) (old *assocConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p.assoc = c
	r := l.peers[key]
	if r == nil || r.candidate != p {
		return nil
	}
	if r.current != nil {
		old = r.current.assoc
	}
	r.current, r.candidate = p, nil
	return old
}

func (l *udpListener) Accept() (Conn, error) {
	select {
	case c := <-l.accepted:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *udpListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.mu.Lock()
		peers := make([]*peerConn, 0, len(l.peers))
		for _, r := range l.peers {
			for _, p := range []*peerConn{r.current, r.candidate} {
				if p != nil {
					peers = append(peers, p)
				}
			}
		}
		l.mu.Unlock()
		for _, p := range peers { // outside the lock: Close calls forget
			p.Close()
		}
	})
	return l.pc.Close()
}

func (l *udpListener) Addr() net.Addr { return l.pc.LocalAddr() }

// peerConn is the net.Conn pion runs an association on: datagrams from one
// remote address in, datagrams to it out over the shared socket.
type peerConn struct {
	pc      *net.UDPConn
	remote  *net.UDPAddr
	in      chan []byte
	closed  chan struct{}
	once    sync.Once
	onClose func()
	neg     negotiation
	assoc   *assocConn // once the handshake is done; guarded by the listener's mu
}

func newPeerConn(pc *net.UDPConn, remote *net.UDPAddr, onClose func()) *peerConn {
	return &peerConn{pc: pc, remote: remote, in: make(chan []byte, peerQueue), closed: make(chan struct{}), onClose: onClose}
}

// established reports whether the handshake completed; the caller holds
// the listener's mu.
func (p *peerConn) established() bool { return p.assoc != nil }

func (p *peerConn) deliver(pkt []byte) {
	select {
	case p.in <- pkt:
	case <-p.closed:
	default: // queue full: drop like a full socket buffer would; SCTP retransmits
	}
}

func (p *peerConn) Read(b []byte) (int, error) {
	select {
	case pkt := <-p.in:
		p.neg.received(pkt)
		return copy(b, stripInitParams(pkt)), nil
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
	if !p.neg.sent(b) {
		return len(b), nil
	}
	return p.pc.WriteToUDP(b, p.remote)
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

func (p *peerConn) LocalAddr() net.Addr              { return p.pc.LocalAddr() }
func (p *peerConn) RemoteAddr() net.Addr             { return p.remote }
func (p *peerConn) SetDeadline(time.Time) error      { return nil }
func (p *peerConn) SetReadDeadline(time.Time) error  { return nil }
func (p *peerConn) SetWriteDeadline(time.Time) error { return nil }

// dialUDP runs the client side over a connected UDP socket.
func dialUDP(ctx context.Context, addr string, o Options) (Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return nil, fmt.Errorf("n2: dial %s: %w", addr, err)
	}
	if uc, ok := nc.(*net.UDPConn); ok {
		_ = uc.SetReadBuffer(8 << 20)
		_ = uc.SetWriteBuffer(8 << 20)
	}
	type result struct {
		a   *sctp.Association
		err error
	}
	done := make(chan result, 1)
	neg := &negotiation{}
	go func() {
		a, err := sctp.Client(sctpConfig(&observedConn{&refusalTolerantConn{Conn: nc}, neg}, "gnb"))
		done <- result{a, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			nc.Close()
			return nil, fmt.Errorf("n2: SCTP association with %s: %w", addr, r.err)
		}
		return newAssocConn(r.a, nc, neg, o), nil
	case <-ctx.Done():
		nc.Close()
		return nil, fmt.Errorf("n2: SCTP association with %s: %w", addr, ctx.Err())
	}
}

// refusalTolerantConn hides the ECONNREFUSED a connected UDP socket reports
// after an ICMP port unreachable, so SCTP keeps retransmitting its INIT
// until the AMF is up or the caller gives up.
type refusalTolerantConn struct{ net.Conn }

func (r *refusalTolerantConn) Read(b []byte) (int, error) {
	for {
		n, err := r.Conn.Read(b)
		var se *os.SyscallError
		if err != nil && errors.As(err, &se) {
			continue
		}
		return n, err
	}
}

// assocConn adapts a pion association to Conn: one reader goroutine per
// stream funnels messages into one queue, in arrival order per stream.
type assocConn struct {
	a         *sctp.Association
	nc        net.Conn
	msgs      chan message
	done      chan struct{}
	once      sync.Once
	closeOnce sync.Once

	metrics *Metrics
	neg     *negotiation

	mu      sync.Mutex
	streams map[uint16]*sctp.Stream
	err     error
}

type message struct {
	pdu    []byte
	stream uint16
}

func newAssocConn(a *sctp.Association, nc net.Conn, neg *negotiation, o Options) *assocConn {
	c := &assocConn{a: a, nc: nc, neg: neg, metrics: o.Metrics, msgs: make(chan message, 1024), done: make(chan struct{}), streams: map[uint16]*sctp.Stream{}}
	go c.acceptLoop()
	if interval, maxRetrans := o.heartbeat(); interval > 0 {
		go c.heartbeat(interval, maxRetrans)
	}
	return c
}

// errPeerUnreachable ends an association whose peer stopped answering.
var errPeerUnreachable = errors.New("n2: the peer stopped answering heartbeats (RFC 4960 8.3): association failed")

// heartbeat probes the peer every interval (RFC 4960 8.3) and counts the
// HEARTBEATs that went unanswered in a row; past maxRetrans the only path
// of this single-homed association is down, so the association has failed
// (8.2, 8.1) and the reader sees it end. We build the HEARTBEAT ourselves:
// pion v1.11.0 sends it without the mandatory Heartbeat Info (RFC 4960
// 3.3.5), which Linux answers with an ABORT.
func (c *assocConn) heartbeat(interval time.Duration, maxRetrans int) {
	timer := time.NewTimer(jittered(interval))
	defer timer.Stop()
	acked, unanswered, probing := c.neg.heartbeatAcks.Load(), 0, false
	for {
		select {
		case <-c.done:
			return
		case <-timer.C:
		}
		if now := c.neg.heartbeatAcks.Load(); now != acked {
			acked, unanswered = now, 0
		} else if probing {
			unanswered++
		}
		if unanswered > maxRetrans {
			c.drop(errPeerUnreachable)
			return
		}
		if pkt := c.neg.heartbeatPacket(time.Now()); pkt != nil {
			_, _ = c.nc.Write(pkt)
			probing = true
		}
		timer.Reset(jittered(interval))
	}
}

// jittered spreads heartbeats by +-25% so associations set up together
// do not probe together (RFC 4960 8.3 jitters too).
func jittered(d time.Duration) time.Duration {
	return d*3/4 + rand.N(d/2+1)
}

func (c *assocConn) acceptLoop() {
	for {
		s, err := c.a.AcceptStream()
		if err != nil {
			c.fail(io.EOF)
			return
		}
		c.adopt(s)
	}
}

// adopt starts reading a stream once, whether we opened it or the peer did.
func (c *assocConn) adopt(s *sctp.Stream) *sctp.Stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	if have, ok := c.streams[s.StreamIdentifier()]; ok {
		return have
	}
	c.streams[s.StreamIdentifier()] = s
	go c.readStream(s)
	return s
}

func (c *assocConn) readStream(s *sctp.Stream) {
	buf := make([]byte, maxDatagram)
	for {
		n, ppi, err := s.ReadSCTP(buf)
		if err != nil {
			c.fail(io.EOF)
			return
		}
		if ppi != sctp.PayloadProtocolIdentifier(PPIDNGAP) { // not NGAP: TS 38.412 7
			c.metrics.discard(DiscardPPID)
			continue
		}
		select {
		case c.msgs <- message{pdu: append([]byte(nil), buf[:n]...), stream: s.StreamIdentifier()}:
		case <-c.done:
			return
		}
	}
}

// fail records why the association ended and wakes the reader.
func (c *assocConn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	c.once.Do(func() { close(c.done) })
}

func (c *assocConn) ReadMsg() ([]byte, uint16, error) {
	select {
	case m := <-c.msgs:
		return m.pdu, m.stream, nil
	case <-c.done:
		select { // deliver what arrived before the end
		case m := <-c.msgs:
			return m.pdu, m.stream, nil
		default:
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return nil, 0, c.err
	}
}

func (c *assocConn) WriteMsg(pdu []byte, stream uint16) error {
	select {
	case <-c.done:
		return net.ErrClosed
	default:
	}
	if n := c.Streams(); stream >= n { // the peer would discard it (RFC 4960 6.5)
		return fmt.Errorf("n2: stream %d not granted: the association has %d outbound streams", stream, n)
	}
	s, err := c.a.OpenStream(stream, sctp.PayloadProtocolIdentifier(PPIDNGAP))
	if err != nil {
		return fmt.Errorf("n2: stream %d: %w", stream, err)
	}
	s = c.adopt(s)
	_, err = s.WriteSCTP(pdu, sctp.PayloadProtocolIdentifier(PPIDNGAP))
	return err
}

// shutdownTimeout bounds the graceful SHUTDOWN (RFC 4960 9.2) before the
// association is aborted instead.
const shutdownTimeout = time.Second

// Close ends the association gracefully, so the peer sees it end at once
// rather than after its heartbeats time out. It is safe to call twice.
func (c *assocConn) Close() error {
	first := false
	c.closeOnce.Do(func() { first = true })
	if !first {
		return nil
	}
	c.fail(net.ErrClosed)
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	if err := c.a.Shutdown(ctx); err != nil {
		c.a.Abort("closing")
	}
	cancel()
	err := c.a.Close()
	c.nc.Close()
	return err
}

// errPeerRestarted ends the association of a peer that restarted.
var errPeerRestarted = fmt.Errorf("n2: the peer restarted and set up a new association (RFC 4960 5.2.4): %w", io.EOF)

// drop ends the association without SHUTDOWN, for a peer that would never
// answer it: one that restarted (and discards our old tag) or is gone.
func (c *assocConn) drop(why error) {
	first := false
	c.closeOnce.Do(func() { first = true })
	if !first {
		return
	}
	c.fail(why)
	c.a.Close()
	c.nc.Close()
}

func (c *assocConn) LocalAddr() net.Addr  { return c.nc.LocalAddr() }
func (c *assocConn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// Streams is the outbound stream count the handshake granted (capped at
// udpStreams): a peer discards DATA on a stream it did not grant
// (RFC 4960 6.5), so callers keep to 0..Streams()-1, stream 0 for
// non-UE-associated signalling (TS 38.412 7).
func (c *assocConn) Streams() uint16 { return c.neg.outboundStreams() }
