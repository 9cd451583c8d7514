package ratelimit

// The hold-time rule (beyond the paper; on with Growth > 1 and
// LimiterConfig.HoldRule, so growth 1 stays the paper's exact Algorithm 1).
//
// Why: Algorithm 1 steers by the Go scheduler's latency, which says
// something only when the AMF's goroutines crowd its CPUs. At low load it
// says nothing: in the paper's own experiment (Fig. 3, 32 PDU session
// establishments at once) the AMF's mean scheduler latency on this 2-core
// machine is 0.3-2 ms, far under the 10 ms threshold, so E_max only grows
// and adaptive behaved like off, while a fixed limit of 8 gave a lower
// completion time (stop 11: per-event mean 23-26 ms against off's 36-39
// ms). What does change with E_max there is what Fig. 3 measures: each
// procedure's time from start to end, which the limiter already sees as a
// slot's hold time. Above the knee, more procedures at once do not
// complete more per second; they only wait inside the AMF and the NFs
// behind it, so the hold time grows with E_max.
//
// So at low load, E_max is steered the way TCP Vegas steers a congestion
// window: per round (as many successful completions as E_max, one "round
// trip" of the window) the mean of hold/base is r, where base is the
// shortest hold seen for the procedure's kind recently (a procedure that
// did not wait). E_max·(1 − 1/r) estimates how many procedures only
// queue; above Beta E_max falls towards E_max/r + Alpha (at most halved
// per round, never under Beta), under Alpha it rises by one. Like
// Algorithm 1 it moves E_max only when the limit was reached in the round
// (E_current ≥ E_max). Alpha and Beta are counts of procedures waiting
// for a CPU (config: 2 and 4 per GOMAXPROCS), the few that keep every CPU
// busy. With no more than Beta in progress the estimate cannot pass Beta,
// so the rule never cuts there by itself; the floor keeps its halving
// from overshooting into that range (fixed limits of 2 and 4 gave 1.6-1.8
// times the batch time of 8 in stop 11's Fig. 3). E_max also starts at
// Beta rather than the initial value: one round at 32 is a whole batch
// of Fig. 3, which would otherwise run as if the limiter were off.
//
// Low load is a demand (E_current plus the queue) of at most twice the
// initial E_max (16 per CPU by default; twice, so that a batch of that
// size whose last procedures overlap the next ones' start stays low
// load): there the latency rule has no signal and the hold-time rule owns
// E_max (the latency rule's raises, its slow start and the ramp stand
// aside; an EWMA above the threshold still cuts). Above it (a burst), the
// hold-time rule stands aside, E_max goes back to at least its initial
// value at once and the slow start, the ramp and the cut guard
// (limiter_ramp.go, limiter_guard.go) work as before, so a burst starts
// where it would have without this rule: in a
// registration burst the hold time grows by an order of magnitude while
// the goodput still rises with E_max up to hundreds (README, limiter), so
// a hold-time cut there would starve the burst.

import (
	"cmp"
	"math"
	"time"
)

// HoldBaseWindow is how long a kind's shortest hold is remembered: base
// is the minimum over the current window and the one before, so a base
// from a quieter time of a shared machine ages out within two windows.
const HoldBaseWindow = 30 * time.Second

// MinHoldRound is the fewest completions a round judges by.
const MinHoldRound = 4

// holdState is the rule's memory (under Limiter.mu).
type holdState struct {
	base        map[string]*holdBase
	windowStart time.Time
	round       holdRound
	lastRatio   float64 // the last round's mean hold/base
}

// holdBase is a kind's shortest hold in this window and the one before.
type holdBase struct{ cur, prev time.Duration }

func (b *holdBase) min() time.Duration {
	if b.prev > 0 && b.prev < b.cur {
		return b.prev
	}
	return b.cur
}

// holdRound gathers one round's completions.
type holdRound struct {
	n     int
	ratio float64 // sum of hold/base
	bound bool    // E_current reached E_max in the round
}

// holdRuleOn: the rule is configured (adaptive, Growth > 1, HoldRule).
func (l *Limiter) holdRuleOn() bool {
	return l.cfg.Mode == ModeAdaptive && l.cfg.Growth > 1 && l.cfg.HoldRule
}

// lowLoadLocked: the rule is on and the demand is at most lowLoadCap.
func (l *Limiter) lowLoadLocked() bool {
	return l.holdRuleOn() && l.current+len(l.waiting) <= l.lowLoadCap()
}

