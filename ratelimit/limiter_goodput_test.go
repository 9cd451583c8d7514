package ratelimit

import (
	"math"
	"testing"
	"time"
)

// goodputRule is an adaptive limiter with growth 2 and the goodput rule,
// within [lo, hi], on a fake clock. The hold-time rule is configured (α
// 4, β 8) but off, so that the rule owns E_max at every load and the
// hold-time rule's rounds at a batch's tail do not move E_max under a
// test's eyes; a test of the two together turns it on.
func goodputRule(initial, lo, hi int) (*Limiter, *fakeClock) {
	cfg := adaptive(initial, lo, hi)
	cfg.Growth, cfg.HoldAlpha, cfg.HoldBeta, cfg.GoodputRule = 2, 4, 8, true
	cfg.Queue = 10000
	clk := &fakeClock{t: time.Unix(1000, 0)}
	return NewLimiter(cfg, clk.now), clk
}

// goodputSim drives a limiter the way a core under load would: the
// procedures in progress finish oldest first, one every 1/rate(E_current)
// seconds of the fake clock, so rate is the goodput curve the rule
// explores. With closed set, each finish brings a new request (a
// constant demand, a registration burst); otherwise the demand drains
// (the end of a Fig. 3 batch).
type goodputSim struct {
	t       *testing.T
	l       *Limiter
	clk     *fakeClock
	rate    func(n int) float64
	result  string
	closed  bool
	running []*Slot
}

func newGoodputSim(t *testing.T, l *Limiter, clk *fakeClock, rate func(int) float64) *goodputSim {
	return &goodputSim{t: t, l: l, clk: clk, rate: rate, result: ResultSuccess, closed: true}
}

// request sends n initiating messages through the gate.
func (s *goodputSim) request(n int) {
	s.t.Helper()
	for range n {
		slot, err := s.l.Acquire("registration", func(sl *Slot) { s.running = append(s.running, sl) })
		if err != nil {
			s.t.Fatal(err)
		}
		if slot != nil {
			s.running = append(s.running, slot)
		}
	}
}

// finish ends up to n procedures (fewer if the demand drains first) and
// checks after each that E_max stays within [Min, Max].
func (s *goodputSim) finish(n int) {
	s.t.Helper()
	for i := 0; i < n && len(s.running) > 0; i++ {
		s.clk.advance(time.Duration(float64(time.Second) / s.rate(s.l.State().ECurrent)))
		sl := s.running[0]
		s.running = s.running[1:]
		sl.Finish(s.result)
		if s.closed {
			s.request(1)
		}
		if st := s.l.State(); st.EMax < s.l.cfg.Min || st.EMax > s.l.cfg.Max {
			s.t.Fatalf("E_max %d outside [%d, %d]", st.EMax, s.l.cfg.Min, s.l.cfg.Max)
		}
	}
}

// drain stops new requests and finishes everything.
func (s *goodputSim) drain() {
	s.t.Helper()
	s.closed = false
	s.finish(1 << 30)
	if st := s.l.State(); st.ECurrent != 0 || st.Queue != 0 {
		s.t.Fatalf("after the load: E_current %d queue %d, want nothing left", st.ECurrent, st.Queue)
	}
}

// goodputHome is the level the rule settled on and its goodput.
func (l *Limiter) goodputHome() (int, float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.goodput.home, l.goodput.homeRate
}

// upProbe is a limiter (initial 8) with a demand of n whose rule has
// measured the home 32 and is probing twice that (goodput proportional to E_current).
func upProbe(t *testing.T, n int) (*Limiter, *goodputSim) {
	l, clk := goodputRule(8, 1, 1024) // cuts may go under 32
	setEMax(l, 32)
	sim := newGoodputSim(t, l, clk, func(n int) float64 { return float64(n) })
	sim.request(n)
	for l.State().EMax != 64 {
		sim.finish(1)
	}
	return l, sim
}

