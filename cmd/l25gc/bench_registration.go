package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

func init() { benchCmds = append(benchCmds, newBenchRegistrationCmd) }

func newBenchRegistrationCmd() *cobra.Command {
	var (
		ues, sbiModes, jsonPath, amf, transport, limiters string
		concurrency, warmup                               int
		maxBackOff                                        time.Duration
		prof                                              profileFlags
		trace                                             traceFlags
	)
	cmd := &cobra.Command{
		Use:   "registration",
		Short: "initial registration latency and rate for lists of UE counts",
		Long: "Starts a fresh core per SBI mode (subscribers provisioned), registers each UE count\n" +
			"with the simulator and stops the core; with --amf it uses a running core instead.\n" +
			"UEs rejected with #22 (congestion) wait T3346 (at most --max-backoff) and register\n" +
			"again; the table shows the goodput, the back-offs and the attempts that reached T3510.\n" +
			"With --limiter, a fresh core per amf.limiter.mode setting, and the AMF's limiter\n" +
			"(E_max, E_current, queue, EWMA, interval latency) sampled every 50 ms, printed once a\n" +
			"second and in the JSON as limiter_trace.",
		Example: "  l25gc bench registration --ues 1,64,1000 --concurrency 64 --json out.json\n" +
			"  l25gc bench registration --ues 20000 --concurrency 2000 --limiter off,adaptive",
		RunE: func(cmd *cobra.Command, _ []string) error {
			counts, err := parseCounts(ues)
			if err != nil {
				return err
			}
			cfg, modes, ctx, stop, err := benchRun(cmd, sbiModes)
			if err != nil {
				return err
			}
			defer stop()
			out := cmd.OutOrStdout()
			o := bench.RegistrationOptions{Config: cfg, SBIModes: modes, UECounts: counts, Concurrency: concurrency,
				Warmup: warmup, AMF: amf, Transport: transport, Out: out, BackOff: &ransim.BackOff{Max: maxBackOff}}
			if err := prof.apply(&o, out); err != nil {
				return err
			}
			if o.Tracing, err = trace.startFor(amf, cfg); err != nil {
				return err
			}
			defer o.Tracing.Close()
			if limiters == "" {
				results, err := bench.Registration(ctx, o)
				return reportTraced(out, results, err, jsonPath)
			}
			list, err := bench.ParseLimiters(limiters)
			if err != nil {
				return err
			}
			results, err := bench.RegistrationByLimiter(ctx, o, list)
			err = report(out, results, err, jsonPath, func(w io.Writer, rs []bench.Result) {
				bench.PrintTable(w, rs)
				bench.PrintOverloadTable(w, rs)
				bench.PrintLimiterTrace(w, rs, time.Second)
			})
			return withCharts(out, err, jsonPath, len(results), func() ([]string, error) { return bench.WriteTraceCharts(jsonPath, results) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&ues, "ues", "1,64,1000", "comma-separated UE counts")
	f.IntVar(&concurrency, "concurrency", 64, "registrations in flight at once")
	f.IntVar(&warmup, "warmup", 256, "UEs registered first on each core, not measured (0: measure a cold core)")
	f.StringVar(&sbiModes, "sbi", "", "comma-separated SBI modes, one fresh core each: tcp, xio or xio-socket, each with optional +tls, +mtls (sbi.tls) and +nooauth (sbi.oauth2 off), e.g. tcp+nooauth,tcp+tls (default from config)")
	f.StringVar(&jsonPath, "json", "", "write the results as JSON to this file, and SVG charts of p50/p99 against UEs next to it")
	f.StringVar(&amf, "amf", "", "N2 address of a running core to use instead of fresh ones")
	f.StringVar(&transport, "n2", "", "N2 transport: kernel, raw, udp or auto (default from config)")
	f.StringVar(&limiters, "limiter", "", "comma-separated amf.limiter.mode values (fixed:N, off, adaptive), each optionally with other amf.limiter fields after slashes (adaptive/threshold=25ms/growth=1), one fresh core each: the results carry \"limiter\"")
	prof.add(f)
	trace.add(f)
	f.DurationVar(&maxBackOff, "max-backoff", 0, "cap on a UE's wait after #22 congestion (the AMF's T3346 is 20-60 s); 0: the full T3346")
	return cmd
}

func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--ues %q: want positive numbers separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}
