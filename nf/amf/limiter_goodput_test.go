package amf

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/ratelimit"
)

// The goodput rule's state reaches /metrics: above low load, with
// goodput rising with the procedures in progress, the first window
// measures the home and the doubling's window raises E_max.
func TestGoodputRuleOnMetrics(t *testing.T) {
	lc := config.DefaultLimiter()
	lc.Initial, lc.HoldRule = 16, false // the goodput rule at every load
	cfg, _ := lc.Settings()
	clk := &testClock{t: time.Unix(1e6, 0)}
	l := ratelimit.NewLimiter(cfg, clk.now)
	reg := prometheus.NewRegistry()
	publishLimiter(reg, l)
	var running []*ratelimit.Slot
	acquire := func() {
		s, err := l.Acquire("registration", func(s *ratelimit.Slot) { running = append(running, s) })
		if err != nil {
			t.Fatal(err)
		}
		if s != nil {
			running = append(running, s)
		}
	}
	for range 200 {
		acquire()
	}
	for l.State().GoodputRaises == 0 && len(running) > 0 {
		// A second per completion per procedure in progress:
		// goodput proportional to E_current, so each doubling pays.
		clk.advance(time.Second / time.Duration(l.State().ECurrent))
		s := running[0]
		running = running[1:]
		s.Finish(ratelimit.ResultSuccess)
		acquire()
	}
	wantGathered(t, reg, map[string]float64{
		"l25gc_amf_limiter_goodput_raises_total": 1, "l25gc_amf_limiter_goodput_cuts_total": 0,
		"l25gc_amf_limiter_goodput_per_second": 32,
		"l25gc_amf_limiter_emax":               64, // the next doubling's probe
	})
	for _, s := range running {
		s.Finish(ratelimit.ResultSuccess)
	}
}