// A registration burst: goodput rises with E_max up to 256 in progress
// (slots held across round trips), flat beyond. From the initial 32 the
// rule doubles while each doubling buys goodput (32 → 256, three
// raises), finds 512 buys nothing and 192 loses a quarter, and keeps 256
// through the next probes.
func TestGoodputRuleClimbsWhileGoodputRises(t *testing.T) {
	l, clk := goodputRule(32, 1, 1024)
	sim := newGoodputSim(t, l, clk, func(n int) float64 { return float64(min(n, 256)) })
	sim.request(2000)
	sim.finish(20000)
	st := l.State()
	if home, rate := l.goodputHome(); home != 256 || math.Abs(rate-256) > 0.01 || st.GoodputRaises != 3 || st.GoodputCuts != 0 {
		t.Fatalf("home %d at %.0f/s (E_max %d), raises %d, cuts %d; want 256 at 256/s after three raises, no cut",
			home, rate, st.EMax, st.GoodputRaises, st.GoodputCuts)
	}
	sim.drain()
}

// Fig. 3 above low load: goodput is flat above 16 procedures in
// progress, so every slot past that only makes procedures wait. The
// rule finds that doubling 32 buys nothing, then cuts by a quarter while
// the goodput holds (32 → 24 → 18) and stops where it falls (13 loses
// more than 5 %), and stays there.
func TestGoodputRuleCutsWhileGoodputHolds(t *testing.T) {
	l, clk := goodputRule(8, 1, 1024)
	setEMax(l, 32)
	sim := newGoodputSim(t, l, clk, func(n int) float64 { return 5 * float64(min(n, 16)) / 16 })
	sim.request(2000)
	sim.finish(20000)
	st := l.State()
	if home, _ := l.goodputHome(); home != 18 || st.GoodputCuts != 2 || st.GoodputRaises != 0 {
		t.Fatalf("home %d (E_max %d), cuts %d, raises %d; want 18 after two cuts", home, st.EMax, st.GoodputCuts, st.GoodputRaises)
	}
	sim.drain()
	if st := l.State(); st.EMax != 18 {
		t.Fatalf("after the load: E_max %d, want the home 18 kept", st.EMax)
	}
}

// Batches (Fig. 3 at 1024): the demand drains at each batch's end. A
// busy period that ends during a probe puts the home back, so no batch
// starts from a level the goodput did not justify, and the next cycle
// probes down first (a raise to 2·home may never complete in a batch).
func TestGoodputProbeCutShortPutsTheHomeBack(t *testing.T) {
	l, sim := upProbe(t, 100)
	sim.drain() // the queue empties before the probe at 64 is judged
	if st := l.State(); st.EMax != 32 || st.GoodputRaises != 0 {
		t.Fatalf("after a probe cut short: E_max %d raises %d, want the home 32 back", st.EMax, st.GoodputRaises)
	}
	sim.closed = true
	sim.request(100)
	for l.State().EMax == 32 {
		sim.finish(1)
	}
	if st := l.State(); st.EMax != 24 {
		t.Fatalf("next burst's first probe: E_max %d, want the cut to 24 first", st.EMax)
	}
	sim.drain()
}

// A queue that empties for a moment (a demand just above E_max, one
// arrival late now and then) spoils the window it falls in: no window is
// judged, E_max stays, and the busy period goes on; the same demand
// without the gaps is judged.
func TestGoodputWindowWithSlackIsNotJudged(t *testing.T) {
	for _, gaps := range []bool{true, false} {
		l, clk := goodputRule(32, 1, 1024)
		sim := newGoodputSim(t, l, clk, func(n int) float64 { return float64(n) })
		sim.request(33)
		for i := range 2000 {
			sim.closed = !gaps || i%16 != 0
			sim.finish(1)
			if gaps && i%16 == 1 {
				sim.request(1) // the late arrival
			}
		}
		st := l.State()
		if home, _ := l.goodputHome(); gaps && (st.GoodputRate != 0 || st.EMax != 32 || home != 32) {
			t.Fatalf("gaps: goodput %.1f E_max %d home %d, want no window judged, 32 kept in one busy period", st.GoodputRate, st.EMax, home)
		}
		if !gaps && st.GoodputRate == 0 {
			t.Fatal("no gaps: no window judged")
		}
		sim.drain()
	}
}

