package n2

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// ownAssoc is one established SCTP association run by our own data path
// (sctp_impl "own") instead of pion/sctp: DATA with TSN and SSN (RFC 4960
// 6.1-6.6, 6.9), SACK delayed but bundled with outgoing DATA (6.2) or
// sent at once when the peer's DATA carries the I bit (RFC 9260 3.3.1; we
// set it when cwnd holds chunks back), T3-rtx with RTO (6.3), congestion control with fast retransmit (7.2,
// own_cwnd.go), HEARTBEAT (8.3), ABORT and SHUTDOWN (9). A message is sent
// inline in the writer's goroutine as far as cwnd allows, one syscall per
// packet; what cwnd holds back waits in a queue that the SACKs drain in
// the goroutine that reads them. The socket's one reader goroutine hands
// a received message straight to ReadMsg's channel: no goroutine of the
// association's own on either path.
//
// What it leaves out, NGAP's traffic being a few small messages per UE
// procedure: per-stream head-of-line independence (messages are
// delivered in TSN order, which keeps each stream's order), and the
// optional extensions (no FORWARD TSN, ASCONF, AUTH, I-DATA).
type ownAssoc struct {
	send       func([]byte) error // writes one SCTP packet to the peer
	release    func()             // closes what carries the packets (socket, or the listener's entry)
	neg        *negotiation
	localPort  uint16
	peerPort   uint16
	local      net.Addr
	remote     net.Addr
	metrics    *Metrics
	maxMessage uint32
	rwnd       uint32 // the receive window we advertise
	rtoMin     time.Duration
	rtoMax     time.Duration
	cause      func() error // why the packet layer ended it (ICMP), or nil

	msgs        chan message
	done        chan struct{} // closed once the user's side has ended
	established chan struct{} // closed at COOKIE ACK (dialing side)
	progress    chan struct{} // the handshake moved on (dialing side)
	shutdown    chan struct{} // closed at SHUTDOWN ACK or COMPLETE
	endOnce     sync.Once
	finishOnce  sync.Once
	closeOnce   sync.Once
	shutOnce    sync.Once

	mu      sync.Mutex
	space   *sync.Cond // SACKs moved the queue or the flight, the socket or inbox changed hands, or the association ended
	state   assocState
	closing bool // Close has begun: no new messages, the queue drains (9.2 SHUTDOWN-PENDING)
	err     error
	snd     sender
	rcv     receiver
	// handshake (dialing side): the packet to repeat until answered, our
	// INIT, and the options the data path starts with at the INIT ACK
	handshakePkt []byte
	ours         initChunk
	opts         Options
	// inline (Options.ReadInline, dialing side): ReadMsg reads the socket
	// itself once established; what it completes waits in inbox.
	inline bool
	rc     *refusalConn
	inbox  []message
	buf    []byte
	// socketBusy: ReadMsg or the drainer reads the socket; readWaiters
	// ReadMsg calls waiting for their turn.
	socketBusy  bool
	readWaiters int
}

type assocState int

const (
	stateCookieWait assocState = iota
	stateCookieEchoed
	stateEstablished
	stateShutdownSent
	stateClosed
)

// Protocol parameters of the own data path (RFC 4960 15 where it names them).
const (
	ownMaxPacket    = 1200 // the largest packet we send, as pion does; longer messages are fragmented (6.9)
	ownMaxChunkData = ownMaxPacket - commonHeaderLen - sackFixedLen - dataHeaderLen
	sackDelay       = 200 * time.Millisecond // 6.2: at most 500 ms, 200 ms advised
	rtoInitial      = time.Second            // RTO.Initial
	rtoMinDefault   = time.Second            // RTO.Min
	rtoMaxDefault   = 60 * time.Second       // RTO.Max
	assocMaxRetrans = 10                     // Association.Max.Retrans
	maxInitRetrans  = 8                      // Max.Init.Retransmits
	maxGapBlocks    = 64                     // gap blocks reported per SACK
	maxDupTSNs      = 16                     // duplicate TSNs reported per SACK
	ownStreams      = 64                     // streams a dialing side asks for
)

