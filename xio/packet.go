package xio

/*
#include <errno.h>
#include <stdlib.h>
#include "stack.h"
*/
import "C"

import (
	"net"
	"sync"
	"time"
	"unsafe"
)

type datagram struct {
	from Addr
	data []byte
	size uint32 // bytes in its shared buffer (address + payload), for the window
}

// PacketConn is a bound X-IO datagram socket (net.PacketConn). A datagram
// travels in one shared buffer (up to 8 KiB minus the source address) and
// keeps its boundaries.
//
// Unlike UDP, a datagram is never dropped because the receiver is slow: each
// socket has a window (1 MiB unread, each datagram charged its size plus 64
// bytes), and WriteTo blocks while the destination's window is full, as a
// stream writer does. DESIGN.md asks X-IO for back-pressure instead of loss,
// and PFCP (its user) gains nothing from loss on one node: its T1/N1
// retransmissions would only add load to an already slow peer. The unread
// queue is thereby bounded (by the window), as UDP's socket buffer is. A
// datagram to a peer that dies is lost with the peer.
type PacketConn struct {
	st       *stack
	svc, gen uint32
	addr     Addr

	mu     sync.Mutex
	q      []datagram
	closed bool
	notify chan struct{}

	rmu, wmu  sync.Mutex
	rdl, wdl  *deadline
	closedCh  chan struct{}
	closeOnce sync.Once
	peers     map[string][2]uint32 // resolved destinations: svc, gen
}

var _ net.PacketConn = (*PacketConn)(nil)

// ListenPacket binds addr as a datagram socket.
func ListenPacket(addr string) (net.PacketConn, error) {
	st, err := defaultStack()
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	svc, gen, err := st.bind(addr, C.ONVM_SVC_PACKET, "listen")
	if err != nil {
		return nil, err
	}
	p := &PacketConn{st: st, svc: svc, gen: gen, addr: Addr(addr),
		notify: make(chan struct{}, 1), rdl: newDeadline(), wdl: newDeadline(),
		closedCh: make(chan struct{}), peers: map[string][2]uint32{}}
	st.packets[svc] = p
	return p, nil
}

// deliver queues a datagram from the poller. The senders' window bounds
// the queue, so nothing is dropped here.
func (p *PacketConn) deliver(from Addr, data []byte, size uint32) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.q = append(p.q, datagram{from, data, size})
	p.mu.Unlock()
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

// ReadFrom reads one datagram; a datagram longer than b is truncated.
func (p *PacketConn) ReadFrom(b []byte) (int, net.Addr, error) {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	for {
		if d, ok, err := p.pop(); ok || err != nil {
			if err != nil {
				return 0, nil, err
			}
			return copy(b, d.data), d.from, nil
		}
		ch, expired := p.rdl.state()
		if expired {
			return 0, nil, timeoutError("read", p.addr, nil)
		}
		select {
		case <-p.notify:
		case <-ch:
		case <-p.closedCh:
		}
	}
}

func (p *PacketConn) pop() (datagram, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return datagram{}, false, closedError("read", p.addr, nil)
	}
	if len(p.q) == 0 {
		return datagram{}, false, nil
	}
	d := p.q[0]
	p.q[0] = datagram{}
	p.q = p.q[1:]
	// Read by the application: the senders may send that much more.
	p.st.shm.dgramAck(p.svc, p.gen, d.size)
	return d, true, nil
}

// WriteTo sends b as one datagram to the packet socket bound at addr. It
// blocks while the destination's window is full (or its NF's quota, or the
// pool), until the write deadline; an address nobody bound, or whose NF
// died, gives ECONNREFUSED.
func (p *PacketConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	if addr == nil {
		return 0, &net.OpError{Op: "write", Net: "xio", Source: p.addr, Err: errMissingAddress}
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	dst := addr.String()
	var bo backoff
	for retried := false; ; {
		ch, expired := p.wdl.state()
		if p.isClosed() {
			return 0, closedError("write", p.addr, addr)
		}
		if expired {
			return 0, timeoutError("write", p.addr, addr)
		}
		ref, err := p.resolve(dst, addr)
		if err != nil {
			return 0, err
		}
		r := p.send(ref, b)
		switch {
		case r >= 0:
			return len(b), nil
		case r == -C.EAGAIN:
			bo.wait(ch, p.closedCh, nil)
		case r == -C.ECONNREFUSED && !retried:
			delete(p.peers, dst) // rebound elsewhere? look it up again
			retried = true
		default:
			return 0, opError("write", p.addr, addr, int(r), "sendto")
		}
	}
}

func (p *PacketConn) send(ref [2]uint32, b []byte) int {
	return p.st.shm.sendTo(ref[0], ref[1], string(p.addr), b)
}

func (p *PacketConn) resolve(dst string, addr net.Addr) ([2]uint32, error) {
	if ref, ok := p.peers[dst]; ok {
		return ref, nil
	}
	cdst := C.CString(dst)
	defer C.free(unsafe.Pointer(cdst))
	var svc, gen C.uint32_t
	if r := C.xio_lookup(cdst, C.ONVM_SVC_PACKET, &svc, &gen); r < 0 {
		return [2]uint32{}, opError("write", p.addr, addr, int(r), "sendto")
	}
	ref := [2]uint32{uint32(svc), uint32(gen)}
	p.peers[dst] = ref
	return ref, nil
}

func (p *PacketConn) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Close unbinds the address.
func (p *PacketConn) Close() error {
	err := closedError("close", p.addr, nil)
	p.closeOnce.Do(func() {
		err = nil
		C.xio_unbind(C.uint32_t(p.svc), C.uint32_t(p.gen))
		p.st.mu.Lock()
		if p.st.packets[p.svc] == p {
			delete(p.st.packets, p.svc)
		}
		p.st.mu.Unlock()
		p.mu.Lock()
		p.closed = true
		p.q = nil
		p.mu.Unlock()
		close(p.closedCh)
	})
	return err
}

func (p *PacketConn) LocalAddr() net.Addr { return p.addr }

func (p *PacketConn) SetDeadline(t time.Time) error {
	p.rdl.set(t)
	p.wdl.set(t)
	return nil
}
func (p *PacketConn) SetReadDeadline(t time.Time) error  { p.rdl.set(t); return nil }
func (p *PacketConn) SetWriteDeadline(t time.Time) error { p.wdl.set(t); return nil }
