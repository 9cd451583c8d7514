package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/hosttune"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/test/bench"
)

// benchCmds are the `l25gc bench` subcommands; each file adds its own.
var benchCmds []func() *cobra.Command

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "benchmarks that report numbers (tables, JSON as in DESIGN.md)",
		// The load generator shares the cores with the core it measures:
		// it collects garbage as sparingly as the NFs do.
		PersistentPreRun: func(*cobra.Command, []string) { nf.TuneGC() },
	}
	for _, c := range benchCmds {
		sub := c()
		withHaltPoll(sub, hosttune.Host())
		cmd.AddCommand(sub)
	}
	cmd.PersistentFlags().Int64("halt-poll-ns", noHaltPoll,
		fmt.Sprintf("set the guest haltpoll window (/sys/module/haltpoll/parameters/guest_halt_poll_ns, root) for this run and put it back after; -1: what the node config makes l25gc up set (tuning.halt_poll_ns; unset: %d on a KVM guest at 0)", hosttune.DefaultHaltPollNs))
	return cmd
}

// benchRun is what a benchmark that starts cores needs first: the node
// config, the SBI modes to measure (--sbi, else the config's transport) and
// a context Ctrl-C ends.
func benchRun(cmd *cobra.Command, sbiModes string) (*config.Config, []string, context.Context, context.CancelFunc, error) {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	// The run set the haltpoll window for its whole length (withHaltPoll):
	// its cores leave the host to it.
	leave := int64(hosttune.Leave)
	cfg.Tuning.HaltPollNs = &leave
	// The simulator runs in this process and hands its goroutines messages
	// as the NFs do: it takes their Ps (a lone registration's p50 with it
	// at one P as well: 1.11-1.38 ms against 1.18-1.39, issue 15).
	nf.SetProcs(cfg.Tuning.Procs.All)
	modes := strings.Split(sbiModes, ",")
	if sbiModes == "" {
		modes = []string{cfg.SBI.Transport}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return cfg, modes, ctx, stop, nil
}

// report prints a benchmark's results with print and writes them as JSON to
// jsonPath (when set), also after a run that failed part-way; runErr, the
// run's own error, comes first.
func report[R any](out io.Writer, results []R, runErr error, jsonPath string, print func(io.Writer, []R)) error {
	if len(results) == 0 {
		return runErr
	}
	print(out, results)
	knob := hosttune.Host()
	printHost(out, knob)
	if jsonPath != "" {
		recorded, err := withHost(results, knob.Snapshot())
		if err != nil {
			return err
		}
		if err := bench.WriteJSON(jsonPath, recorded); err != nil {
			return err
		}
		fmt.Fprintf(out, "results written to %s\n", jsonPath)
	}
	return runErr
}
