package e2e

// Handover with traffic flowing (issue 12): a UE with a PDU session and a
// steady downlink stream from the data network moves from gNB 1 to gNB 2
// by Xn handover (TS 23.502 4.9.1.2) and by N2 handover (4.9.1.3); the
// stream goes on through the target, the UPF sends the End Marker on the
// old path, and tshark reads every NGAP and GTP-U message of it. A target
// that never answers makes the AMF give up (TNGRELOCprep) and the UE stays
// with the source. These tests use the lab's user plane: run them under
// `flock /work/userplane.lock` where the machine is shared.

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/tsharkcap"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/protocol/gtpu"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// streamInterval paces the UE's downlink stream: 200 packets a second.
const streamInterval = 5 * time.Millisecond

// maxLostInHandover bounds what a handover may lose of that stream.
// Nothing should be lost: the source passes on what it still gets (Xn
// over the simulator, N2 over N3 to the target's forwarding tunnel) until
// the End Marker, the target holds the new path's packets until then, and
// UPF-U learnt the target's link address before the switch (the gNBs'
// ARP-triggering Echo below), so it drops none while resolving it; these
// tests see 0. The slack of 4 packets (20 ms of stream) is for a loaded
// machine dropping a datagram in a full socket buffer; a path that drops
// until the UE re-appears or a packet lost per switch by design shows as
// more, or as a steady 1+ in the log.
const maxLostInHandover = 4

// handoverLab is a core with the lab user plane, two gNBs with N3 sockets
// at 10.100.0.2 and .3, and one UE with PDU session 1 on gNB 1.
type handoverLab struct {
	cfg      *config.Config
	src, dst *ransim.GNB
	ue       *ransim.UE
	n2, n3   *tsharkcap.Capture
	ngapPort string
}

func startHandoverLab(t *testing.T, edit func(*config.Config)) *handoverLab {
	t.Helper()
	cfg, path := coreConfig(t, t.TempDir(), func(c *config.Config) {
		withUserPlane(c)
		c.AMF.NAS.Ciphering = []string{"NEA0"} // NAS readable to tshark
		if edit != nil {
			edit(c)
		}
	})
	startCore(t, cfg, path)
	l := &handoverLab{cfg: cfg}
	_, l.ngapPort, _ = strings.Cut(cfg.AMF.NGAP.Addr, ":")
	port, _ := strconv.Atoi(l.ngapPort)
	l.n2 = startCapture(t, port).Capture
	l.n3 = startN3Capture(t, cfg)
	if err := ransim.AddN3Address(node.LabN3Peer, ransim.NthN3(ransim.DefaultN3, 1), 24); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	gnbs, err := ransim.ConnectGNBs(ctx, bench.GNBConfig(cfg, cfg.AMF.NGAP.Addr, cfg.AMF.NGAP.Transport), 2)
	if err != nil {
		t.Fatal(err)
	}
	// No GTP-U Echo to introduce the target to UPF-U: UPF-U holds what
	// it sends a gNB while it resolves its address (upf/u/neighbour.c).
	for _, g := range gnbs {
		t.Cleanup(func() { g.Close() })
		if err := g.UserPlane().Listen(gtpu.Port); err != nil {
			t.Fatal(err)
		}
	}
	l.src, l.dst = gnbs[0], gnbs[1]
	l.ue = newUE(t, cfg, l.src, 0, "null")
	pctx := procCtx(t)
	if _, err := l.ue.Register(pctx); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ue.RequestPDUSession(pctx, 1, "internet"); err != nil {
		t.Fatal(err)
	}
	return l
}

// stream starts the UE's downlink stream from the data network and waits
// until it flows through the source gNB.
func (l *handoverLab) stream(t *testing.T) *bench.DownlinkStream {
	t.Helper()
	s := l.ue.Session(1)
	st, err := bench.StartDownlinkStream(node.LabNetns, []netip.Addr{s.Address}, streamInterval)
	if err != nil {
		t.Fatal(err)
	}
	s.Tunnel.SetSink(st.Sink(0))
	if err := st.AwaitFlowing(procCtx(t)); err != nil {
		st.Stop(0)
		t.Fatal(err)
	}
	return st
}

