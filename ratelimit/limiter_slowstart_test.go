package ratelimit

import "testing"

// slowStart is an adaptive limiter with growth 2 and n waiting requests
// behind initial slots taken through the gate.
func slowStart(t *testing.T, initial, hi, waiting int) *Limiter {
	t.Helper()
	cfg := adaptive(initial, 1, hi)
	cfg.Growth = 2
	l := NewLimiter(cfg, nil)
	for range initial + waiting {
		if _, err := l.Acquire("test", func(*Slot) {}); err != nil {
			t.Fatal(err)
		}
	}
	if s := l.State(); s.ECurrent != initial || s.Queue != waiting {
		t.Fatalf("set-up: E_current %d queue %d", s.ECurrent, s.Queue)
	}
	return l
}

// While messages wait and the scheduler is fast, E_max doubles each
// interval, never past the demand (E_current + queue) or Max, and the
// waiting requests start at once.
func TestSlowStartDoublesUpToTheDemand(t *testing.T) {
	l := slowStart(t, 4, 64, 10)
	for i, want := range []int{8, 14} { // 4·2; then 8·2 = 16 > demand 8 + 6
		d := l.Step(fast)
		if d.EMax != want || d.Change != want-d.ECurrent {
			t.Fatalf("step %d: E_max %d change %+d, want %d", i+1, d.EMax, d.Change, want)
		}
	}
	if s := l.State(); s.ECurrent != 14 || s.Queue != 0 {
		t.Fatalf("E_current %d queue %d, want every waiter started", s.ECurrent, s.Queue)
	}
	capped := slowStart(t, 4, 6, 10)
	if d := capped.Step(fast); d.EMax != 6 {
		t.Fatalf("E_max %d, want Max 6", d.EMax)
	}
}

// The first slow interval ends the slow start: E_max goes back to its
// value before the last doubling, and from then on moves by the paper's
// ±1 while the queue stays.
func TestSlowStartEndsAtTheFirstSlowInterval(t *testing.T) {
	l := slowStart(t, 4, 1024, 100)
	l.Step(fast) // 8
	l.Step(fast) // 16
	if d := l.Step(slow * 2); d.EMax != 8 || d.Change != -8 {
		t.Fatalf("slow after 8→16: E_max %d change %+d, want back to 8", d.EMax, d.Change)
	}
	for range 3 {
		l.Step(0) // the EWMA decays below the threshold again
	}
	if d := l.Step(0); d.Change != +1 {
		t.Fatalf("after the slow start: change %+d, want the paper's +1", d.Change)
	}
}

// A slow first interval, before any doubling, is the paper's −1.
func TestSlowStartSlowAtOnceIsMinusOne(t *testing.T) {
	l := slowStart(t, 4, 1024, 10)
	if d := l.Step(slow * 2); d.EMax != 3 {
		t.Fatalf("E_max %d, want 3", d.EMax)
	}
}

// With no message waiting the raise is the paper's +1, also with growth:
// the limit is reached (E_current ≥ E_max) but nobody asks for more.
func TestSlowStartNeedsAQueue(t *testing.T) {
	cfg := adaptive(4, 1, 64)
	cfg.Growth = 2
	l := NewLimiter(cfg, nil)
	fill(t, l, 4)
	if d := l.Step(fast); d.EMax != 5 {
		t.Fatalf("E_max %d, want 5", d.EMax)
	}
}

// Growth 1 is the paper's Algorithm 1 exactly: +1 with a queue too.
func TestGrowthOneIsThePaper(t *testing.T) {
	cfg := adaptive(4, 1, 64)
	cfg.Growth = 1
	l := NewLimiter(cfg, nil)
	for range 14 {
		l.Acquire("test", func(*Slot) {})
	}
	for want := 5; want <= 7; want++ {
		if d := l.Step(fast); d.EMax != want {
			t.Fatalf("E_max %d, want %d", d.EMax, want)
		}
	}
}

// Once the queue has emptied, the next burst ramps afresh.
func TestSlowStartRearmsWhenTheQueueEmpties(t *testing.T) {
	cfg := adaptive(2, 1, 1024)
	cfg.Growth = 2
	l := NewLimiter(cfg, nil)
	slots := batch(t, l, 12)
	l.Step(fast)          // 2 → 4
	l.Step(slow * 2)      // back to 2: the slow start is over
	for len(*slots) > 0 { // the burst drains: the queue empties
		s := (*slots)[0]
		*slots = (*slots)[1:]
		s.Finish(ResultSuccess) // may start a waiter, which joins slots
	}
	l.Step(slow * 2) // nothing in progress: no move, the slow start is armed again
	for range 4 {
		l.Step(0)
	}
	batch(t, l, l.State().EMax+20)
	before := l.State().EMax
	if d := l.Step(fast); d.EMax != 2*before {
		t.Fatalf("second burst: E_max %d → %d, want doubled", before, d.EMax)
	}
}

// After the slow start, a growth above 1 moves E_max by an eighth of
// itself (growth 2) rather than by one, both ways, so a limit in the
// hundreds follows the load within a burst.
func TestProportionalStepAfterTheSlowStart(t *testing.T) {
	l := slowStart(t, 64, 1024, 90)
	l.Step(fast)     // 128
	l.Step(slow * 2) // back to 64, the slow start over
	// Still slow, with the EWMA down by more than CutProgress since the
	// cut (limiter_guard.go): the next cut goes through.
	if d := l.Step(slow); d.EMax != 56 {
		t.Fatalf("slow at 64: E_max %d, want 64 − 8", d.EMax)
	}
	for range 4 {
		l.Step(0)
	}
	if e := l.State().EMax; e <= 56 || e >= 112 {
		t.Fatalf("E_max %d after fast intervals, want risen by steps of an eighth", e)
	}
}
