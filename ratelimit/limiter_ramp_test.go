package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Between two intervals a fast short look doubles E_max while messages
// wait, up to the demand (E_current + queue), and the waiting requests
// start at once.
func TestRampDoublesUpToTheDemand(t *testing.T) {
	l := slowStart(t, 4, 1024, 50)
	for i, want := range []int{8, 16, 32, 54} { // 32·2 = 64 > demand 32 + 22
		d := l.Ramp(fast)
		if d.EMax != want || d.Change != want-d.ECurrent {
			t.Fatalf("look %d: E_max %d change %+d (E_current %d), want %d", i+1, d.EMax, d.Change, d.ECurrent, want)
		}
	}
	if s := l.State(); s.ECurrent != 54 || s.Queue != 0 || s.EMax != 54 {
		t.Fatalf("E_max %d E_current %d queue %d, want every waiter started", s.EMax, s.ECurrent, s.Queue)
	}
	if d := l.Ramp(fast); d.Change != 0 {
		t.Fatalf("no queue left: change %+d, want none", d.Change)
	}
	capped := slowStart(t, 4, 6, 10)
	if d := capped.Ramp(fast); d.EMax != 6 {
		t.Fatalf("E_max %d, want Max 6", d.EMax)
	}
}

// A look never lowers E_max and leaves the EWMA alone: a slow short
// interval, or an EWMA already above the threshold, just skips its turn.
func TestRampSkipsWhenSlowAndNeverLowers(t *testing.T) {
	l := slowStart(t, 8, 1024, 50)
	before := l.State()
	if d := l.Ramp(slow * 100); d.Change != 0 || d.EMax != 8 {
		t.Fatalf("slow look: E_max %d change %+d, want unchanged 8", d.EMax, d.Change)
	}
	if after := l.State(); after.EWMA != before.EWMA || after.Latency != before.Latency {
		t.Fatalf("a look moved the EWMA/interval latency: %+v → %+v", before, after)
	}
	// One interval whose EWMA lands above the threshold but which is the
	// slow start's first: the paper's −1, the slow start over.
	if d := l.Step(slow * 2); d.EMax != 7 {
		t.Fatalf("slow interval: E_max %d, want 7", d.EMax)
	}
	if d := l.Ramp(fast); d.Change != 0 {
		t.Fatalf("EWMA above the threshold: change %+d, want none", d.Change)
	}
}

// Once an interval was slow the slow start is over until the queue empties:
// fast looks do not grow E_max, only the interval's Step moves it.
func TestRampStopsWithTheSlowStart(t *testing.T) {
	l := slowStart(t, 4, 1024, 100)
	l.Ramp(fast) // 8
	l.Ramp(fast) // 16
	if d := l.Step(slow * 2); d.EMax != 8 {
		t.Fatalf("slow interval after 8→16: E_max %d, want back to 8", d.EMax)
	}
	for range 4 {
		l.Step(0) // the EWMA decays under the threshold; E_max steps by ±1
	}
	e := l.State().EMax
	for range 5 {
		if d := l.Ramp(fast); d.Change != 0 {
			t.Fatalf("after the slow start: a look changed E_max by %+d", d.Change)
		}
	}
	if l.State().EMax != e {
		t.Fatalf("E_max moved from %d to %d by looks", e, l.State().EMax)
	}
}

// Ramp does nothing where the slow start does not apply: growth 1 (the
// paper), a fixed limit, off, or the limit not reached.
func TestRampOnlyInAnAdaptiveSlowStart(t *testing.T) {
	cases := []struct {
		name string
		cfg  func() LimiterConfig
	}{
		{"growth 1 is the paper", func() LimiterConfig { c := adaptive(4, 1, 64); c.Growth = 1; return c }},
		{"fixed", func() LimiterConfig { c := adaptive(4, 4, 4); c.Mode, c.Growth = ModeFixed, 2; return c }},
		{"off", func() LimiterConfig { c := adaptive(4, 1, 64); c.Mode, c.Growth = ModeOff, 2; return c }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := NewLimiter(c.cfg(), nil)
			for range 20 {
				if _, err := l.Acquire("test", func(*Slot) {}); err != nil {
					t.Fatal(err)
				}
			}
			before := l.State().EMax
			if d := l.Ramp(fast); d.Change != 0 || d.EMax != before {
				t.Fatalf("E_max %d → %d", before, d.EMax)
			}
		})
	}
	l := NewLimiter(func() LimiterConfig { c := adaptive(4, 1, 64); c.Growth = 2; return c }(), nil)
	fill(t, l, 3)
	if d := l.Ramp(fast); d.Change != 0 {
		t.Fatalf("below the limit: change %+d", d.Change)
	}
}

