//go:build l25gc_testhooks

package xio

import "testing"

// TestChunkClasses: a payload gets a chunk of its length; from
// minPooledChunk on its capacity is the smallest class that holds it, so
// an unread window pins at most twice its bytes.
func TestChunkClasses(t *testing.T) {
	for _, c := range []struct{ n, cap int }{
		{1, 1}, {minPooledChunk - 1, minPooledChunk - 1}, {minPooledChunk, 1 << 10},
		{1 << 10, 1 << 10}, {1<<10 + 1, 2 << 10}, {3000, 4 << 10}, {msgPayload, 8 << 10},
	} {
		b := newChunk(c.n)
		if len(b) != c.n || cap(b) != c.cap {
			t.Errorf("newChunk(%d): len %d cap %d, want len %d cap %d", c.n, len(b), cap(b), c.n, c.cap)
		}
		if cap(b) > 2*c.n {
			t.Errorf("newChunk(%d): capacity %d is more than twice the payload", c.n, cap(b))
		}
		freeChunk(b)
	}
}

// TestChunkRecycled: a chunk handed back serves the next payload of its
// class without an allocation.
func TestChunkRecycled(t *testing.T) {
	freeChunk(newChunk(1100))
	if a := testing.AllocsPerRun(100, func() { freeChunk(newChunk(1100)) }); a != 0 {
		t.Fatalf("%v allocations per recycled chunk, want 0", a)
	}
}
