//go:build l25gc_testhooks

package xio

/*
#cgo CFLAGS: -DL25GC_TESTHOOKS
#include <stdint.h>
#include "testhooks.h"
*/
import "C"

import (
	"errors"
	"unsafe"
)

// testRing is a ring of the rx rings' kind (MP RTS enqueue, SC dequeue)
// in C heap memory, seen both through Go's view (shmRing) and through
// DPDK's own calls, for the tests that pin one to the other (ring_test.go).
type testRing struct {
	shmRing
}

// ringState is a ring as DPDK's API and onvm_ring.h read it.
type ringState struct {
	size, capacity, htdMax, count          uint32
	prodHead, prodTail, consHead, consTail uint32
}

func newTestRing(count uint32) (*testRing, error) {
	p := C.xio_test_ring_new(C.uint(count))
	if p == nil {
		return nil, errors.New("rte_ring_init failed")
	}
	return &testRing{newShmRing(p)}, nil
}

func (r *testRing) close() { C.xio_test_ring_free(r.c) }

// ringMemsize is rte_ring_get_memsize(count): the header and the objects.
func ringMemsize(count uint32) int { return int(C.xio_test_ring_memsize(C.uint(count))) }

// ringHeaderSize is where Go's view expects the objects to start.
func ringHeaderSize() int { return int(ringHeaderBytes) }

// cEnqueue enqueues obj with rte_ring_enqueue: 0 or a negative errno.
func (r *testRing) cEnqueue(obj uintptr) int {
	return int(C.xio_test_ring_enqueue(r.c, C.uintptr_t(obj)))
}

// cDequeue dequeues up to n objects with rte_ring_dequeue_burst.
func (r *testRing) cDequeue(n int) []uintptr {
	out := make([]C.uintptr_t, n)
	k := int(C.xio_test_ring_dequeue(r.c, unsafe.SliceData(out), C.uint(n)))
	got := make([]uintptr, k)
	for i := range got {
		got[i] = uintptr(out[i])
	}
	return got
}

// cEnqueueSeq enqueues base, base+step, ... (n objects) in order from C,
// waiting for room.
func (r *testRing) cEnqueueSeq(base, step uintptr, n int) {
	C.xio_test_ring_enqueue_seq(r.c, C.uintptr_t(base), C.uintptr_t(step), C.uint(n))
}

// cState reads the ring through DPDK and onvm_ring.h.
func (r *testRing) cState() ringState { return cRingState(r.c) }

func cRingState(p unsafe.Pointer) ringState {
	var o [8]C.uint32_t
	C.xio_test_ring_state(p, &o[0])
	return ringState{uint32(o[0]), uint32(o[1]), uint32(o[2]), uint32(o[3]),
		uint32(o[4]), uint32(o[5]), uint32(o[6]), uint32(o[7])}
}

// goState reads the same through Go's view.
func (r *shmRing) goState() ringState {
	hpos, _ := posCnt(*r.head)
	tpos, _ := posCnt(*r.tail)
	return ringState{r.mask + 1, r.capacity, r.htdMax, r.count(), hpos, tpos, *r.consHead, *r.consTail}
}

// setPos moves the empty ring's positions to pos (across the 32-bit wrap).
func (r *testRing) setPos(pos uint32) { C.xio_test_ring_set_pos(r.c, C.uint32_t(pos)) }

// ownRxRing is this process's rx ring in Go's view, and its C pointer.
func ownRxRing() (*shmRing, error) {
	st, err := defaultStack()
	if err != nil {
		return nil, err
	}
	return &st.shm.rx[st.shm.self], nil
}
