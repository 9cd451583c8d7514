package ratelimit

import (
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
)

func readSched(t *testing.T) *metrics.Float64Histogram {
	t.Helper()
	s := []metrics.Sample{{Name: SchedLatencyMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		t.Fatalf("%s not supported by this runtime", SchedLatencyMetric)
	}
	h := s[0].Value.Float64Histogram()
	return &metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: h.Buckets}
}

func total(h *metrics.Float64Histogram) (n uint64) {
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// schedule makes the runtime schedule many goroutines.
func schedule() {
	var wg sync.WaitGroup
	for range 2000 {
		wg.Add(1)
		go func() { runtime.Gosched(); wg.Done() }()
	}
	wg.Wait()
}

// The delta of two real samples holds exactly the samples taken between
// them, bucket by bucket.
func TestHistDeltaOnRealSamples(t *testing.T) {
	prev := readSched(t)
	schedule()
	cur := readSched(t)
	d := HistDelta(cur, prev)
	if len(d.Counts) != len(cur.Counts) || len(d.Buckets) != len(d.Counts)+1 {
		t.Fatalf("shape: %d counts, %d buckets", len(d.Counts), len(d.Buckets))
	}
	for i := range d.Counts {
		if d.Counts[i] != cur.Counts[i]-prev.Counts[i] {
			t.Fatalf("bucket %d: %d, want %d−%d", i, d.Counts[i], cur.Counts[i], prev.Counts[i])
		}
	}
	// The runtime samples scheduling latency (one goroutine in eight is
	// tracked), so 2000 goroutines leave a few hundred samples.
	if total(d) < 100 || total(d) != total(cur)-total(prev) {
		t.Fatalf("delta holds %d samples (cumulative %d → %d); 2000 goroutines were scheduled", total(d), total(prev), total(cur))
	}
	// The interval's statistic describes the interval only: nothing
	// happened between cur and itself.
	if got := (Statistic{}).Of(HistDelta(cur, cur)); got != 0 {
		t.Fatalf("empty interval: mean %g, want 0", got)
	}
	if m := (Statistic{}).Of(d); m < 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		t.Fatalf("mean %g", m)
	}
}

// SchedLatency reports each interval on its own: a busy interval, then a
// quiet read right after it.
func TestSchedLatencySource(t *testing.T) {
	s := NewSchedLatency(Statistic{Percentile: 99})
	schedule()
	if busy := s.IntervalLatency(); busy <= 0 {
		t.Fatalf("busy interval p99 %g, want > 0", busy)
	}
	if total(HistDelta(s.prev, s.prev)) != 0 {
		t.Fatal("self delta not empty")
	}
}

func TestStatistics(t *testing.T) {
	inf := math.Inf(1)
	h := &metrics.Float64Histogram{
		Buckets: []float64{math.Inf(-1), 0, 1e-6, 1e-5, 1e-4, inf},
		Counts:  []uint64{0, 50, 40, 9, 1},
	}
	mean := (50*0.5e-6 + 40*5.5e-6 + 9*55e-6 + 1*1e-4) / 100
	if got := (Statistic{}).Of(h); math.Abs(got-mean) > 1e-12 {
		t.Fatalf("mean %g, want %g", got, mean)
	}
	for p, want := range map[float64]float64{50: 1e-6, 51: 1e-5, 90: 1e-5, 99: 1e-4, 100: 1e-4} {
		if got := (Statistic{Percentile: p}).Of(h); got != want {
			t.Fatalf("p%g = %g, want %g", p, got, want)
		}
	}
	for in, want := range map[string]float64{"mean": 0, "p50": 50, "p99.9": 99.9} {
		s, err := ParseStatistic(in)
		if err != nil || s.Percentile != want || s.String() != in {
			t.Fatalf("%q: %+v %v", in, s, err)
		}
	}
	for _, bad := range []string{"", "p0", "p101", "median", "99"} {
		if _, err := ParseStatistic(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}
