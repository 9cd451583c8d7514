package pfcpx

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/internal/gopool"
)

// Default PFCP timers (TS 29.244 6.4 leaves T1 and N1 to configuration):
// a request is sent N1+1 times at most, T1 apart.
const (
	DefaultT1 = 3 * time.Second
	DefaultN1 = 3
)

// maxDatagram bounds a PFCP message read (UDP's payload limit; an X-IO
// datagram is smaller still).
const maxDatagram = 65535

// Handler answers the requests a Node receives, but for heartbeats, which
// the Node answers itself. It returns the response (header type, SEID
// and body; the Node sets the sequence number), or nil to send none.
type Handler interface {
	ServePFCP(peer net.Addr, req *Message) *Message
}

// FollowingHandler is a Handler whose answer to a request may leave
// work to follow it (then, nil for none): the Node runs then on the
// goroutine that answered, once the response is sent. The SMF pages
// after answering a Session Report this way (TS 29.244 7.5.8, TS 23.502
// 4.2.3.3 steps 2b-3a) instead of waking another goroutine for it.
type FollowingHandler interface {
	Handler
	ServePFCPThen(peer net.Addr, req *Message) (rsp *Message, then func())
}

// HandlerFunc is a function as a Handler.
type HandlerFunc func(peer net.Addr, req *Message) *Message

// ServePFCP calls f.
func (f HandlerFunc) ServePFCP(peer net.Addr, req *Message) *Message { return f(peer, req) }

// NodeConfig configures a Node.
type NodeConfig struct {
	T1 time.Duration // wait for a response this long before sending again (DefaultT1)
	N1 int           // send again at most this often (DefaultN1)
	// Recovery is when this node started: its Recovery Time Stamp (TS
	// 29.244 8.2.65), which tells peers of a restart.
	Recovery time.Time
	// NodeID is this node's Node ID (TS 29.244 8.2.38) in the rejections
	// it sends itself.
	NodeID  netip.Addr
	Handler Handler
	Log     *slog.Logger
	// Observe, when set, sees every message the node reads or writes and
	// the cause it carried (0 for none): the NF's metrics.
	Observe func(in bool, t pfcp.MessageType, cause uint8)
	// Concurrent answers each request in a goroutine of its own: a handler
	// that waits for other NFs (the SMF's Session Report handler pages
	// through the AMF) must not hold up the responses this node's own
	// requests wait for. Retransmissions are still answered once. The
	// goroutines are kept for the next requests (internal/gopool): a
	// follow-up's SBI call grows a fresh goroutine's stack each time.
	Concurrent bool
}

// Node is one PFCP entity on one socket (UDP or X-IO): it numbers and
// sends requests, matches responses, retransmits (TS 29.244 6.4), answers
// retransmitted requests from what it answered before without handling
// them again, and answers heartbeats (TS 29.244 6.2.2).
type Node struct {
	pc  net.PacketConn
	cfg NodeConfig

	mu      sync.Mutex
	seq     uint32
	pending map[uint32]*call
	answers *answerCache
	closed  chan struct{}
	once    sync.Once
	workers *gopool.Pool // Concurrent's
}

type call struct {
	peer string
	rsp  chan *Message
}

