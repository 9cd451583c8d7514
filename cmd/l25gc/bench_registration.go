package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/test/bench"
)

func init() { benchCmds = append(benchCmds, newBenchRegistrationCmd) }

func newBenchRegistrationCmd() *cobra.Command {
	var (
		ues, sbiModes, jsonPath, amf, transport string
		concurrency, warmup                     int
	)
	cmd := &cobra.Command{
		Use:   "registration",
		Short: "initial registration latency and rate for lists of UE counts",
		Long: "Starts a fresh core per SBI mode (subscribers provisioned), registers each UE count\n" +
			"with the simulator and stops the core; with --amf it uses a running core instead.",
		Example: "  l25gc bench registration --ues 1,64,1000 --concurrency 64 --json out.json",
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
			results, err := bench.Registration(ctx, bench.RegistrationOptions{Config: cfg, SBIModes: modes, UECounts: counts,
				Concurrency: concurrency, Warmup: warmup, AMF: amf, Transport: transport, Out: out})
			return reportWithCharts(out, results, err, jsonPath)
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
