package ratelimit

// The goodput rule (beyond the paper; on with Growth > 1 and
// LimiterConfig.GoodputRule, so growth 1 stays the paper's exact
// Algorithm 1).
//
// Why: above low load (limiter_holdtime.go) the latency rule's slow start
// took E_max to the demand, because the AMF's scheduler latency there
// (p50 2 ms at a Fig. 3 batch of 1024) rarely passes the 10 ms threshold:
// adaptive ran as off, and at batch 1024 off's average completion time
// was 1.11 × the best fixed limit's (README, stop 15). A limit helps the
// average there by first come, first served: with E procedures in
// progress out of a batch of N at goodput X, the i-th completes near
// max(i, E)/X, so any E well under N gets most of the gain, as long as
// X does not fall. What the limit must not do is cost goodput: in a
// registration burst goodput rises with E_max up to hundreds (slots are
// held across UE round trips), so a cap would starve it.
//
// So above low load E_max is steered by what it buys: by Little's law
// goodput = E_current / hold time, and when a smaller E_max completes
// (nearly) as many procedures per second, the extra slots only make every
// procedure wait longer inside the AMF and the NFs behind it. In each
// busy period (from a queue until the demand falls under half the home)
// the rule measures the goodput (successful completions per second) at
// E_max, its "home", then probes both ways, the first one alternating
// from cycle to cycle: E_max doubles (never past the demand or Max) and
// stays doubled while each doubling buys at least GoodputGain more
// goodput; E_max falls by a quarter at a time while the goodput stays
// within GoodputTolerance of the best window's in the busy period (not
// the last home's: cuts that each lose a little would otherwise walk
// E_max down a slope the tolerance cannot see). A probe that fails puts
// the home back. The home is measured again every GoodputSettleWindows
// windows and probed afresh, so a long burst follows a changing load.
//
// Cuts stop at the initial E_max (amf.limiter.initial, the limit the
// operator sized for the machine): above low load a burst starts there
// anyway (the lift, limiter_holdtime.go), so a cut below it would last a
// burst at most, and on a shared machine the noise of short windows let
// such cuts through where the fixed limits said they cost (stop 16: at a
// batch of 1024 fixed:64 beat fixed:16 and fixed:20 on both figures,
// yet the rule sat at 24-32 half the time with no floor).
//
// A window is counted in completions, not time, like the hold-time rule's
// rounds (a round trip of the window in TCP's terms): a new level comes in
// force once E_current is within it (a cut lets the procedures in
// progress finish first), then the next E_max/2 completions are skipped
// (those procedures began under the old level) and the goodput is taken
// over the next E_max, at least MinGoodputWindow and MinGoodputSpan.
// Noise on a shared machine is the reason for the gain and the tolerance
// (hysteresis): a doubling that buys less than a tenth is not worth a
// doubled wait, and a cut is kept only when it loses less than a
// twentieth. Why not steer by the hold
// time (Vegas) here as at low load: in a registration burst the hold time
// grows by an order of magnitude while the goodput still rises.
//
// The rule owns E_max's raises above low load (the latency rule's slow
// start and the ramp stand aside, as they do for the hold-time rule at
// low load); an EWMA above the threshold still cuts (the paper's rule for
// a crowded scheduler), after which the rule measures from the new level.
// A busy period that ends during a probe puts the home back, so the next
// batch starts from the last level the goodput justified, and the next
// cycle probes down first; a window in which the queue emptied is
// measured again, not judged.

import "time"

const (
	// GoodputGain is the rise of goodput a doubling of E_max must buy.
	GoodputGain = 0.10
	// GoodputTolerance is the fall of goodput a cut may cost.
	GoodputTolerance = 0.05
	// MinGoodputWindow is the fewest completions a window measures.
	MinGoodputWindow = 32
	// MinGoodputSpan is the shortest time a window measures: on a shared
	// machine a GC pause or a descheduled NF takes tens of milliseconds,
	// which would decide a shorter window alone.
	MinGoodputSpan = 100 * time.Millisecond
	// GoodputSettleWindows is how many windows the home keeps between probes.
	GoodputSettleWindows = 4
)

// goodputPhase is what the current window measures.
type goodputPhase int

const (
	gpHome goodputPhase = iota // the home level
	gpUp                       // twice the home
	gpDown                     // three quarters of the home
)

// goodputState is the rule's memory (under Limiter.mu).
type goodputState struct {
	busy     bool
	phase    goodputPhase
	home     int     // the level the goodput justified last
	homeRate float64 // its goodput, completions per second
	bestRate float64 // the best window's goodput in this busy period
	level    int     // E_max this window measures
	inForce  bool    // E_current came within level
	skip     int     // completions still to skip
	counted  int     // completions measured
	since    time.Time
	slack    bool // the queue emptied in the window: no judgement
	homeLeft int  // home windows before the next probe
	// triedUp, triedDown: this cycle's probes (a cycle ends when the
	// home settles); a direction that failed is not tried twice.
	triedUp, triedDown bool
	// Kept across busy periods: downFirst, the direction the next cycle
	// probes first (the other one than the last cycle's first, or than
	// a probe a busy period cut short: at a batch of 1024 a probe of
	// 2·256 never completes, and the cuts must get their turn), and
	// lastRate, the last window's goodput.
	downFirst bool
	lastRate  float64
}

// goodputRuleOn: the rule is configured (adaptive, Growth > 1, GoodputRule).
func (l *Limiter) goodputRuleOn() bool {
	return l.cfg.Mode == ModeAdaptive && l.cfg.Growth > 1 && l.cfg.GoodputRule
}

// goodputOwnsLocked says whether the latency rule should leave E_max to
// the goodput rule this interval: above low load and a fast scheduler.
func (l *Limiter) goodputOwnsLocked(slow bool) bool {
	return !slow && l.goodputRuleOn() && !l.lowLoadLocked()
}