// The ramp monitor takes one look per tick of its (fake) clock.
func TestRampMonitorLooksPerTick(t *testing.T) {
	l := slowStart(t, 2, 1024, 100)
	ticks, decisions := runMonitor(t, l.RampMonitor)
	for _, want := range []int{4, 8, 16} {
		ticks <- time.Time{}
		if d := <-decisions; d.EMax != want {
			t.Fatalf("after tick: E_max %d, want %d", d.EMax, want)
		}
	}
}

// Looks, interval steps, procedures and finishes all at once under -race:
// every request starts once, and at the end nothing is counted or queued.
func TestConcurrentRampStepAndEvents(t *testing.T) {
	cfg := adaptive(2, 1, 64)
	cfg.Growth, cfg.Queue = 2, 10000
	stormWithMonitors(t, NewLimiter(cfg, nil), 2000, nil)
}

// stormWithMonitors runs n requests at once against l while its interval
// and ramp monitors tick as fast as they can (before, if set, runs first
// in request i's goroutine), and fails unless every request ran once and
// nothing is left counted or queued.
func stormWithMonitors(t *testing.T, l *Limiter, n int, before func(i int)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var monitors sync.WaitGroup
	for _, run := range []func(context.Context, LatencySource, <-chan time.Time, func(Decision)){l.Monitor, l.RampMonitor} {
		ticks := make(chan time.Time)
		monitors.Add(2)
		go func() { defer monitors.Done(); run(ctx, &flipSource{}, ticks, nil) }()
		go func() {
			defer monitors.Done()
			for {
				select {
				case ticks <- time.Time{}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	var wg sync.WaitGroup
	var ran atomic.Int64
	wg.Add(n)
	for i := range n {
		go func() {
			if before != nil {
				before(i)
			}
			run := func(s *Slot) { ran.Add(1); s.Finish(ResultSuccess); wg.Done() }
			acquireOrQueue(t, l, run, &wg)
		}()
	}
	wg.Wait()
	cancel()
	monitors.Wait()
	if st := l.State(); ran.Load() != int64(n) || st.ECurrent != 0 || st.Queue != 0 || st.Started != uint64(n) {
		t.Fatalf("%d of %d ran; leak: %+v", ran.Load(), n, st)
	}
}

// The ramp monitor looks while a slow start has a queue; once the queue
// is served it waits for Acquire to queue again (no look, so no wake-up
// of an idle AMF), and the next queue gets its looks.
func TestRampMonitorWakesForTheNextQueue(t *testing.T) {
	l := slowStart(t, 2, 1024, 2)
	ticks, decisions := runMonitor(t, l.RampMonitor)
	ticks <- time.Time{}
	if d := <-decisions; d.EMax != 4 || l.State().Queue != 0 {
		t.Fatalf("first burst: E_max %d queue %d, want 4 and served", d.EMax, l.State().Queue)
	}
	if l.rampWanted() {
		t.Fatal("no queue, yet the ramp wants to look")
	}
	for range 6 { // the next burst: 4 in progress, 6 wait
		if _, err := l.Acquire("test", func(*Slot) {}); err != nil {
			t.Fatal(err)
		}
	}
	ticks <- time.Time{}
	if d := <-decisions; d.EMax != 8 {
		t.Fatalf("second burst: E_max %d, want 8", d.EMax)
	}
}
