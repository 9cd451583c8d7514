package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The printed trace keeps one sample a second (the last of each second)
// and the run's last sample, so a 50 ms trace stays readable.
func TestPrintLimiterTraceThinsToOneRowPerStep(t *testing.T) {
	var trace []LimiterSample
	for at := 0.0; at <= 2100; at += 50 {
		trace = append(trace, LimiterSample{AtMS: at, EMax: at / 50})
	}
	var out bytes.Buffer
	PrintLimiterTrace(&out, []Result{{Limiter: "adaptive", UEs: 3000, Trace: trace}, {Limiter: "off", UEs: 3000}}, time.Second)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want a header and 3 rows (0.95 s, 1.95 s, 2.1 s):\n%s", len(lines), out.String())
	}
	for i, want := range []string{"19", "39", "42"} {
		if f := strings.Fields(lines[i+1]); f[3] != want {
			t.Errorf("row %d: E_max %s, want %s (%s)", i+1, f[3], want, lines[i+1])
		}
	}
}

// bench registration --limiter --json draws Fig. 9a for each result with
// a trace, named by its limiter and UE count; one without a trace gets none.
func TestWriteTraceCharts(t *testing.T) {
	trace := []LimiterSample{{AtMS: 0, EMax: 32, ECurrent: 32}, {AtMS: 500, EMax: 64, ECurrent: 64}, {AtMS: 1000, EMax: 64, ECurrent: 10}}
	dir := t.TempDir()
	paths, err := WriteTraceCharts(filepath.Join(dir, "reg.json"), []Result{
		{Limiter: "adaptive", UEs: 3000, Trace: trace}, {Limiter: "fixed:8", UEs: 3000, Trace: trace}, {Limiter: "off", UEs: 3000}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"reg-fig9a-adaptive-3000.svg", "reg-fig9a-fixed8-3000.svg"}
	if len(paths) != len(want) {
		t.Fatalf("wrote %v, want %v", paths, want)
	}
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if filepath.Base(p) != want[i] || err != nil || !strings.Contains(string(b), "E_max") {
			t.Fatalf("chart %s (%v), want %s drawing E_max", p, err, want[i])
		}
	}
}