var (
	errAborted        = fmt.Errorf("n2: the peer aborted the association (RFC 4960 9.1): %w", io.EOF)
	errShutdownByPeer = fmt.Errorf("n2: the peer shut the association down (RFC 4960 9.2): %w", io.EOF)
	errRetransLimit   = errors.New("n2: DATA went unacknowledged past Association.Max.Retrans (RFC 4960 8.1): association failed")
)

// ownConfig is what an association needs from its transport.
type ownConfig struct {
	send                func([]byte) error
	release             func()
	neg                 *negotiation
	localPort, peerPort uint16
	local, remote       net.Addr
	cause               func() error
}

func newOwnAssoc(cfg ownConfig, o Options) *ownAssoc {
	a := &ownAssoc{send: cfg.send, release: cfg.release, neg: cfg.neg, localPort: cfg.localPort, peerPort: cfg.peerPort,
		local: cfg.local, remote: cfg.remote, cause: cfg.cause, metrics: o.Metrics, maxMessage: o.maxMessageSize(),
		rwnd: o.receiveBuffer(), rtoMin: rtoMinDefault, rtoMax: rtoMaxDefault,
		msgs: make(chan message, 1024), done: make(chan struct{}), established: make(chan struct{}),
		progress: make(chan struct{}, 1), shutdown: make(chan struct{})}
	if o.RTOMax > 0 {
		a.rtoMax = o.RTOMax
		a.rtoMin = min(a.rtoMin, a.rtoMax)
	}
	a.space = sync.NewCond(&a.mu)
	a.snd.rto = min(max(rtoInitial, a.rtoMin), a.rtoMax)
	a.snd.t3 = newLazyTimer(a.t3Expired)
	a.rcv.sackTimer = newLazyTimer(a.sackTimerExpired)
	return a
}

// begin starts the association's data path from both sides' INIT chunks
// (ours, and the peer's INIT or INIT ACK): the TSNs each side starts from,
// the window the peer offers, and the heartbeats.
func (a *ownAssoc) begin(ours, peers initChunk, o Options) {
	a.snd.nextTSN = ours.initialTSN
	a.snd.cumAck = ours.initialTSN - 1
	a.snd.peerRwnd = peers.rwnd
	a.snd.cc.startWindow(peers.rwnd)
	a.snd.ssn = map[uint16]uint16{}
	a.rcv.cumTSN = peers.initialTSN - 1
	a.rcv.pending = map[uint32]sctpData{}
	a.neg.mu.Lock()
	a.neg.localTag, a.neg.peerTag = ours.tag, peers.tag
	a.neg.ourOS, a.neg.peerMIS = ours.outbound, peers.inbound
	a.neg.peerSrcPort, a.neg.peerDstPort = a.peerPort, a.localPort
	a.neg.mu.Unlock()
	if interval, maxRetrans := o.heartbeat(); interval > 0 {
		go runHeartbeats(a.done, a.neg, interval, maxRetrans,
			func(p []byte) { _ = a.send(p) }, func() { a.drop(errPeerUnreachable) })
	}
}

// header starts a packet to the peer (RFC 4960 3.1); the checksum is
// filled when it is complete.
func (a *ownAssoc) header(vtag uint32) []byte {
	b := make([]byte, commonHeaderLen, ownMaxPacket+64)
	b[0], b[1] = byte(a.localPort>>8), byte(a.localPort)
	b[2], b[3] = byte(a.peerPort>>8), byte(a.peerPort)
	b[4], b[5], b[6], b[7] = byte(vtag>>24), byte(vtag>>16), byte(vtag>>8), byte(vtag)
	return b
}

func (a *ownAssoc) peerTag() uint32 {
	_, peer := a.neg.tags()
	return peer
}

