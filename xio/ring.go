package xio

/*
#include <stddef.h>
#include <rte_ring.h>
#include "onvm_ring.h"

// Where the fields of struct rte_ring that the Go ring (ring.go) uses lie,
// read from DPDK's own header so the Go side never carries a copy of a
// number. onvm_ring.h says which DPDK release they were checked against
// and asserts that the RTS head/tail is one 64-bit word overlaying prod.
enum {
	XIO_RING_PROD_HEAD = offsetof(struct rte_ring, rts_prod.head),
	XIO_RING_PROD_TAIL = offsetof(struct rte_ring, rts_prod.tail),
	XIO_RING_HTD_MAX = offsetof(struct rte_ring, rts_prod.htd_max),
	XIO_RING_CONS_HEAD = offsetof(struct rte_ring, cons.head),
	XIO_RING_CONS_TAIL = offsetof(struct rte_ring, cons.tail),
	XIO_RING_MASK = offsetof(struct rte_ring, mask),
	XIO_RING_CAPACITY = offsetof(struct rte_ring, capacity),
	XIO_RING_ELEMS = sizeof(struct rte_ring), // the objects follow the header (&r[1])
	XIO_POSCNT_CNT = offsetof(union __rte_ring_rts_poscnt, val.cnt),
	XIO_POSCNT_POS = offsetof(union __rte_ring_rts_poscnt, val.pos),
};
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// shmRing is Go's view of one of the rx rings (a DPDK rte_ring in shared
// memory), so that taking a batch and sending a message need no cgo call:
// a cgo call made after the poller wakes from Go's netpoller wakes the
// runtime's sysmon, which then ticks every 20 µs while the NF works, a
// thread switch each (doorbell.go). It follows DPDK 22.11's protocol for
// the kind of ring the manager creates (onvm_ring_sync_ok), step for step,
// so C (the manager, the futex sleep, the tests) and Go can use one ring
// at the same time:
//
//   - enqueue, MP RTS (rte_ring_rts_elem_pvt.h): wait while the producer
//     head runs more than htd_max ahead of the tail, CAS the head {pos+n,
//     cnt+1} (it checks room against the consumer tail), store the
//     objects, then CAS the tail's cnt up by one, moving its pos to the
//     head's once every enqueue begun has finished (cnt equal);
//   - dequeue, SC (rte_ring_c11_pvt.h): read the producer tail (acquire),
//     move the consumer head with a plain store (we are the only
//     consumer), read the objects, publish the consumer tail (release).
//
// Go's atomics are sequentially consistent, at least what each C step
// asks for (acquire, release, or a CAS that is both).
type shmRing struct {
	c        unsafe.Pointer // the C struct rte_ring, for the test hooks and C calls
	head     *uint64        // rts_prod.head.raw: {cnt, pos}
	tail     *uint64        // rts_prod.tail.raw
	consHead *uint32
	consTail *uint32
	elems    unsafe.Pointer // the objects, one 8-byte pointer each
	mask     uint32
	capacity uint32
	htdMax   uint32
}

// newShmRing reads the view of ring r (set-up: mask, capacity and
// htd_max never change once the manager created it).
func newShmRing(r unsafe.Pointer) shmRing {
	at := func(off uintptr) unsafe.Pointer { return unsafe.Add(r, off) }
	return shmRing{
		c:        r,
		head:     (*uint64)(at(uintptr(C.XIO_RING_PROD_HEAD))),
		tail:     (*uint64)(at(uintptr(C.XIO_RING_PROD_TAIL))),
		consHead: (*uint32)(at(uintptr(C.XIO_RING_CONS_HEAD))),
		consTail: (*uint32)(at(uintptr(C.XIO_RING_CONS_TAIL))),
		elems:    at(ringHeaderBytes),
		mask:     *(*uint32)(at(uintptr(C.XIO_RING_MASK))),
		capacity: *(*uint32)(at(uintptr(C.XIO_RING_CAPACITY))),
		htdMax:   *(*uint32)(at(uintptr(C.XIO_RING_HTD_MAX))),
	}
}

// ringHeaderBytes is sizeof(struct rte_ring): the objects follow it.
const ringHeaderBytes = uintptr(C.XIO_RING_ELEMS)

// posCnt splits an RTS head or tail word into its position and its count
// of enqueues begun (head) or finished (tail); makePosCnt joins them.
func posCnt(raw uint64) (pos, cnt uint32) {
	return uint32(raw >> (8 * C.XIO_POSCNT_POS)), uint32(raw >> (8 * C.XIO_POSCNT_CNT))
}

func makePosCnt(pos, cnt uint32) uint64 {
	return uint64(pos)<<(8*C.XIO_POSCNT_POS) | uint64(cnt)<<(8*C.XIO_POSCNT_CNT)
}

// slot is where the object at ring position pos lives.
func (r *shmRing) slot(pos uint32) *uintptr {
	return (*uintptr)(unsafe.Add(r.elems, uintptr(pos&r.mask)*unsafe.Sizeof(uintptr(0))))
}

// count is how many objects wait (rte_ring_count).
func (r *shmRing) count() uint32 {
	tail, _ := posCnt(atomic.LoadUint64(r.tail))
	n := (tail - atomic.LoadUint32(r.consTail)) & r.mask
	return min(n, r.capacity)
}

// dequeue takes up to len(out) objects (the ring's only consumer may call
// it: the caller holds the consumer token). The objects are addresses a
// sender wrote: the caller checks each before touching it, so they stay
// integers here, never Go pointers.
func (r *shmRing) dequeue(out []uintptr) int {
	head := atomic.LoadUint32(r.consHead)
	prodTail, _ := posCnt(atomic.LoadUint64(r.tail)) // acquire: the objects are written
	n := prodTail - head
	if n == 0 {
		return 0
	}
	n = min(n, uint32(len(out)))
	atomic.StoreUint32(r.consHead, head+n)
	for i := uint32(0); i < n; i++ {
		out[i] = *r.slot(head + i)
	}
	atomic.StoreUint32(r.consTail, head+n) // release: the slots may be reused
	raceSync()                             // acquire what the senders wrote (race builds)
	return int(n)
}

// Why an enqueue failed.
const (
	ringFull   = 1
	ringWedged = 2
)

// headWaitSpins is how long an enqueue waits, in looks at the ring, for
// the producer head to come within htd_max of the tail before it checks
// whether the ring is wedged (a sender died inside an enqueue).
const headWaitSpins = 1 << 12

// enqueue adds one object: 0, ringFull, or ringWedged. Unlike DPDK, which
// would spin forever behind a producer killed between its head and tail
// updates, it gives up with ringWedged: nothing was changed until the
// head CAS, so giving up before it is safe.
func (r *shmRing) enqueue(obj uintptr) int {
	raceSync() // release what this sender wrote (race builds)
	var pos uint32
	for {
		oh, bad := r.headWait()
		if bad {
			return ringWedged
		}
		hpos, hcnt := posCnt(oh)
		if r.capacity+atomic.LoadUint32(r.consTail)-hpos < 1 {
			return ringFull
		}
		if atomic.CompareAndSwapUint64(r.head, oh, makePosCnt(hpos+1, hcnt+1)) {
			pos = hpos
			break
		}
	}
	*r.slot(pos) = obj
	r.finishEnqueue()
	return 0
}

// headWait reads the producer head once it is within htd_max of the tail
// (__rte_ring_rts_head_wait); bad if it stays beyond while the ring reads
// as wedged.
func (r *shmRing) headWait() (uint64, bool) {
	for spins := 1; ; spins++ {
		h := atomic.LoadUint64(r.head)
		hpos, _ := posCnt(h)
		tpos, _ := posCnt(atomic.LoadUint64(r.tail))
		if hpos-tpos <= r.htdMax {
			return h, false
		}
		if spins%headWaitSpins == 0 {
			if r.wedged() {
				return 0, true
			}
			runtime.Gosched()
		}
	}
}

// finishEnqueue is __rte_ring_rts_update_tail: count our enqueue as
// finished, and publish the head's position once no other enqueue begun
// is unfinished (so the consumer never sees a slot still being written).
func (r *shmRing) finishEnqueue() {
	for {
		ot := atomic.LoadUint64(r.tail)
		tpos, tcnt := posCnt(ot)
		hpos, hcnt := posCnt(atomic.LoadUint64(r.head))
		tcnt++
		if tcnt == hcnt {
			tpos = hpos
		}
		if atomic.CompareAndSwapUint64(r.tail, ot, makePosCnt(tpos, tcnt)) {
			return
		}
	}
}

// wedged is onvm_ring_wedged (onvm_ring.h says why reading it is sound):
// the producer head ran more than half of htd_max ahead of the tail, which
// live enqueues never do; the distance is signed, the head read first.
func (r *shmRing) wedged() bool {
	hpos, _ := posCnt(atomic.LoadUint64(r.head))
	wedgeCheckHook(r)
	tpos, _ := posCnt(atomic.LoadUint64(r.tail))
	return int32(hpos-tpos) > int32(r.htdMax/2)
}
