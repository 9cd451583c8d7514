package ratelimit

// The slow start's quick look between two monitor intervals (beyond the
// paper; amf.limiter.ramp_interval). Algorithm 1 looks at the scheduler
// once per interval (500 ms), so a slow start that doubles E_max once per
// interval needs 2-3 s to go from 32 to a burst's demand of 500-1000:
// most of a 4-second registration burst, during which the AMF completes
// work at E_max / procedure time (Little's law) while the rest waits.
// Stop 10 measured adaptive at 72 % of off's goodput for that reason.
//
// Ramp is called every ramp interval (100 ms by default) with the
// scheduler latency of that short interval alone. While a slow start is
// on (Growth > 1, no slow interval since the queue last emptied), messages
// wait and both that latency and the EWMA are at or below the threshold,
// it multiplies E_max by Growth, never past the demand (E_current plus the
// queue) or Max, as a full interval's Step would. It never lowers E_max
// and never touches the EWMA: decreases, and the end of the slow start,
// stay with the interval's Step, so Algorithm 1's decisions keep the
// paper's interval and averaging and a single noisy 100 ms sample cannot
// shrink the limit. A slow short interval just skips its turn.

import (
	"context"
	"time"
)

// Ramp is one short look of the slow start with the latency (seconds) of
// the time since the previous Ramp; see above. Decision.Change is the
// growth, 0 when it did nothing.
func (l *Limiter) Ramp(latency float64) Decision {
	l.mu.Lock()
	d := Decision{Latency: latency, EWMA: l.ewma, ECurrent: l.current}
	if l.rampAllowedLocked(latency) {
		old := l.emax
		l.slowStartLocked(false)
		d.Change = l.emax - old
	}
	d.EMax = l.emax
	ready := l.admitLocked()
	l.mu.Unlock()
	startAll(ready)
	return d
}

// rampAllowedLocked: adaptive, the limit reached, the scheduler fast both
// over the short interval and on average, and not low load, where the
// hold-time rule owns E_max (limiter_holdtime.go), and not with the
// goodput rule, which owns the raises above low load
// (limiter_goodput.go; slowStartLocked checks
// that a slow start is on and that messages wait).
func (l *Limiter) rampAllowedLocked(latency float64) bool {
	th := l.cfg.Threshold.Seconds()
	return l.cfg.Mode == ModeAdaptive && l.current >= l.emax && latency <= th && l.ewma <= th && !l.lowLoadLocked() &&
		!l.goodputRuleOn()
}

// RampMonitor calls Ramp at every tick with the source's latency since
// the previous look, while a slow start has messages waiting; otherwise it
// sleeps until Acquire queues one, so an idle AMF pays no wake-ups for it
// (a time.Ticker nobody receives from does not fire). It runs beside
// Monitor with a source of its own (a SchedLatency keeps the previous
// histogram, so two readers need two) and ticks at the ramp interval;
// observe, when not nil, hears every decision.
func (l *Limiter) RampMonitor(ctx context.Context, src LatencySource, ticks <-chan time.Time, observe func(Decision)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.rampWake:
		}
		src.IntervalLatency() // the first look covers the queue's time only
		for l.rampWanted() {
			select {
			case <-ctx.Done():
				return
			case <-ticks:
			}
			d := l.Ramp(src.IntervalLatency())
			if observe != nil {
				observe(d)
			}
		}
	}
}

// rampWanted: a slow start is on, messages wait, and the goodput rule
// does not own the raises.
func (l *Limiter) rampWanted() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ramping && len(l.waiting) > 0 && !l.goodputRuleOn()
}

// wakeRampLocked wakes RampMonitor when a slow start gets a queue.
func (l *Limiter) wakeRampLocked() {
	if !l.ramping {
		return
	}
	select {
	case l.rampWake <- struct{}{}:
	default: // already signalled
	}
}
