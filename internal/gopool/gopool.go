// Package gopool runs short functions on goroutines that already exist.
//
// An NF starts a goroutine per SBI call (the AMF per registration step and
// per branch of its parallel calls, the SMF per parallel read). A new
// goroutine's stack starts small and is copied each time it doubles, and
// an SBI call's JSON decoding is deep: runtime.newstack was 5-9 % of the
// AMF's CPU at concurrency 64. A goroutine that has finished a call keeps
// its grown stack, so handing it the next call saves both the start and the
// copies; it exits after a while without work, so an idle NF keeps none.
package gopool

import (
	"sync/atomic"
	"time"
)

// DefaultIdle is how long a goroutine waits for more work before it exits.
const DefaultIdle = 2 * time.Second

// Pool hands functions to its idle goroutines, or starts one when none is
// idle. The zero value is not usable; use New. A Pool needs no closing:
// its goroutines exit on their own once idle for the pool's idle time.
type Pool struct {
	work    chan func()
	idle    time.Duration
	started atomic.Int64 // goroutines started, ever
	live    atomic.Int64 // goroutines running now
}

// New returns a pool whose goroutines exit after idle without work
// (DefaultIdle when idle <= 0).
func New(idle time.Duration) *Pool {
	if idle <= 0 {
		idle = DefaultIdle
	}
	return &Pool{work: make(chan func()), idle: idle}
}

// Go runs fn on an idle goroutine of the pool, or on a new one: like the
// go statement, it does not wait for fn, and a panic fn does not recover
// ends the process as it would there. A nil pool starts a goroutine per
// function.
func (p *Pool) Go(fn func()) {
	if p == nil {
		go fn()
		return
	}
	select {
	case p.work <- fn: // an idle goroutine took it
	default:
		p.started.Add(1)
		p.live.Add(1)
		go p.serve(fn)
	}
}

// Goroutines says how many goroutines the pool has now and has started
// since New.
func (p *Pool) Goroutines() (live, started int64) { return p.live.Load(), p.started.Load() }

// serve runs fn, then whatever Go hands it, until idle passes without work.
func (p *Pool) serve(fn func()) {
	defer p.live.Add(-1)
	t := time.NewTimer(p.idle)
	defer t.Stop()
	for {
		fn()
		fn = nil // let what fn holds go while waiting
		t.Reset(p.idle)
		select {
		case fn = <-p.work:
		case <-t.C:
			return
		}
	}
}
