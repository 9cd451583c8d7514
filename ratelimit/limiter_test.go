package ratelimit

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a settable now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func adaptive(initial, lo, hi int) LimiterConfig {
	return LimiterConfig{Mode: ModeAdaptive, Initial: initial, Min: lo, Max: hi, Queue: 100,
		EWMAWeight: 0.3, Threshold: 50 * time.Microsecond}
}

// fill takes n slots.
func fill(t *testing.T, l *Limiter, n int) []*Slot {
	t.Helper()
	var out []*Slot
	for range n {
		out = append(out, l.Force("test"))
	}
	return out
}

const (
	slow = 80e-6 // above the 50 µs threshold
	fast = 10e-6
)

// Algorithm 1, each branch, with a fake latency source (the argument of Step).
func TestAlgorithm1Branches(t *testing.T) {
	cases := []struct {
		name             string
		initial, lo, hi  int
		inProgress       int
		latency          float64
		wantEMax, change int
	}{
		{"below the limit: no change even when slow", 4, 1, 8, 3, slow, 4, 0},
		{"below the limit: no change even when fast", 4, 1, 8, 3, fast, 4, 0},
		{"at the limit and slow: −1", 4, 1, 8, 4, slow, 3, -1},
		{"at the limit and fast: +1", 4, 1, 8, 4, fast, 5, +1},
		{"over the limit and slow: −1", 4, 1, 8, 6, slow, 3, -1},
		{"at the minimum and slow: stays", 1, 1, 8, 1, slow, 1, 0},
		{"at the maximum and fast: stays", 8, 1, 8, 8, fast, 8, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := NewLimiter(adaptive(c.initial, c.lo, c.hi), nil)
			fill(t, l, c.inProgress)
			// A fresh EWMA is 0, so 0.7·latency is compared: feed the
			// latency that makes the EWMA land on the intended side.
			d := l.Step(c.latency / 0.7)
			if d.EMax != c.wantEMax || d.Change != c.change {
				t.Fatalf("E_max %d change %+d, want %d %+d", d.EMax, d.Change, c.wantEMax, c.change)
			}
			if got := l.State().EMax; got != c.wantEMax {
				t.Fatalf("state E_max %d", got)
			}
		})
	}
}

// At exactly the threshold E_max rises ("+1 at or below").
func TestAtThresholdRises(t *testing.T) {
	cfg := adaptive(2, 1, 4)
	cfg.EWMAWeight = 0 // EWMA = latency: the comparison sees the threshold itself
	l := NewLimiter(cfg, nil)
	fill(t, l, 2)
	if d := l.Step(cfg.Threshold.Seconds()); d.Change != +1 {
		t.Fatalf("at the threshold: change %+d, want +1", d.Change)
	}
}

func TestEWMAFormula(t *testing.T) {
	l := NewLimiter(adaptive(1, 1, 1), nil)
	want := 0.0
	for _, x := range []float64{1e-3, 2e-3, 0, 5e-4} {
		want = 0.3*want + 0.7*x
		if d := l.Step(x); math.Abs(d.EWMA-want) > 1e-15 || d.Latency != x {
			t.Fatalf("EWMA %g latency %g, want %g %g", d.EWMA, d.Latency, want, x)
		}
	}
}

// Sustained slow intervals walk E_max down to Min, fast ones up to Max.
func TestEMaxWalksToItsBounds(t *testing.T) {
	l := NewLimiter(adaptive(4, 2, 6), nil)
	fill(t, l, 10)
	for range 10 {
		l.Step(slow * 2)
	}
	if e := l.State().EMax; e != 2 {
		t.Fatalf("after slow intervals E_max %d, want min 2", e)
	}
	for range 20 {
		l.Step(0)
	}
	if e := l.State().EMax; e != 6 {
		t.Fatalf("after fast intervals E_max %d, want max 6", e)
	}
}