// afterMove lets the stream run on the new path, stops it and checks what
// the move cost: the stream reached the UE through the target, lost at most
// maxLostInHandover, reordered nothing.
func (l *handoverLab) afterMove(t *testing.T, st *bench.DownlinkStream) {
	t.Helper()
	before := l.dst.UserPlane().DownlinkPackets.Load()
	reached := awaitMore(&l.dst.UserPlane().DownlinkPackets, before)
	time.Sleep(50 * streamInterval) // a quarter second of stream on the new path
	c := st.Stop(3 * time.Second)
	t.Logf("downlink stream: %d sent, %d received, %d lost, %d reordered", c.Sent, c.Received, c.Lost, c.Reordered)
	if !reached {
		t.Errorf("no downlink packet reached the UE through the target gNB within %v of the move", eventBound)
	}
	if c.Lost > maxLostInHandover {
		t.Errorf("the handover lost %d packets of the stream, more than %d", c.Lost, maxLostInHandover)
	}
	if c.Reordered != 0 {
		t.Errorf("%d packets reached the UE out of order (forwarded packets go before the new path's)", c.Reordered)
	}
	if l.src.UserPlane().EndMarkers.Load() == 0 {
		t.Error("the source gNB got no End Marker on the old path (TS 29.281 7.3.2)")
	}
	if t.Failed() {
		for _, g := range []*ransim.GNB{l.src, l.dst} {
			up := g.UserPlane()
			t.Logf("gNB %d N3: %d down, %d dropped, %d forwarded, %d end markers, %d error indications",
				g.ID(), up.DownlinkPackets.Load(), up.Dropped.Load(), up.Forwarded.Load(), up.EndMarkers.Load(), up.ErrorIndications.Load())
		}
	}
}

// wireClean stops the captures and checks that tshark reads the NGAP
// procedures want and the GTP-U End Marker without a malformed packet.
func (l *handoverLab) wireClean(t *testing.T, want ...int64) {
	t.Helper()
	l.n2.Stop()
	l.n3.Stop()
	l.n2.RequireClean(t)
	l.n3.RequireClean(t)
	seen := map[string]bool{}
	out := l.n2.Tshark(t, "-Y", "ngap", "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,", "-e", "ngap.procedureCode")
	for _, line := range strings.Fields(out) {
		for _, code := range strings.Split(line, ",") {
			seen[code] = true
		}
	}
	for _, p := range want {
		if !seen[strconv.FormatInt(p, 10)] {
			t.Errorf("no NGAP procedure %d on the wire", p)
		}
	}
	if em := strings.TrimSpace(l.n3.Tshark(t, "-Y", "gtp.message == 0xfe")); em == "" {
		t.Error("tshark sees no GTP-U End Marker (message type 254) on N3")
	}
}

func TestXnHandoverKeepsTheDownlinkStream(t *testing.T) {
	l := startHandoverLab(t, nil)
	st := l.stream(t)
	lat, err := l.ue.HandoverXn(procCtx(t), l.dst)
	if err != nil {
		st.Stop(0)
		t.Fatal(err)
	}
	t.Logf("Path Switch Request → Acknowledge: %v", lat)
	if l.ue.GNB() != l.dst {
		t.Fatal("after the path switch the UE is not served by the target")
	}
	l.afterMove(t, st)
	l.wireClean(t, ngapType.ProcedureCodePathSwitchRequest, ngapType.ProcedureCodeUEContextRelease)
}

func TestN2HandoverKeepsTheDownlinkStream(t *testing.T) {
	l := startHandoverLab(t, nil)
	st := l.stream(t)
	lat, err := l.ue.HandoverN2(procCtx(t), l.dst, ransim.N2Options{})
	if err != nil {
		st.Stop(0)
		t.Fatal(err)
	}
	t.Logf("Handover Required → source released after Notify: %v", lat)
	if l.ue.GNB() != l.dst {
		t.Fatal("after the handover the UE is not served by the target")
	}
	l.afterMove(t, st)
	l.wireClean(t, ngapType.ProcedureCodeHandoverPreparation, ngapType.ProcedureCodeHandoverResourceAllocation,
		ngapType.ProcedureCodeHandoverNotification, ngapType.ProcedureCodeUplinkRANStatusTransfer,
		ngapType.ProcedureCodeDownlinkRANStatusTransfer)
}