// holdStart is E_max's start with the rule on: Beta, within the bounds
// and not above the initial value (above). Otherwise the initial value.
func holdStart(cfg LimiterConfig, initial int) int {
	if cfg.Mode != ModeAdaptive || cfg.Growth <= 1 || !cfg.HoldRule || cfg.HoldBeta <= 0 {
		return initial
	}
	return min(max(cfg.HoldBeta, cfg.Min), initial)
}

// initialLimit is the configured initial E_max within the bounds: the
// limit the operator sized for this machine.
func (l *Limiter) initialLimit() int {
	return min(max(l.cfg.Initial, l.cfg.Min), l.cfg.Max)
}

// lowLoadCap is the demand up to which the load counts as low.
func (l *Limiter) lowLoadCap() int { return cmp.Or(l.cfg.HoldLoad, 2) * l.initialLimit() }

// holdRuleOwnsLocked says whether the latency rule should leave E_max to
// the hold-time rule this interval: low load and a fast scheduler.
func (l *Limiter) holdRuleOwnsLocked(slow bool) bool {
	return !slow && l.lowLoadLocked()
}

// liftForBurstLocked puts E_max back to at least the initial value when
// the demand (with one more request) leaves low load, so a burst starts
// where it would have without the hold-time rule, and hands the freed
// slots to the requests already waiting (for the caller to start outside
// the lock, before the new request queues behind them).
func (l *Limiter) liftForBurstLocked() []admitted {
	if !l.holdRuleOn() || l.current+len(l.waiting)+1 <= l.lowLoadCap() || l.emax >= l.initialLimit() {
		return nil
	}
	l.emax = l.initialLimit()
	return l.admitLocked()
}

// markBoundLocked notes that the limit was reached in this round.
func (l *Limiter) markBoundLocked() {
	if l.current >= l.emax {
		l.hold.round.bound = true
	}
}

// noteHoldLocked adds a finished slot's hold time to its kind's base and
// to the round, and judges the round once it is complete. Only successful
// procedures count: a reject or a timeout says nothing about queueing.
func (l *Limiter) noteHoldLocked(s *Slot, result string) {
	if !l.holdRuleOn() || result != ResultSuccess {
		return
	}
	now := l.now()
	hold := now.Sub(s.began)
	base := l.holdBaseLocked(s.kind, hold, now)
	r := 1.0
	if base > 0 {
		r = float64(hold) / float64(base)
	}
	l.hold.round.n++
	l.hold.round.ratio += r
	if l.hold.round.n >= max(l.emax, MinHoldRound) {
		l.endHoldRoundLocked()
	}
}

// holdBaseLocked folds hold into kind's shortest hold and returns the base.
func (l *Limiter) holdBaseLocked(kind string, hold time.Duration, now time.Time) time.Duration {
	h := &l.hold
	if h.base == nil {
		h.base, h.windowStart = map[string]*holdBase{}, now
	}
	if now.Sub(h.windowStart) >= HoldBaseWindow {
		for _, b := range h.base {
			b.prev, b.cur = b.cur, 0
		}
		h.windowStart = now
	}
	b := h.base[kind]
	if b == nil {
		b = &holdBase{}
		h.base[kind] = b
	}
	if b.cur == 0 || hold < b.cur {
		b.cur = hold
	}
	return b.min()
}

// endHoldRoundLocked judges a complete round (above) and starts the next.
func (l *Limiter) endHoldRoundLocked() {
	rd := l.hold.round
	r := rd.ratio / float64(rd.n)
	l.hold.lastRatio = r
	l.hold.round = holdRound{}
	l.markBoundLocked()
	if !rd.bound || !l.lowLoadLocked() || l.ewma > l.cfg.Threshold.Seconds() {
		return
	}
	queued := float64(l.emax) * (1 - 1/r)
	switch {
	case queued > float64(l.cfg.HoldBeta):
		target := int(math.Ceil(float64(l.emax)/r)) + l.cfg.HoldAlpha
		l.emax = max(min(l.emax-1, max(target, (l.emax+1)/2)), l.cfg.HoldBeta, l.cfg.Min)
		l.rampFrom = 0 // a slow interval must not put back a slow start's older, higher limit
		l.counts.HoldCuts++
	case queued < float64(l.cfg.HoldAlpha) && l.emax < min(l.lowLoadCap(), l.cfg.Max):
		l.emax++
		l.counts.HoldRaises++
	}
}
