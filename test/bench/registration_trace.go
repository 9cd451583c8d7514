package bench

// bench registration --limiter records the AMF's limiter over the measured
// run (E_max, E_current, queue, EWMA, interval latency: the Fig. 9a
// sampling of bench pdu --batch), so a goodput gap between settings can
// be traced to what the limiter did.

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/l25gc/l25gc/test/ransim"
)

// tracedRegistration is registrationRun with the limiter sampled from
// metricsURL during every measured (not warm-up) run.
func tracedRegistration(metricsURL string, every time.Duration) run {
	return func(ctx context.Context, g *ransim.GNB, f ransim.Fleet, mode string, w io.Writer, warm bool) ([]Result, error) {
		if warm {
			return registrationRun(ctx, g, f, mode, w, warm)
		}
		sampler := startLimiterSampler(metricsURL, every)
		start := time.Now()
		rs, err := registrationRun(ctx, g, f, mode, w, warm)
		trace := sampler.stop(start)
		for i := range rs {
			rs[i].Trace = trace
		}
		return rs, err
	}
}

// PrintLimiterTrace prints each result's limiter trace, one row per
// step (at most one a step; the last sample of each), so E_max's path
// next to the EWMA and the queue reads at a glance.
func PrintLimiterTrace(w io.Writer, results []Result, step time.Duration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "LIMITER\tUES\tT s\tE_MAX\tE_CURRENT\tQUEUE\tEWMA ms\tINTERVAL ms\t")
	for _, r := range results {
		for _, s := range thinTrace(r.Trace, step) {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.0f\t%.0f\t%.0f\t%.3f\t%.3f\t\n", orDash(r.Limiter), r.UEs, s.AtMS/1000,
				s.EMax, s.ECurrent, s.Queue, s.EWMAMS, s.LatencyMS)
		}
	}
	tw.Flush()
}

// thinTrace keeps the last sample of every step-long window, and the
// trace's last sample.
func thinTrace(trace []LimiterSample, step time.Duration) []LimiterSample {
	if step <= 0 || len(trace) == 0 {
		return trace
	}
	var out []LimiterSample
	width := ms(step)
	for i, s := range trace {
		last := i == len(trace)-1
		if last || int(trace[i+1].AtMS/width) != int(s.AtMS/width) {
			out = append(out, s)
		}
	}
	return out
}

// WriteTraceCharts writes Fig. 9a (E_max and E_current over time) of
// every result with a limiter trace next to jsonPath: out.json →
// out-fig9a-<limiter>-<UEs>.svg.
func WriteTraceCharts(jsonPath string, results []Result) ([]string, error) {
	base := strings.TrimSuffix(jsonPath, filepath.Ext(jsonPath))
	var paths []string
	for _, r := range results {
		if len(r.Trace) < 2 {
			continue
		}
		p, err := fig9a(r)
		if err != nil {
			return paths, err
		}
		path := fmt.Sprintf("%s-fig9a-%s-%d.svg", base, limiterFileName(orDash(r.Limiter)), r.UEs)
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return paths, fmt.Errorf("chart %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
