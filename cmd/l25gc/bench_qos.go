package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/test/bench"
)

func init() { benchCmds = append(benchCmds, newBenchQoSCmd) }

// qosBenchFlags are the flags of bench qos.
type qosBenchFlags struct {
	name, ambr, gbr, mbr, offered, jsonPath string
	weights                                 string
	flows, seconds                          int
}

// qosCase is the case the flags ask for.
func (f qosBenchFlags) qosCase() (bench.QoSCase, error) {
	c, err := f.namedCase()
	if err != nil {
		return c, err
	}
	c.Weights, err = parseQoSWeights(f.weights)
	return c, err
}

// parseQoSWeights reads --weights "5QI=weight,…" into smf.qos.weights;
// the core's config check judges the 5QIs and weights (file:line: field).
func parseQoSWeights(s string) (map[string]int, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]int{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		w, err := strconv.Atoi(v)
		if !ok || err != nil {
			return nil, fmt.Errorf("--weights %q: want 5QI=weight pairs such as 1=3,9=1", s)
		}
		out[k] = w
	}
	return out, nil
}

func (f qosBenchFlags) namedCase() (bench.QoSCase, error) {
	if f.flows > 0 {
		return bench.QoSCaseFlows(f.flows)
	}
	if f.name != "custom" {
		return bench.QoSCaseNamed(f.name)
	}
	var r [4]uint64
	for i, v := range []struct{ flag, val string }{{"--ambr", f.ambr}, {"--gbr", f.gbr}, {"--mbr", f.mbr}, {"--offered", f.offered}} {
		bps, err := domain.ParseBitRate(v.val)
		if err != nil || bps == 0 {
			return bench.QoSCase{}, fmt.Errorf("%s %q: want a bit rate such as '10 Mbps' for --case custom", v.flag, v.val)
		}
		r[i] = uint64(bps)
	}
	return bench.QoSCase{Name: "custom", AMBR: r[0], Flows: []bench.QoSFlowSpec{
		{Name: "qos", QoS: true, GBR: r[1], MBR: r[2], Offered: r[3]}, {Name: "non-qos", Offered: r[3]}}}, nil
}

func newBenchQoSCmd() *cobra.Command {
	var f qosBenchFlags
	cmd := &cobra.Command{
		Use:   "qos",
		Short: "fair QoS through UPF-U: per-flow throughput of the paper's cases against the fair share",
		Long: "Needs root and a user plane (run it under `flock /work/userplane.lock` where cores\n" +
			"share the lab's veths). Starts a fresh core with UPF-U; one UE holds a PDU session\n" +
			"(its TUN in netns l25gc-ue1); `l25gc policy set` gives it the case's Session-AMBR\n" +
			"and a GBR QoS flow per QoS flow of the case (packet filter: UDP from DN port\n" +
			"5202, 5203, ...; the non-QoS flow uses 5201 on the default flow). Then every flow\n" +
			"sends paced UDP at its offered rate for --seconds, downlink and then uplink; each\n" +
			"receiver counts IP bytes per second. Prints per-flow averages against\n" +
			"expected_mbps from qos.FairShare (the algorithm UPF-U shapes with); --json writes\n" +
			"one object per flow and direction, and an SVG chart of throughput over time next\n" +
			"to it. Case 1: AMBR 10, QoS GBR 2 MBR 5; case 2: GBR 4 MBR 7; both flows offer 10\n" +
			"Mbit/s. --flows N: the default flow and N-1 QoS flows with mixed GBR/MBR.\n" +
			"--weights runs the core with those smf.qos.weights (5QI=weight): the QoS flows\n" +
			"are 5QI 1, the non-QoS flow 5QI 9; expected_mbps shares the excess by them.",
		Example: "  sudo flock /work/userplane.lock l25gc bench qos --case 1 --json qos1.json\n" +
			"  sudo flock /work/userplane.lock l25gc bench qos --case custom --ambr '20 Mbps' --gbr '5 Mbps' --mbr '12 Mbps' --offered '20 Mbps'\n" +
			"  sudo flock /work/userplane.lock l25gc bench qos --case custom --ambr '10 Mbps' --gbr '1 Mbps' --mbr '10 Mbps' --offered '10 Mbps' --weights 1=3,9=1",
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.qosCase()
			if err != nil {
				return err
			}
			if f.seconds < 1 {
				return fmt.Errorf("--seconds %d: want at least 1", f.seconds)
			}
			cfg, _, ctx, stop, err := benchRun(cmd, "")
			if err != nil {
				return err
			}
			defer stop()
			out := cmd.OutOrStdout()
			results, runErr := bench.QoS(ctx, bench.QoSOptions{Config: cfg, Case: c, Seconds: f.seconds, Out: out})
			if err := report(out, results, runErr, f.jsonPath, printQoSResults); err != nil || f.jsonPath == "" {
				return err
			}
			svg := strings.TrimSuffix(f.jsonPath, ".json") + "-qos.svg"
			if err := bench.QoSChart(svg, results); err != nil {
				return err
			}
			fmt.Fprintf(out, "chart written to %s\n", svg)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.name, "case", "1", "1, 2 or custom (with --ambr, --gbr, --mbr, --offered)")
	fl.IntVar(&f.flows, "flows", 0, "run N flows (2..8: the default flow and N-1 QoS flows) with mixed GBR/MBR instead of --case")
	fl.IntVar(&f.seconds, "seconds", 10, "how long each direction runs")
	fl.StringVar(&f.ambr, "ambr", "", "--case custom: the Session-AMBR, e.g. '10 Mbps'")
	fl.StringVar(&f.gbr, "gbr", "", "--case custom: the QoS flow's GBR")
	fl.StringVar(&f.mbr, "mbr", "", "--case custom: the QoS flow's MBR")
	fl.StringVar(&f.offered, "offered", "", "--case custom: what each of the two flows offers")
	fl.StringVar(&f.weights, "weights", "", "smf.qos.weights for the core, as 5QI=weight pairs (e.g. 1=3,9=1: the QoS flows weigh 3, the non-QoS flow 1)")
	fl.StringVar(&f.jsonPath, "json", "", "write the results as JSON to this file, and an SVG chart next to it")
	return cmd
}

func printQoSResults(out io.Writer, rs []bench.QoSResult) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "CASE\tFLOW\tDIRECTION\tGBR\tMBR\tWEIGHT\tAMBR\tOFFERED\tMbit/s\tEXPECTED\tERROR %\tPER SECOND\t")
	for _, r := range rs {
		errPct := 0.0
		if r.ExpectedMbps > 0 {
			errPct = 100 * (r.Mbps - r.ExpectedMbps) / r.ExpectedMbps
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%g\t%d\t%g\t%g\t%.3f\t%.3f\t%+.1f\t%s\t\n", r.Case, r.Flow, r.Direction, r.GBRMbps, r.MBRMbps,
			max(r.Weight, 1), r.AMBRMbps, r.OfferedMbps, r.Mbps, r.ExpectedMbps, errPct, perSecondText(r.PerSecondMbps))
	}
	tw.Flush()
}

func perSecondText(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, " ")
}
