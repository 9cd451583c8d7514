package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

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
		cmd.AddCommand(c())
	}
	return cmd
}

// report prints a benchmark's results with print and writes them as JSON to
// jsonPath (when set), also after a run that failed part-way; runErr, the
// run's own error, comes first.
func report[R any](out io.Writer, results []R, runErr error, jsonPath string, print func(io.Writer, []R)) error {
	if len(results) == 0 {
		return runErr
	}
	print(out, results)
	if jsonPath != "" {
		if err := bench.WriteJSON(jsonPath, results); err != nil {
			return err
		}
		fmt.Fprintf(out, "results written to %s\n", jsonPath)
	}
	return runErr
}
