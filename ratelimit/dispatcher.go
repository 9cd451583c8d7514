// Package ratelimit is the AMF dispatcher seam: every NAS/NGAP event the AMF
// processes passes through one Dispatcher, which runs events in order per key
// (one UE, or one gNB for non-UE-associated signalling) and concurrently across
// keys on at most Limit() goroutines. That bound is on messages (worker
// goroutines); the bound on procedures in progress, E_max of the paper's
// Algorithm 1, is the Limiter (limiter.go), whose waiting requests park
// their key with Hold and come back with Resume, so a UE's order is kept.
package ratelimit

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// Class says what a key identifies.
type Class uint8

const (
	// ClassUE keys UE-associated events by the AMF UE NGAP ID.
	ClassUE Class = iota + 1
	// ClassGNB keys non-UE-associated events by the association (gNB) id.
	ClassGNB
)

// Key is what events are ordered by. It is a value (an id), never a pointer,
// so a stale event cannot reach a released context (STYLE.md habit 5).
type Key struct {
	Class Class
	ID    uint64
}

// UE is the key of one UE's events.
func UE(amfUeNgapID int64) Key { return Key{Class: ClassUE, ID: uint64(amfUeNgapID)} }

// GNB is the key of one association's non-UE events.
func GNB(assocID uint64) Key { return Key{Class: ClassGNB, ID: assocID} }

func (k Key) String() string {
	switch k.Class {
	case ClassUE:
		return fmt.Sprintf("ue/%d", k.ID)
	case ClassGNB:
		return fmt.Sprintf("gnb/%d", k.ID)
	}
	return fmt.Sprintf("key/%d/%d", k.Class, k.ID)
}

// ErrClosed is returned by Dispatch after Close.
var ErrClosed = errors.New("ratelimit: dispatcher closed")

// Dispatcher runs events ordered per key and bounded in concurrency.
type Dispatcher interface {
	// Dispatch queues fn under key; it never blocks on other keys' work.
	Dispatch(key Key, fn func()) error
	// SetLimit sets how many events may run at once (n < 1 means 1).
	SetLimit(n int)
	// Limit is the current bound.
	Limit() int
	// QueueLen is the number of events waiting (not running).
	QueueLen() int
	// InFlight is the number of events running now.
	InFlight() int
	// Close stops accepting events and waits until the queued ones ran.
	Close()
	// Hold, from inside a running event of key, keeps the key's later
	// events queued until Resume, which runs fn first (the limiter's wait).
	Hold(key Key)
	Resume(key Key, fn func()) error
}

// PanicFunc hears about a panic inside an event of key; the caller tears the
// key down (e.g. releases that UE). The worker has already recovered.
type PanicFunc func(key Key, recovered any, stack []byte)

// Pool is the default Dispatcher: per-key FIFO queues and a ready list of keys
// with work; workers are goroutines started on demand up to the limit. Up to
// warm of them stay parked when there is no work (warm_workers.go), so a lone
// UE's next message runs on a goroutine whose stack has already grown.
type Pool struct {
	onPanic PanicFunc
	gauges  *Gauges

	mu       sync.Mutex
	cond     *sync.Cond // signalled when workers drop to zero (Close waits)
	wake     *sync.Cond // parked workers wait here for work (warm_workers.go)
	limit    int
	workers  int // worker goroutines alive: busy + idle
	busy     int // workers taking ready keys, bounded by limit
	idle     int // workers parked
	wakeups  int // parked workers handed work, not yet awake
	warm     int // most workers kept parked
	inflight int
	queued   int
	closed   bool
	queues   map[Key]*keyQueue
	ready    []Key // keys with queued events and no event running
}

type keyQueue struct {
	events  []func()
	running bool
	held    bool // Hold: the key's events wait for Resume
	// early counts Resumes that came while the key's event ran, before
	// its Hold: that Hold then has nothing to wait for.
	early int
}

// New returns a Pool running at most limit events at once. onPanic may be nil;
// gauges may be nil.
func New(limit int, onPanic PanicFunc, gauges *Gauges) *Pool {
	p := &Pool{onPanic: onPanic, gauges: gauges, limit: max(limit, 1), warm: defaultWarm(), queues: map[Key]*keyQueue{}}
	p.cond = sync.NewCond(&p.mu)
	p.wake = sync.NewCond(&p.mu)
	p.gauges.setLimit(p.limit)
	return p
}

