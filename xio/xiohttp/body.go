package xiohttp

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// inFrame is a received frame in a recycled buffer. A request frame goes
// back to the pool once its handler has returned, a response frame once
// the caller closes the response body: each exchange then allocates no
// frame of its own on either side, one allocation of the message's size
// less per frame, and so fewer garbage collections in the latency tail.
type inFrame struct{ b []byte }

var inFramePool = sync.Pool{New: func() any { return new(inFrame) }}

// readPooledFrame reads one frame body from r into a recycled buffer.
// The length is peeked in r's buffer: a length read into a local array
// through io.Reader would be an allocation per frame.
func readPooledFrame(r *bufio.Reader) (*inFrame, error) {
	lb, err := r.Peek(4)
	if err != nil {
		if err == io.EOF && len(lb) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	n := binary.LittleEndian.Uint32(lb)
	r.Discard(4)
	if n > maxFrame {
		return nil, fmt.Errorf("xiohttp: frame of %d bytes exceeds %d", n, maxFrame)
	}
	f := inFramePool.Get().(*inFrame)
	if cap(f.b) < int(n) {
		f.b = make([]byte, n)
	}
	f.b = f.b[:n]
	if err := readFrameBody(r, f.b); err != nil {
		f.release()
		return nil, err
	}
	return f, nil
}

// release hands the buffer back; nothing may refer to its bytes after.
func (f *inFrame) release() {
	if cap(f.b) > maxPooled {
		f.b = nil // a rare large frame is left to the collector
	}
	f.b = f.b[:0]
	inFramePool.Put(f)
}

// errBodyClosed is a read of a body after Close, or of a request body
// after its handler returned (net/http refuses both too).
var errBodyClosed = errors.New("xiohttp: read on closed body")

// body is a message's body, already received, in its frame's buffer.
// Close hands the frame back; the mutex keeps a Close racing a Read (an
// abandoned request) from handing the buffer on while it is read.
type body struct {
	mu     sync.Mutex
	r      bytes.Reader
	f      *inFrame // nil when the body owns no pooled frame
	closed bool
}

// newBody reads b, which lies in f (nil: b is not pooled).
func newBody(b []byte, f *inFrame) *body {
	x := &body{f: f}
	x.r.Reset(b)
	return x
}

func (x *body) Read(p []byte) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, errBodyClosed
	}
	return x.r.Read(p)
}

// WriteTo lets io.Copy take the bytes without a buffer of its own; w must
// not keep p (io.Writer's contract), as the frame is reused after Close.
func (x *body) WriteTo(w io.Writer) (int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, errBodyClosed
	}
	return x.r.WriteTo(w)
}

func (x *body) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.closed {
		x.closed = true
		x.r.Reset(nil)
		if x.f != nil {
			x.f.release()
			x.f = nil
		}
	}
	return nil
}
