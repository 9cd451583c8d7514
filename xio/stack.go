package xio

/*
#include "stack.h"
*/
import "C"

import (
	"sync"
	"unsafe"
)

// batchMax is how many messages one poll takes from the rx ring.
const batchMax = 64

// pollSleepMS bounds one doorbell sleep; shutdown and senders wake it sooner.
const pollSleepMS = 500

// msgHeader is the size of struct onvm_msg before its payload.
const msgHeader = 64

// stack is this process's attachment: its NF slot and the Go objects the
// poller demultiplexes messages to (keyed by shared table index).
type stack struct {
	cfg  Config
	self uint32

	mu        sync.Mutex
	conns     map[uint32]*Conn // by connKey
	listeners map[uint32]*Listener
	packets   map[uint32]*PacketConn

	batch **C.struct_onvm_msg // C array: C keeps no Go pointer
}

func newStack(cfg Config) *stack {
	return &stack{
		cfg:       cfg,
		self:      uint32(C.xio_self()),
		conns:     map[uint32]*Conn{},
		listeners: map[uint32]*Listener{},
		packets:   map[uint32]*PacketConn{},
		batch:     (**C.struct_onvm_msg)(C.malloc(C.size_t(batchMax) * C.size_t(unsafe.Sizeof((*C.struct_onvm_msg)(nil))))),
	}
}

// poll is the process's single poller: it drains the rx ring (C spins a
// bounded time, then sleeps on the doorbell) and hands every message to its
// Go owner, copying the payload so buffers go back to the pool at once.
func (s *stack) poll() {
	batch := unsafe.Slice(s.batch, batchMax)
	for {
		n := int(C.xio_poll(s.batch, batchMax, C.uint64_t(s.cfg.Spin.Nanoseconds()), pollSleepMS))
		for i := 0; i < n; i++ {
			s.dispatch(batch[i])
		}
		if n > 0 {
			C.xio_free_batch(s.batch, C.uint(n))
		}
	}
}

func payload(m *C.struct_onvm_msg) []byte {
	return C.GoBytes(unsafe.Add(unsafe.Pointer(m), msgHeader), C.int(m.len))
}

func (s *stack) dispatch(m *C.struct_onvm_msg) {
	switch m._type {
	case C.ONVM_MSG_SYN:
		s.onSYN(uint32(m.svc), uint32(m.conn), uint32(m.gen))
	case C.ONVM_MSG_DATA:
		if c := s.conn(uint32(m.conn), uint32(m.side), uint32(m.gen)); c != nil {
			c.deliver(payload(m))
		}
	case C.ONVM_MSG_FIN, C.ONVM_MSG_RST:
		if c := s.conn(uint32(m.conn), uint32(m.side), uint32(m.gen)); c != nil {
			c.peerClosed(m._type == C.ONVM_MSG_RST)
		}
	case C.ONVM_MSG_DGRAM:
		s.onDatagram(m)
	}
}

// connKey names one side of a conn: a process may hold both sides.
func connKey(idx, side uint32) uint32 { return idx<<1 | side }

func (s *stack) conn(idx, side, gen uint32) *Conn {
	s.mu.Lock()
	c := s.conns[connKey(idx, side)]
	s.mu.Unlock()
	if c == nil || c.gen != gen {
		return nil
	}
	return c
}

// onSYN registers the new conn before any of its data can be dispatched
// (same ring, later), then queues it for Accept; with no listener it resets.
func (s *stack) onSYN(svc, idx, gen uint32) {
	s.mu.Lock()
	l := s.listeners[svc]
	var c *Conn
	if l != nil {
		c = newConn(s, idx, gen, 1, l.addr, Addr(peerName(idx)))
		s.conns[connKey(idx, 1)] = c
	}
	s.mu.Unlock()
	if l == nil || !l.push(c) {
		if c != nil {
			s.forget(c)
		}
		C.xio_close(C.uint32_t(idx), C.uint32_t(gen), 1, 1)
	}
}

func (s *stack) onDatagram(m *C.struct_onvm_msg) {
	s.mu.Lock()
	p := s.packets[uint32(m.svc)]
	s.mu.Unlock()
	if p == nil || p.gen != uint32(m.gen) {
		return
	}
	data := payload(m)
	alen := int(m.addrlen)
	if alen > len(data) {
		return
	}
	p.deliver(Addr(data[:alen]), data[alen:])
}

func (s *stack) forget(c *Conn) {
	s.mu.Lock()
	if k := connKey(c.idx, c.side); s.conns[k] == c {
		delete(s.conns, k)
	}
	s.mu.Unlock()
}

// wake makes the poller return from its doorbell sleep.
func (s *stack) wake() { C.xio_wake() }
