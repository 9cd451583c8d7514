package amf

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/ratelimit"
)

// The hold-time rule's state reaches /metrics: a low-load round whose
// procedures took no longer than the shortest one (nothing queued inside
// the AMF) raises E_max by one, and the ratio and the raise are published.
func TestHoldRuleOnMetrics(t *testing.T) {
	lc := config.DefaultLimiter()
	lc.Initial = 16
	cfg, _ := lc.Settings()
	cfg.HoldAlpha, cfg.HoldBeta = 2, 4 // not per CPU: the same on any machine
	clk := &testClock{t: time.Unix(1e6, 0)}
	l := ratelimit.NewLimiter(cfg, clk.now)
	reg := prometheus.NewRegistry()
	publishLimiter(reg, l)
	var slots []*ratelimit.Slot
	for range 4 { // E_max starts at β: the limit is reached
		s, err := l.Acquire("pdu_session_establishment", func(*ratelimit.Slot) {})
		if err != nil || s == nil {
			t.Fatalf("slot %v, %v: want one at once", s, err)
		}
		slots = append(slots, s)
	}
	clk.advance(3 * time.Millisecond)
	for _, s := range slots {
		s.Finish(ratelimit.ResultSuccess)
	}
	wantGathered(t, reg, map[string]float64{
		"l25gc_amf_limiter_emax": 5, "l25gc_amf_limiter_hold_ratio": 1,
		"l25gc_amf_limiter_hold_raises_total": 1, "l25gc_amf_limiter_hold_cuts_total": 0,
	})
}

// wantGathered checks the registry's single-series metrics against want.
func wantGathered(t *testing.T, reg *prometheus.Registry, want map[string]float64) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		got[f.GetName()] = value(f.GetMetric()[0])
	}
	for name, w := range want {
		if v, ok := got[name]; !ok || v != w {
			t.Errorf("%s = %v (published %v), want %v", name, v, ok, w)
		}
	}
}