// During a probe a queue that empties for a moment does not end the
// busy period (which would put the home back): E_max stays at the
// probe's level until the demand falls under half the home.
func TestMomentaryEmptyQueueKeepsTheProbe(t *testing.T) {
	l, sim := upProbe(t, 100)
	sim.closed = false
	for l.State().Queue > 0 {
		sim.finish(1)
	}
	sim.finish(2) // completions with an empty queue, 63 and 62 in progress
	sim.closed = true
	sim.request(3) // the demand is back above E_max
	sim.finish(1)
	if st := l.State(); st.EMax != 64 {
		t.Fatalf("after a moment without a queue: E_max %d, want the probe's 64 kept", st.EMax)
	}
	sim.drain()
	if st := l.State(); st.EMax != 32 {
		t.Fatalf("after the demand drained: E_max %d, want the home 32 back", st.EMax)
	}
}

// Repeated batches of 1024 with a flat goodput above 16: E_max walks down
// over the batches and stays at the level where the goodput holds; each
// batch ends at a home, never at a probe's level.
func TestGoodputRuleAcrossBatches(t *testing.T) {
	l, clk := goodputRule(8, 1, 1024)
	setEMax(l, 32)
	sim := newGoodputSim(t, l, clk, func(n int) float64 { return 5 * float64(min(n, 16)) / 16 })
	for range 6 {
		sim.closed = false
		sim.request(1024)
		sim.drain()
		if st, home := l.State(), l.goodput.home; home != 0 {
			t.Fatalf("after a batch: E_max %d, busy period still open (home %d)", st.EMax, home)
		}
	}
	if st := l.State(); st.EMax < 16 || st.EMax > 24 {
		t.Fatalf("after 6 batches: E_max %d, want 16-24, where the goodput still holds", st.EMax)
	}
}

// Above low load with the rule on, a fast interval and the ramp leave
// E_max to it (no slow start to the demand); a slow interval still cuts,
// and the rule measures from the cut's level.
func TestLatencyRuleStandsAsideForGoodput(t *testing.T) {
	l, clk := goodputRule(32, 1, 1024)
	sim := newGoodputSim(t, l, clk, func(n int) float64 { return float64(n) })
	sim.request(500)
	sim.finish(10)
	if d := l.Step(fast); d.Change != 0 {
		t.Fatalf("fast interval above low load: change %+d, want none (the goodput rule raises)", d.Change)
	}
	if d := l.Ramp(fast); d.Change != 0 || l.rampWanted() {
		t.Fatalf("ramp above low load: change %+d wanted %v, want none", d.Change, l.rampWanted())
	}
	d := l.Step(slow * 10)
	if d.Change >= 0 {
		t.Fatalf("slow interval: change %+d, want a cut", d.Change)
	}
	sim.finish(1)
	if home, _ := l.goodputHome(); home != d.EMax {
		t.Fatalf("after the cut: the rule's home %d, want the cut's %d", home, d.EMax)
	}
	sim.drain()
}

// At low load (a demand within 2·initial) the hold-time rule owns E_max:
// the goodput rule measures nothing and moves nothing.
func TestGoodputRuleIdleAtLowLoad(t *testing.T) {
	l, clk := goodputRule(32, 1, 1024)
	l.cfg.HoldRule = true
	sim := newGoodputSim(t, l, clk, func(n int) float64 { return float64(n) })
	sim.request(40) // 32 in progress, 8 waiting: demand 40 ≤ 64
	sim.finish(5000)
	if st := l.State(); st.GoodputRate != 0 || st.GoodputRaises != 0 || st.GoodputCuts != 0 || st.EMax > 64 {
		t.Fatalf("low load: %+v, want the goodput rule idle", st)
	}
	sim.drain()
}

