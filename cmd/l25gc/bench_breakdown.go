package main

import (
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/l25gc/l25gc/test/bench"
)

// traceFlags are --breakdown and --otlp of the latency benchmarks
// (issue 15): a per-hop breakdown of each procedure from the spans the
// cores and the simulator export to the benchmark's own collector, and
// the same spans sent to a user's OTLP/HTTP collector (Jaeger, Tempo).
type traceFlags struct {
	breakdown bool
	otlp      string
}

func (t *traceFlags) add(f *pflag.FlagSet) {
	f.BoolVar(&t.breakdown, "breakdown", false, "trace every procedure and print, per procedure, each hop's p50/p99 (N2 each way, AMF steps, dispatcher queue, each SBI call as client and server, NF processing, crypto, store, UE/gNB side) adding up to the end-to-end time, with what is not accounted for; also in the JSON")
	f.StringVar(&t.otlp, "otlp", "", "comma-separated host:port of OTLP/HTTP collectors (e.g. Jaeger's 4318) that the cores and the simulator also send their spans to")
}

// start starts the run's tracing; nil when neither flag is set.
func (t *traceFlags) start() (*bench.Tracing, error) {
	var eps []string
	for _, ep := range strings.Split(t.otlp, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			eps = append(eps, ep)
		}
	}
	return bench.StartTracing(t.breakdown, eps)
}

// reportTraced is reportWithCharts followed by the breakdown tables.
func reportTraced(out io.Writer, results []bench.Result, runErr error, jsonPath string) error {
	err := reportWithCharts(out, results, runErr, jsonPath)
	bench.PrintBreakdowns(out, results)
	return err
}
