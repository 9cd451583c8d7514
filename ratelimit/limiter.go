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
//
// Growth > 1 adds a slow start to Algorithm 1 (amf.limiter.growth; 1 is
// the paper's exact behaviour): while messages wait in the queue and the
// EWMA has stayed at or below the threshold since the queue last emptied,
// E_max is multiplied by Growth instead of raised by one, never past the
// demand (E_current plus the queue). The first interval above the
// threshold ends the slow start, puts E_max back to its value before the
// last multiplication (the last one the scheduler was fast at) and hands
// over to the paper's rule until the queue empties again, with a step
// that scales with E_max: ±max(1, ⌊E_max·(Growth−1)/8⌋), the paper's ±1
// at its initial E_max of 8 with Growth 2, so that a limit in the
// hundreds can still follow the load within a burst. Why: a procedure
// holds its slot across peer and UE round trips, so goodput is at most
// E_max / procedure time (Little's law); a registration burst on this
// machine needed E_max in the hundreds, and +1 per interval from 8 took
// the whole burst to get a fraction of the way (README, limiter).
//
// Two more changes ride on Growth > 1, so that growth 1 stays the paper:
// the slow start also looks at the scheduler every ramp interval between
// two Steps (Ramp, limiter_ramp.go: 32 → 1000 in 0.5 s rather than 2.5 s),
// and a slow interval lowers E_max again only when the last cut brought
// the EWMA down (limiter_guard.go: on a shared machine the latency is
// often not the AMF's doing, and cutting then only starves procedures).
// With HoldRule too, at low load (a demand within the initial E_max)
// E_max follows the procedures' hold times instead of the scheduler
// latency, which says nothing there (limiter_holdtime.go); with
// GoodputRule, above it E_max follows the goodput it buys
// (limiter_goodput.go).

import (
	"errors"
	"fmt"
	"math"
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
	// Growth > 1: E_max's factor per interval in the slow start (above);
	// 0 or 1: the paper's +1 only.
	Growth float64
	// HoldRule (with Growth > 1): at low load E_max follows the hold
	// time of procedures (limiter_holdtime.go); HoldAlpha and HoldBeta
	// bound the procedures it lets queue inside the AMF.
	HoldRule            bool
	HoldAlpha, HoldBeta int
	// HoldLoad: the rule holds while E_current plus the queue stay within
	// HoldLoad × the initial E_max (0: 2).
	HoldLoad int
	// GoodputRule (with Growth > 1): above low load E_max follows the
	// goodput it buys (limiter_goodput.go).
	GoodputRule bool
	// Fixed is the limit of mode fixed; 0 takes Initial (clamped). Kept
	// apart from Initial, Min and Max so that a switch to adaptive at run
	// time (SetMode) finds the adaptive bounds.
	Fixed int
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
	// ramping: in the slow start (Growth > 1); rampFrom is E_max before
	// its last multiplication, 0 before the first.
	ramping  bool
	rampFrom int
	// cutEWMA is the EWMA when E_max was last lowered, 0 when the
	// scheduler was fast since (limiter_guard.go).
	cutEWMA float64
	// rampWake tells RampMonitor that a slow start has a queue
	// (limiter_ramp.go); buffered, never blocks Acquire.
	rampWake chan struct{}
	// hold is the hold-time rule's memory (limiter_holdtime.go).
	hold holdState
	// goodput is the goodput rule's memory (limiter_goodput.go).
	goodput goodputState
	// adaptiveEMax is adaptive's E_max while another mode runs, 0 if
	// adaptive has not run yet (limiter_mode.go).
	adaptiveEMax int
}

// LimiterCounts are cumulative counters of the limiter.
type LimiterCounts struct {
	Started, Queued, Refused, Expired uint64
	// Held counts slow intervals that kept E_max (limiter_guard.go).
	Held uint64
	// HoldCuts and HoldRaises count the hold-time rule's moves.
	HoldCuts, HoldRaises uint64
	// GoodputCuts and GoodputRaises count the goodput rule's kept probes.
	GoodputCuts, GoodputRaises uint64
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
	l := &Limiter{cfg: cfg, now: now, open: map[*Slot]struct{}{}, ramping: cfg.Growth > 1, rampWake: make(chan struct{}, 1)}
	l.emax = l.startLimit()
	return l
}

// Acquire asks for a slot for a procedure of kind. With room (or mode off)
// it returns the slot at once and never calls start. Otherwise the request
// waits and start is called with the slot, on the goroutine that freed it,
// when its turn comes; Acquire then returns nil, nil. With the queue full
// it returns ErrQueueFull.
func (l *Limiter) Acquire(kind string, start func(*Slot)) (*Slot, error) {
	l.mu.Lock()
	lifted := l.liftForBurstLocked() // earlier waiters, started below
	s, err := l.acquireLocked(kind, start)
	l.mu.Unlock()
	startAll(lifted)
	return s, err
}

