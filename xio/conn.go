package xio

/*
#include <errno.h>
#include <stdlib.h>
#include "stack.h"
*/
import "C"

import (
	"context"
	"io"
	"net"
	"sync"
	"time"
	"unsafe"
)

// Conn is one X-IO stream connection. It implements net.Conn: bytes arrive
// in order, Close makes the peer read io.EOF, a dead peer makes reads fail
// with ECONNRESET, and a writer whose peer does not read blocks once the
// connection's window (256 KiB) is in flight.
type Conn struct {
	st            *stack
	idx, gen      uint32
	side          uint32 // 0 dialed, 1 accepted
	local, remote Addr

	mu     sync.Mutex
	q      [][]byte // received, unread chunks (copied out of shared memory, chunk.go)
	qoff   int      // bytes of q[0] already read
	qarr   [4][]byte
	eof    bool
	reset  bool
	closed bool
	notify chan struct{} // cap 1: "q or state changed"

	rmu, wmu  sync.Mutex  // one reader, one writer at a time
	reply     replyPolicy // whether waiting for a reply polls (reply.go; under rmu)
	rdl, wdl  *deadline
	closedCh  chan struct{}
	closeOnce sync.Once
	gone      chan struct{} // closed when the peer closes or resets
}

var _ net.Conn = (*Conn)(nil)

func newConn(st *stack, idx, gen, side uint32, local, remote Addr) *Conn {
	return &Conn{st: st, idx: idx, gen: gen, side: side, local: local, remote: remote,
		notify: make(chan struct{}, 1), rdl: newDeadline(), wdl: newDeadline(), reply: newReplyPolicy(),
		closedCh: make(chan struct{}), gone: make(chan struct{})}
}

// Dial connects to the X-IO stream listener at addr.
func Dial(addr string) (net.Conn, error) { return DialContext(context.Background(), addr) }

// DialContext connects to the X-IO stream listener at addr. An address nobody
// listens on (or whose NF died) fails at once with an error wrapping
// syscall.ECONNREFUSED. While the listener's NF has its quota of buffers
// queued (it is stalled) or no buffer is free, the dial waits, like a TCP
// SYN retransmitted, until ctx ends or dialPatience passes.
func DialContext(ctx context.Context, addr string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, &net.OpError{Op: "dial", Net: "xio", Addr: Addr(addr), Err: err}
	}
	st, err := defaultStack()
	if err != nil {
		return nil, err
	}
	return st.dial(ctx, addr)
}

// dialPatience bounds a dial without a deadline that keeps finding no room.
const dialPatience = 10 * time.Second

func (s *stack) dial(ctx context.Context, addr string) (*Conn, error) {
	caddr := C.CString(addr)
	defer C.free(unsafe.Pointer(caddr))
	var bo backoff
	giveUp := time.Now().Add(dialPatience)
	for {
		c, r := s.dialOnce(caddr, addr)
		switch {
		case r == 0:
			return c, nil
		case r != -C.EAGAIN && r != -C.ENOBUFS:
			return nil, opError("dial", nil, Addr(addr), r, "connect")
		case ctx.Err() != nil:
			return nil, &net.OpError{Op: "dial", Net: "xio", Addr: Addr(addr), Err: ctx.Err()}
		case time.Now().After(giveUp):
			return nil, opError("dial", nil, Addr(addr), -C.ENOBUFS, "connect")
		}
		bo.wait(ctx.Done(), nil, nil)
	}
}

// dialOnce holds s.mu across the dial so the poller cannot see the peer's
// first reply before the conn is registered.
func (s *stack) dialOnce(caddr *C.char, addr string) (*Conn, int) {
	var idx, gen C.uint32_t
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := C.xio_dial(caddr, &idx, &gen); r < 0 {
		return nil, int(r)
	}
	c := newConn(s, uint32(idx), uint32(gen), 0, Addr(peerName(uint32(idx))), Addr(addr))
	s.conns[connKey(c.idx, 0)] = c
	return c, 0
}

// deliver queues a chunk from the poller.
func (c *Conn) deliver(b []byte) {
	c.mu.Lock()
	if c.q == nil {
		c.q = c.qarr[:0] // a queue drained starts over here: no allocation per message
	}
	c.q = append(c.q, b)
	c.mu.Unlock()
	c.signal()
}

func (c *Conn) peerClosed(reset bool) {
	c.mu.Lock()
	if !c.eof {
		close(c.gone)
	}
	c.eof = true
	c.reset = c.reset || reset
	c.mu.Unlock()
	c.signal()
}

// PeerGone is closed when the peer closes its end or dies, even while
// unread data is queued: a server learns that its client gave up without
// reading from the conn (net/http's background read does this over TCP).
func (c *Conn) PeerGone() <-chan struct{} { return c.gone }

func (c *Conn) signal() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// Read reads received bytes, parking the goroutine while there are none.
func (c *Conn) Read(b []byte) (int, error) { return c.readWith(nil, b, false) }

