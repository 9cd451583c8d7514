package ratelimit

// The adaptive limiter of the AMF (the paper's Algorithm 1; DESIGN.md "AMF
// limiter and overload"). It counts procedures, not messages: E_current
// is the number of procedures in progress, from the event-initiating
// message (Registration Request, PDU Session Establishment Request, ...) to
// the procedure's end in any way. A new procedure starts only while
// E_current < E_max; otherwise its initiating message waits in a bounded
// FIFO. Follow-up messages of a running procedure never meet the gate (the
// caller does not ask for them). Every monitor interval, Step folds the Go
// scheduler's latency of the interval into an EWMA and, only while the
// limit is reached (E_current ≥ E_max), lowers E_max by one above the
// threshold and raises it by one at or below it, within [Min, Max].
//
// The published code freed a slot only on PDU Session Resource Setup
// Response, so one lost answer leaked capacity for good. Here a procedure
// holds a Slot whose Finish is idempotent, and Step ends every slot older
// than MaxAge as timed out: a path the caller forgot costs capacity for at
// most MaxAge.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode says how E_max is chosen.
type Mode int

const (
	// ModeAdaptive moves E_max with the scheduler latency (Algorithm 1).
	ModeAdaptive Mode = iota
	// ModeFixed keeps E_max at LimiterConfig.Initial.
	ModeFixed
	// ModeOff never holds a procedure back; it still counts them.
	ModeOff
)

// ParseMode reads "adaptive", "off" or "fixed:N" (N ≥ 1); N is returned for
// fixed, else 0.
func ParseMode(s string) (Mode, int, error) {
	switch {
	case s == "adaptive":
		return ModeAdaptive, 0, nil
	case s == "off":
		return ModeOff, 0, nil
	case strings.HasPrefix(s, "fixed:"):
		n, err := strconv.Atoi(strings.TrimPrefix(s, "fixed:"))
		if err != nil || n < 1 {
			return 0, 0, fmt.Errorf("fixed:N needs a whole N ≥ 1, got %q", s)
		}
		return ModeFixed, n, nil
	}
	return 0, 0, fmt.Errorf("want adaptive, off or fixed:N, got %q", s)
}

func (m Mode) String() string {
	return [...]string{"adaptive", "fixed", "off"}[m]
}

// LimiterConfig is what the limiter is built from (config.Limiter).
type LimiterConfig struct {
	Mode Mode
	// Initial, Min and Max bound E_max (fixed: Initial is the limit).
	Initial, Min, Max int
	// Queue bounds the initiating messages waiting for a slot.
	Queue int
	// EWMAWeight is w in EWMA_t = w·EWMA_{t−1} + (1−w)·latency_t.
	EWMAWeight float64
	// Threshold: above it E_max falls, at or below it rises.
	Threshold time.Duration
	// MaxAge ends a procedure still open after it (0: never).
	MaxAge time.Duration
}

// Results a Slot ends with (metric labels of the caller).
const (
	ResultSuccess = "success"
	ResultReject  = "reject"
	ResultFailure = "failure"
	ResultTimeout = "timeout"
	ResultGone    = "ue_gone"
	ResultNone    = "not_started" // the initiating message started nothing after all
)

// ErrQueueFull is Acquire's answer when the wait queue is at its bound.
var ErrQueueFull = errors.New("ratelimit: limiter queue full")

// Limiter gates the start of procedures; it is safe for concurrent use.
type Limiter struct {
	cfg LimiterConfig
	now func() time.Time

	mu      sync.Mutex
	emax    int
	current int
	waiting []waiter
	open    map[*Slot]struct{}
	ewma    float64
	last    float64 // the latest interval's latency, seconds
	counts  LimiterCounts
}

// LimiterCounts are cumulative counters of the limiter.
type LimiterCounts struct {
	Started, Queued, Refused, Expired uint64
}

type waiter struct {
	kind  string
	start func(*Slot)
}

// Slot is one procedure in progress. Finish ends it once; later calls do
// nothing, so every way a procedure can end may call it.
type Slot struct {
	l     *Limiter
	kind  string
	began time.Time
	done  atomic.Bool
	// result is what the procedure ended with (read after Done).
	result atomic.Pointer[string]
}

// NewLimiter builds a limiter; now may be nil (time.Now). A fixed limiter
// takes Initial as its limit.
func NewLimiter(cfg LimiterConfig, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	cfg.Min = max(cfg.Min, 1)
	cfg.Max = max(cfg.Max, cfg.Min)
	return &Limiter{cfg: cfg, now: now, emax: min(max(cfg.Initial, cfg.Min), cfg.Max), open: map[*Slot]struct{}{}}
}

// Acquire asks for a slot for a procedure of kind. With room (or mode off)
// it returns the slot at once and never calls start. Otherwise the request
// waits and start is called with the slot, on the goroutine that freed it,
// when its turn comes; Acquire then returns nil, nil. With the queue full
// it returns ErrQueueFull.
func (l *Limiter) Acquire(kind string, start func(*Slot)) (*Slot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.roomLocked() && len(l.waiting) == 0 {
		return l.takeLocked(kind), nil
	}
	if len(l.waiting) >= l.cfg.Queue {
		l.counts.Refused++
		return nil, ErrQueueFull
	}
	l.counts.Queued++
	l.waiting = append(l.waiting, waiter{kind: kind, start: start})
	return nil, nil
}

