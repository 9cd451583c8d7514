package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// Overload control beyond the paper (TS 38.413 8.7.6, 8.7.7; TS 24.501
// 5.3.9): a burst of registrations far past the AMF's capacity (two in
// progress, eight waiting, Overload Start at four) makes the AMF send
// Overload Start on N2 and turn the excess away with #22 and T3346; once
// the burst drains it sends Overload Stop, every UE registers after its
// back-off, and none waits on an attempt until its own T3510 would expire.
func TestRegistrationBurstPastOverloadHighBacksOffAndAllRegister(t *testing.T) {
	const n = 200
	cfg, path := coreConfig(t, t.TempDir(), withSBI("tcp", func(c *config.Config) {
		l := &c.AMF.Limiter
		l.Mode, l.Queue, l.OverloadHigh, l.OverloadLow = "fixed:2", 8, 4, 1
		l.Interval = 20 * time.Millisecond // the overload check runs each interval
		c.Subscribers[0].Count = n
	}))
	startCore(t, cfg, path)
	g := connectGNB(t, cfg)
	f, err := bench.FleetFor(cfg, cfg.Subscribers[0].IMSI, "null")
	if err != nil {
		t.Fatal(err)
	}
	// The AMF's T3346 is 20-60 s; capped at 2 s here so the test is short.
	f.UEs, f.Concurrency, f.BackOff = n, n, &ransim.BackOff{Max: 2 * time.Second, Attempts: 30}
	out, err := ransim.RegisterFleet(context.Background(), g, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Latencies) != n || out.Failed != 0 {
		t.Fatalf("%d of %d registered, %d failed: %v", len(out.Latencies), n, out.Failed, out.Errors)
	}
	if out.BackOffs == 0 || out.WithT3346 != out.BackOffs {
		t.Fatalf("%d #22 rejects, %d with T3346: want some, all with T3346", out.BackOffs, out.WithT3346)
	}
	if out.T3510Expiries != 0 {
		t.Fatalf("%d attempts waited for T3510 (15 s)", out.T3510Expiries)
	}
	if g.OverloadSeen.Starts.Load() == 0 {
		t.Fatal("no Overload Start on N2")
	}
	// Overload Stop follows at the next monitor tick after the queue drained.
	eventually(func() bool { return g.OverloadSeen.Stops.Load() > 0 && !g.Overloaded() })
	if g.Overloaded() {
		t.Fatalf("the AMF's overload never ended: %d Start, %d Stop", g.OverloadSeen.Starts.Load(), g.OverloadSeen.Stops.Load())
	}
	if r := amfMetric(t, cfg, "l25gc_amf_limiter_overloaded"); r != 0 {
		t.Fatalf("l25gc_amf_limiter_overloaded %v after the burst, want 0", r)
	}
	t.Logf("%d UEs: %d #22 back-offs, %d Overload Start, %d Stop, %d held at the gNB, p50 %v, max %v", n, out.BackOffs,
		g.OverloadSeen.Starts.Load(), g.OverloadSeen.Stops.Load(), g.OverloadSeen.Held.Load(),
		out.Latencies[n/2], out.Latencies[n-1])
}