// ReadContext is Read that gives up with ctx's error once ctx ends, as if
// a deadline had passed: a client waiting for its answer watches its
// request's context so, where arming the conn's deadline from the context
// (context.AfterFunc) costs a registration with the context per request.
func (c *Conn) ReadContext(ctx context.Context, b []byte) (int, error) {
	return c.readWith(ctx, b, false)
}

// readWith reads; reply says b is to take a reply to a request just
// written, which the goroutine may poll for (reply.go).
func (c *Conn) readWith(ctx context.Context, b []byte, reply bool) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	var ended <-chan struct{} // nil (never ready) without a context
	if ctx != nil {
		ended = ctx.Done()
	}
	var w replyWait
	if reply {
		defer c.leaveWait(&w)
	}
	for {
		n, err, done := c.tryRead(b)
		if done {
			if reply && n > 0 {
				c.endWait(&w)
			}
			return n, err
		}
		ch, expired := c.rdl.state()
		if expired {
			return 0, timeoutError("read", c.local, c.remote)
		}
		if reply && c.beginWait(&w) {
			continue // polled: look again before parking
		}
		select {
		case <-c.notify:
		case <-ch:
		case <-c.closedCh:
		case <-ended:
			return 0, ctxError("read", c.local, c.remote, ctx.Err())
		}
	}
}

func (c *Conn) tryRead(b []byte) (int, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return 0, closedError("read", c.local, c.remote), true
	case len(c.q) > 0:
		n := c.take(b)
		c.st.shm.ack(c.idx, c.gen, c.side, uint64(n))
		return n, nil, true
	case c.reset:
		return 0, opError("read", c.local, c.remote, -C.ECONNRESET, "read"), true
	case c.eof:
		return 0, io.EOF, true
	case len(b) == 0:
		return 0, nil, true
	}
	return 0, nil, false
}

func (c *Conn) take(b []byte) int {
	n := 0
	for n < len(b) && len(c.q) > 0 {
		k := copy(b[n:], c.q[0][c.qoff:])
		n += k
		if c.qoff += k; c.qoff < len(c.q[0]) {
			continue
		}
		freeChunk(c.q[0]) // copied on: nothing refers to it
		c.q[0], c.qoff = nil, 0
		if c.q = c.q[1:]; len(c.q) == 0 {
			c.q = nil
		}
	}
	return n
}

// Write sends all of b, blocking while the peer's window is full.
func (c *Conn) Write(b []byte) (int, error) { return c.write(nil, b) }

// WriteContext is Write that gives up with ctx's error once ctx ends, as
// if a deadline had passed (see ReadContext).
func (c *Conn) WriteContext(ctx context.Context, b []byte) (int, error) { return c.write(ctx, b) }

func (c *Conn) write(ctx context.Context, b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var bo backoff
	var ended <-chan struct{}
	if ctx != nil {
		ended = ctx.Done()
	}
	total := 0
	for total < len(b) {
		ch, expired := c.wdl.state()
		if c.isClosed() {
			return total, closedError("write", c.local, c.remote)
		}
		if expired {
			return total, timeoutError("write", c.local, c.remote)
		}
		if ctx != nil && ctx.Err() != nil {
			return total, ctxError("write", c.local, c.remote, ctx.Err())
		}
		r := c.st.shm.send(c.idx, c.gen, c.side, b[total:])
		switch {
		case r > 0:
			total += int(r)
			bo.reset()
		case r == -C.EAGAIN:
			bo.wait(ch, c.closedCh, ended)
		default:
			return total, opError("write", c.local, c.remote, int(r), "write")
		}
	}
	return total, nil
}

func (c *Conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Close closes both directions; the peer reads what was sent, then io.EOF.
func (c *Conn) Close() error { return c.shut(false) }

// abort closes with a reset (used for conns a closed listener never accepted).
func (c *Conn) abort() { c.shut(true) }

func (c *Conn) shut(reset bool) error {
	err := closedError("close", c.local, c.remote)
	c.closeOnce.Do(func() {
		err = nil
		c.mu.Lock()
		c.closed = true
		c.q, c.qoff = nil, 0
		c.mu.Unlock()
		close(c.closedCh) // wakes a writer waiting for window
		c.st.forget(c)
		r := 0
		if reset {
			r = 1
		}
		// Wait for a writer inside shmView.send: if our side closed under it
		// and the peer had closed already, the slot would be freed and
		// could be reused by another process's conn before its last
		// chunks went out.
		c.wmu.Lock()
		C.xio_close(C.uint32_t(c.idx), C.uint32_t(c.gen), C.uint32_t(c.side), C.int(r))
		c.wmu.Unlock()
	})
	return err
}

func (c *Conn) LocalAddr() net.Addr  { return c.local }
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

func (c *Conn) SetDeadline(t time.Time) error {
	c.rdl.set(t)
	c.wdl.set(t)
	return nil
}
func (c *Conn) SetReadDeadline(t time.Time) error  { c.rdl.set(t); return nil }
func (c *Conn) SetWriteDeadline(t time.Time) error { c.wdl.set(t); return nil }
