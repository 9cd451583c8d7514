package ratelimit

import (
	"sync"
	"testing"
	"time"
)

// holdRule is an adaptive limiter with growth 2 and the hold-time rule
// (α 4, β 8) on a fake clock; low load is a demand of at most twice
// initial.
func holdRule(initial int) (*Limiter, *fakeClock) {
	cfg := adaptive(initial, 1, 1024)
	cfg.Growth, cfg.HoldRule, cfg.HoldAlpha, cfg.HoldBeta = 2, true, 4, 8
	clk := &fakeClock{t: time.Unix(1000, 0)}
	return NewLimiter(cfg, clk.now), clk
}

// batch starts n procedures at once through the gate (those past E_max
// wait) and returns them in the order they got a slot, as far as they did.
func batch(t *testing.T, l *Limiter, n int) *[]*Slot {
	t.Helper()
	var mu sync.Mutex
	got := &[]*Slot{}
	for range n {
		s, err := l.Acquire("pdu_session_establishment", func(s *Slot) { mu.Lock(); *got = append(*got, s); mu.Unlock() })
		if err != nil {
			t.Fatal(err)
		}
		if s != nil {
			*got = append(*got, s)
		}
	}
	return got
}

// finishEvery ends every slot, one each step of the fake clock, in slot
// order (so holds grow when slots began together: they queued inside),
// including slots handed out while finishing.
func finishEvery(l *Limiter, clk *fakeClock, slots *[]*Slot, step time.Duration) {
	for i := 0; i < len(*slots); i++ {
		clk.advance(step)
		(*slots)[i].Finish(ResultSuccess)
	}
}

// Fig. 3 at low load: 32 establishments at once with E_max 32 finish one
// after another (holds 4, 8, ..., 128 ms against a base of 4 ms): they
// only queued inside the AMF, so the round halves E_max; the next rounds
// bring it to where few wait inside (E_max/r + α) and it stays there.
func TestHoldRuleCutsWhenProceduresOnlyQueue(t *testing.T) {
	l, clk := holdRule(32)
	setEMax(l, 32)
	finishEvery(l, clk, batch(t, l, 32), 4*time.Millisecond)
	st := l.State()
	if st.EMax != 16 || st.HoldCuts != 1 {
		t.Fatalf("after a round with r %.1f: E_max %d cuts %d, want halved to 16 once", st.HoldRatio, st.EMax, st.HoldCuts)
	}
	finishEvery(l, clk, batch(t, l, 32), 4*time.Millisecond)
	if st := l.State(); st.EMax >= 16 || st.EMax < 8 || st.ECurrent != 0 || st.Queue != 0 {
		t.Fatalf("second batch: E_max %d E_current %d queue %d, want lower than 16, not under β 8, nothing left", st.EMax, st.ECurrent, st.Queue)
	}
	setEMax(l, 14)
	for range 3 { // far more queueing from 14: halved, but never under β
		finishEvery(l, clk, batch(t, l, 32), 40*time.Millisecond)
	}
	if st := l.State(); st.EMax != 8 {
		t.Fatalf("after long holds: E_max %d, want the floor β 8", st.EMax)
	}
}

// setEMax puts E_max where a test's story starts.
func setEMax(l *Limiter, e int) {
	l.mu.Lock()
	l.emax = e
	l.mu.Unlock()
}

// With the rule on E_max starts at β (a first round at the initial 32
// would be a whole Fig. 3 batch run as if off), never above the initial
// value; without it, at the initial value.
func TestHoldRuleStartsAtBeta(t *testing.T) {
	on, _ := holdRule(32)
	small, _ := holdRule(4)
	cfg := on.cfg
	cfg.HoldRule = false
	off := NewLimiter(cfg, nil)
	if a, b, c := on.State().EMax, small.State().EMax, off.State().EMax; a != 8 || b != 4 || c != 32 {
		t.Fatalf("start E_max %d, %d, %d; want β 8, the initial 4, the initial 32 without the rule", a, b, c)
	}
}

