package n2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/pion/logging"
	"github.com/pion/sctp"
)

// Tunables of the user-space transport.
const (
	udpStreams  = 32 // most streams we send on, even if more were negotiated
	maxDatagram = 64 * 1024
	// streamReadBuffer fits most NGAP PDUs; a larger one is read into a
	// buffer of its own size, so idle streams hold little.
	streamReadBuffer = 16 << 10
)

// quietLogs keeps pion's own logging out of the NF logs.
func quietLogs() logging.LoggerFactory {
	f := logging.NewDefaultLoggerFactory()
	f.DefaultLogLevel = logging.LogLevelDisabled
	return f
}

func sctpConfig(nc net.Conn, name string, o Options) sctp.Config {
	return sctp.Config{NetConn: nc, LoggerFactory: quietLogs(), Name: name, RTOMax: o.rtoMaxMillis(),
		MaxReceiveBufferSize: o.receiveBuffer(), MaxMessageSize: o.maxMessageSize()}
}

// udpLayer carries SCTP packets as UDP payloads (RFC 6951).
type udpLayer struct{ pc *net.UDPConn }

func (u udpLayer) readPacket(buf []byte) (int, netip.AddrPort, error) {
	n, from, err := u.pc.ReadFromUDPAddrPort(buf)
	return n, netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), err
}

func (u udpLayer) writePacket(pkt []byte, to netip.AddrPort) error {
	_, err := u.pc.WriteToUDPAddrPort(pkt, to)
	return err
}

func (u udpLayer) netAddr(a netip.AddrPort) net.Addr { return net.UDPAddrFromAddrPort(a) }
func (u udpLayer) localAddr() net.Addr               { return u.pc.LocalAddr() }
func (u udpLayer) close() error                      { return u.pc.Close() }

func listenUDP(addr string, o Options) (*sctpListener, error) {
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
	return newSCTPListener(udpLayer{pc}, 0, o), nil
}

// dialUDP runs the client side over a connected UDP socket. An attempt the
// AMF's host refuses with ICMP Port Unreachable (no AMF listening yet) is
// made again shortly on a fresh socket, until ctx ends (RFC 6951 5.5).
func dialUDP(ctx context.Context, addr string, o Options) (Conn, error) {
	pause := firstRefusalPause
	for {
		uc, err := udpSocket(ctx, addr)
		if err != nil {
			return nil, err
		}
		var c Conn
		if o.ownDataPath() {
			c, err = associateOwn(ctx, addr, udpPacketConn(uc), watchICMP(uc), o)
		} else {
			c, err = associate(ctx, addr, uc, uc, watchICMP(uc), o)
		}
		if !errors.Is(err, errPortUnreachable) {
			return c, err
		}
		if o.onRefused != nil {
			o.onRefused()
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("n2: SCTP association with %s: %w (last attempt: %w)", addr, ctx.Err(), err)
		case <-time.After(pause):
		}
		pause = min(2*pause, o.refusalPauseMax())
	}
}

// udpSocket is a UDP socket connected to addr, with room for bursts.
func udpSocket(ctx context.Context, addr string) (*net.UDPConn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return nil, fmt.Errorf("n2: dial %s: %w", addr, err)
	}
	uc := nc.(*net.UDPConn) // "udp" always gives one
	_ = uc.SetReadBuffer(8 << 20)
	_ = uc.SetWriteBuffer(8 << 20)
	return uc, nil
}