// TS 23.502 4.9.1.3.3 with indirect forwarding (4.9.1.3.2): the source
// says it has no direct path to the target, so what it still gets — and
// the End Marker after it — goes through the UPF's forwarding tunnel to
// the target's.
func TestN2HandoverWithIndirectForwardingKeepsTheDownlinkStream(t *testing.T) {
	l := startHandoverLab(t, nil)
	st := l.stream(t)
	lat, err := l.ue.HandoverN2(procCtx(t), l.dst, ransim.N2Options{NoDirectForwarding: true})
	if err != nil {
		st.Stop(0)
		t.Fatal(err)
	}
	t.Logf("Handover Required → source released after Notify: %v", lat)
	l.afterMove(t, st)
	if l.dst.UserPlane().EndMarkers.Load() == 0 {
		t.Error("the target got no End Marker through the UPF's forwarding tunnel")
	}
	l.wireClean(t, ngapType.ProcedureCodeHandoverPreparation, ngapType.ProcedureCodeHandoverNotification)
}

// TS 23.502 4.9.1.3.4, TS 38.413 8.4.1.3: the target never answers, the
// AMF's TNGRELOCprep (short here) ends the preparation with Handover
// Preparation Failure, and the UE's stream goes on through the source.
func TestHandoverToASilentTargetLeavesTheUEWithTheSource(t *testing.T) {
	const prep = 500 * time.Millisecond
	l := startHandoverLab(t, func(c *config.Config) { c.AMF.NGAP.TNGRELOCprep = prep })
	l.dst.SetTargetBehaviour(ransim.TargetSilent)
	st := l.stream(t)
	start := time.Now()
	_, err := l.ue.HandoverN2(procCtx(t), l.dst, ransim.N2Options{})
	if !errors.Is(err, ransim.ErrHandoverPreparationFailure) {
		st.Stop(0)
		t.Fatalf("handover to a silent target ended with %v, want Handover Preparation Failure", err)
	}
	if waited := time.Since(start); waited < prep {
		t.Errorf("Handover Preparation Failure after %v, before TNGRELOCprep (%v) ran out", waited, prep)
	}
	if l.ue.GNB() != l.src {
		t.Fatal("the UE left the source")
	}
	before := l.src.UserPlane().DownlinkPackets.Load()
	reached := awaitMore(&l.src.UserPlane().DownlinkPackets, before)
	time.Sleep(50 * streamInterval)
	c := st.Stop(3 * time.Second)
	if !reached {
		t.Errorf("the stream stopped reaching the UE through the source (none within %v)", eventBound)
	}
	if c.Lost > 0 {
		t.Errorf("a handover that never happened lost %d packets", c.Lost)
	}
	// The UE's NAS still goes through the source: it can deregister.
	if _, err := l.ue.Deregister(procCtx(t), false); err != nil {
		t.Fatalf("deregistration through the source after the failed handover: %v", err)
	}
	l.n2.Stop()
	l.n3.Stop()
	l.n2.RequireClean(t)
}

// `l25gc ransim --gnbs 2 --move xn` (and n2): the UE's TUN, opened on gNB
// 1, keeps carrying its traffic through gNB 2 after the handover — ping
// from its namespace to the data network is answered.
func TestTUNKeepsWorkingAfterHandover(t *testing.T) {
	for _, kind := range []string{"xn", "n2"} {
		t.Run(kind, func(t *testing.T) {
			cfg, path := coreConfig(t, t.TempDir(), withUserPlane)
			startCore(t, cfg, path)
			h := holdUE(t, path, "--gnbs", "2", "--move", kind)
			moved := "handover_" + kind + ": 1/1 done, 0 failed"
			for deadline := time.Now().Add(30 * time.Second); !strings.Contains(h.out.String(), moved); time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) || strings.Contains(h.out.String(), "1/1 done, 1 failed") {
					t.Fatalf("ransim did not report %q:\n%s", moved, h.out.String())
				}
			}
			b, _ := inNetns("l25gc-ue1", "ping", "-c", "5", "-i", "0.2", "-W", "2", dnAddr).CombinedOutput()
			if n := received(string(b)); n < 4 {
				t.Fatalf("ping %s from the UE after the handover: %d of 5 answered\n%s", dnAddr, n, b)
			}
			h.release(t)
		})
	}
}

// awaitMore waits, for at most eventBound, until a packet counter passes
// before: on a loaded machine the stream's next packets may take longer
// than a fixed quarter second to come through.
func awaitMore(counter *atomic.Int64, before int64) bool {
	for deadline := time.Now().Add(eventBound); counter.Load() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}