// noteGoodputLocked is the rule's look at a finished procedure (Finish,
// before the freed slot is handed on).
func (l *Limiter) noteGoodputLocked(result string) {
	g := &l.goodput
	if !l.goodputRuleOn() || l.lowLoadLocked() {
		l.endBusyLocked()
		return
	}
	if len(l.waiting) == 0 {
		// The demand fell within E_max. Once it falls under half the
		// home (a batch drains) the busy period ends; a queue that
		// empties for a moment (registrations in flight near E_max)
		// only spoils the window: the limit did not bind all through it.
		if !g.busy || l.current < (g.home+1)/2 {
			l.endBusyLocked()
			return
		}
		g.slack = true
	}
	if !g.busy || l.emax != g.level {
		// A new busy period, or another rule moved E_max (a latency
		// cut, the lift for a burst, a mode switch): measure from here.
		*g = goodputState{busy: true, home: l.emax, homeLeft: 1, downFirst: g.downFirst, lastRate: g.lastRate}
		l.measureLocked(l.emax)
	}
	if result != ResultSuccess {
		return
	}
	now := l.now()
	switch {
	case !g.inForce && l.current > g.level:
		return
	case !g.inForce:
		g.inForce = true
		return
	case g.skip > 0:
		g.skip--
		if g.skip == 0 {
			g.since, g.slack = now, false
		}
		return
	}
	g.counted++
	if g.counted < max(g.level, MinGoodputWindow) || now.Sub(g.since) < MinGoodputSpan {
		return
	}
	if g.slack {
		g.counted, g.since, g.slack = 0, now, false // measure this level again
		return
	}
	g.lastRate = float64(g.counted) / now.Sub(g.since).Seconds()
	g.bestRate = max(g.bestRate, g.lastRate)
	g.counted, g.since = 0, now
	l.judgeGoodputLocked(g.lastRate)
}

// measureLocked sets E_max to level and starts a window there.
func (l *Limiter) measureLocked(level int) {
	g := &l.goodput
	l.emax, g.level = level, level
	g.inForce, g.skip, g.counted = l.current <= level, max(level/2, 1), 0
}

// judgeGoodputLocked acts on a complete window's goodput (above).
func (l *Limiter) judgeGoodputLocked(rate float64) {
	g := &l.goodput
	switch g.phase {
	case gpHome:
		g.homeRate = rate
		if g.homeLeft--; g.homeLeft > 0 {
			return // the next window at the same level needs no skip
		}
		g.triedUp, g.triedDown = false, false
		if g.downFirst {
			l.probeDownLocked()
		} else {
			l.probeUpLocked()
		}
		g.downFirst = !g.downFirst
	case gpUp:
		l.judgeProbeLocked(rate >= g.homeRate*(1+GoodputGain), rate, &l.counts.GoodputRaises, &g.triedUp,
			l.probeUpLocked, l.probeDownLocked)
	case gpDown:
		l.judgeProbeLocked(rate >= g.bestRate*(1-GoodputTolerance), rate, &l.counts.GoodputCuts, &g.triedDown,
			l.probeDownLocked, l.probeUpLocked)
	}
}

// judgeProbeLocked ends a probe: kept, its level is the new home (counted)
// and the probe goes on the same way; else that way is tried for this
// cycle and the other way gets its turn.
func (l *Limiter) judgeProbeLocked(kept bool, rate float64, count *uint64, tried *bool, again, other func()) {
	g := &l.goodput
	if kept {
		g.home, g.homeRate = g.level, rate
		*count++
		again()
		return
	}
	*tried = true
	other()
}

// probeUpLocked tries twice the home, if the demand and Max leave room
// and no raise failed in this cycle; else it probes down.
func (l *Limiter) probeUpLocked() {
	g := &l.goodput
	up := min(2*g.home, l.current+len(l.waiting), l.cfg.Max)
	if up <= g.home || g.triedUp {
		l.nextOrSettleLocked(false)
		return
	}
	g.phase = gpUp
	l.measureLocked(up)
}

// probeDownLocked tries three quarters of the home, if the initial E_max
// (within [Min, Max]) leaves room and no cut failed in this cycle; else
// it probes up.
func (l *Limiter) probeDownLocked() {
	g := &l.goodput
	down := max(g.home*3/4, l.initialLimit())
	if down >= g.home || g.triedDown {
		l.nextOrSettleLocked(true)
		return
	}
	g.phase = gpDown
	l.measureLocked(down)
}

// nextOrSettleLocked: one direction is done (up: down is done); the
// other gets its turn unless it is done too, then the home settles for
// GoodputSettleWindows windows.
func (l *Limiter) nextOrSettleLocked(downDone bool) {
	g := &l.goodput
	if downDone {
		g.triedDown = true
	} else {
		g.triedUp = true
	}
	switch {
	case !g.triedUp:
		l.probeUpLocked()
	case !g.triedDown:
		l.probeDownLocked()
	default:
		g.phase, g.homeLeft = gpHome, GoodputSettleWindows
		l.measureLocked(g.home)
	}
}

// endBusyLocked ends a busy period: a probe in progress puts the home
// back, so the next one starts where the goodput was measured, and the
// next cycle probes down first (a cut needs fewer completions to judge
// than a raise, so it gets its turn even in short busy periods).
func (l *Limiter) endBusyLocked() {
	g := &l.goodput
	if g.busy && g.phase != gpHome {
		if l.goodputRuleOn() && l.emax == g.level {
			l.emax = g.home
		}
		g.downFirst = true
	}
	*g = goodputState{downFirst: g.downFirst, lastRate: g.lastRate}
}
