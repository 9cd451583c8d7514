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

// The per-request operations of the NF stack, in Go on the shared memory
// (shmview.go says why). Those the manager performs too stay in
// onvm_ops.h and are mirrored here under the name given: both sides follow
// one protocol, so a change to one is a change to the other.
//
// Everything read from shared memory was written by another process, which
// may have been buggy, killed half-way, or hostile: ring entries are
// checked to be buffers handed to us before they are touched, headers are
// checked before the rest of the Go side reads them (from a private copy),
// and table indices are bounds-checked.

// take dequeues up to len(out) messages handed to us, with a private copy
// of each header in hdr (the sender can still write the buffer): an entry
// that is not a buffer, or a buffer not handed to us, is dropped
// untouched; one handed to us with a bad header is freed; both count in
// our slot's rx_bad. Taking is a CAS, as the manager may free a dead
// sender's orphan at the same moment. Consumer token held; raw is scratch
// of len(out).
func (v *shmView) take(out []*C.struct_onvm_msg, hdr []C.struct_onvm_msg, raw []uintptr) int {
	if takePausedHook() {
		return 0
	}
	mine := ownWord(C.ONVM_BUF_HELD, v.self, v.self)
	for {
		n := v.rx[v.self].dequeue(raw[:len(out)])
		k, bad, uncount := 0, uint64(0), uint32(0)
		for _, a := range raw[:n] {
			m, kind := v.msgAt(a)
			if m == nil {
				bad++
				continue
			}
			o := atomic.LoadUint32(ownOf(m))
			if ownState(o) != C.ONVM_BUF_INRING || ownOwner(o) != v.self ||
				!atomic.CompareAndSwapUint32(ownOf(m), o, mine) {
				bad++
				continue
			}
			if o&C.ONVM_OWN_COUNTED != 0 {
				uncount++
			}
			hdr[k] = *m
			if !msgOK(&hdr[k], kind) {
				bad++
				v.free(m)
				continue
			}
			out[k] = m
			k++
		}
		if uncount > 0 {
			atomic.AddUint32((*uint32)(unsafe.Pointer(&v.me.queued)), -uncount)
		}
		if bad > 0 {
			atomic.AddUint64((*uint64)(unsafe.Pointer(&v.me.rx_bad)), bad)
		}
		if k > 0 || n < len(out) {
			return k // all of a full batch dropped: look again before sleeping
		}
	}
}

// msgOK checks a header copy before the Go side reads it: payload-carrying types only in data buffers, len within the
// buffer, indices within their tables.
func msgOK(h *C.struct_onvm_msg, kind int) bool {
	data := kind == bufData
	limit := C.uint32_t(0) // a control buffer has no payload
	if data {
		limit = msgPayload
	}
	if h.len > limit {
		return false
	}
	switch h._type {
	case C.ONVM_MSG_SYN:
		return data && h.side == 1 && h.conn < maxConn && h.svc < maxSvc
	case C.ONVM_MSG_DATA:
		return data && h.side <= 1 && h.conn < maxConn
	case C.ONVM_MSG_FIN, C.ONVM_MSG_RST:
		return h.side <= 1 && h.conn < maxConn
	case C.ONVM_MSG_DGRAM:
		return data && h.svc < maxSvc && h.addrlen <= h.len && h.addrlen < addrLen
	case C.ONVM_MSG_WAKE:
		return true
	}
	return false
}

// ringWaiting says whether our rx ring holds something to take (while a
// test pauses taking, nothing counts).
func (v *shmView) ringWaiting() bool {
	return !takePausedHook() && v.rx[v.self].count() > 0
}

func (v *shmView) sleepingWord(nf *C.struct_onvm_nf) *uint32 {
	return (*uint32)(unsafe.Pointer(&nf.sleeping))
}

// efdArm tells senders our poller is about to park on its eventfd, then
// looks at the ring once more (the order xio_sleep keeps): true if it holds
// something, and the caller does not park. The store and the ring read
// are sequentially consistent, and so are a sender's enqueue and its read
// of 'sleeping' (wake): one of the two sees the other.
func (v *shmView) efdArm() bool {
	atomic.StoreUint32(v.sleepingWord(v.me), C.ONVM_SLEEP_EVENTFD)
	if v.ringWaiting() {
		return true
	}
	sleepHook()
	return false
}

// bellQuiet tells senders not to ring: a goroutine polls the ring itself
// (reply.go).
func (v *shmView) bellQuiet() { atomic.StoreUint32(v.sleepingWord(v.me), 0) }

// bellArm tells senders to ring again, the way our poller sleeps; the
// caller looks at the ring after it (as in efdArm).
func (v *shmView) bellArm() {
	how := uint32(C.ONVM_SLEEP_FUTEX)
	if v.eventfd {
		how = C.ONVM_SLEEP_EVENTFD
	}
	atomic.StoreUint32(v.sleepingWord(v.me), how)
}

