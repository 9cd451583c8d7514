package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"text/tabwriter"
	"time"

	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/protocol/gtpu"
	"github.com/l25gc/l25gc/test/ransim"
)

// Procedures of `bench handover`, as the JSON names them.
const (
	ProcedureHandoverN2 = "handover_n2"
	ProcedureHandoverXn = "handover_xn"
)

// HandoverOptions configure `l25gc bench handover`. Warmup is not used:
// every UE moves once.
type HandoverOptions struct {
	RegistrationOptions
	Kind string // "n2" or "xn"
	// Interval between two datagrams of a UE's downlink stream; with many
	// UEs it grows so that the stream stays under MaxStreamRate.
	Interval      time.Duration
	MaxStreamRate int // datagrams per second over all UEs; 0: 20000
	// NoDirectForwarding: the source says it has no direct path to the
	// target (N2 only), so forwarding goes through the UPF if at all.
	NoDirectForwarding bool
}

// HandoverResult is a Result with what the UEs' downlink streams lost
// and got out of order while they moved.
type HandoverResult struct {
	Result
	PacketsSent      int64 `json:"packets_sent"`
	PacketsLost      int64 `json:"packets_lost"`
	PacketsReordered int64 `json:"packets_reordered"`
	// PacketsLostInMove are the lost packets a UE's stream sent while
	// that UE moved (from its handover's start to its end, and moveSlack
	// datagrams after): the rest of PacketsLost is the machine's, not the
	// handover's.
	PacketsLostInMove int64 `json:"packets_lost_in_move"`
}

// moveSlack is how many datagrams after a UE's handover ended still count
// as sent during it: those the UPF may have sent before its switch took
// effect.
const moveSlack = 2

// moveWindow is the stretch of a UE's stream sent while it moved.
type moveWindow struct{ from, to int64 }

