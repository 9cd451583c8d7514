package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

func init() { benchCmds = append(benchCmds, newBenchPDUCmd) }

func newBenchPDUCmd() *cobra.Command {
	var (
		ues, sbiModes, jsonPath, amf, transport, dnn, n3 string
		limiters                                         string
		concurrency, warmup, batch, batches, rounds      int
		warmupBatches                                    int
		prof                                             profileFlags
		trace                                            traceFlags
	)
	cmd := &cobra.Command{
		Use:   "pdu",
		Short: "PDU session establishment and release latency and rate for lists of UE counts",
		Long: "Starts a fresh core per SBI mode (subscribers provisioned); for each UE count the UEs\n" +
			"register first (not measured), then each establishes one IPv4 PDU session\n" +
			"(procedure pdu_session: request to Accept) and releases it (pdu_session_release:\n" +
			"Release Request to Release Complete). With --json, SVG charts of p50/p99 against\n" +
			"UEs, one colour per SBI mode, go next to the JSON file. With --amf it uses a\n" +
			"running core instead.",
		Example: "  l25gc bench pdu --ues 1,64,1000,10000 --concurrency 64 --sbi xio,tcp --json pdu.json\n" +
			"  l25gc bench pdu --batch 32 --batches 10 --limiter fixed:2,fixed:8,fixed:16,off,adaptive --json fig3.json\n" +
			"  l25gc bench pdu --batch 32 --batches 2 --rounds 5 --limiter fixed:4,fixed:8,fixed:16,off,adaptive --json fig3.json",
		RunE: func(cmd *cobra.Command, _ []string) error {
			counts, err := parseCounts(ues)
			if err != nil {
				return err
			}
			gnbN3, err := netip.ParseAddr(n3)
			if err != nil || !gnbN3.Is4() {
				return fmt.Errorf("--n3 %q: want an IPv4 address", n3)
			}
			cfg, modes, ctx, stop, err := benchRun(cmd, sbiModes)
			if err != nil {
				return err
			}
			defer stop()
			out := cmd.OutOrStdout()
			o := bench.RegistrationOptions{Config: cfg, SBIModes: modes, UECounts: counts,
				Concurrency: concurrency, Warmup: warmup, AMF: amf, Transport: transport, Out: out, DNN: dnn, N3: gnbN3}
			if err := prof.apply(&o, out); err != nil {
				return err
			}
			if batch > 0 {
				return benchPDUBatches(ctx, out, bench.BatchOptions{RegistrationOptions: o, Batch: batch, Batches: batches, Rounds: rounds, WarmupBatches: warmupBatches}, limiters, jsonPath)
			}
			if limiters != "" {
				return benchPDUByLimiter(ctx, out, o, limiters, jsonPath)
			}
			if o.Tracing, err = trace.startFor(amf, cfg); err != nil {
				return err
			}
			defer o.Tracing.Close()
			results, err := bench.PDU(ctx, o)
			return reportTraced(out, results, err, jsonPath)
		},
	}
	f := cmd.Flags()
	trace.add(f)
	f.StringVar(&ues, "ues", "1,64,1000", "comma-separated UE counts")
	f.IntVar(&concurrency, "concurrency", 64, "procedures in flight at once")
	f.IntVar(&warmup, "warmup", 64, "UEs run through registration, session and release first on each core, not measured (0: none)")
	f.StringVar(&sbiModes, "sbi", "", "comma-separated SBI modes, one fresh core each (as in bench registration; default from config)")
	f.StringVar(&jsonPath, "json", "", "write the results as JSON to this file, and SVG charts next to it")
	f.StringVar(&amf, "amf", "", "N2 address of a running core to use instead of fresh ones")
	f.StringVar(&transport, "n2", "", "N2 transport: kernel, raw, udp or auto (default from config)")
	f.StringVar(&dnn, "dnn", "internet", "the DNN of the sessions")
	f.StringVar(&n3, "n3", ransim.DefaultN3.String(), "the simulated gNB's N3 address, the DL end of its tunnels")
	f.StringVar(&limiters, "limiter", "", "comma-separated amf.limiter.mode values (fixed:N, off, adaptive), each optionally with other amf.limiter fields after slashes (adaptive/threshold=25ms/growth=1), one fresh core each: the results carry \"limiter\"")
	prof.add(f)
	f.IntVar(&batch, "batch", 0, "the paper's limiter experiment: this many UEs register, then all request a PDU session at once, --batches times, on a fresh core per --limiter setting (--ues, --concurrency and --warmup do not apply)")
	f.IntVar(&batches, "batches", 10, "batches per --limiter setting (with --batch; with --rounds, per visit)")
	f.IntVar(&warmupBatches, "warmup-batches", 5, "with --rounds: batches under off before the first round, not measured")
	f.IntVar(&rounds, "rounds", 0, "with --batch: ONE core whose amf.limiter.mode is switched at run time, each round visiting every --limiter setting (modes; adaptive's overrides become the core's config) in a balanced order (a Latin square: every place and every predecessor once per cycle) for --batches batches; per setting the median over rounds and its spread, and the limiter goals judged on per-round ratios (0: a fresh core per setting)")
	return cmd
}

