package ratelimit

import (
	"strings"
	"testing"
	"time"
)

// A bad mode is refused with ParseMode's error and changes nothing.
func TestSetModeRefusesABadMode(t *testing.T) {
	l := NewLimiter(adaptive(4, 1, 8), nil)
	for _, bad := range []string{"", "fixed:0", "fixed:-3", "fixed:x", "fast", "Adaptive"} {
		err := l.SetMode(bad)
		if err == nil || !strings.Contains(err.Error(), "want adaptive, off or fixed:N") && !strings.Contains(err.Error(), "fixed:N needs a whole N ≥ 1") {
			t.Fatalf("%q: error %v, want ParseMode's", bad, err)
		}
	}
	if st := l.State(); st.Mode != ModeAdaptive || st.Setting != "adaptive" || st.EMax != 4 {
		t.Fatalf("a refused mode changed the limiter: %+v", st)
	}
}

// fixed:N holds E_max at N whatever the monitor sees, and a raise lets
// the waiting requests start at once, in arrival order.
func TestSetModeFixedHoldsAndAdmits(t *testing.T) {
	l := NewLimiter(adaptive(2, 1, 64), nil)
	fill(t, l, 2)
	var started []string
	for _, k := range []string{"a", "b", "c"} {
		if s, err := l.Acquire(k, func(s *Slot) { started = append(started, s.Kind()) }); s != nil || err != nil {
			t.Fatalf("%s did not wait: %v %v", k, s, err)
		}
	}
	if err := l.SetMode("fixed:4"); err != nil {
		t.Fatal(err)
	}
	if st := l.State(); st.Setting != "fixed:4" || st.ECurrent != 4 || st.Queue != 1 || strings.Join(started, "") != "ab" {
		t.Fatalf("after fixed:4: %+v, started %v", st, started)
	}
	for range 5 {
		l.Step(slow * 10)
		l.Step(0)
	}
	if e := l.State().EMax; e != 4 {
		t.Fatalf("fixed:4 moved to %d", e)
	}
	if err := l.SetMode("off"); err != nil {
		t.Fatal(err)
	}
	if st := l.State(); st.Setting != "off" || st.Queue != 0 || strings.Join(started, "") != "abc" {
		t.Fatalf("after off: %+v, started %v", st, started)
	}
}

// Adaptive comes back to the E_max it had left, not its start: a round of
// settings measures it as a core running it alone would.
func TestSetModeAdaptiveResumesItsLimit(t *testing.T) {
	l := NewLimiter(adaptive(4, 1, 64), nil)
	fill(t, l, 10)
	l.Step(0)
	l.Step(0)
	if e := l.State().EMax; e != 6 {
		t.Fatalf("E_max %d before the switch, want 6", e)
	}
	for _, m := range []string{"fixed:2", "off", "fixed:16", "adaptive"} {
		if err := l.SetMode(m); err != nil {
			t.Fatal(err)
		}
	}
	if st := l.State(); st.Setting != "adaptive" || st.EMax != 6 {
		t.Fatalf("back in adaptive: %+v, want E_max 6", st)
	}
	l.Step(0)
	if e := l.State().EMax; e != 7 {
		t.Fatalf("adaptive did not move on from 6: %d", e)
	}
}

// A limiter configured fixed keeps the adaptive bounds apart: its first
// adaptive turn starts at Initial within [Min, Max], not at the fixed N.
func TestSetModeFromFixedStartsAdaptiveAtInitial(t *testing.T) {
	cfg := adaptive(8, 2, 32)
	cfg.Mode, cfg.Fixed = ModeFixed, 3
	l := NewLimiter(cfg, nil)
	if st := l.State(); st.EMax != 3 || st.Setting != "fixed:3" {
		t.Fatalf("fixed start %+v", st)
	}
	if err := l.SetMode("adaptive"); err != nil {
		t.Fatal(err)
	}
	fill(t, l, 40)
	for range 40 {
		l.Step(0)
	}
	if e := l.State().EMax; e != 32 {
		t.Fatalf("adaptive from a fixed start reached %d, want its Max 32", e)
	}
}

// Mode switches during a storm of procedures, interval steps and ramp
// looks, under -race: every request starts once and nothing leaks.
func TestConcurrentSetModeAndEvents(t *testing.T) {
	cfg := adaptive(2, 1, 64)
	cfg.Growth, cfg.Queue, cfg.HoldRule, cfg.HoldAlpha, cfg.HoldBeta = 2, 10000, true, 2, 4
	l := NewLimiter(cfg, time.Now)
	modes := []string{"fixed:1", "adaptive", "off", "fixed:8", "adaptive"}
	stormWithMonitors(t, l, 2000, func(i int) {
		if i%40 == 0 {
			if err := l.SetMode(modes[i/40%len(modes)]); err != nil {
				t.Error(err)
			}
		}
	})
}
