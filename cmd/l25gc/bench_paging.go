package main

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

func init() { benchCmds = append(benchCmds, newBenchPagingCmd, newBenchServiceRequestCmd) }

// idleBench is what bench paging and bench service-request share: flags,
// and the run against fresh cores or a running one.
type idleBench struct {
	ues, sbiModes, jsonPath, amf, transport, dnn, n3 string
	concurrency, warmup                              int
	prof                                             profileFlags
	trace                                            traceFlags
}

func (b *idleBench) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	b.trace.add(f)
	f.StringVar(&b.ues, "ues", "1,64,1000", "comma-separated UE counts")
	f.IntVar(&b.concurrency, "concurrency", 64, "procedures in flight at once")
	f.IntVar(&b.warmup, "warmup", 16, "UEs run through the whole benchmark first on each core, not measured (0: none)")
	f.StringVar(&b.sbiModes, "sbi", "", "comma-separated SBI modes, one fresh core each (as in bench registration; default from config)")
	f.StringVar(&b.jsonPath, "json", "", "write the results as JSON to this file, and SVG charts next to it")
	f.StringVar(&b.amf, "amf", "", "N2 address of a running core (with UPF-U and the lab network of this config) to use instead of fresh ones")
	f.StringVar(&b.transport, "n2", "", "N2 transport: kernel, raw, udp or auto (default from config)")
	f.StringVar(&b.dnn, "dnn", "internet", "the DNN of the sessions")
	b.prof.add(f)
	f.StringVar(&b.n3, "n3", ransim.DefaultN3.String(), "the simulated gNB's N3 address, where UPF-U sends downlink (the lab's l25gc-n3-gnb)")
}

// run parses the flags and runs measure with the options they give.
func (b *idleBench) run(cmd *cobra.Command, measure func(context.Context, bench.RegistrationOptions) ([]bench.Result, error)) error {
	counts, err := parseCounts(b.ues)
	if err != nil {
		return err
	}
	gnbN3, err := netip.ParseAddr(b.n3)
	if err != nil || !gnbN3.Is4() {
		return fmt.Errorf("--n3 %q: want an IPv4 address", b.n3)
	}
	cfg, modes, ctx, stop, err := benchRun(cmd, b.sbiModes)
	if err != nil {
		return err
	}
	defer stop()
	out := cmd.OutOrStdout()
	tr, err := b.trace.startFor(b.amf, cfg)
	if err != nil {
		return err
	}
	defer tr.Close()
	o := bench.RegistrationOptions{Config: cfg, SBIModes: modes, UECounts: counts,
		Concurrency: b.concurrency, Warmup: b.warmup, AMF: b.amf, Transport: b.transport, Out: out, DNN: b.dnn, N3: gnbN3, Tracing: tr}
	if err := b.prof.apply(&o, out); err != nil {
		return err
	}
	results, err := measure(ctx, o)
	return reportTraced(out, results, err, b.jsonPath)
}

func newBenchPagingCmd() *cobra.Command {
	var b idleBench
	cmd := &cobra.Command{
		Use:   "paging",
		Short: "paging latency from a real downlink packet, and the packet's own latency, for lists of UE counts",
		Long: "Needs root and a user plane (UPF-U and the lab network; run it under\n" +
			"`flock /work/userplane.lock` where cores share the lab's veths). Starts a fresh core\n" +
			"per SBI mode; for each UE count the UEs register, establish one IPv4 PDU session\n" +
			"and go CM-IDLE (AN release), none of it measured. Then one UDP datagram per UE\n" +
			"leaves the data-network namespace l25gc-dn for the UE's address, --concurrency\n" +
			"at a time: UPF-U buffers it, UPF-C reports it, the SMF asks the AMF, the AMF\n" +
			"pages, the UE answers with a Service Request and UPF-U forwards the datagram.\n" +
			"Procedure paging: datagram sent -> the gNB receives the Paging for that UE;\n" +
			"paging_first_packet: datagram sent -> the UE receives it through its tunnel.\n" +
			"The UEs deregister afterwards. JSON and SVG charts as bench pdu.",
		Example: "  sudo flock /work/userplane.lock l25gc bench paging --ues 1,64,1000 --concurrency 64 --sbi xio,tcp --json paging.json",
		RunE:    func(cmd *cobra.Command, _ []string) error { return b.run(cmd, bench.Paging) },
	}
	b.flags(cmd)
	return cmd
}

func newBenchServiceRequestCmd() *cobra.Command {
	var b idleBench
	cmd := &cobra.Command{
		Use:   "service-request",
		Short: "UE-triggered Service Request latency from CM-IDLE for lists of UE counts",
		Long: "Needs root and a user plane, as bench paging. For each UE count the UEs register,\n" +
			"establish one IPv4 PDU session and go CM-IDLE (not measured); then each sends a\n" +
			"Service Request (service type data, uplink data status of its session),\n" +
			"--concurrency at a time. Procedure service_request: Service Request -> Service\n" +
			"Accept, by which the gNB has set the session's tunnel up again; a UE whose user\n" +
			"plane then does not carry a datagram from the data network counts as failed.",
		Example: "  sudo flock /work/userplane.lock l25gc bench service-request --ues 1,64,1000 --sbi xio,tcp --json sr.json",
		RunE:    func(cmd *cobra.Command, _ []string) error { return b.run(cmd, bench.ServiceRequest) },
	}
	b.flags(cmd)
	return cmd
}
