package xio

import (
	"sync"
	"unsafe"
)

// Received stream payloads are copied out of shared memory into chunks
// that the reader hands back once it has copied them on: a round trip of
// the SBI then allocates nothing in the poller, where a fresh slice per
// message was two allocations of the payload's size per exchange and so
// a share of the garbage collections that make the latency tail.
//
// Chunks come in four power-of-two classes up to one buffer's payload.
// A payload below minPooledChunk gets a slice of its own size: a reader
// that leaves its window (ONVM_CONN_WINDOW) unread as many tiny messages
// must not pin a pooled buffer per message; from minPooledChunk on a
// chunk is at most twice its payload, so an unread window pins at most
// twice its bytes.
const minPooledChunk = 512

var (
	chunks1K sync.Pool // *[1 << 10]byte
	chunks2K sync.Pool // *[2 << 10]byte
	chunks4K sync.Pool // *[4 << 10]byte
	chunks8K sync.Pool // *[8 << 10]byte
)

// newChunk returns a slice of length n (n ≤ msgPayload) to copy a payload
// into, recycled when n is large enough to be worth it.
func newChunk(n int) []byte {
	switch {
	case n < minPooledChunk:
		return make([]byte, n)
	case n <= 1<<10:
		if p, ok := chunks1K.Get().(*[1 << 10]byte); ok {
			return p[:n]
		}
		return new([1 << 10]byte)[:n]
	case n <= 2<<10:
		if p, ok := chunks2K.Get().(*[2 << 10]byte); ok {
			return p[:n]
		}
		return new([2 << 10]byte)[:n]
	case n <= 4<<10:
		if p, ok := chunks4K.Get().(*[4 << 10]byte); ok {
			return p[:n]
		}
		return new([4 << 10]byte)[:n]
	}
	if p, ok := chunks8K.Get().(*[8 << 10]byte); ok {
		return p[:n]
	}
	return new([8 << 10]byte)[:n]
}

// freeChunk recycles a chunk from newChunk whose bytes nobody refers to
// any more; a slice of another capacity is left to the collector.
func freeChunk(b []byte) {
	switch cap(b) {
	case 1 << 10:
		chunks1K.Put((*[1 << 10]byte)(b[:cap(b)]))
	case 2 << 10:
		chunks2K.Put((*[2 << 10]byte)(b[:cap(b)]))
	case 4 << 10:
		chunks4K.Put((*[4 << 10]byte)(b[:cap(b)]))
	case 8 << 10:
		chunks8K.Put((*[8 << 10]byte)(b[:cap(b)]))
	}
}

// copyPayload copies n bytes of payload at p (shared memory) into a chunk.
func copyPayload(p unsafe.Pointer, n int) []byte {
	b := newChunk(n)
	copy(b, unsafe.Slice((*byte)(p), n))
	return b
}
