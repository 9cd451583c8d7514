package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The limiter's gauges are read off a real Prometheus text page; other
// metrics, comments and labelled series are skipped.
func TestParseLimiterMetrics(t *testing.T) {
	page := `# HELP l25gc_amf_limiter_emax E_max
# TYPE l25gc_amf_limiter_emax gauge
l25gc_amf_limiter_emax 12
l25gc_amf_limiter_ecurrent 7
l25gc_amf_limiter_queue_length 3
l25gc_amf_limiter_ewma_seconds 0.0025
l25gc_amf_limiter_interval_latency_seconds 0.004
l25gc_amf_limiter_hold_ratio 2.5
l25gc_amf_limiter_dropped_total{reason="queue"} 5
go_goroutines 40
`
	s, err := parseLimiterMetrics(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	if s.EMax != 12 || s.ECurrent != 7 || s.Queue != 3 || s.EWMAMS != 2.5 || s.LatencyMS != 4 || s.HoldRatio != 2.5 {
		t.Fatalf("parsed %+v, want E_max 12, E_current 7, queue 3, EWMA 2.5 ms, interval 4 ms, hold ratio 2.5", s)
	}
	if _, err := parseLimiterMetrics(strings.NewReader("go_goroutines 40\n")); err == nil {
		t.Fatal("a page without the limiter parsed")
	}
}

// Events are numbered by request time across batches; failures count
// apart, with their reasons, and stay out of the latency statistics.
func TestSummarizeBatchesOrdersEventsAndSkipsFailures(t *testing.T) {
	run := BatchRun{Events: []EventTime{
		{AtMS: 30, LatencyMS: 10}, {AtMS: 10, LatencyMS: 20}, {AtMS: 20, LatencyMS: 999, Failed: true, Error: "timeout"},
	}}
	summarizeBatches(&run, []time.Duration{40 * time.Millisecond, 20 * time.Millisecond}, time.Second)
	if run.Events[0].AtMS != 10 || run.Events[0].Order != 1 || run.Events[2].Order != 3 {
		t.Fatalf("events not numbered by request time: %+v", run.Events)
	}
	if run.Succeeded != 2 || run.Failed != 1 || len(run.Errors) != 1 || run.Errors[0] != "1× timeout" {
		t.Fatalf("%d ok, %d failed, errors %v: want 2, 1, [1× timeout]", run.Succeeded, run.Failed, run.Errors)
	}
	if run.LatencyMS.Mean != 15 || run.LatencyMS.Max != 20 || run.BatchMS.Mean != 30 {
		t.Fatalf("latency %+v, batches %+v: want mean 15, max 20, batch mean 30", run.LatencyMS, run.BatchMS)
	}
	if run.ThroughputPerS != 2 {
		t.Fatalf("throughput %v, want 2/s", run.ThroughputPerS)
	}
}

// Fig. 3 for every run, Fig. 9a/9b for the adaptive one, next to the JSON.
func TestWriteBatchCharts(t *testing.T) {
	runs := []BatchRun{
		{Result: Result{Limiter: "fixed:8", UEs: 32, LatencyMS: Latency{Mean: 5, P99: 9}}},
		{Result: Result{Limiter: "adaptive", UEs: 32, LatencyMS: Latency{Mean: 4, P99: 8},
			Trace: []LimiterSample{{AtMS: 0, EMax: 8}, {AtMS: 500, EMax: 9, ECurrent: 9}}},
			Events: []EventTime{{Order: 1, LatencyMS: 3}, {Order: 2, LatencyMS: 4}}},
	}
	dir := t.TempDir()
	paths, err := WriteBatchCharts(filepath.Join(dir, "out.json"), runs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"out-fig3.svg", "out-fig9a-adaptive.svg", "out-fig9b-adaptive.svg"}
	if len(paths) != len(want) {
		t.Fatalf("wrote %v, want %v", paths, want)
	}
	for i, p := range paths {
		if filepath.Base(p) != want[i] {
			t.Fatalf("wrote %v, want %v", paths, want)
		}
		if b, err := os.ReadFile(p); err != nil || !strings.Contains(string(b), "<svg") {
			t.Fatalf("%s: not an SVG (%v)", p, err)
		}
	}
}

// Whatever a /metrics endpoint answers, parsing it ends in a sample or an
// error, never a crash.
func FuzzParseLimiterMetrics(f *testing.F) {
	f.Add("l25gc_amf_limiter_emax 12\nl25gc_amf_limiter_ecurrent 7\n")
	f.Add("l25gc_amf_limiter_emax NaN\nl25gc_amf_limiter_ecurrent +Inf\n# x\n")
	f.Fuzz(func(t *testing.T, page string) {
		s, err := parseLimiterMetrics(strings.NewReader(page))
		if err == nil && !strings.Contains(page, "l25gc_amf_limiter_emax") {
			t.Fatalf("parsed %+v from a page without E_max", s)
		}
	})
}
