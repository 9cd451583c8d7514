package main

import (
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

func init() { benchCmds = append(benchCmds, newBenchHandoverCmd) }

func newBenchHandoverCmd() *cobra.Command {
	var (
		ues, sbiModes, jsonPath, amf, transport, dnn, n3, kind string
		concurrency, maxRate                                   int
		interval                                               time.Duration
		noDirect                                               bool
	)
	cmd := &cobra.Command{
		Use:   "handover",
		Short: "N2 or Xn handover latency and the downlink packets lost while UEs move",
		Long: "Starts a fresh core with the lab user plane per SBI mode (root; the lab's links\n" +
			"exist once per machine, so serialise such runs where people share one, e.g. with\n" +
			"flock). Two simulated gNBs connect (N3 at --n3 and the next address,\n" +
			"which is added to the lab's N3 link); for each UE count the UEs register and\n" +
			"establish one session on gNB 1 (not measured), a numbered UDP stream per UE starts\n" +
			"from the data network namespace, and every UE moves to gNB 2. Latency: Handover\n" +
			"Required to the source's release after Handover Notify (handover_n2), or Path\n" +
			"Switch Request to its Acknowledge (handover_xn). The packet table counts what the\n" +
			"streams lost and got out of order. With --json, SVG charts go next to the JSON file.",
		Example: "  sudo l25gc bench handover --kind n2 --ues 1,64 --sbi xio,tcp --json ho.json",
		RunE: func(cmd *cobra.Command, _ []string) error {
			counts, err := parseCounts(ues)
			if err != nil {
				return err
			}
			gnbN3, err := netip.ParseAddr(n3)
			if err != nil || !gnbN3.Is4() {
				return fmt.Errorf("--n3 %q: want an IPv4 address", n3)
			}
			if kind != "n2" && kind != "xn" {
				return fmt.Errorf("--kind %q: want n2 or xn", kind)
			}
			if noDirect && kind != "n2" {
				return fmt.Errorf("--no-direct-forwarding is for --kind n2")
			}
			cfg, modes, ctx, stop, err := benchRun(cmd, sbiModes)
			if err != nil {
				return err
			}
			defer stop()
			out := cmd.OutOrStdout()
			results, err := bench.Handover(ctx, bench.HandoverOptions{RegistrationOptions: bench.RegistrationOptions{
				Config: cfg, SBIModes: modes, UECounts: counts, Concurrency: concurrency, AMF: amf, Transport: transport,
				Out: out, DNN: dnn, N3: gnbN3}, Kind: kind, Interval: interval, MaxStreamRate: maxRate, NoDirectForwarding: noDirect})
			return reportHandover(out, results, err, jsonPath)
		},
	}
	f := cmd.Flags()
	f.StringVar(&kind, "kind", "n2", "handover kind: n2 (Handover Required … Notify) or xn (Path Switch Request)")
	f.StringVar(&ues, "ues", "1,64,1000", "comma-separated UE counts")
	f.IntVar(&concurrency, "concurrency", 64, "handovers in flight at once")
	f.StringVar(&sbiModes, "sbi", "", "comma-separated SBI modes, one fresh core each (as in bench registration; default from config)")
	f.StringVar(&jsonPath, "json", "", "write the results as JSON to this file, and SVG charts next to it")
	f.StringVar(&amf, "amf", "", "N2 address of a running core (with the lab user plane) to use instead of fresh ones")
	f.StringVar(&transport, "n2", "", "N2 transport: kernel, raw, udp or auto (default from config)")
	f.StringVar(&dnn, "dnn", "internet", "the DNN of the sessions")
	f.StringVar(&n3, "n3", ransim.DefaultN3.String(), "gNB 1's N3 address; gNB 2 has the next one")
	f.DurationVar(&interval, "interval", 10*time.Millisecond, "time between two datagrams of a UE's downlink stream (grows with many UEs, see --max-rate)")
	f.IntVar(&maxRate, "max-rate", 20000, "datagrams per second of all streams together at most")
	f.BoolVar(&noDirect, "no-direct-forwarding", false, "n2: the source announces no direct forwarding path (indirect through the UPF, if the core offers it)")
	return cmd
}

// reportHandover prints the latency table and the packet table, writes
// the JSON and the charts.
func reportHandover(out io.Writer, results []bench.HandoverResult, runErr error, jsonPath string) error {
	err := report(out, results, runErr, jsonPath, func(w io.Writer, rs []bench.HandoverResult) {
		plain := bench.HandoverResults(rs)
		bench.PrintTable(w, plain)
		bench.PrintComparison(w, plain)
		bench.PrintHandoverPackets(w, rs)
	})
	return withCharts(out, err, jsonPath, len(results), func() ([]string, error) { return bench.WriteCharts(jsonPath, bench.HandoverResults(results)) })
}