// Dispatch implements Dispatcher.
func (p *Pool) Dispatch(key Key, fn func()) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	q := p.queues[key]
	if q == nil {
		q = &keyQueue{}
		p.queues[key] = q
	}
	q.events = append(q.events, fn)
	p.queued++
	if !q.running && !q.held && len(q.events) == 1 {
		p.ready = append(p.ready, key)
	}
	p.spawnLocked()
	p.publishLocked()
	return nil
}

// spawnLocked puts workers to work while there is ready work and room under
// the limit: a parked one first, else a new goroutine.
func (p *Pool) spawnLocked() {
	for p.busy < p.limit && p.busy < len(p.ready)+p.inflight {
		p.busy++
		if p.wakeParkedLocked() {
			continue
		}
		p.workers++
		go p.work()
	}
}

// work runs ready keys until there is nothing ready or the limit dropped
// below the busy workers, then parks while it is among the warm ones.
func (p *Pool) work() {
	p.mu.Lock()
	for {
		p.drainLocked()
		p.busy--
		if !p.parkLocked() {
			break
		}
	}
	p.workers--
	if p.workers == 0 {
		p.cond.Broadcast()
	}
	p.mu.Unlock()
}

// drainLocked runs ready keys one event at a time, dropping p.mu while an
// event runs.
func (p *Pool) drainLocked() {
	for len(p.ready) > 0 && p.busy <= p.limit {
		key := p.ready[0]
		p.ready = p.ready[1:]
		q := p.queues[key]
		fn := q.events[0]
		q.events[0] = nil
		q.events = q.events[1:]
		q.running = true
		p.queued--
		p.inflight++
		p.publishLocked()
		p.mu.Unlock()

		p.run(key, fn)

		p.mu.Lock()
		p.inflight--
		q.running = false
		switch {
		case q.held:
			// Hold: the events stay queued until Resume.
		case len(q.events) > 0:
			// Back of the line: one busy key does not starve the others.
			p.ready = append(p.ready, key)
		default:
			delete(p.queues, key)
		}
		p.publishLocked()
	}
}

// run executes one event; a panic is contained here so the worker lives on
// (STYLE.md: a bad message costs one UE, never the NF).
func (p *Pool) run(key Key, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			p.gauges.panicked()
			if p.onPanic != nil {
				p.safePanicCallback(key, r, debug.Stack())
			}
		}
	}()
	fn()
}

func (p *Pool) safePanicCallback(key Key, r any, stack []byte) {
	defer func() { _ = recover() }() // a failing teardown must not kill the worker either
	p.onPanic(key, r, stack)
}

// SetLimit implements Dispatcher.
func (p *Pool) SetLimit(n int) {
	p.mu.Lock()
	p.limit = max(n, 1)
	p.gauges.setLimit(p.limit)
	p.spawnLocked()
	p.mu.Unlock()
}

// Limit implements Dispatcher.
func (p *Pool) Limit() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limit
}

// QueueLen implements Dispatcher.
func (p *Pool) QueueLen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued
}

// InFlight implements Dispatcher.
func (p *Pool) InFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inflight
}

// Close implements Dispatcher.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	p.wake.Broadcast() // parked workers leave
	for p.workers > 0 {
		p.cond.Wait()
	}
	p.mu.Unlock()
}

func (p *Pool) publishLocked() { p.gauges.set(p.queued, p.inflight) }

// Hold is called from inside a running event of key: once that event
// returns, the key's later events stay queued, in order, until Resume. The
// AMF holds a UE whose event-initiating message waits for a limiter slot,
// so the UE's next messages stay behind it (per-UE order) while every
// other key runs on.
func (p *Pool) Hold(key Key) {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.queues[key]
	if q == nil {
		q = &keyQueue{}
		p.queues[key] = q
	}
	if q.early > 0 {
		// The wait ended before it began (the limiter admitted the event
		// on another goroutine between its queueing and this call).
		q.early--
		return
	}
	q.held = true
}

// Resume ends a Hold of key: fn runs first, then the events that queued
// meanwhile. It may be called from any goroutine, even before the event
// that held the key returned.
func (p *Pool) Resume(key Key, fn func()) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	q := p.queues[key]
	if q == nil {
		q = &keyQueue{}
		p.queues[key] = q
	}
	wasHeld := q.held
	if !wasHeld && q.running {
		q.early++ // the Hold of the running event is still to come
	}
	q.held = false
	q.events = append([]func(){fn}, q.events...)
	p.queued++
	if !q.running && (wasHeld || len(q.events) == 1) {
		p.ready = append(p.ready, key)
	}
	p.spawnLocked()
	p.publishLocked()
	return nil
}