// associate runs the client side of the SCTP handshake over nc (SCTP
// packets over UDP or raw IP) until ctx ends; on failure it closes sock,
// the socket under nc. icmp is nc's error queue (nil: ICMP ignored).
func associate(ctx context.Context, addr string, nc net.Conn, sock io.Closer, icmp *errorQueue, o Options) (Conn, error) {
	type result struct {
		a   *sctp.Association
		err error
	}
	done := make(chan result, 1)
	neg := &negotiation{}
	rc := &refusalConn{Conn: nc, icmp: icmp, neg: neg}
	go func() {
		a, err := sctp.Client(sctpConfig(&observedConn{rc, neg}, "gnb", o))
		done <- result{a, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			sock.Close()
			if rc.refused.Load() {
				r.err = errPortUnreachable
			}
			return nil, fmt.Errorf("n2: SCTP association with %s: %w", addr, r.err)
		}
		return newAssocConn(r.a, rc, neg, o, rc.cause), nil // heartbeats go through rc too: their refusal counts
	case <-ctx.Done():
		sock.Close()
		return nil, fmt.Errorf("n2: SCTP association with %s: %w", addr, ctx.Err())
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

	metrics    *Metrics
	neg        *negotiation
	maxMessage uint32

	mu      sync.Mutex
	streams map[uint16]*sctp.Stream
	err     error
	// cause, when set, says why the packet layer ended the association
	// (ICMP Port Unreachable) where pion reports only its end.
	cause func() error
}

type message struct {
	pdu    []byte
	stream uint16
}

// newAssocConn starts serving association a over nc; cause, when not nil,
// names why the packet layer ended it (pion reports only that it ended).
func newAssocConn(a *sctp.Association, nc net.Conn, neg *negotiation, o Options, cause func() error) *assocConn {
	c := &assocConn{a: a, nc: nc, neg: neg, cause: cause, metrics: o.Metrics, maxMessage: o.maxMessageSize(), msgs: make(chan message, 128), done: make(chan struct{}), streams: map[uint16]*sctp.Stream{}}
	go c.acceptLoop()
	if interval, maxRetrans := o.heartbeat(); interval > 0 {
		go c.heartbeat(interval, maxRetrans)
	}
	return c
}

// errPeerUnreachable ends an association whose peer stopped answering.
var errPeerUnreachable = errors.New("n2: the peer stopped answering heartbeats (RFC 4960 8.3): association failed")

// heartbeat probes the peer (runHeartbeats) with our own HEARTBEAT: pion
// v1.11.0 sends it without the mandatory Heartbeat Info (RFC 4960 3.3.5),
// which Linux answers with an ABORT.
func (c *assocConn) heartbeat(interval time.Duration, maxRetrans int) {
	runHeartbeats(c.done, c.neg, interval, maxRetrans,
		func(pkt []byte) { _, _ = c.nc.Write(pkt) }, func() { c.drop(errPeerUnreachable) })
}

// runHeartbeats probes the peer every interval (RFC 4960 8.3) and counts
// the HEARTBEATs that went unanswered in a row; past maxRetrans the only
// path of this single-homed association is down, so the association has
// failed (8.2, 8.1): failed is called, once, until done closes.
func runHeartbeats(done <-chan struct{}, neg *negotiation, interval time.Duration, maxRetrans int, send func([]byte), failed func()) {
	timer := time.NewTimer(jittered(interval))
	defer timer.Stop()
	acked, unanswered, probing := neg.heartbeatAcks.Load(), 0, false
	for {
		select {
		case <-done:
			return
		case <-timer.C:
		}
		if now := neg.heartbeatAcks.Load(); now != acked {
			acked, unanswered = now, 0
		} else if probing {
			unanswered++
		}
		if unanswered > maxRetrans {
			failed()
			return
		}
		if pkt := neg.heartbeatPacket(time.Now()); pkt != nil {
			send(pkt)
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
	buf := make([]byte, streamReadBuffer)
	for {
		pdu := buf
		n, ppi, err := s.ReadSCTP(pdu)
		if errors.Is(err, io.ErrShortBuffer) {
			// pion keeps a message at the head of its stream until it is
			// read whole; n is its size, bounded by the receive window.
			// Up to MaxMessageSize it is received, past it dropped and
			// counted; the association stays either way.
			pdu = make([]byte, n)
			n, ppi, err = s.ReadSCTP(pdu)
			if err == nil && n > int(c.maxMessage) {
				c.metrics.discard(DiscardTooBig)
				continue
			}
		}
		if err != nil {
			c.fail(io.EOF)
			return
		}
		if ppi != sctp.PayloadProtocolIdentifier(PPIDNGAP) { // not NGAP: TS 38.412 7
			c.metrics.discard(DiscardPPID)
			continue
		}
		select {
		case c.msgs <- message{pdu: append([]byte(nil), pdu[:n]...), stream: s.StreamIdentifier()}:
		case <-c.done:
			return
		}
	}
}

// fail records why the association ended and wakes the reader.
func (c *assocConn) fail(err error) {
	if err == io.EOF && c.cause != nil {
		if why := c.cause(); why != nil {
			err = why
		}
	}
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
