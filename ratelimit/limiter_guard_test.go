package ratelimit

import "testing"

// guarded is an adaptive limiter with growth 2 past its slow start (one
// slow interval ended it), E_max 32 with a queue, and the EWMA of that cut
// as the guard's reference.
func guarded(t *testing.T) (*Limiter, float64) {
	t.Helper()
	l := slowStart(t, 32, 1024, 60)
	d := l.Step(slow * 2) // a slow first interval: the paper's −max(1, 32/8)
	if d.EMax != 28 || d.Held {
		t.Fatalf("set-up: E_max %d held %v, want the first cut to 28", d.EMax, d.Held)
	}
	return l, d.EWMA
}

// A slow interval whose EWMA has not fallen since the last cut keeps E_max.
func TestGuardHoldsWhenTheCutDidNotHelp(t *testing.T) {
	l, ref := guarded(t)
	for range 3 {
		d := l.Step(slow * 2)
		if !d.Held || d.Change != 0 || d.EMax != 28 {
			t.Fatalf("EWMA %.1f µs after a cut at %.1f µs: E_max %d change %+d held %v, want held at 28",
				d.EWMA*1e6, ref*1e6, d.EMax, d.Change, d.Held)
		}
	}
	if h := l.State().Held; h != 3 {
		t.Fatalf("held counter %d, want 3 (/metrics l25gc_amf_limiter_held_total)", h)
	}
}

// While each cut brings the EWMA down by at least CutProgress but not yet
// under the threshold, the cuts go on.
func TestGuardLetsWorkingCutsThrough(t *testing.T) {
	l, ref := guarded(t)
	lat := ref * (1 - CutProgress) * 0.9 // the EWMA lands well under ref·0.9
	d := l.Step(lat)
	if d.Held || d.EMax != 25 {
		t.Fatalf("EWMA %.1f → %.1f µs: E_max %d held %v, want a cut to 25", ref*1e6, d.EWMA*1e6, d.EMax, d.Held)
	}
	if d.EWMA <= l.cfg.Threshold.Seconds() {
		t.Fatalf("set-up: EWMA %.1f µs should still be above the threshold", d.EWMA*1e6)
	}
}

// A fast interval, or an emptied queue, forgets the reference: the next
// slow interval cuts.
func TestGuardForgetsAfterAFastIntervalOrAnEmptyQueue(t *testing.T) {
	l, _ := guarded(t)
	for range 3 {
		l.Step(0) // the EWMA falls under the threshold: E_max rises
	}
	if d := l.Step(slow * 4); d.Held || d.Change >= 0 {
		t.Fatalf("after fast intervals: change %+d held %v, want a cut", d.Change, d.Held)
	}

	cfg := adaptive(3, 1, 64)
	cfg.Growth = 2
	q := NewLimiter(cfg, nil)
	var slots []*Slot
	keep := func(s *Slot) { slots = append(slots, s) }
	for range 4 { // three run, one waits
		if s, _ := q.Acquire("test", keep); s != nil {
			keep(s)
		}
	}
	if d := q.Step(slow * 2); d.EMax != 2 {
		t.Fatalf("set-up: E_max %d, want the cut to 2", d.EMax)
	}
	slots[0].Finish(ResultSuccess)
	slots[1].Finish(ResultSuccess) // the waiting one starts: the queue is empty
	if s := q.State(); s.Queue != 0 || s.ECurrent != 2 {
		t.Fatalf("set-up: %+v", s)
	}
	if d := q.Step(slow * 2); d.Held || d.EMax != 1 {
		t.Fatalf("queue emptied: E_max %d held %v, want a cut to 1 (the same latency held while the queue stood)", d.EMax, d.Held)
	}
}

// Growth 1 is the paper: every slow interval at the limit lowers E_max.
func TestGuardOffInThePaperVariant(t *testing.T) {
	cfg := adaptive(8, 1, 64)
	cfg.Growth = 1
	l := NewLimiter(cfg, nil)
	fill(t, l, 8)
	for want := 7; want >= 5; want-- {
		if d := l.Step(slow * 2); d.EMax != want || d.Held {
			t.Fatalf("E_max %d held %v, want %d", d.EMax, d.Held, want)
		}
	}
}