// benchPDUBatches is the paper's Fig. 3/9 experiment: the table, the JSON
// (each object with its "limiter") and the figures next to it.
func benchPDUBatches(ctx context.Context, out io.Writer, o bench.BatchOptions, limiters, jsonPath string) error {
	if limiters == "" {
		limiters = "adaptive"
	}
	list, err := bench.ParseLimiters(limiters)
	if err != nil {
		return err
	}
	run, print := bench.PDUBatches, bench.PrintBatchTable
	if o.Rounds > 0 {
		run, print = bench.PDURounds, bench.PrintRoundsTable
	}
	runs, err := run(ctx, o, list)
	err = report(out, runs, err, jsonPath, print)
	return withCharts(out, err, jsonPath, len(runs), func() ([]string, error) { return bench.WriteBatchCharts(jsonPath, runs) })
}

// benchPDUByLimiter is bench pdu once per --limiter setting, with the
// settings side by side and one chart series per SBI mode and setting.
func benchPDUByLimiter(ctx context.Context, out io.Writer, o bench.RegistrationOptions, limiters, jsonPath string) error {
	list, err := bench.ParseLimiters(limiters)
	if err != nil {
		return err
	}
	results, err := bench.PDUByLimiter(ctx, o, list)
	err = report(out, results, err, jsonPath, func(w io.Writer, rs []bench.Result) {
		bench.PrintTable(w, rs)
		bench.PrintLimiterTable(w, rs)
	})
	return withCharts(out, err, jsonPath, len(results), func() ([]string, error) { return bench.WriteCharts(jsonPath, bench.ByLimiterSeries(results)) })
}

// reportWithCharts is report for latency results, with the SVG charts
// next to the JSON file.
func reportWithCharts(out io.Writer, results []bench.Result, runErr error, jsonPath string) error {
	err := report(out, results, runErr, jsonPath, func(w io.Writer, rs []bench.Result) {
		bench.PrintTable(w, rs)
		bench.PrintComparison(w, rs)
	})
	return withCharts(out, err, jsonPath, len(results), func() ([]string, error) { return bench.WriteCharts(jsonPath, results) })
}

// withCharts writes a benchmark's SVG charts next to its JSON (none when
// there is no JSON file or no result), says where, and returns the run's
// error, else the charts'.
func withCharts(out io.Writer, err error, jsonPath string, results int, write func() ([]string, error)) error {
	if jsonPath == "" || results == 0 {
		return err
	}
	paths, cerr := write()
	for _, p := range paths {
		fmt.Fprintf(out, "chart written to %s\n", p)
	}
	if err == nil {
		err = cerr
	}
	return err
}
