package e2e

// Fair QoS end to end (issue 13): `l25gc policy set` gives a UE's running
// session the paper's Session-AMBR and a GBR QoS flow for UDP port 5202
// (a network-requested PDU session modification, TS 23.502 4.3.3.2);
// UDP flows then cross UPF-U at the offered rates, and each flow's receiver
// must see the rate qos.FairShare gives it (bench.QoSCase.Expected) within
// ±5 % over 10 s, downlink and uplink. A run whose flows together fall
// short of what the shaper passes (the load never reached it) is measured
// once more, never passed as it is.

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"os/exec"
	"testing"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/test/bench"
)

const (
	nonQoSPort = 5201 // the default QoS flow
	qosPort    = 5202 // the GBR flow's packet filter
)

func TestQoSPaperCasesThroughUPFU(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), withUserPlane)
	startCore(t, cfg, path)
	for _, name := range []string{"1", "2"} {
		t.Run("case"+name, func(t *testing.T) {
			c, err := bench.QoSCaseNamed(name)
			if err != nil {
				t.Fatal(err)
			}
			h := holdUE(t, path)
			defer h.release(t)
			applyQoSCase(t, cfg, path, h, c)
			ue := netip.MustParseAddr(h.addr)
			for _, dir := range []string{"downlink", "uplink"} {
				checkRates(t, ue, c, dir, 10)
			}
			if name != "1" {
				return
			}
			// Alone, each flow takes what the fair share leaves it: the
			// non-QoS flow the whole AMBR, the QoS flow its MBR.
			alone := c
			alone.Flows = []bench.QoSFlowSpec{c.Flows[1]}
			alone.Flows[0].Offered = 2 * c.AMBR
			checkRates(t, ue, alone, "downlink", 5)
			alone.Flows = []bench.QoSFlowSpec{c.Flows[0]}
			checkRates(t, ue, alone, "downlink", 5)
		})
	}
}

// smf.qos.weights reach UPF-U's shaper: with the GBR flow's 5QI 1
// weighing 3 and the default flow's 5QI 9 weighing 1, AMBR 10 and GBR 2
// leave 8 shared 6:2, so the flows get 8 and 2 Mbit/s (equal weights
// would give 6 and 4), downlink and uplink; session show prints them.
func TestQoSWeightsFromConfigThroughUPFU(t *testing.T) {
	weights := map[string]int{"1": 3, "9": 1}
	cfg, path := coreConfig(t, t.TempDir(), func(c *config.Config) {
		withUserPlane(c)
		c.SMF.QoS.Weights = weights
	})
	startCore(t, cfg, path)
	c := bench.QoSCase{Name: "weights", AMBR: 10e6, Weights: weights, Flows: []bench.QoSFlowSpec{
		{Name: "qos", QoS: true, GBR: 2e6, MBR: 10e6, Offered: 10e6}, {Name: "non-qos", Offered: 10e6}}}
	h := holdUE(t, path)
	defer h.release(t)
	applyQoSCase(t, cfg, path, h, c)
	s := smfSessions(t, cfg)
	if len(s) != 1 || len(s[0].Flows) != 2 || s[0].Flows[0].Weight != 1 || s[0].Flows[1].Weight != 3 {
		t.Fatalf("the SMF's session %+v, want the default flow weighing 1 and the QoS flow 3", s)
	}
	ue := netip.MustParseAddr(h.addr)
	for _, dir := range []string{"downlink", "uplink"} {
		checkRates(t, ue, c, dir, 10)
	}
}

