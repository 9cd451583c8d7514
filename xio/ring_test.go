//go:build l25gc_testhooks

package xio

import (
	"fmt"
	"sync"
	"testing"
)

// The Go ring (ring.go) and DPDK's must be one ring: these tests drive a
// ring of the rx rings' kind from both sides and compare what each sees.

func newRingForTest(t *testing.T, count uint32) *testRing {
	t.Helper()
	r, err := newTestRing(count)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.close)
	return r
}

// sameState fails unless Go's view and DPDK's read the ring alike.
func sameState(t *testing.T, r *testRing, when string) {
	t.Helper()
	if g, c := r.goState(), r.cState(); g != c {
		t.Fatalf("%s: Go reads %+v, DPDK %+v", when, g, c)
	}
}

// TestGoRingViewMatchesDPDK: geometry (size, capacity, htd_max), the
// objects right after the header, and positions and counts after C and Go
// enqueues and dequeues, for a test ring and this process's own rx ring.
func TestGoRingViewMatchesDPDK(t *testing.T) {
	r := newRingForTest(t, 16)
	if want := ringHeaderSize() + 16*8; ringMemsize(16) != want {
		t.Fatalf("rte_ring_get_memsize(16) = %d, Go expects the header (%d) and 16 pointers: %d",
			ringMemsize(16), ringHeaderSize(), want)
	}
	sameState(t, r, "new ring")
	for i := uintptr(1); i <= 5; i++ {
		if rc := r.cEnqueue(i * 64); rc != 0 {
			t.Fatalf("C enqueue: %d", rc)
		}
	}
	sameState(t, r, "after 5 C enqueues")
	out := make([]uintptr, 3)
	if n := r.dequeue(out); n != 3 || out[0] != 64 || out[2] != 192 {
		t.Fatalf("Go dequeued %d: %v, want 64 128 192", n, out[:n])
	}
	sameState(t, r, "after a Go dequeue")
	if rc := r.enqueue(999); rc != 0 {
		t.Fatalf("Go enqueue: %d", rc)
	}
	sameState(t, r, "after a Go enqueue")
	if got := r.cDequeue(8); len(got) != 3 || got[0] != 256 || got[1] != 320 || got[2] != 999 {
		t.Fatalf("C dequeued %v, want [256 320 999]", got)
	}
	sameState(t, r, "after a C dequeue")

	own, err := ownRxRing()
	if err != nil {
		t.Fatal(err)
	}
	g, c := own.goState(), cRingState(own.c)
	if g.size != c.size || g.capacity != c.capacity || g.htdMax != c.htdMax {
		t.Fatalf("our rx ring: Go reads %+v, DPDK %+v", g, c)
	}
}

// TestRingObjectsCrossBothWaysAcrossTheWrap: starting just below the
// 32-bit wrap of the positions, on a ring of 8 (the index wraps every 8),
// objects enqueued in Go come out of DPDK's dequeue and the reverse, in
// order, in batches of varying sizes.
func TestRingObjectsCrossBothWaysAcrossTheWrap(t *testing.T) {
	r := newRingForTest(t, 8)
	r.setPos(^uint32(0) - 20)
	sameState(t, r, "set below the wrap")
	next, want := uintptr(1), uintptr(1)
	out := make([]uintptr, 8)
	for round := 0; round < 40; round++ {
		k := 1 + uint32(round)%r.capacity
		for i := uint32(0); i < k; i++ {
			var rc int
			if round%2 == 0 {
				rc = r.enqueue(next)
			} else {
				rc = r.cEnqueue(next)
			}
			if rc != 0 {
				t.Fatalf("round %d: enqueue %d of %d failed: %d", round, i, k, rc)
			}
			next++
		}
		var got []uintptr
		if round%2 == 0 {
			got = r.cDequeue(8)
		} else {
			got = out[:r.dequeue(out)]
		}
		for _, o := range got {
			if o != want {
				t.Fatalf("round %d: dequeued %d, want %d", round, o, want)
			}
			want++
		}
		if want != next {
			t.Fatalf("round %d: %d objects enqueued, %d dequeued", round, next-1, want-1)
		}
		sameState(t, r, "after a round")
	}
	if s := r.cState(); s.prodTail > 1000 {
		t.Fatalf("the positions did not wrap: prod tail %d", s.prodTail)
	}
}