// Only successful procedures are goodput: rejects complete no window.
func TestGoodputRuleCountsOnlySuccess(t *testing.T) {
	l, clk := goodputRule(32, 1, 1024)
	sim := newGoodputSim(t, l, clk, func(n int) float64 { return float64(n) })
	sim.result = ResultReject
	sim.request(500)
	sim.finish(5000)
	if st := l.State(); st.EMax != 32 || st.GoodputRate != 0 {
		t.Fatalf("rejects only: E_max %d goodput %.0f, want 32 and no window", st.EMax, st.GoodputRate)
	}
	sim.drain()
}

// growth: 1 is the paper's Algorithm 1: no goodput rule even if
// configured (a fast interval raises by one; completions move nothing);
// goodput_rule false keeps stop 15's slow start.
func TestGoodputRuleOffInThePaperVariantAndWhenSwitchedOff(t *testing.T) {
	paper, clk := goodputRule(32, 1, 1024)
	paper.cfg.Growth = 1
	sim := newGoodputSim(t, paper, clk, func(n int) float64 { return float64(n) })
	sim.request(500)
	sim.finish(2000)
	if st := paper.State(); st.EMax != 32 || st.GoodputRate != 0 {
		t.Fatalf("growth 1: E_max %d goodput %.0f, want 32 and the rule idle", st.EMax, st.GoodputRate)
	}
	if d := paper.Step(fast); d.Change != 1 {
		t.Fatalf("growth 1, fast interval: change %+d, want the paper's +1", d.Change)
	}
	sim.drain()
	off, clk := goodputRule(32, 1, 1024)
	off.cfg.GoodputRule = false
	sim = newGoodputSim(t, off, clk, func(n int) float64 { return float64(n) })
	sim.request(500)
	if d := off.Step(fast); d.EMax != 64 {
		t.Fatalf("goodput_rule false, fast interval: E_max %d, want the slow start's 32·2", d.EMax)
	}
	sim.drain()
}

// Max and Min bound the probes: a doubling stops at Max, a cut at Min
// and at the initial E_max.
func TestGoodputProbesStayWithinBounds(t *testing.T) {
	rising := func(n int) float64 { return float64(n) }
	flat := func(int) float64 { return 5 }
	for _, c := range []struct {
		name              string
		initial, lo, hi   int
		rate              func(int) float64
		wantHome, maxCuts int
	}{
		{"rising goodput, Max 48", 32, 1, 48, rising, 48, 0},
		{"flat goodput, Min 20", 8, 20, 1024, flat, 20, 2},
		{"flat goodput, initial 32", 32, 1, 1024, flat, 32, 0},
	} {
		l, clk := goodputRule(c.initial, c.lo, c.hi)
		setEMax(l, 32)
		sim := newGoodputSim(t, l, clk, c.rate)
		sim.request(500)
		sim.finish(5000)
		if home, _ := l.goodputHome(); home != c.wantHome || l.State().GoodputCuts > uint64(c.maxCuts) {
			t.Fatalf("%s: home %d cuts %d, want %d, at most %d cuts", c.name, home, l.State().GoodputCuts, c.wantHome, c.maxCuts)
		}
		sim.drain()
	}
}

// A mode switch during a probe keeps adaptive's home, not the probe's
// level, for adaptive's return.
func TestModeSwitchDuringAProbeKeepsTheHome(t *testing.T) {
	l, sim := upProbe(t, 500)
	if err := l.SetMode("fixed:8"); err != nil {
		t.Fatal(err)
	}
	if err := l.SetMode("adaptive"); err != nil {
		t.Fatal(err)
	}
	if st := l.State(); st.EMax != 32 {
		t.Fatalf("back to adaptive during a probe at 64: E_max %d, want the home 32", st.EMax)
	}
	sim.drain()
}

// Steps, ramp looks, procedures and finishes all at once under -race
// with the goodput rule on: every request starts once, and at the end
// nothing is counted or queued.
func TestConcurrentGoodputRuleAndEvents(t *testing.T) {
	l, _ := goodputRule(16, 1, 1024)
	l.now = time.Now
	stormWithMonitors(t, l, 3000, func(i int) {
		if i%200 == 0 {
			time.Sleep(time.Millisecond) // let the queue empty now and then: busy periods end
		}
	})
}
