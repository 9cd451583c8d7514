package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/xio/xiobench"
)

func init() { benchCmds = append(benchCmds, newBenchSBICmd) }

func newBenchSBICmd() *cobra.Command {
	var (
		transports       []string
		concurrency      []int
		requests, warmup int
		jsonPath         string
		gap              time.Duration
	)
	cmd := &cobra.Command{
		Use:   "sbi",
		Short: "SBI round trip between two NF processes over xio, xio-socket and tcp",
		Long: "Posts a 1 KB JSON body to a trivial echo handler in another process and reports\n" +
			"p50/p99 round trip and requests/s per transport and concurrency. Starts its own\n" +
			"onvm manager (root; hugepages are reserved when missing).",
		Example: "  l25gc bench sbi --transport xio,xio-socket,tcp --concurrency 1,32 --json out.json\n" +
			"  l25gc bench sbi --transport xio --concurrency 1 --gap 2ms --requests 1000   # calls as inside a procedure",
		RunE: func(cmd *cobra.Command, _ []string) error {
			results, err := xiobench.Run(xiobench.Options{Transports: transports, Concurrency: concurrency,
				Requests: requests, Warmup: warmup, Gap: gap})
			xiobench.Close()
			out := cmd.OutOrStdout()
			return report(out, results, err, jsonPath, func(w io.Writer, rs []xiobench.Result) { fmt.Fprint(w, xiobench.Table(rs)) })
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&transports, "transport", []string{"xio", "xio-socket", "tcp"}, "comma-separated SBI transports")
	f.IntSliceVar(&concurrency, "concurrency", []int{1, 32}, "comma-separated numbers of requests in flight")
	f.IntVar(&requests, "requests", 5000, "measured requests per transport and concurrency")
	f.IntVar(&warmup, "warmup", 500, "unmeasured requests first")
	f.StringVar(&jsonPath, "json", "", "write the results as JSON to this file")
	f.DurationVar(&gap, "gap", 0, "pause before each request (not measured), so both sides' pollers fall asleep between calls as they do inside a procedure (e.g. 2ms)")
	return cmd
}