// TestRingFullAndEmptyAgree: Go fills the ring to its capacity and no
// further, DPDK then finds it full too; drained, both find it empty.
func TestRingFullAndEmptyAgree(t *testing.T) {
	r := newRingForTest(t, 16)
	n := 0
	for ; n <= int(r.capacity); n++ {
		if rc := r.enqueue(uintptr(n + 1)); rc != 0 {
			if rc != ringFull {
				t.Fatalf("Go enqueue %d: %d, want ringFull", n, rc)
			}
			break
		}
	}
	if n != int(r.capacity) {
		t.Fatalf("Go enqueued %d objects, capacity %d", n, r.capacity)
	}
	if rc := r.cEnqueue(77); rc == 0 {
		t.Fatal("DPDK enqueued into a ring Go filled")
	}
	sameState(t, r, "full")
	if got := r.cDequeue(1); len(got) != 1 || got[0] != 1 {
		t.Fatalf("C dequeued %v, want [1]", got)
	}
	if rc := r.enqueue(100); rc != 0 {
		t.Fatalf("Go enqueue into the one free slot: %d", rc)
	}
	out := make([]uintptr, 64)
	if k := r.dequeue(out); k != int(r.capacity) || out[k-1] != 100 {
		t.Fatalf("Go dequeued %d objects ending %d, want %d ending 100", k, out[max(k-1, 0)], r.capacity)
	}
	if k := r.dequeue(out); k != 0 {
		t.Fatalf("Go dequeued %d from an empty ring", k)
	}
	if got := r.cDequeue(4); len(got) != 0 {
		t.Fatalf("C dequeued %v from an empty ring", got)
	}
	sameState(t, r, "empty")
}

// TestRingConcurrentGoAndCProducers: Go goroutines and a C producer
// enqueue at once into a small ring (so they meet full and wait) while one
// Go consumer drains it: every object arrives once, and each producer's
// in the order it sent them (the RTS tail publishes only finished slots).
func TestRingConcurrentGoAndCProducers(t *testing.T) {
	const producers, each = 5, 4000 // the last producer is C's
	r := newRingForTest(t, 64)
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			base := uintptr(p+1) << 32
			if p == producers-1 {
				r.cEnqueueSeq(base, 1, each)
				return
			}
			for i := 0; i < each; i++ {
				for r.enqueue(base+uintptr(i)) == ringFull {
				}
			}
		}(p)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// Drain until the producers are done and the ring is empty, noting
	// the first fault rather than stopping: a producer blocked on a full
	// ring must still finish before the ring is freed.
	next := make([]uintptr, producers)
	out := make([]uintptr, 32)
	var fault string
	got := 0
drain:
	for {
		k := r.dequeue(out)
		for _, o := range out[:k] {
			p, i := int(o>>32)-1, o&(1<<32-1)
			switch {
			case p < 0 || p >= producers:
				fault = fmt.Sprintf("dequeued %#x, from no producer", o)
			case i != next[p] && fault == "":
				fault = fmt.Sprintf("dequeued producer %d's object %d, want %d", p, i, next[p])
			}
			if p >= 0 && p < producers {
				next[p] = i + 1
			}
		}
		got += k
		if k > 0 {
			continue
		}
		select {
		case <-done:
			if r.count() == 0 {
				break drain
			}
		default:
		}
	}
	if fault != "" {
		t.Fatal(fault)
	}
	if got != producers*each {
		t.Fatalf("dequeued %d objects, %d were enqueued", got, producers*each)
	}
	sameState(t, r, "drained")
}
