package xio

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// Addr is an X-IO address: any string of up to 63 bytes ("127.0.0.1:8000",
// "nrf"). Network is "xio".
type Addr string

func (a Addr) Network() string { return "xio" }
func (a Addr) String() string  { return string(a) }

func peerName(idx uint32) string { return "xio-conn-" + itoa(idx) }

func itoa(v uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// errMissingAddress is net's own message for a write without a destination.
var errMissingAddress = errors.New("missing address")

// opError wraps a negative errno from the C stack like the net package does,
// so errors.Is(err, syscall.ECONNREFUSED) and friends work.
func opError(op string, src, dst net.Addr, errno int, syscallName string) error {
	var err error = os.NewSyscallError(syscallName, syscall.Errno(-errno))
	switch syscall.Errno(-errno) {
	case syscall.ENOTRECOVERABLE:
		err = fmt.Errorf("%w (a process died inside a shared ring operation; the onvm manager exits and X-IO restarts)", err)
	case syscall.ESHUTDOWN:
		err = fmt.Errorf("%w (the onvm manager stopped; X-IO is down until it restarts)", err)
	case syscall.EBUSY:
		err = fmt.Errorf("%w (the X-IO table lock is held by a live process that does not release it)", err)
	}
	return &net.OpError{Op: op, Net: "xio", Source: src, Addr: dst, Err: err}
}

func timeoutError(op string, src, dst net.Addr) error {
	return &net.OpError{Op: op, Net: "xio", Source: src, Addr: dst, Err: os.ErrDeadlineExceeded}
}

// ctxError is a read or write given up because its context ended; it
// wraps the context's error (context.Canceled, DeadlineExceeded).
func ctxError(op string, src, dst net.Addr, err error) error {
	return &net.OpError{Op: op, Net: "xio", Source: src, Addr: dst, Err: err}
}

func closedError(op string, src, dst net.Addr) error {
	return &net.OpError{Op: op, Net: "xio", Source: src, Addr: dst, Err: net.ErrClosed}
}

// backoff paces a writer that waits for window, pool or ring space: the
// room is made by another process, which sends no signal for it.
type backoff struct {
	d     time.Duration
	timer *time.Timer
}

const (
	backoffMin = 5 * time.Microsecond
	backoffMax = time.Millisecond
)

func (b *backoff) reset() { b.d = 0 }

// wait sleeps one step unless a deadline, close or context end comes
// first; it reports false when interrupted.
func (b *backoff) wait(deadline, closed, ended <-chan struct{}) bool {
	if b.d == 0 {
		b.d = backoffMin
	} else if b.d < backoffMax {
		b.d *= 2
	}
	if b.timer == nil {
		b.timer = time.NewTimer(b.d)
	} else {
		b.timer.Reset(b.d)
	}
	select {
	case <-b.timer.C:
		return true
	case <-deadline:
	case <-closed:
	case <-ended:
	}
	b.timer.Stop()
	return false
}

// deadline is one direction's deadline. Waiters select on ch; setting a new
// deadline closes the old ch so waiters wake and re-check expired().
type deadline struct {
	mu     sync.Mutex
	at     time.Time
	timer  *time.Timer
	ch     chan struct{}
	closed bool
}

func newDeadline() *deadline { return &deadline{ch: make(chan struct{})} }

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.at = t
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if !d.closed {
		close(d.ch)
	}
	d.ch, d.closed = make(chan struct{}), false
	if t.IsZero() {
		return
	}
	dur := time.Until(t)
	if dur <= 0 {
		close(d.ch)
		d.closed = true
		return
	}
	ch := d.ch
	d.timer = time.AfterFunc(dur, func() { d.fire(ch) })
}

func (d *deadline) fire(ch chan struct{}) {
	d.mu.Lock()
	if d.ch == ch && !d.closed {
		close(ch)
		d.closed = true
	}
	d.mu.Unlock()
}

// state returns the channel to wait on and whether the deadline has passed.
func (d *deadline) state() (<-chan struct{}, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ch, !d.at.IsZero() && !time.Now().Before(d.at)
}