// acquireLocked is Acquire under the lock: a slot, a place in the queue
// (nil, nil) or ErrQueueFull.
func (l *Limiter) acquireLocked(kind string, start func(*Slot)) (*Slot, error) {
	if l.roomLocked() && len(l.waiting) == 0 {
		return l.takeLocked(kind), nil
	}
	if len(l.waiting) >= l.cfg.Queue {
		l.counts.Refused++
		return nil, ErrQueueFull
	}
	l.counts.Queued++
	l.waiting = append(l.waiting, waiter{kind: kind, start: start})
	l.markBoundLocked()
	l.wakeRampLocked()
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
	l.markBoundLocked()
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
	l.noteHoldLocked(s, result)
	l.noteGoodputLocked(result)
	ready := l.admitLocked()
	l.mu.Unlock()
	startAll(ready)
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

// startAll runs the admitted requests' callbacks, outside the limiter's lock.
func startAll(list []admitted) {
	for _, a := range list {
		a.w.start(a.slot)
	}
}

// Decision is what one monitor step saw and did.
type Decision struct {
	Latency, EWMA  float64 // seconds
	EMax, ECurrent int     // E_max after the step, E_current at it
	Change         int     // E_max's move: −1, 0, +1 (the paper), more in a slow start
	Expired        int     // slots ended as timed out
	// Held: slow, but E_max kept because the last cut did not bring the
	// EWMA down (limiter_guard.go).
	Held bool
}

// Step is one monitor interval of Algorithm 1 with the interval's
// scheduler latency (seconds): EWMA_t = w·EWMA_{t−1} + (1−w)·latency_t;
// only when E_current ≥ E_max (adaptive mode), E_max −1 above the
// threshold and +1 at or below it, clamped to [Min, Max]. It also ends
// the slots older than MaxAge. With Growth > 1 the raise is a slow start
// while messages wait (slowStartLocked).
func (l *Limiter) Step(latency float64) Decision {
	l.mu.Lock()
	w := l.cfg.EWMAWeight
	l.ewma = w*l.ewma + (1-w)*latency
	l.last = latency
	d := Decision{Latency: latency, EWMA: l.ewma, ECurrent: l.current}
	l.forgetCutWhenIdleLocked()
	slow := l.ewma > l.cfg.Threshold.Seconds()
	if l.cfg.Mode == ModeAdaptive && l.current >= l.emax && !l.holdRuleOwnsLocked(slow) && !l.goodputOwnsLocked(slow) {
		old := l.emax
		switch {
		case l.slowStartLocked(slow):
		case slow && l.cutIsFutileLocked():
			d.Held = true
			l.counts.Held++
		default:
			l.moveLocked(slow)
		}
		l.noteMoveLocked(slow, old)
		d.Change = l.emax - old
	}
	l.rearmLocked()
	d.EMax = l.emax
	stale := l.staleLocked()
	ready := l.admitLocked()
	l.mu.Unlock()
	startAll(ready)
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

// slowStartLocked moves E_max if the slow start is on and messages wait,
// and says whether it did: fast, E_max·Growth (at least +1, at most the
// demand E_current + queue, and Max); slow, the slow start ends and E_max
// goes back to its value before the last multiplication.
func (l *Limiter) slowStartLocked(slow bool) bool {
	if !l.ramping || len(l.waiting) == 0 {
		return false
	}
	if slow {
		l.ramping = false
		if l.rampFrom == 0 {
			return false // nothing multiplied yet: the paper's −1
		}
		l.emax, l.rampFrom = max(l.rampFrom, l.cfg.Min), 0
		return true
	}
	grown := max(l.emax+1, int(math.Ceil(float64(l.emax)*l.cfg.Growth)))
	l.rampFrom = l.emax
	l.emax = max(min(grown, l.current+len(l.waiting), l.cfg.Max), l.emax)
	return true
}

// rearmLocked starts a new slow start once the queue has emptied: the
// burst that ended it is over, and the next one ramps afresh.
func (l *Limiter) rearmLocked() {
	if l.cfg.Growth > 1 && len(l.waiting) == 0 && !l.ramping {
		l.ramping, l.rampFrom = true, 0
	}
}

// moveLocked lowers E_max when the scheduler is slow, else raises it, by
// one (the paper) or, with Growth > 1, by a step proportional to E_max.
func (l *Limiter) moveLocked(slow bool) {
	step := 1
	if l.cfg.Growth > 1 {
		step = max(1, int(float64(l.emax)*(l.cfg.Growth-1)/8))
	}
	if slow {
		l.emax = max(l.emax-step, l.cfg.Min)
	} else {
		l.emax = min(l.emax+step, l.cfg.Max)
	}
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
	Mode Mode
	// Setting is the mode as amf.limiter.mode spells it ("fixed:8").
	Setting        string
	EMax, ECurrent int
	Queue          int
	EWMA, Latency  float64 // seconds
	// HoldRatio is the hold-time rule's last round: mean hold / base.
	HoldRatio float64
	// GoodputRate is the goodput rule's last window: successful
	// completions per second.
	GoodputRate float64
	LimiterCounts
}

// State reads the limiter's state.
func (l *Limiter) State() LimiterState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return LimiterState{Mode: l.cfg.Mode, Setting: l.settingLocked(), EMax: l.emax, ECurrent: l.current, Queue: len(l.waiting),
		EWMA: l.ewma, Latency: l.last, HoldRatio: l.hold.lastRatio, GoodputRate: l.goodput.lastRate, LimiterCounts: l.counts}
}