// Handover measures N2 or Xn handover for each UE count: the UEs register
// and establish one session on gNB 1 (not measured), a downlink stream
// per UE starts from the data network, then every UE moves to gNB 2 with
// o.Concurrency handovers in flight. Latency: Handover Required → the
// source's release after Handover Notify (N2), Path Switch Request →
// Acknowledge (Xn). It needs the lab's user plane (one core with UPF-U at
// a time on a machine).
func Handover(ctx context.Context, o HandoverOptions) ([]HandoverResult, error) {
	if o.Kind != "n2" && o.Kind != "xn" {
		return nil, fmt.Errorf("bench handover: kind %q: want n2 or xn", o.Kind)
	}
	if len(o.Config.Subscribers) == 0 {
		return nil, errors.New("bench: the config has no subscriber range to take keys from")
	}
	if o.FirstIMSI == "" {
		o.FirstIMSI = o.Config.Subscribers[0].IMSI
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.DNN == "" {
		o.DNN = "internet"
	}
	if !o.N3.IsValid() {
		o.N3 = ransim.DefaultN3
	}
	total := 0
	for _, n := range o.UECounts {
		total += n
	}
	if o.AMF != "" {
		if err := provision(ctx, o.RegistrationOptions, total); err != nil {
			return nil, err
		}
		return handoverRuns(ctx, o, o.AMF, o.Config.SBI.Transport)
	}
	var all []HandoverResult
	for _, mode := range o.SBIModes {
		rs, err := handoverOnFreshCore(ctx, o, mode, total)
		all = append(all, rs...)
		if err != nil {
			return all, err
		}
	}
	return all, nil
}

func handoverOnFreshCore(ctx context.Context, o HandoverOptions, mode string, total int) ([]HandoverResult, error) {
	cfg := o.Config.Clone()
	if o.Transport != "" {
		cfg.AMF.NGAP.Transport = o.Transport
	}
	if !cfg.Runs("upf-u") {
		cfg.NFs = append(cfg.NFs, "upf-u") // the streams need the user plane
	}
	core, err := StartFreshCore(ctx, FreshCore{Config: cfg, Binary: o.Binary, SBI: mode,
		FirstIMSI: o.FirstIMSI, Subscribers: total, Out: o.Out})
	if err != nil {
		return nil, err
	}
	defer core.Stop()
	o.Config = core.Config
	return handoverRuns(ctx, o, core.Config.AMF.NGAP.Addr, mode)
}

// handoverRuns connects the two gNBs and runs each UE count.
func handoverRuns(ctx context.Context, o HandoverOptions, amf, mode string) ([]HandoverResult, error) {
	transport := o.Transport
	if transport == "" {
		transport = o.Config.AMF.NGAP.Transport
	}
	gcfg := GNBConfig(o.Config, amf, transport)
	gcfg.N3 = o.N3
	gnbs, err := connectHandoverGNBs(ctx, gcfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, g := range gnbs {
			g.Close()
		}
	}()
	fleet, err := FleetFor(o.Config, o.FirstIMSI, "null")
	if err != nil {
		return nil, err
	}
	fleet.Concurrency = o.Concurrency
	var results []HandoverResult
	offset := 0
	for _, n := range o.UECounts {
		f := fleet
		f.UEs = n
		if f.FirstIMSI, err = ransim.IMSI(o.FirstIMSI, offset); err != nil {
			return results, err
		}
		offset += n
		r, err := handoverRun(ctx, o, gnbs[0], gnbs[1], f, mode)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

// connectHandoverGNBs connects gNB 1 and 2, the second at the next N3
// address, which the lab's N3 link gets first, and opens both N3 sockets.
// UPF-U resolves the target's link address itself when a session moves
// there, holding the packets meanwhile (upf/u/neighbour.c).
func connectHandoverGNBs(ctx context.Context, gcfg ransim.GNBConfig) ([]*ransim.GNB, error) {
	second := ransim.NthN3(gcfg.N3, 1)
	if err := ransim.AddN3Address(node.LabN3Peer, second, 24); err != nil {
		return nil, fmt.Errorf("bench: the second gNB's N3 address: %w", err)
	}
	gnbs, err := ransim.ConnectGNBs(ctx, gcfg, 2)
	if err != nil {
		return nil, fmt.Errorf("bench: gNBs: %w", err)
	}
	for _, g := range gnbs {
		if err = g.UserPlane().Listen(gtpu.Port); err != nil {
			for _, g := range gnbs {
				g.Close()
			}
			return nil, fmt.Errorf("bench: gNB %d's N3: %w", g.ID(), err)
		}
	}
	return gnbs, nil
}

// handoverRun is one UE count: sessions on src, streams, the moves to dst.
func handoverRun(ctx context.Context, o HandoverOptions, src, dst *ransim.GNB, f ransim.Fleet, mode string) (HandoverResult, error) {
	procedure := ProcedureHandoverN2
	if o.Kind == "xn" {
		procedure = ProcedureHandoverXn
	}
	ues, err := src.FleetUEs(f)
	if err != nil {
		return HandoverResult{}, err
	}
	f.Progress = ProgressLine(o.Out, phaseLabel("registration and PDU session (not measured)", mode, f.UEs, false))
	setup := ransim.RunFleet(ctx, ues, f, func(ctx context.Context, ue *ransim.UE) (time.Duration, error) {
		if _, err := ue.Register(ctx); err != nil {
			return 0, err
		}
		_, lat, err := ue.EstablishPDUSession(ctx, ransim.SessionRequest{ID: 1, DNN: o.DNN})
		return lat, err
	})
	if setup.Failed > 0 {
		return HandoverResult{}, fmt.Errorf("bench: %d of %d UEs got no session before the handover: %v", setup.Failed, f.UEs, setup.Errors)
	}
	stream, err := streamTo(ctx, o, ues)
	if err != nil {
		return HandoverResult{}, err
	}
	f.Progress = ProgressLine(o.Out, phaseLabel(procedure, mode, f.UEs, false))
	index := make(map[*ransim.UE]int, len(ues))
	for i, ue := range ues {
		index[ue] = i
	}
	windows := make([]moveWindow, len(ues)) // each written by its UE's run only
	moves := ransim.RunFleet(ctx, ues, f, func(ctx context.Context, ue *ransim.UE) (time.Duration, error) {
		i := index[ue]
		windows[i].from = stream.Next(i)
		defer func() { windows[i].to = stream.Next(i) + moveSlack }()
		if o.Kind == "xn" {
			return ue.HandoverXn(ctx, dst)
		}
		return ue.HandoverN2(ctx, dst, ransim.N2Options{NoDirectForwarding: o.NoDirectForwarding})
	})
	// A little more of the stream on the new path, and long enough that a
	// target still waiting for an End Marker that never comes has
	// delivered what it held, then count.
	time.Sleep(10*stream.interval + ransim.OldPathGrace)
	counts := stream.Stop(3 * time.Second)
	var inMove int64
	for i, w := range windows {
		inMove += stream.LostBetween(i, w.from, w.to)
	}
	return HandoverResult{Result: FromOutcome(procedure, mode, f.UEs, f.Concurrency, moves),
		PacketsSent: counts.Sent, PacketsLost: counts.Lost, PacketsReordered: counts.Reordered, PacketsLostInMove: inMove}, nil
}

// streamTo starts a downlink stream to every UE's session and waits until
// each UE gets it through the source gNB.
func streamTo(ctx context.Context, o HandoverOptions, ues []*ransim.UE) (*DownlinkStream, error) {
	rate := o.MaxStreamRate
	if rate <= 0 {
		rate = 20000
	}
	interval := max(o.Interval, 10*time.Millisecond, time.Duration(len(ues))*time.Second/time.Duration(rate))
	addrs := make([]netip.Addr, len(ues))
	for i, ue := range ues {
		addrs[i] = ue.Session(1).Address
	}
	stream, err := StartDownlinkStream(node.LabNetns, addrs, interval)
	if err != nil {
		return nil, err
	}
	for i, ue := range ues {
		ue.Session(1).Tunnel.SetSink(stream.Sink(i))
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := stream.AwaitFlowing(wctx); err != nil {
		stream.Stop(0)
		return nil, err
	}
	return stream, nil
}

// HandoverResults are the plain results, for the charts.
func HandoverResults(rs []HandoverResult) []Result {
	out := make([]Result, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Result)
	}
	return out
}

// PrintHandoverPackets prints what the streams lost and reordered per run.
func PrintHandoverPackets(w io.Writer, rs []HandoverResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "procedure\tsbi\tues\tdownlink sent\tlost\tlost in move\treordered\tlost in move per UE\t")
	for _, r := range rs {
		perUE := 0.0
		if r.UEs > 0 {
			perUE = float64(r.PacketsLostInMove) / float64(r.UEs)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.2f\t\n", r.Procedure, r.SBI, r.UEs, r.PacketsSent, r.PacketsLost,
			r.PacketsLostInMove, r.PacketsReordered, perUE)
	}
	tw.Flush()
}