// control sends one chunk alone, tagged with the peer's tag.
func (a *ownAssoc) control(typ, flags uint8, value []byte) {
	pkt := append(a.header(a.peerTag()), encodeChunk(typ, flags, value)...)
	fillChecksum(pkt)
	_ = a.send(pkt)
}

// receive handles a packet the transport has checked (checksum, tag),
// from its chunk number first on; called by the socket's reader only.
func (a *ownAssoc) receive(pkt sctpPacket, first int) {
	a.mu.Lock()
	if a.state == stateClosed {
		a.mu.Unlock()
		return
	}
	var ready []message
	gotData, sackNow, gotSack := false, false, false
chunks:
	for _, c := range pkt.chunks[first:] {
		raw := pkt.raw[c.off : c.off+c.length]
		switch c.typ {
		case chunkData:
			now, msgs := a.onData(raw)
			gotData, sackNow, ready = true, sackNow || now, append(ready, msgs...)
		case chunkSack:
			if s, err := parseSack(raw); err == nil {
				a.onSack(s)
				gotSack = true
			}
		case chunkHeartbeat:
			a.control(chunkHeartbeatAck, 0, raw[4:]) // 8.3: the Heartbeat Info goes back as it came
		case chunkHeartbeatAck:
			a.neg.heartbeatAcks.Add(1)
		case chunkAbort:
			a.failLocked(errAborted)
		case chunkShutdown:
			a.onShutdown(raw)
		case chunkShutdownAck:
			// 9.2: the peer has all our data; SHUTDOWN COMPLETE ends it.
			a.control(chunkShutdownComplete, 0, nil)
			a.shutOnce.Do(func() { close(a.shutdown) })
		case chunkShutdownComplete:
			a.shutOnce.Do(func() { close(a.shutdown) })
		case chunkInitAck:
			a.onInitAck(raw)
		case chunkCookieAck:
			a.onCookieAck()
		case chunkError, chunkInit, chunkCookieEcho:
			// ERROR reports only; an INIT or COOKIE ECHO for this
			// association is the listener's, which never passes it here.
		default:
			if c.typ>>6 < 2 { // 3.2: top bits 00 and 01 stop the packet's processing
				break chunks
			} // 10 and 11: skip the chunk
		}
	}
	if gotSack && a.state != stateClosed {
		_ = a.transmitLocked(time.Now()) // the queue drains here, bundling the SACK we owe
	}
	var sackPkt []byte
	if gotData && a.rcv.sackOwed() {
		sackPkt = a.afterData(sackNow)
	}
	if a.inline {
		a.inbox = append(a.inbox, ready...)
		ready = nil
	}
	a.mu.Unlock()
	a.hand(ready)
	if sackPkt != nil {
		_ = a.send(sackPkt)
	}
}

// hand passes received messages to ReadMsg, in order.
func (a *ownAssoc) hand(ready []message) {
	for _, m := range ready {
		select {
		case a.msgs <- m:
		case <-a.done:
			return
		}
	}
}

// onShutdown answers the peer's SHUTDOWN (9.2): what it acknowledges is
// taken as a SACK, our SHUTDOWN ACK goes back, and the association ends
// for our user as a close by the peer.
func (a *ownAssoc) onShutdown(raw []byte) {
	if len(raw) >= 8 {
		cum := uint32(raw[4])<<24 | uint32(raw[5])<<16 | uint32(raw[6])<<8 | uint32(raw[7])
		a.onSack(sack{cumTSN: cum, rwnd: a.snd.peerRwnd})
	}
	a.control(chunkShutdownAck, 0, nil)
	a.failLocked(errShutdownByPeer)
}

// endUser ends the association for its user: ReadMsg returns why, after
// the messages already received.
func (a *ownAssoc) endUser(why error) {
	a.endOnce.Do(func() {
		a.err = why
		close(a.done)
	})
}

