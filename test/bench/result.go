// Package bench runs the benchmarks behind `l25gc bench`: it starts a fresh
// core (or uses a running one), drives it with the simulator and reports
// results as a table and as the JSON result objects of DESIGN.md.
package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/test/ransim"
)

// Result is one (procedure, mode, UE count) measurement. The JSON shape is
// the one DESIGN.md fixes; tools read it.
type Result struct {
	Procedure      string             `json:"procedure"`
	SBI            string             `json:"sbi"`
	UEs            int                `json:"ues"`
	Concurrency    int                `json:"concurrency"`
	Succeeded      int                `json:"succeeded"`
	Failed         int                `json:"failed"`
	LatencyMS      Latency            `json:"latency_ms"`
	ThroughputPerS float64            `json:"throughput_per_s"`
	PeakRSSMiB     map[string]float64 `json:"peak_rss_mib,omitempty"` // per NF process, when the core is local
	Limiter        string             `json:"limiter,omitempty"`      // amf.limiter.mode of the core (bench pdu --limiter)
	Errors         []string           `json:"errors,omitempty"`
	// BackOffs counts #22 congestion rejects the UEs backed off from and
	// T3510Expiries attempts unanswered for T3510 (15 s); only runs whose
	// UEs back off (bench registration) report them.
	BackOffs      *int `json:"backoffs,omitempty"`
	T3510Expiries *int `json:"t3510_expiries,omitempty"`
	// Trace is the AMF's limiter sampled from its /metrics during the
	// measured run (Fig. 9a; bench pdu --batch, bench registration --limiter).
	Trace []LimiterSample `json:"limiter_trace,omitempty"`
	// Breakdown is where the procedure's time went, hop by hop (--breakdown).
	Breakdown *tracing.Breakdown `json:"breakdown,omitempty"`
}

// Latency summarises a latency distribution in milliseconds.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Summarize computes the statistics of sorted latencies (nearest-rank percentiles).
func Summarize(sorted []time.Duration) Latency {
	if len(sorted) == 0 {
		return Latency{}
	}
	var sum time.Duration
	for _, d := range sorted {
		sum += d
	}
	rank := func(p float64) float64 {
		i := int(p*float64(len(sorted))+0.999999) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(sorted) {
			i = len(sorted) - 1
		}
		return ms(sorted[i])
	}
	return Latency{Mean: ms(sum / time.Duration(len(sorted))), P50: rank(0.50), P90: rank(0.90), P99: rank(0.99), Max: ms(sorted[len(sorted)-1])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// FromOutcome turns a simulator run into a result.
func FromOutcome(procedure, sbi string, ues, concurrency int, o ransim.Outcome) Result {
	r := Result{Procedure: procedure, SBI: sbi, UEs: ues, Concurrency: concurrency,
		Succeeded: len(o.Latencies), Failed: o.Failed, LatencyMS: Summarize(o.Latencies), Errors: o.Errors}
	if o.BackedOff {
		r.BackOffs, r.T3510Expiries = &o.BackOffs, &o.T3510Expiries
	}
	if o.Elapsed > 0 {
		r.ThroughputPerS = float64(len(o.Latencies)) / o.Elapsed.Seconds()
	}
	return r
}

// WriteJSON writes results (any benchmark's) as an indented JSON array to path.
func WriteJSON[R any](path string, results []R) error {
	data, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// PrintTable writes one row per result, and the peak memory of the NFs.
func PrintTable(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PROCEDURE\tSBI\tUES\tCONC\tOK\tFAILED\tMEAN ms\tP50 ms\tP90 ms\tP99 ms\tMAX ms\tPER s\t")
	for _, r := range results {
		l := r.LatencyMS
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t\n", r.Procedure, r.SBI, r.UEs, r.Concurrency,
			r.Succeeded, r.Failed, l.Mean, l.P50, l.P90, l.P99, l.Max, r.ThroughputPerS)
	}
	tw.Flush()
	for _, r := range results {
		if len(r.PeakRSSMiB) > 0 {
			fmt.Fprintf(w, "peak RSS after %s %d UEs (%s): %s\n", r.Procedure, r.UEs, r.SBI, formatRSS(r.PeakRSSMiB))
		}
		for _, e := range r.Errors {
			fmt.Fprintf(w, "  %s %d UEs (%s) failure: %s\n", r.Procedure, r.UEs, r.SBI, e)
		}
	}
}

func formatRSS(m map[string]float64) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f MiB", n, m[n]))
	}
	return strings.Join(parts, ", ")
}

// PrintComparison puts the SBI modes of the same (procedure, UE count) side
// by side with the p50 and throughput of each relative to tcp; it prints
// nothing unless results hold tcp and at least one other mode.
func PrintComparison(w io.Writer, results []Result) {
	type key struct {
		procedure string
		ues       int
	}
	byKey := map[key]map[string]Result{}
	var keys []key
	var modes []string
	for _, r := range results {
		k := key{r.Procedure, r.UEs}
		if byKey[k] == nil {
			byKey[k] = map[string]Result{}
			keys = append(keys, k)
		}
		byKey[k][r.SBI] = r
		if !slices.Contains(modes, r.SBI) {
			modes = append(modes, r.SBI)
		}
	}
	if len(modes) < 2 || !slices.Contains(modes, "tcp") {
		return
	}
	others := slices.DeleteFunc(slices.Clone(modes), func(m string) bool { return m == "tcp" })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "PROCEDURE\tUES\ttcp P50 ms\t"
	for _, m := range others {
		header += m + " P50 ms\ttcp/" + m + " P50\t" + m + "/tcp PER s\t"
	}
	fmt.Fprintln(tw, header)
	for _, k := range keys {
		tcp, ok := byKey[k]["tcp"]
		if !ok {
			continue
		}
		row := fmt.Sprintf("%s\t%d\t%.2f\t", k.procedure, k.ues, tcp.LatencyMS.P50)
		for _, m := range others {
			r, ok := byKey[k][m]
			if !ok || r.LatencyMS.P50 == 0 || tcp.ThroughputPerS == 0 {
				row += "-\t-\t-\t"
				continue
			}
			row += fmt.Sprintf("%.2f\t%.2fx\t%.2fx\t", r.LatencyMS.P50, tcp.LatencyMS.P50/r.LatencyMS.P50, r.ThroughputPerS/tcp.ThroughputPerS)
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
}