// Holds near the base say nothing waits inside: with the limit reached,
// E_max rises by one per round, never past twice the initial E_max (the
// most a demand at low load can use).
func TestHoldRuleRaisesWhenNothingQueues(t *testing.T) {
	l, clk := holdRule(8)
	setEMax(l, 6)
	for round := range 12 {
		slots := batch(t, l, l.State().EMax)
		clk.advance(4 * time.Millisecond)
		for _, s := range *slots {
			s.Finish(ResultSuccess) // every hold equals the base: r = 1
		}
		want := min(7+round, 16)
		if st := l.State(); st.EMax != want {
			t.Fatalf("round %d: E_max %d ratio %.2f, want %d", round+1, st.EMax, st.HoldRatio, want)
		}
	}
}

// Like Algorithm 1, the rule moves E_max only when E_current reached it:
// a round that never filled the limit keeps it, however long the holds.
func TestHoldRuleNeedsTheLimitReached(t *testing.T) {
	l, clk := holdRule(32)
	setEMax(l, 32)
	for range 4 {
		finishEvery(l, clk, batch(t, l, 20), 4*time.Millisecond)
	}
	if st := l.State(); st.EMax != 32 || st.HoldCuts != 0 || st.HoldRatio < 2 {
		t.Fatalf("E_max %d cuts %d ratio %.1f, want 32 kept with queueing holds (r ≥ 2)", st.EMax, st.HoldCuts, st.HoldRatio)
	}
}

// Rejects and timeouts say nothing about queueing and count for nothing.
func TestHoldRuleCountsOnlySuccess(t *testing.T) {
	l, clk := holdRule(8)
	slots := batch(t, l, 8)
	for i, s := range *slots {
		clk.advance(time.Duration(i+1) * 10 * time.Millisecond)
		s.Finish(ResultReject)
	}
	if st := l.State(); st.EMax != 8 || st.HoldRatio != 0 {
		t.Fatalf("E_max %d ratio %.1f after rejects only, want 8 and no round", st.EMax, st.HoldRatio)
	}
}

// Above low load (a demand past the initial E_max) the rule stands aside:
// a burst's holds, however long, do not cut. A demand of twice the
// initial E_max puts a limit the rule had lowered back to the initial
// value at once.
func TestHoldRuleStandsAsideInABurst(t *testing.T) {
	l, clk := holdRule(16)
	setEMax(l, 16)
	burst := batch(t, l, 60) // demand 60 > 2·16
	for i := 0; i < len(*burst); i++ {
		clk.advance(4 * time.Millisecond)
		(*burst)[i].Finish(ResultSuccess)
		if st := l.State(); st.ECurrent+st.Queue > 32 && (st.HoldCuts != 0 || st.EMax != 16) {
			t.Fatalf("burst of 60, %d done: E_max %d cuts %d, want 16 and no cut", i+1, st.EMax, st.HoldCuts)
		}
	}
	finishEvery(l, clk, batch(t, l, 16), 4*time.Millisecond) // low load: cut
	if st := l.State(); st.EMax >= 16 {
		t.Fatalf("set-up: E_max %d, want a low-load cut", st.EMax)
	}
	slots := batch(t, l, 33) // demand 33 > 2·16
	if st := l.State(); st.EMax != 16 || st.ECurrent != 16 || len(*slots) != 16 {
		t.Fatalf("burst of 33: E_max %d E_current %d started %d, want lifted to the initial 16 and the waiters started",
			st.EMax, st.ECurrent, len(*slots))
	}
	finishEvery(l, clk, slots, time.Millisecond)
}

