package main

import "github.com/spf13/cobra"

// benchCmds are the `l25gc bench` subcommands; each file adds its own.
var benchCmds []func() *cobra.Command

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "benchmarks that report numbers (tables, JSON as in DESIGN.md)",
	}
	for _, c := range benchCmds {
		cmd.AddCommand(c())
	}
	return cmd
}
