package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/test/bench"
)

func init() { benchCmds = append(benchCmds, newBenchIdleCmd) }

func newBenchIdleCmd() *cobra.Command {
	var (
		sbiModes, jsonPath string
		ues                int
		window             time.Duration
	)
	cmd := &cobra.Command{
		Use:   "idle",
		Short: "CPU time of the whole core at rest (NFs, onvm manager, supervisor)",
		Long: "Starts a fresh core per SBI mode, connects a gNB and registers --ues UEs, then\n" +
			"reads the CPU time of every process of the core over a window without traffic.\n" +
			"X-IO pollers must sleep when idle: the target machine has 2 cores.",
		Example: "  l25gc bench idle --sbi xio,tcp --window 30s --json idle.json",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, modes, ctx, stop, err := benchRun(cmd, sbiModes)
			if err != nil {
				return err
			}
			defer stop()
			out := cmd.OutOrStdout()
			results, err := bench.Idle(ctx, bench.IdleOptions{Config: cfg, SBIModes: modes, UEs: ues,
				Window: window, Out: out})
			return report(out, results, err, jsonPath, bench.PrintIdleTable)
		},
	}
	f := cmd.Flags()
	f.StringVar(&sbiModes, "sbi", "", "comma-separated SBI transports, one fresh core each (default from config)")
	f.IntVar(&ues, "ues", 10, "UEs registered before the quiet window (they stay registered)")
	f.DurationVar(&window, "window", 30*time.Second, "how long the core is watched without traffic")
	f.StringVar(&jsonPath, "json", "", "write the results as JSON to this file")
	return cmd
}