// Force takes a slot whatever the limit: for a procedure that cannot wait
// without holding up a running one (a UE with a procedure in progress
// starts another: waiting would hold that UE's follow-ups behind the gate).
func (l *Limiter) Force(kind string) *Slot {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.takeLocked(kind)
}

func (l *Limiter) roomLocked() bool {
	return l.cfg.Mode == ModeOff || l.current < l.emax
}

func (l *Limiter) takeLocked(kind string) *Slot {
	s := &Slot{l: l, kind: kind, began: l.now()}
	l.current++
	l.counts.Started++
	l.open[s] = struct{}{}
	return s
}

// Kind is the procedure the slot counts.
func (s *Slot) Kind() string { return s.kind }

// Began is when the slot was taken.
func (s *Slot) Began() time.Time { return s.began }

// Done says whether the slot was finished.
func (s *Slot) Done() bool { return s.done.Load() }

// Result is what the slot ended with, "" while open.
func (s *Slot) Result() string {
	if p := s.result.Load(); p != nil {
		return *p
	}
	return ""
}

// Finish ends the procedure: its slot goes to the first waiting request,
// if any. It reports whether this call ended it (false: already ended).
func (s *Slot) Finish(result string) bool {
	if s == nil || !s.done.CompareAndSwap(false, true) {
		return false
	}
	s.result.Store(&result)
	l := s.l
	l.mu.Lock()
	l.current--
	delete(l.open, s)
	ready := l.admitLocked()
	l.mu.Unlock()
	start(ready)
	return true
}

// admitted is a waiting request with the slot it now holds.
type admitted struct {
	w    waiter
	slot *Slot
}

// admitLocked hands free slots to waiting requests in arrival order.
func (l *Limiter) admitLocked() []admitted {
	var out []admitted
	for len(l.waiting) > 0 && l.roomLocked() {
		w := l.waiting[0]
		l.waiting[0] = waiter{}
		l.waiting = l.waiting[1:]
		out = append(out, admitted{w: w, slot: l.takeLocked(w.kind)})
	}
	return out
}

// start runs the admitted requests' callbacks, outside the limiter's lock.
func start(list []admitted) {
	for _, a := range list {
		a.w.start(a.slot)
	}
}

// Decision is what one monitor step saw and did.
type Decision struct {
	Latency, EWMA  float64 // seconds
	EMax, ECurrent int     // E_max after the step, E_current at it
	Change         int     // −1, 0 or +1
	Expired        int     // slots ended as timed out
}

// Step is one monitor interval of Algorithm 1 with the interval's
// scheduler latency (seconds): EWMA_t = w·EWMA_{t−1} + (1−w)·latency_t;
// only when E_current ≥ E_max (adaptive mode), E_max −1 above the
// threshold and +1 at or below it, clamped to [Min, Max]. It also ends
// the slots older than MaxAge.
func (l *Limiter) Step(latency float64) Decision {
	l.mu.Lock()
	w := l.cfg.EWMAWeight
	l.ewma = w*l.ewma + (1-w)*latency
	l.last = latency
	d := Decision{Latency: latency, EWMA: l.ewma, ECurrent: l.current}
	if l.cfg.Mode == ModeAdaptive && l.current >= l.emax {
		d.Change = l.moveLocked(l.ewma > l.cfg.Threshold.Seconds())
	}
	d.EMax = l.emax
	stale := l.staleLocked()
	ready := l.admitLocked()
	l.mu.Unlock()
	start(ready)
	for _, s := range stale {
		if s.Finish(ResultTimeout) {
			d.Expired++
		}
	}
	if d.Expired > 0 {
		l.mu.Lock()
		l.counts.Expired += uint64(d.Expired)
		l.mu.Unlock()
	}
	return d
}

// moveLocked lowers E_max when the scheduler is slow, else raises it.
func (l *Limiter) moveLocked(slow bool) int {
	old := l.emax
	if slow {
		l.emax = max(l.emax-1, l.cfg.Min)
	} else {
		l.emax = min(l.emax+1, l.cfg.Max)
	}
	return l.emax - old
}

func (l *Limiter) staleLocked() []*Slot {
	if l.cfg.MaxAge <= 0 {
		return nil
	}
	cut := l.now().Add(-l.cfg.MaxAge)
	var out []*Slot
	for s := range l.open {
		if s.began.Before(cut) {
			out = append(out, s)
		}
	}
	return out
}

// LimiterState is a consistent snapshot for metrics and tests.
type LimiterState struct {
	Mode           Mode
	EMax, ECurrent int
	Queue          int
	EWMA, Latency  float64 // seconds
	LimiterCounts
}

// State reads the limiter's state.
func (l *Limiter) State() LimiterState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return LimiterState{Mode: l.cfg.Mode, EMax: l.emax, ECurrent: l.current, Queue: len(l.waiting),
		EWMA: l.ewma, Latency: l.last, LimiterCounts: l.counts}
}