// NewNode runs PFCP on pc; Serve reads it.
func NewNode(pc net.PacketConn, cfg NodeConfig) *Node {
	if cfg.T1 <= 0 {
		cfg.T1 = DefaultT1
	}
	if cfg.N1 < 0 {
		cfg.N1 = 0
	} else if cfg.N1 == 0 {
		cfg.N1 = DefaultN1
	}
	if cfg.Recovery.IsZero() {
		cfg.Recovery = time.Now()
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	// A retransmitted request may arrive up to N1*T1 after the first
	// (TS 29.244 6.4): keep the answers that long, and then some.
	keep := time.Duration(cfg.N1+1)*cfg.T1 + time.Second
	n := &Node{pc: pc, cfg: cfg, pending: map[uint32]*call{}, answers: newAnswerCache(keep), closed: make(chan struct{})}
	if cfg.Concurrent {
		n.workers = gopool.New(0)
	}
	return n
}

// LocalAddr is the node's socket address.
func (n *Node) LocalAddr() net.Addr { return n.pc.LocalAddr() }

// Recovery is the node's Recovery Time Stamp.
func (n *Node) Recovery() time.Time { return n.cfg.Recovery }

// Serve reads and handles datagrams until Close.
func (n *Node) Serve() error {
	buf := make([]byte, maxDatagram)
	for {
		k, from, err := n.pc.ReadFrom(buf)
		if err != nil {
			select {
			case <-n.closed:
				return nil
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("pfcp: read %s: %w", n.pc.LocalAddr(), err)
		}
		n.Receive(buf[:k], from)
	}
}

// Close stops Serve and fails the requests waiting for an answer.
func (n *Node) Close() error {
	var err error
	n.once.Do(func() {
		close(n.closed)
		err = n.pc.Close()
	})
	return err
}

// Receive handles one datagram from peer: what Serve does with each.
func (n *Node) Receive(b []byte, from net.Addr) {
	m, err := Decode(b)
	if err != nil {
		n.rejectUndecodable(err, from)
		return
	}
	n.observe(true, m)
	if IsRequest(m.Header.MessageType) {
		n.serveRequest(m, b, from)
		return
	}
	n.deliverResponse(m, from)
}

// rejectUndecodable answers a request whose header could be read with the
// cause of what was wrong (TS 29.244 7.2.2.4.2, 7.2.2.2: Version Not
// Supported Response for another version); everything else is dropped.
func (n *Node) rejectUndecodable(err error, from net.Addr) {
	var de *DecodeError
	if !errors.As(err, &de) {
		return
	}
	n.cfg.Log.Debug("pfcp: undecodable message", "peer", from, "err", err)
	if n.cfg.Observe != nil {
		n.cfg.Observe(true, de.Header.MessageType, de.Err.Cause)
	}
	if !de.HeaderOK || !IsRequest(de.Header.MessageType) {
		return
	}
	if de.Header.Version != pfcp.PfcpVersion {
		n.send(&Message{Header: pfcp.Header{MessageType: pfcp.PFCP_VERSION_NOT_SUPPORTED_RESPONSE, SequenceNumber: de.Header.SequenceNumber}, Body: struct{}{}}, from)
		return
	}
	if de.Err.Cause == 0 {
		return // a message type this node does not serve: ignored (7.2.2.4.1)
	}
	if rsp := RejectionOf(de.Header, de.Err, n.cfg.NodeID, 0); rsp != nil {
		n.send(rsp, from)
	}
}

// serveRequest answers a request, or repeats the answer it gave before
// when the request is a retransmission (same peer and sequence number,
// TS 29.244 6.4): a request is handled once.
func (n *Node) serveRequest(m *Message, raw []byte, from net.Addr) {
	key := answerKey{peer: from.String(), seq: m.Header.SequenceNumber}
	stored, seen := n.answers.lookup(key, raw)
	if seen {
		if stored != nil {
			_, _ = n.pc.WriteTo(stored, from)
		} // else still being handled: its answer goes out when done
		return
	}
	if n.workers != nil {
		n.workers.Go(func() { n.finishRequest(m, key, from) })
		return
	}
	n.finishRequest(m, key, from)
}

// finishRequest has the request handled and sends and stores its answer.
func (n *Node) finishRequest(m *Message, key answerKey, from net.Addr) {
	rsp, then := n.answer(m, from)
	if then != nil {
		defer then() // after the response went (FollowingHandler)
	}
	if rsp == nil {
		n.answers.forget(key)
		return
	}
	rsp.Header.SequenceNumber = m.Header.SequenceNumber
	b, err := n.encode(rsp)
	if err != nil {
		n.answers.forget(key)
		return
	}
	n.answers.store(key, b)
	n.write(b, rsp, from)
}

func (n *Node) answer(m *Message, from net.Addr) (rsp *Message, then func()) {
	if m.Header.MessageType == pfcp.PFCP_HEARTBEAT_REQUEST {
		return &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_HEARTBEAT_RESPONSE},
			Body: &pfcp.HeartbeatResponse{RecoveryTimeStamp: &pfcpType.RecoveryTimeStamp{RecoveryTimeStamp: n.cfg.Recovery}}}, nil
	}
	switch h := n.cfg.Handler.(type) {
	case nil:
		return nil, nil
	case FollowingHandler:
		return h.ServePFCPThen(from, m)
	default:
		return h.ServePFCP(from, m), nil
	}
}

func (n *Node) deliverResponse(m *Message, from net.Addr) {
	n.mu.Lock()
	c, ok := n.pending[m.Header.SequenceNumber]
	if ok && c.peer == from.String() {
		delete(n.pending, m.Header.SequenceNumber)
	} else {
		ok = false
	}
	n.mu.Unlock()
	if ok {
		c.rsp <- m // buffered: the waiter may have given up
	}
}

