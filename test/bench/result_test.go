package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestSummarizeUsesNearestRank(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 100; i++ {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	got := Summarize(lat)
	want := Latency{Mean: 50.5, P50: 50, P90: 90, P99: 99, Max: 100}
	if got != want {
		t.Fatalf("Summarize(1..100 ms) = %+v, want %+v", got, want)
	}
	if (Summarize(nil) != Latency{}) {
		t.Fatal("no latencies must give zeros")
	}
}

func TestComparisonShowsTheRatioToTCP(t *testing.T) {
	results := []Result{
		{Procedure: "registration", SBI: "xio", UEs: 64, LatencyMS: Latency{P50: 10}, ThroughputPerS: 800},
		{Procedure: "registration", SBI: "tcp", UEs: 64, LatencyMS: Latency{P50: 40}, ThroughputPerS: 200},
	}
	var out bytes.Buffer
	PrintComparison(&out, results)
	if !strings.Contains(out.String(), "4.00x") {
		t.Fatalf("comparison lacks the tcp/xio p50 ratio 4.00x:\n%s", out.String())
	}
	out.Reset()
	PrintComparison(&out, results[:1])
	if out.Len() != 0 {
		t.Fatalf("one mode needs no comparison, got:\n%s", out.String())
	}
}