// applyQoSCase sets the session's AMBR and adds the case's QoS flow with
// the CLI, and waits until the gNB confirmed the flow.
func applyQoSCase(t *testing.T, cfg *config.Config, path string, h *heldUE, c bench.QoSCase) {
	t.Helper()
	s := smfSessions(t, cfg)
	if len(s) != 1 {
		t.Fatalf("the SMF holds %d sessions, want 1", len(s))
	}
	q := c.Flows[0]
	flow := fmt.Sprintf("filter=permit out 17 from %s %d to assigned;5qi=1;gbr=%d bps/%d bps;mbr=%d bps/%d bps", dnAddr, qosPort, q.GBR, q.GBR, q.MBR, q.MBR)
	ambr := fmt.Sprintf("%d bps/%d bps", c.AMBR, c.AMBR)
	out, err := exec.Command(binary, "policy", "set", s[0].SUPI, "--config", path, "--session-ambr", ambr, "--qos-flow", flow).CombinedOutput()
	if err != nil {
		t.Fatalf("l25gc policy set: %v\n%s", err, out)
	}
	awaitFlowAdded(t, cfg, h.qfi)
	out, err = exec.Command(binary, "session", "show", s[0].SUPI, "--config", path).CombinedOutput()
	if err != nil {
		t.Fatalf("l25gc session show: %v\n%s", err, out)
	}
	t.Logf("l25gc session show:\n%s", out)
}

// checkRates runs the case's flows at once for secs seconds in direction
// and compares each receiver's average with the expected share.
func checkRates(t *testing.T, ue netip.Addr, c bench.QoSCase, dir string, secs int) {
	t.Helper()
	want, err := c.Expected()
	if err != nil {
		t.Fatal(err)
	}
	got := runUDPFlows(t, ue, c, dir, secs)
	if totalBitRate(got) < (1-0.05)*totalBitRate(want) {
		// The shaper is work conserving: offered more than it passes, it
		// passes the case's whole total. Less in all means the offered
		// load did not reach it (a generator or a UPF-U short of CPU on a
		// loaded machine), not a split: measure once more. A shaper that
		// loses rate fails the second time too, flow by flow below.
		t.Logf("%s %s: the flows got %.3f Mbit/s in all, want %.3f: the load did not reach the shaper; measuring again",
			c.Name, dir, totalBitRate(got)/1e6, totalBitRate(want)/1e6)
		got = runUDPFlows(t, ue, c, dir, secs)
	}
	for i, f := range c.Flows {
		if math.Abs(got[i]-float64(want[i])) > 0.05*float64(want[i]) {
			t.Errorf("%s %s flow %q: %.3f Mbit/s, want %.3f ±5 %% (AMBR %d, GBR %d, MBR %d, offered %d)",
				c.Name, dir, f.Name, got[i]/1e6, float64(want[i])/1e6, c.AMBR, f.GBR, f.MBR, f.Offered)
		}
	}
}

// runUDPFlows offers the case's flows at once (the QoS flow from or to
// the data network's qosPort, the others' nonQoSPort) and returns each
// receiver's average bit/s.
func runUDPFlows(t *testing.T, ue netip.Addr, c bench.QoSCase, dir string, secs int) []float64 {
	t.Helper()
	flows := make([]bench.UDPFlow, len(c.Flows))
	dn := netip.MustParseAddr(dnAddr)
	for i, f := range c.Flows {
		port := uint16(nonQoSPort)
		if f.QoS {
			port = qosPort
		}
		dnEnd, ueEnd := netip.AddrPortFrom(dn, port), netip.AddrPortFrom(ue, uint16(7000+i))
		flows[i] = bench.UDPFlow{FromNetns: "l25gc-dn", ToNetns: "l25gc-ue1", From: dnEnd, To: ueEnd, Rate: f.Offered}
		if dir == "uplink" {
			flows[i] = bench.UDPFlow{FromNetns: "l25gc-ue1", ToNetns: "l25gc-dn", From: ueEnd, To: dnEnd, Rate: f.Offered}
		}
	}
	perSecond, err := bench.RunUDPFlows(context.Background(), flows, secs)
	if err != nil {
		t.Fatal(err)
	}
	rates := make([]float64, len(c.Flows))
	for i, ps := range perSecond {
		var sum uint64
		for _, b := range ps {
			sum += b
		}
		rates[i] = float64(sum) / float64(len(ps))
		t.Logf("%s %s flow %q: per second %v bit/s", c.Name, dir, c.Flows[i].Name, ps)
	}
	return rates
}

// totalBitRate adds rates of any numeric kind as float64 bit/s.
func totalBitRate[T uint64 | float64](rates []T) float64 {
	var s float64
	for _, r := range rates {
		s += float64(r)
	}
	return s
}