func TestFixedAndOffNeverMove(t *testing.T) {
	for _, m := range []Mode{ModeFixed, ModeOff} {
		cfg := adaptive(3, 1, 8)
		cfg.Mode = m
		l := NewLimiter(cfg, nil)
		fill(t, l, 5)
		l.Step(1)
		l.Step(0)
		if e := l.State().EMax; e != 3 {
			t.Fatalf("%s: E_max moved to %d", m, e)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]struct {
		m Mode
		n int
	}{"adaptive": {ModeAdaptive, 0}, "off": {ModeOff, 0}, "fixed:8": {ModeFixed, 8}} {
		m, n, err := ParseMode(in)
		if err != nil || m != want.m || n != want.n {
			t.Fatalf("%q: %v %d %v", in, m, n, err)
		}
	}
	for _, bad := range []string{"", "fixed", "fixed:0", "fixed:x", "Adaptive"} {
		if _, _, err := ParseMode(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// Requests beyond E_max wait in arrival order and start as slots free;
// the queue is bounded; Finish is idempotent.
func TestQueueOrderBoundAndIdempotentFinish(t *testing.T) {
	cfg := LimiterConfig{Mode: ModeFixed, Initial: 1, Max: 1, Queue: 2}
	l := NewLimiter(cfg, nil)
	first, err := l.Acquire("a", nil)
	if first == nil || err != nil {
		t.Fatalf("first: %v %v", first, err)
	}
	var order []string
	var slots []*Slot
	for _, k := range []string{"b", "c"} {
		s, err := l.Acquire(k, func(s *Slot) { order = append(order, s.Kind()); slots = append(slots, s) })
		if s != nil || err != nil {
			t.Fatalf("%s did not wait: %v %v", k, s, err)
		}
	}
	if _, err := l.Acquire("d", func(*Slot) {}); err != ErrQueueFull {
		t.Fatalf("third waiter: %v, want ErrQueueFull", err)
	}
	if st := l.State(); st.ECurrent != 1 || st.Queue != 2 || st.Refused != 1 {
		t.Fatalf("state %+v", st)
	}
	if !first.Finish(ResultSuccess) || first.Finish(ResultFailure) {
		t.Fatal("Finish not once-only")
	}
	if first.Result() != ResultSuccess {
		t.Fatalf("result %q", first.Result())
	}
	if len(order) != 1 || order[0] != "b" || l.State().ECurrent != 1 {
		t.Fatalf("after one finish: started %v, E_current %d", order, l.State().ECurrent)
	}
	slots[0].Finish(ResultSuccess)
	slots[0].Finish(ResultSuccess)
	slots[1].Finish(ResultSuccess)
	if st := l.State(); st.ECurrent != 0 || st.Queue != 0 || len(order) != 2 || order[1] != "c" {
		t.Fatalf("end: %+v %v", st, order)
	}
}

// A rising E_max lets waiting requests in at the step.
func TestStepAdmitsWaitersWhenEMaxRises(t *testing.T) {
	l := NewLimiter(adaptive(1, 1, 4), nil)
	s, _ := l.Acquire("a", nil)
	started := 0
	_, _ = l.Acquire("b", func(*Slot) { started++ })
	l.Step(0)
	if started != 1 || l.State().ECurrent != 2 {
		t.Fatalf("started %d E_current %d", started, l.State().ECurrent)
	}
	s.Finish(ResultSuccess)
}

func TestOffNeverQueues(t *testing.T) {
	l := NewLimiter(LimiterConfig{Mode: ModeOff, Initial: 1, Queue: 0}, nil)
	for range 100 {
		if s, err := l.Acquire("x", nil); s == nil || err != nil {
			t.Fatalf("off mode held a request back: %v", err)
		}
	}
	if st := l.State(); st.ECurrent != 100 || st.Queue != 0 {
		t.Fatalf("state %+v", st)
	}
}

// A slot nobody finished ends after MaxAge (fake clock), so a lost answer
// costs capacity for a bounded time only.
func TestMaxAgeEndsForgottenSlots(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	cfg := adaptive(2, 1, 2)
	cfg.MaxAge = 30 * time.Second
	l := NewLimiter(cfg, clk.now)
	old, _ := l.Acquire("lost", nil)
	clk.advance(20 * time.Second)
	young, _ := l.Acquire("young", nil)
	var waited *Slot
	_, _ = l.Acquire("waiting", func(s *Slot) { waited = s })
	clk.advance(10 * time.Second)
	if d := l.Step(0); d.Expired != 0 || old.Done() {
		t.Fatal("a slot exactly MaxAge old ended")
	}
	clk.advance(time.Second)
	d := l.Step(0)
	if d.Expired != 1 || !old.Done() || old.Result() != ResultTimeout || young.Done() {
		t.Fatalf("expired %d old %v/%q young %v", d.Expired, old.Done(), old.Result(), young.Done())
	}
	if waited == nil {
		t.Fatal("the freed slot did not go to the waiting request")
	}
	if st := l.State(); st.Expired != 1 || st.ECurrent != 2 || st.Queue != 0 {
		t.Fatalf("state %+v", st)
	}
}

// Concurrent procedures, finishes and monitor ticks under -race: every
// request starts exactly once, E_current never passes E_max for waiting
// ones, and at the end nothing is left counted or queued.
func TestConcurrentEventsAndTicks(t *testing.T) {
	l := NewLimiter(adaptive(2, 1, 6), nil)
	l.cfg.Queue = 10000
	ctx, cancel := context.WithCancel(context.Background())
	ticks := make(chan time.Time)
	src := &flipSource{}
	monitorDone := make(chan struct{})
	go func() { l.Monitor(ctx, src, ticks, nil); close(monitorDone) }()
	go func() {
		for ctx.Err() == nil {
			select {
			case ticks <- time.Time{}:
			case <-ctx.Done():
			}
		}
	}()
	const n = 2000
	var wg sync.WaitGroup
	var ran atomic.Int64
	for i := range n {
		wg.Add(1)
		go func() {
			run := func(s *Slot) {
				ran.Add(1)
				s.Finish(ResultSuccess)
				s.Finish(ResultSuccess) // a second way to end it changes nothing
				wg.Done()
			}
			if i%10 == 0 {
				run(l.Force("forced"))
				return
			}
			acquireOrQueue(t, l, run, &wg)
		}()
	}
	wg.Wait()
	cancel()
	<-monitorDone
	if ran.Load() != n {
		t.Fatalf("%d of %d ran", ran.Load(), n)
	}
	if st := l.State(); st.ECurrent != 0 || st.Queue != 0 || st.Started != n {
		t.Fatalf("leak: %+v", st)
	}
}

type flipSource struct{ n atomic.Int64 }

func (f *flipSource) IntervalLatency() float64 {
	if f.n.Add(1)%2 == 0 {
		return 1e-3
	}
	return 0
}

// The monitor runs one Step per tick of its (fake) clock.
func TestMonitorStepsPerTick(t *testing.T) {
	l := NewLimiter(adaptive(1, 1, 10), nil)
	fill(t, l, 10)
	ticks, decisions := runMonitor(t, l.Monitor)
	for want := 2; want <= 4; want++ {
		ticks <- time.Time{}
		if d := <-decisions; d.EMax != want {
			t.Fatalf("after tick: E_max %d, want %d", d.EMax, want)
		}
	}
}

type constSource float64

func (c constSource) IntervalLatency() float64 { return float64(c) }

// acquireOrQueue starts an event of kind "p" as the AMF does: run at once
// if l grants a slot, else l runs it when one frees. A refusal ends the
// event (wg.Done) and fails the test.
func acquireOrQueue(t *testing.T, l *Limiter, run func(*Slot), wg *sync.WaitGroup) {
	s, err := l.Acquire("p", run)
	if err != nil {
		t.Error(err)
		wg.Done()
		return
	}
	if s != nil {
		run(s)
	}
}

// runMonitor runs monitor (l.Monitor or l.RampMonitor) on a fake clock at
// a scheduler latency of 0 until the test ends: each send on ticks is one
// tick, and each decision it reports comes out of decisions.
func runMonitor(t *testing.T, monitor func(context.Context, LatencySource, <-chan time.Time, func(Decision))) (chan<- time.Time, <-chan Decision) {
	ticks := make(chan time.Time)
	decisions := make(chan Decision)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go monitor(ctx, constSource(0), ticks, func(d Decision) {
		select {
		case decisions <- d:
		case <-ctx.Done():
		}
	})
	return ticks, decisions
}