// At low load with a fast scheduler the latency rule's raises, its slow
// start and the ramp leave E_max to the hold-time rule; a slow interval
// still cuts (the paper's rule for a crowded scheduler).
func TestLatencyRuleStandsAsideAtLowLoad(t *testing.T) {
	l, clk := holdRule(16)
	setEMax(l, 16)
	finishEvery(l, clk, batch(t, l, 16), 4*time.Millisecond)
	lowered := l.State().EMax
	slots := batch(t, l, 12) // E_current = E_max with a queue, demand 12 ≤ 16
	if st := l.State(); lowered >= 12 || st.Queue == 0 {
		t.Fatalf("set-up: E_max %d queue %d, want a lowered limit with a queue", lowered, st.Queue)
	}
	if d := l.Step(fast); d.Change != 0 {
		t.Fatalf("fast interval at low load: change %+d, want none", d.Change)
	}
	if d := l.Ramp(fast); d.Change != 0 {
		t.Fatalf("ramp at low load: change %+d, want none", d.Change)
	}
	if d := l.Step(slow * 10); d.Change >= 0 {
		t.Fatalf("slow interval at low load: change %+d, want a cut from %d", d.Change, lowered)
	}
	finishEvery(l, clk, slots, time.Millisecond)
}

// growth: 1 is the paper's exact Algorithm 1: no hold-time rule even if
// configured.
func TestHoldRuleOffInThePaperVariant(t *testing.T) {
	l, clk := holdRule(32)
	l.cfg.Growth = 1
	setEMax(l, 32)
	finishEvery(l, clk, batch(t, l, 32), 4*time.Millisecond)
	if st := l.State(); st.EMax != 32 || st.HoldCuts != 0 {
		t.Fatalf("growth 1: E_max %d cuts %d, want 32 untouched", st.EMax, st.HoldCuts)
	}
}

// A kind's base is the shortest hold of this window and the one before:
// after two windows of slower procedures (a busier machine) the old base
// is gone and those holds are the new normal (ratio 1).
func TestHoldBaseAgesOut(t *testing.T) {
	l, clk := holdRule(4)
	finishEvery(l, clk, batch(t, l, 1), time.Millisecond) // base 1 ms
	for range 2 {
		clk.advance(HoldBaseWindow)
		finishEvery(l, clk, batch(t, l, 1), 10*time.Millisecond)
	}
	for range 2 { // the second round has only holds of the new normal
		slots := batch(t, l, 4)
		clk.advance(10 * time.Millisecond)
		for _, s := range *slots {
			s.Finish(ResultSuccess)
		}
	}
	if r := l.State().HoldRatio; r != 1 {
		t.Fatalf("ratio %.2f, want 1 once the 1 ms base aged out", r)
	}
}

// Rounds, interval steps, ramp looks, procedures and finishes all at once
// under -race with the hold-time rule on: every request starts once, and
// at the end nothing is counted or queued.
func TestConcurrentHoldRuleAndEvents(t *testing.T) {
	l, _ := holdRule(16)
	l.cfg.Queue = 10000
	l.now = time.Now
	stormWithMonitors(t, l, 2000, func(i int) {
		if i%100 == 0 {
			time.Sleep(time.Millisecond) // let demand fall under the low-load bound now and then
		}
	})
}

// A cut of the rule clears the slow start's memory: a later slow interval
// cuts from there (the paper's −1) instead of putting back the limit of
// before the slow start's last doubling, far above.
func TestSlowIntervalAfterAHoldCutDoesNotRaise(t *testing.T) {
	l, clk := holdRule(16)
	burst := batch(t, l, 100) // a burst: lifted to 16, then the slow start doubles
	l.Step(fast)
	l.Step(fast)
	if st := l.State(); st.EMax != 64 {
		t.Fatalf("set-up: E_max %d after two fast intervals, want 16·2·2", st.EMax)
	}
	finishEvery(l, clk, burst, time.Millisecond)
	finishEvery(l, clk, batch(t, l, 64), 4*time.Millisecond) // low load: cut
	cut := l.State().EMax
	slots := batch(t, l, cut+4) // the limit reached, with a queue
	if d := l.Step(slow * 10); d.EMax >= cut {
		t.Fatalf("slow interval after a hold cut to %d: E_max %d, want lower", cut, d.EMax)
	}
	finishEvery(l, clk, slots, time.Millisecond)
}
