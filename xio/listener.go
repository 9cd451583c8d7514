package xio

/*
#include <stdlib.h>
#include "stack.h"
*/
import "C"

import (
	"net"
	"sync"
	"unsafe"
)

// Listener accepts X-IO stream connections dialed to its address.
type Listener struct {
	st       *stack
	svc, gen uint32
	addr     Addr

	mu      sync.Mutex
	q       []*Conn
	done    bool
	notify  chan struct{}
	closed  chan struct{}
	closeMu sync.Once
}

var _ net.Listener = (*Listener)(nil)

// Listen binds addr in the service table; dials to addr reach this process.
// A second Listen on a bound address fails with EADDRINUSE.
func Listen(addr string) (net.Listener, error) {
	st, err := defaultStack()
	if err != nil {
		return nil, err
	}
	// Bind and register under st.mu so no SYN for the new service is
	// dispatched before its Listener exists.
	st.mu.Lock()
	defer st.mu.Unlock()
	svc, gen, err := st.bind(addr, C.ONVM_SVC_STREAM, "listen")
	if err != nil {
		return nil, err
	}
	l := &Listener{st: st, svc: svc, gen: gen, addr: Addr(addr),
		notify: make(chan struct{}, 1), closed: make(chan struct{})}
	st.listeners[svc] = l
	return l, nil
}

func (s *stack) bind(addr string, kind C.uint32_t, op string) (uint32, uint32, error) {
	caddr := C.CString(addr)
	defer C.free(unsafe.Pointer(caddr))
	var svc, gen C.uint32_t
	if r := C.xio_bind(caddr, kind, &svc, &gen); r < 0 {
		return 0, 0, opError(op, nil, Addr(addr), int(r), "bind")
	}
	return uint32(svc), uint32(gen), nil
}

// push queues an accepted conn; false once the listener is closed.
func (l *Listener) push(c *Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return false
	}
	l.q = append(l.q, c)
	select {
	case l.notify <- struct{}{}:
	default:
	}
	return true
}

// Accept waits for the next connection.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		if l.done {
			l.mu.Unlock()
			return nil, closedError("accept", nil, l.addr)
		}
		if len(l.q) > 0 {
			c := l.q[0]
			l.q = l.q[1:]
			l.mu.Unlock()
			return c, nil
		}
		l.mu.Unlock()
		select {
		case <-l.notify:
		case <-l.closed:
		}
	}
}

// Close unbinds the address and resets connections not yet accepted.
func (l *Listener) Close() error {
	err := closedError("close", nil, l.addr)
	l.closeMu.Do(func() {
		err = nil
		C.xio_unbind(C.uint32_t(l.svc), C.uint32_t(l.gen))
		l.st.mu.Lock()
		if l.st.listeners[l.svc] == l {
			delete(l.st.listeners, l.svc)
		}
		l.st.mu.Unlock()
		l.mu.Lock()
		l.done = true
		pending := l.q
		l.q = nil
		l.mu.Unlock()
		close(l.closed)
		for _, c := range pending {
			c.abort()
		}
	})
	return err
}

func (l *Listener) Addr() net.Addr { return l.addr }
