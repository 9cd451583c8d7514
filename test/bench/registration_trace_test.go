package bench

import (
	"bytes"
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