// failLocked ends the association at once, with a.mu held.
func (a *ownAssoc) failLocked(why error) {
	if why == io.EOF || errors.Is(why, errPeerUnreachable) {
		if a.cause != nil {
			if c := a.cause(); c != nil {
				why = c
			}
		}
	}
	a.endUser(why)
	a.state = stateClosed
	a.snd.t3.kill()
	a.rcv.sackTimer.kill()
	a.space.Broadcast()
	a.finishOnce.Do(func() { go a.release() }) // not under a.mu: the listener's lock comes after ours
}

// drop ends the association without SHUTDOWN (a peer that restarted, a
// listener closing, heartbeats unanswered).
func (a *ownAssoc) drop(why error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failLocked(why)
}

func (a *ownAssoc) ReadMsg() ([]byte, uint16, error) {
	if a.inline {
		return a.readInline()
	}
	select {
	case m := <-a.msgs:
		return m.pdu, m.stream, nil
	case <-a.done:
		select { // deliver what arrived before the end
		case m := <-a.msgs:
			return m.pdu, m.stream, nil
		default:
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		return nil, 0, a.err
	}
}

// Close shuts the association down gracefully (RFC 4960 9.2): what is
// queued or outstanding is sent and acknowledged first (SHUTDOWN-PENDING),
// then SHUTDOWN goes, repeated until the SHUTDOWN ACK; each phase has
// shutdownTimeout, and ABORT ends it when one runs out.
func (a *ownAssoc) Close() error {
	first := false
	a.closeOnce.Do(func() { first = true })
	if !first {
		return nil
	}
	a.mu.Lock()
	if a.state != stateEstablished {
		a.failLocked(net.ErrClosed)
		a.mu.Unlock()
		return nil
	}
	a.endUser(net.ErrClosed)
	a.closing = true
	a.mu.Unlock()
	if a.inline {
		go a.readSocket(a.rc) // ReadMsg has returned or will: someone must read the SACKs and SHUTDOWN ACK
	}
	a.mu.Lock()
	drained := a.waitDrainedLocked(shutdownTimeout)
	if a.state != stateEstablished {
		a.mu.Unlock()
		return nil
	}
	if !drained { // a peer that acknowledges nothing will not answer a SHUTDOWN either
		a.control(chunkAbort, 0, nil)
		a.failLocked(net.ErrClosed)
		a.mu.Unlock()
		return nil
	}
	a.state = stateShutdownSent
	cum := a.rcv.cumTSN
	a.mu.Unlock()
	value := []byte{byte(cum >> 24), byte(cum >> 16), byte(cum >> 8), byte(cum)}
	deadline := time.After(shutdownTimeout)
	for {
		a.control(chunkShutdown, 0, value)
		select {
		case <-a.shutdown:
			a.drop(net.ErrClosed)
			return nil
		case <-deadline:
			a.control(chunkAbort, 0, nil)
			a.drop(net.ErrClosed)
			return nil
		case <-time.After(shutdownTimeout / 4):
		}
	}
}

// waitDrainedLocked is 9.2's SHUTDOWN-PENDING: the SHUTDOWN waits until
// the queue has gone and all of it is acknowledged, for at most limit. It
// says whether it drained.
func (a *ownAssoc) waitDrainedLocked(limit time.Duration) bool {
	timedOut := false
	t := time.AfterFunc(limit, func() {
		a.mu.Lock()
		timedOut = true
		a.space.Broadcast()
		a.mu.Unlock()
	})
	defer t.Stop()
	for !timedOut && a.state == stateEstablished && (len(a.snd.queue) > 0 || len(a.snd.outstanding) > 0) {
		a.space.Wait()
	}
	return len(a.snd.queue) == 0 && len(a.snd.outstanding) == 0
}

func (a *ownAssoc) LocalAddr() net.Addr  { return a.local }
func (a *ownAssoc) RemoteAddr() net.Addr { return a.remote }

// Streams is the outbound stream count the handshake granted, capped at
// udpStreams as over pion.
func (a *ownAssoc) Streams() uint16 { return a.neg.outboundStreams() }
