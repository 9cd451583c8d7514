package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
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
	return bench.StartTracing(t.breakdown, splitList(t.otlp))
}

// startFor starts the run's tracing for a running core at amf (--amf)
// or fresh ones (amf ""): a running core exports where its config's
// tracing.otlp says, so --breakdown has its collector listen at the first
// of those addresses (start that core with it set, e.g. 127.0.0.1:4318).
func (t *traceFlags) startFor(amf string, cfg *config.Config) (*bench.Tracing, error) {
	if !t.breakdown || amf == "" {
		return t.start()
	}
	if len(cfg.Tracing.OTLP) == 0 {
		return nil, errors.New("--breakdown with --amf: the running core must export its spans to the benchmark; " +
			"start it with tracing.otlp naming a local address (e.g. [\"127.0.0.1:4318\"]) and pass the same --config here")
	}
	return bench.StartTracingAt(cfg.Tracing.OTLP[0], true, splitList(t.otlp))
}

// reportTraced is reportWithCharts followed by the breakdown tables.
func reportTraced(out io.Writer, results []bench.Result, runErr error, jsonPath string) error {
	err := reportWithCharts(out, results, runErr, jsonPath)
	bench.PrintBreakdowns(out, results)
	return err
}

// traceRAN has `l25gc ransim --otlp` export the gNB's N2 side and its UEs'
// procedures; the returned stop flushes them.
func traceRAN(g *ransim.GNB, otlp string) (func(), error) {
	p, err := tracing.New(tracing.Options{Service: "l25gc-ransim", OTLP: splitList(otlp)})
	if err != nil || p == nil {
		return func() {}, err
	}
	g.TraceWith(tracing.NewRAN(p))
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.Shutdown(ctx)
	}, nil
}

func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
