package xio

/*
#include <errno.h>
#include "stack.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"
)

// Datagrams (PFCP on N4) per message, in Go like the streams' (shmops.go).

const (
	dgramWindow = C.ONVM_DGRAM_WINDOW
	dgramCharge = C.ONVM_DGRAM_CHARGE
)

// sendTo sends one datagram to packet service svc (generation gen): the
// source address src, then the payload, in one buffer. It returns len(p)
// or a negative errno: -EAGAIN while the receiving socket has its window
// unread (or its NF its quota queued, or the pool is empty): like a
// stream, the sender waits instead of the datagram being dropped.
func (v *shmView) sendTo(svc, gen uint32, src string, p []byte) int {
	if svc >= maxSvc || len(src) >= addrLen {
		return -C.EINVAL
	}
	if len(src)+len(p) > msgPayload {
		return -C.EMSGSIZE
	}
	s := &v.shm.svc[svc]
	sgen := (*uint32)(unsafe.Pointer(&s.gen))
	if atomic.LoadUint32(sgen) != gen || load32(&s.kind) != C.ONVM_SVC_PACKET {
		return -C.ECONNREFUSED
	}
	dst := uint32(s.nf)
	charge := uint64(len(src) + len(p) + dgramCharge)
	sent, read := counter(&s.dg_sent), counter(&s.dg_read)
	if unread := int64(atomic.LoadUint64(sent) - atomic.LoadUint64(read)); unread > 0 && unread+int64(charge) > dgramWindow {
		return -C.EAGAIN
	}
	m := v.alloc()
	if m == nil {
		return -C.EAGAIN
	}
	m._type = C.ONVM_MSG_DGRAM
	m.svc = C.uint32_t(svc)
	m.gen = C.uint32_t(gen)
	m.addrlen = C.uint32_t(len(src))
	m.len = C.uint32_t(len(src) + len(p))
	body := payloadOf(m, len(src)+len(p))
	copy(body, src)
	copy(body[len(src):], p)
	atomic.AddUint64(sent, charge)
	r := v.deliver(dst, m, true)
	if r == 0 && atomic.LoadUint32(sgen) == gen {
		return len(p)
	}
	// Not sent, or the socket was unbound meanwhile (its reader drops
	// it): take the charge back.
	atomic.AddUint64(sent, -charge)
	if r == 0 {
		return -C.ECONNREFUSED
	}
	v.free(m)
	switch r {
	case -C.ENOBUFS:
		return -C.EAGAIN
	case -C.EINVAL:
		return -C.ECONNREFUSED
	}
	return r
}

// dgramAck tells packet service svc's senders its application read a
// datagram of n bytes (address included).
func (v *shmView) dgramAck(svc, gen, n uint32) {
	if svc >= maxSvc {
		return
	}
	s := &v.shm.svc[svc]
	if load32(&s.gen) == gen {
		atomic.AddUint64(counter(&s.dg_read), uint64(n)+dgramCharge)
	}
}