// bellSelf rings our own doorbell: a consumer that gives the token up
// with messages still in the ring wakes the poller for them.
func (v *shmView) bellSelf() {
	if v.eventfd && eventfdWrite(v.ownEfd) {
		return
	}
	v.ringFutex(v.me)
}

// ringFutex wakes a poller sleeping on nf's futex (onvm_ring_bell).
func (v *shmView) ringFutex(nf *C.struct_onvm_nf) {
	if atomic.LoadUint32(v.sleepingWord(nf)) == 0 {
		return
	}
	bell := (*uint32)(unsafe.Pointer(&nf.bell))
	atomic.AddUint32(bell, 1)
	futexWake(bell)
}

// wake wakes NF dst's poller if it sleeps, the way it sleeps (onvm_wake):
// its eventfd, through our copy of it, or its futex, which is rung too
// when the eventfd is not ours to write.
func (v *shmView) wake(dst uint32) {
	d := &v.shm.nf[dst]
	how := atomic.LoadUint32(v.sleepingWord(d))
	if how == 0 {
		return
	}
	if how == C.ONVM_SLEEP_EVENTFD {
		// One write wakes the parked poller, which then drains the whole
		// ring: the first sender to see it parked claims the wake-up by
		// clearing the word (as the poller does on waking), so senders
		// that enqueue before it runs skip the system call (at 64
		// registrations in flight, 16 -> 4.5 write-like calls per
		// registration over all processes: most went to an eventfd
		// already signalled). Lost the claim: another sender rings, or
		// the poller is up.
		if !atomic.CompareAndSwapUint32(v.sleepingWord(d), how, 0) {
			return
		}
		if v.efdRing(dst) {
			return
		}
	}
	bell := (*uint32)(unsafe.Pointer(&d.bell))
	atomic.AddUint32(bell, 1)
	futexWake(bell)
}

// efdRing writes NF dst's eventfd (onvm_efd_ring): our cached copy when it
// is for dst's current attach generation, else C fetches one (once per
// peer attach: a cgo call off the per-request path).
func (v *shmView) efdRing(dst uint32) bool {
	gen := atomic.LoadUint32((*uint32)(unsafe.Pointer(&v.shm.nf[dst].gen)))
	fd := int(atomic.LoadInt32((*int32)(unsafe.Pointer(&v.cview.efd[dst])))) - 1
	if fd < 0 || atomic.LoadUint32((*uint32)(unsafe.Pointer(&v.cview.efd_gen[dst]))) != gen {
		fd = int(C.xio_efd_fetch(C.uint32_t(dst), C.uint32_t(gen)))
	}
	return fd >= 0 && eventfdWrite(fd)
}

// deliver hands m (held by us) to NF dst (onvm_deliver, which says what
// each error means and why delivering[dst] brackets the check and the
// enqueue): 0, or -ECONNREFUSED, -EAGAIN, -ENOTRECOVERABLE, -ESHUTDOWN,
// -ENOBUFS, -EINVAL. On failure the caller still holds m.
func (v *shmView) deliver(dst uint32, m *C.struct_onvm_msg, counted bool) int {
	if dst >= maxNF || v.rx[dst].c == nil {
		return -C.EINVAL
	}
	if atomic.LoadUint32((*uint32)(unsafe.Pointer(&v.shm.magic))) != C.ONVM_SHM_MAGIC {
		return -C.ESHUTDOWN
	}
	d := &v.shm.nf[dst]
	held := atomic.LoadUint32(ownOf(m))
	own := ownWord(C.ONVM_BUF_INRING, dst, v.self)
	queued := (*uint32)(unsafe.Pointer(&d.queued))
	atomic.AddUint32(&v.delivering[dst], 1)
	defer atomic.AddUint32(&v.delivering[dst], ^uint32(0))
	if atomic.LoadUint32((*uint32)(unsafe.Pointer(&d.state))) != C.ONVM_NF_ACTIVE {
		return -C.ECONNREFUSED
	}
	if counted {
		quota := int32(atomic.LoadUint32((*uint32)(unsafe.Pointer(&v.shm.nf_quota))))
		if int32(atomic.AddUint32(queued, 1)) > quota {
			atomic.AddUint32(queued, ^uint32(0))
			return -C.EAGAIN
		}
		own |= C.ONVM_OWN_COUNTED
	}
	r := 0
	if v.rx[dst].wedged() {
		r = -C.ENOTRECOVERABLE
	} else {
		// Hand over before the enqueue: once in the ring, dst may take it.
		atomic.StoreUint32(ownOf(m), own)
		switch v.rx[dst].enqueue(uintptr(unsafe.Pointer(m))) {
		case 0:
			v.wake(dst)
			return 0
		case ringWedged:
			r = -C.ENOTRECOVERABLE
		default:
			r = -C.ENOBUFS
		}
		atomic.StoreUint32(ownOf(m), held)
	}
	if counted {
		atomic.AddUint32(queued, ^uint32(0))
	}
	return r
}

