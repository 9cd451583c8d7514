package e2e

// Paging's breakdown end to end (issue 15): the spans of a network-
// triggered Service Request, from the downlink packet to the UE, reach the
// benchmark from every process of a running core and are joined per UE.
// It runs UPF-U: run it under `flock /work/userplane.lock` where cores
// share the lab's veths.

import (
	"net"
	"testing"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/test/bench"
)

// `bench paging --amf --breakdown` against a core that exports its spans
// to the benchmark's collector (tracing.otlp): each procedure's breakdown
// has every hop of the chain (UPF-C's report, the SMF, the Paging on N2;
// for the first packet also the Service Request and UPF-C's modification),
// and its parts add up to the end-to-end time, most of it accounted for.
func TestPagingBreakdownFollowsThePacketThroughTheCore(t *testing.T) {
	const ues = 4
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	collector := ln.Addr().String()
	ln.Close() // the benchmark's collector listens here
	cfg, path := coreConfig(t, t.TempDir(), func(c *config.Config) {
		withUserPlane(c)
		c.Subscribers[0].Count = ues
		c.Tracing.OTLP = []string{collector}
	})
	startCore(t, cfg, path)
	results, printed := benchPaging(t, path, cfg.AMF.NGAP.Addr, "--ues", "4", "--concurrency", "1", "--warmup", "0", "--breakdown")
	report := "UPF-C: " + tracing.UPFCReport
	smf := "SMF paging: Session Report → N1N2MessageTransfer answered"
	want := map[string][]string{
		bench.ProcedurePaging:            {tracing.RowDownlinkToUPFC, report, smf, tracing.RowN2Downlink},
		bench.ProcedurePagingFirstPacket: {tracing.RowDownlinkToUPFC, report, smf, tracing.RowN2Downlink, tracing.RowN2Uplink, "UPF-C: " + tracing.UPFCModification},
	}
	for _, r := range results {
		rows, ok := want[r.Procedure]
		if !ok {
			continue
		}
		delete(want, r.Procedure)
		checkPagingBreakdown(t, r, ues, rows)
	}
	for p := range want {
		t.Errorf("no result for %s", p)
	}
	if t.Failed() {
		t.Logf("bench paging printed:\n%s", printed)
	}
}

func checkPagingBreakdown(t *testing.T, r bench.Result, ues int, rows []string) {
	t.Helper()
	bd := r.Breakdown
	if bd == nil || bd.Count != ues {
		t.Errorf("%s: breakdown %+v, want one of %d procedures", r.Procedure, bd, ues)
		return
	}
	got := map[string]tracing.Hop{}
	var sum float64
	for _, h := range bd.Hops {
		got[h.Name] = h
		if h.Kind == "part" {
			sum += h.Mean
		}
	}
	for _, row := range rows {
		if got[row].Mean <= 0 {
			t.Errorf("%s: no time in %q", r.Procedure, row)
		}
	}
	if d := sum - bd.EndToEnd.Mean; d > 0.001 || d < -0.001 {
		t.Errorf("%s: parts sum to %.3f ms, end to end %.3f", r.Procedure, sum, bd.EndToEnd.Mean)
	}
	// The join failing would leave the chain's time to nobody.
	if na := got[tracing.NotAccounted].Mean; na > bd.EndToEnd.Mean/2 {
		t.Errorf("%s: %.3f of %.3f ms not accounted for", r.Procedure, na, bd.EndToEnd.Mean)
	}
}
