package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// registeredUEs registers n UEs of the default range one by one.
func registeredUEs(t *testing.T, cfg *config.Config, g *ransim.GNB, n int) []*ransim.UE {
	t.Helper()
	var ues []*ransim.UE
	for i := range n {
		ue := newUE(t, cfg, g, i, "null")
		if _, err := ue.Register(procCtx(t)); err != nil {
			t.Fatalf("UE %d: registration: %v", i, err)
		}
		if err := ue.AwaitConfigurationUpdate(procCtx(t)); err != nil {
			t.Fatalf("UE %d: %v", i, err)
		}
		ues = append(ues, ue)
	}
	return ues
}

// fixedOneCoreWithUEs starts a core (SBI over TCP) whose AMF limits
// itself to one procedure at a time (amf.limiter.mode fixed:1), and
// registers n UEs on one gNB.
func fixedOneCoreWithUEs(t *testing.T, n int) (*config.Config, []*ransim.UE) {
	t.Helper()
	cfg, path := coreConfig(t, t.TempDir(), withSBI("tcp", func(c *config.Config) {
		c.AMF.Limiter.Mode = "fixed:1"
		c.Subscribers[0].Count = n
	}))
	startCore(t, cfg, path)
	return cfg, registeredUEs(t, cfg, connectGNB(t, cfg), n)
}

// sessionsAtOnce has every UE request a PDU session (PSI 1, DNN internet)
// at the same moment; done closes when all have answered, and then errs
// holds each UE's outcome.
func sessionsAtOnce(ctx context.Context, ues []*ransim.UE) (errs []error, done <-chan struct{}) {
	errs = make([]error, len(ues))
	var wg sync.WaitGroup
	for i, ue := range ues {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = ue.RequestPDUSession(ctx, 1, "internet")
		}()
	}
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	return errs, all
}

// The paper's experiment at the tightest limit, on the real core: with
// amf.limiter.mode fixed:1, 50 UEs request a PDU session at once and all
// 50 sessions come up (the follow-ups of the one running establishment
// never wait behind the gate), then /metrics shows E_max 1 and nothing
// left in progress or waiting.
func TestFixedOneLimiterCompletesFiftyConcurrentSessions(t *testing.T) {
	cfg, ues := fixedOneCoreWithUEs(t, 50)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs, done := sessionsAtOnce(ctx, ues)
	<-done
	for i, err := range errs {
		if err != nil {
			t.Errorf("UE %d: PDU session establishment: %v", i, err)
		}
	}
	if e := amfMetric(t, cfg, "l25gc_amf_limiter_emax"); e != 1 {
		t.Errorf("E_max %v on /metrics, want 1", e)
	}
	waitAMFMetric(t, cfg, "l25gc_amf_limiter_ecurrent", 0)
	waitAMFMetric(t, cfg, "l25gc_amf_limiter_queue_length", 0)
	if q := amfMetric(t, cfg, "l25gc_amf_limiter_queued_total"); q < 1 {
		t.Errorf("no establishment waited at the gate (queued_total %v)", q)
	}
}

// With adaptive mode starting at E_max 1, a sustained registration load
// raises E_max (the threshold is set high, so every interval counts as
// fast), and /metrics shows it together with the scheduler latency the
// monitor measured.
func TestAdaptiveLimiterRaisesEMaxUnderLoad(t *testing.T) {
	const n = 100
	cfg, path := coreConfig(t, t.TempDir(), withSBI("tcp", func(c *config.Config) {
		c.AMF.Limiter.Initial, c.AMF.Limiter.Min, c.AMF.Limiter.Max = 1, 1, 8
		c.AMF.Limiter.Interval = 20 * time.Millisecond
		c.AMF.Limiter.Threshold = time.Second
		c.Subscribers[0].Count = n
	}))
	startCore(t, cfg, path)
	if e := amfMetric(t, cfg, "l25gc_amf_limiter_emax"); e != 1 {
		t.Fatalf("E_max %v before any load, want 1", e)
	}
	g := connectGNB(t, cfg)
	f, err := bench.FleetFor(cfg, cfg.Subscribers[0].IMSI, "null")
	if err != nil {
		t.Fatal(err)
	}
	f.UEs, f.Concurrency = n, n
	out, err := ransim.RegisterFleet(context.Background(), g, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Latencies) != n || out.Failed != 0 {
		t.Fatalf("%d registered, %d failed: %v", len(out.Latencies), out.Failed, out.Errors)
	}
	if e := amfMetric(t, cfg, "l25gc_amf_limiter_emax"); e <= 1 {
		t.Fatalf("E_max %v on /metrics after %d concurrent registrations, want it risen above 1", e, n)
	}
	if s := amfMetric(t, cfg, "l25gc_amf_limiter_started_total"); s < n {
		t.Fatalf("limiter counted %v procedures, want at least %d", s, n)
	}
	waitAMFMetric(t, cfg, "l25gc_amf_limiter_ecurrent", 0)
}

// waitAMFMetric waits until the AMF's metric reads want (what finishes on
// a UE's key may trail the answer the simulator saw).
func waitAMFMetric(t *testing.T, cfg *config.Config, name string, want float64) {
	t.Helper()
	var v float64
	for deadline := time.Now().Add(eventBound); time.Now().Before(deadline); time.Sleep(25 * time.Millisecond) {
		if v = amfMetric(t, cfg, name); v == want {
			return
		}
	}
	t.Fatalf("%s stayed %v for %v, want %v", name, v, eventBound, want)
}