// Request sends req to peer and waits for its response, sending it again
// every T1 up to N1 times (TS 29.244 6.4) or until ctx ends.
func (n *Node) Request(ctx context.Context, peer net.Addr, req *Message) (*Message, error) {
	c := &call{peer: peer.String(), rsp: make(chan *Message, 1)}
	n.mu.Lock()
	n.seq = n.seq%(1<<24-1) + 1 // TS 29.244 7.2.2.1: 24 bits, wrapping
	seq := n.seq
	n.pending[seq] = c
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.pending, seq)
		n.mu.Unlock()
	}()
	req.Header.SequenceNumber = seq
	b, err := n.encode(req)
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(n.cfg.T1)
	defer t.Stop()
	for sent := 0; ; {
		if err := n.write(b, req, peer); err != nil {
			return nil, err
		}
		sent++
		select {
		case rsp := <-c.rsp:
			return rsp, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("pfcp: %s to %s: %w", typeName(req.Header.MessageType), peer, ctx.Err())
		case <-n.closed:
			return nil, fmt.Errorf("pfcp: %s to %s: node closed", typeName(req.Header.MessageType), peer)
		case <-t.C:
			if sent > n.cfg.N1 {
				return nil, &TimeoutError{Peer: peer.String(), Type: req.Header.MessageType, Sent: sent}
			}
			t.Reset(n.cfg.T1)
		}
	}
}

// TimeoutError is a request no response came for: the peer is down or
// unreachable (TS 29.244 6.4).
type TimeoutError struct {
	Peer string
	Type pfcp.MessageType
	Sent int
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("pfcp: no response from %s to %s (sent %d times)", e.Peer, typeName(e.Type), e.Sent)
}

// Timeout marks it a timeout for net.Error users.
func (e *TimeoutError) Timeout() bool { return true }

// Heartbeat asks peer whether it is alive (TS 29.244 6.2.2) and returns
// its Recovery Time Stamp: a later one than before means it restarted.
func (n *Node) Heartbeat(ctx context.Context, peer net.Addr) (time.Time, error) {
	rsp, err := n.Request(ctx, peer, &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_HEARTBEAT_REQUEST},
		Body: &pfcp.HeartbeatRequest{RecoveryTimeStamp: &pfcpType.RecoveryTimeStamp{RecoveryTimeStamp: n.cfg.Recovery}}})
	if err != nil {
		return time.Time{}, err
	}
	hb, ok := rsp.Body.(*pfcp.HeartbeatResponse)
	if !ok || hb.RecoveryTimeStamp == nil {
		return time.Time{}, missing(IERecoveryTimeStamp, "Heartbeat Response")
	}
	return hb.RecoveryTimeStamp.RecoveryTimeStamp, nil
}

func (n *Node) encode(m *Message) ([]byte, error) {
	b, err := Encode(m)
	if err != nil {
		n.cfg.Log.Error("pfcp: encode", "type", typeName(m.Header.MessageType), "err", err)
	}
	return b, err
}

func (n *Node) send(m *Message, to net.Addr) {
	if b, err := n.encode(m); err == nil {
		_ = n.write(b, m, to)
	}
}

func (n *Node) write(b []byte, m *Message, to net.Addr) error {
	n.observe(false, m)
	if _, err := n.pc.WriteTo(b, to); err != nil {
		return fmt.Errorf("pfcp: send %s to %s: %w", typeName(m.Header.MessageType), to, err)
	}
	return nil
}

func (n *Node) observe(in bool, m *Message) {
	if n.cfg.Observe != nil {
		n.cfg.Observe(in, m.Header.MessageType, CauseOf(m))
	}
}

// answerCache keeps the answers to recent requests by peer and sequence
// number, with the request's bytes: a request with the same key but other
// bytes is a new one (the peer's sequence numbers wrapped, or it
// restarted), not a retransmission.
type answerCache struct {
	mu    sync.Mutex
	keep  time.Duration
	m     map[answerKey]*answerEntry
	order []answerKey
}

type answerKey struct {
	peer string
	seq  uint32
}

type answerEntry struct {
	req    uint64 // FNV-1a of the request: the bytes themselves need not be kept
	answer []byte // nil while the request is being handled
	at     time.Time
}

func digest(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

func newAnswerCache(keep time.Duration) *answerCache {
	return &answerCache{keep: keep, m: map[answerKey]*answerEntry{}}
}

// lookup reports whether req was seen, with its answer (nil while it is
// being handled); an unseen request is recorded as being handled.
func (c *answerCache) lookup(k answerKey, req []byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	c.expire(now)
	d := digest(req)
	if e, ok := c.m[k]; ok && e.req == d {
		return e.answer, true
	}
	if _, ok := c.m[k]; !ok {
		c.order = append(c.order, k)
	}
	c.m[k] = &answerEntry{req: d, at: now}
	return nil, false
}

func (c *answerCache) store(k answerKey, answer []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		e.answer, e.at = answer, time.Now()
	}
}

func (c *answerCache) forget(k answerKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}

// expire drops answers older than keep, oldest first.
func (c *answerCache) expire(now time.Time) {
	i := 0
	for ; i < len(c.order); i++ {
		e, ok := c.m[c.order[i]]
		if ok && now.Sub(e.at) < c.keep {
			break
		}
		if ok {
			delete(c.m, c.order[i])
		}
	}
	c.order = c.order[i:]
}