// connOf returns conn c if it is still generation gen and open, else nil
// (as stack.c conn_of).
func (v *shmView) connOf(c, gen uint32) *C.struct_onvm_conn {
	if c >= maxConn {
		return nil
	}
	cn := &v.shm.conn[c]
	if atomic.LoadUint32((*uint32)(unsafe.Pointer(&cn.gen))) != gen ||
		atomic.LoadUint32((*uint32)(unsafe.Pointer(&cn.state))) != C.ONVM_CONN_OPEN {
		return nil
	}
	return cn
}

func load32(p *C.uint32_t) uint32 { return atomic.LoadUint32((*uint32)(unsafe.Pointer(p))) }

func counter(p *C.uint64_t) *uint64 { return (*uint64)(unsafe.Pointer(p)) }

// connStatus is 0 while side may still send on conn c, else -EPIPE (gone
// or peer closed) or -ECONNRESET (reset, or the peer's NF died or
// restarted).
func (v *shmView) connStatus(c, gen, side uint32) int {
	raceSync() // a close or reset made by C (race builds)
	cn := v.connOf(c, gen)
	if cn == nil || side > 1 {
		return -C.EPIPE
	}
	if load32(&cn.reset) != 0 {
		return -C.ECONNRESET
	}
	if load32(&cn.closed[1-side]) != 0 {
		return -C.EPIPE
	}
	p := uint32(cn.nf[1-side])
	if p >= maxNF {
		return -C.ECONNRESET
	}
	peer := &v.shm.nf[p]
	if load32(&peer.state) != C.ONVM_NF_ACTIVE || uint32(peer.gen) != uint32(cn.nfgen[1-side]) {
		return -C.ECONNRESET
	}
	return 0
}

// send sends as much of p on side of conn c as the window, the peer's
// quota and the pool allow: the bytes sent, or a negative errno, -EAGAIN
// when nothing could go. One writer per side, and the caller keeps its side
// open meanwhile (Conn.shut waits for the writer), but the conn is still
// checked again before every chunk: bytes must never reach a conn that
// reused the slot.
func (v *shmView) send(c, gen, side uint32, p []byte) int {
	if st := v.connStatus(c, gen, side); st < 0 {
		return st
	}
	cn := &v.shm.conn[c]
	room := int64(connWindow) - int64(atomic.LoadUint64(counter(&cn.sent[side]))-
		atomic.LoadUint64(counter(&cn.acked[side])))
	done, err := 0, -C.EAGAIN
	for k := 0; done < len(p) && room > 0; k++ {
		sendHook(c, gen, side, k)
		if v.connOf(c, gen) == nil {
			err = -C.EPIPE
			break
		}
		n := min(len(p)-done, msgPayload, int(room))
		if r := v.sendChunk(cn, c, gen, side, p[done:done+n]); r < 0 {
			err = r
			break
		}
		done += n
		room -= int64(n)
	}
	if done > 0 {
		return done
	}
	switch err {
	case -C.ENOBUFS: // no buffer: wait for one like for window
		return -C.EAGAIN
	case -C.ECONNREFUSED, -C.EINVAL: // the peer's NF is gone
		return -C.ECONNRESET
	}
	return err
}

// sendChunk copies p into one buffer and delivers it, stamped with the
// generation the caller holds: were the slot reused meanwhile, the new
// conn's reader drops it as stale instead of reading our bytes.
func (v *shmView) sendChunk(cn *C.struct_onvm_conn, c, gen, side uint32, p []byte) int {
	m := v.alloc()
	if m == nil {
		return -C.EAGAIN
	}
	m._type = C.ONVM_MSG_DATA
	m.conn = C.uint32_t(c)
	m.gen = C.uint32_t(gen)
	m.side = C.uint32_t(1 - side)
	m.len = C.uint32_t(len(p))
	copy(payloadOf(m, len(p)), p)
	// Count the bytes before the peer can see (and ack) them.
	sent := counter(&cn.sent[side])
	atomic.AddUint64(sent, uint64(len(p)))
	r := v.deliver(uint32(cn.nf[1-side]), m, true)
	if r != 0 {
		atomic.AddUint64(sent, -uint64(len(p)))
		v.free(m)
	}
	return r
}

// ack tells the other side's sender that side's application read n bytes
// (the window, ONVM_CONN_WINDOW).
func (v *shmView) ack(c, gen, side uint32, n uint64) {
	if cn := v.connOf(c, gen); cn != nil && side <= 1 {
		atomic.AddUint64(counter(&cn.acked[1-side]), n)
	}
}
