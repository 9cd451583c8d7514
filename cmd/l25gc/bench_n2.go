package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/n2"
	"github.com/l25gc/l25gc/n2/n2bench"
)

func init() { benchCmds = append(benchCmds, newBenchN2Cmd) }

func newBenchN2Cmd() *cobra.Command {
	var (
		o                  n2bench.Options
		jsonPath           string
		serveT, serveI, sa string
	)
	cmd := &cobra.Command{
		Use:   "n2",
		Short: "N2 message round trip between two processes per SCTP data path (own, pion) and transport (udp, raw)",
		Long: "Sends an NGAP-sized message to an echo server in another process and waits for it to come\n" +
			"back, pausing --gap before each round trip as a lone procedure does between its steps, and\n" +
			"reports p50/p99/mean per transport and sctp_impl, the combinations alternated --rounds times.",
		Example: "  l25gc bench n2 --transport udp,raw --impl own,pion --requests 1000 --gap 1ms --rounds 2",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if serveT != "" { // the echo server's process
				return n2bench.Serve(cmd.Context(), serveT, serveI, sa, cmd.OutOrStdout())
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			o.Server = []string{self, "bench", "n2"}
			results, err := n2bench.Run(cmd.Context(), o)
			return report(cmd.OutOrStdout(), results, err, jsonPath, func(w io.Writer, rs []n2bench.Result) { fmt.Fprint(w, n2bench.Table(rs)) })
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.Transports, "transport", []string{n2.UDP}, "comma-separated user-space N2 transports: udp, raw (raw needs CAP_NET_RAW and a kernel without SCTP)")
	f.StringSliceVar(&o.Impls, "impl", []string{n2.ImplOwn, n2bench.OwnInline, n2.ImplPion, n2bench.Plain}, "comma-separated SCTP data paths (amf.ngap.sctp_impl): own, pion; own-inline is own with the client reading in ReadMsg (n2.Options.ReadInline, as the simulator does); plain is bare UDP, the floor")
	f.IntVar(&o.Requests, "requests", 1000, "measured round trips per run")
	f.IntVar(&o.Warmup, "warmup", 50, "unmeasured round trips first")
	f.DurationVar(&o.Gap, "gap", time.Millisecond, "pause before each round trip (not measured), so both sides fall asleep as between a procedure's steps")
	f.IntVar(&o.Size, "size", 120, "bytes per message (an Uplink NAS Transport is about 120)")
	f.IntVar(&o.Rounds, "rounds", 2, "times each combination runs, alternated")
	f.StringVar(&jsonPath, "json", "", "write the results as JSON to this file")
	f.StringVar(&serveT, "serve-transport", "", "internal: run the echo server on this transport")
	f.StringVar(&serveI, "serve-impl", "", "internal: the echo server's sctp_impl")
	f.StringVar(&sa, "serve-addr", "", "internal: the echo server's address")
	for _, name := range []string{"serve-transport", "serve-impl", "serve-addr"} {
		_ = f.MarkHidden(name)
	}
	return cmd
}
