package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/test/bench"
)

// An operator (or bench pdu --rounds) switches amf.limiter.mode on a
// running core while UEs establish PDU sessions: every session comes up,
// nothing stays counted or queued, /metrics follows the last switch, and
// a bad mode is refused with the AMF's reason and changes nothing.
func TestLimiterModeSwitchedWhileSessionsRun(t *testing.T) {
	cfg, ues := fixedOneCoreWithUEs(t, 30)
	sw, err := bench.NewLimiterSwitch(cfg)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs, done := sessionsAtOnce(ctx, ues)
	modes := []string{"fixed:2", "adaptive", "off", "fixed:1", "adaptive", "fixed:8"}
	for i := 0; ; i++ {
		if err := sw.Set(ctx, modes[i%len(modes)]); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(5 * time.Millisecond):
			continue
		}
		break
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("UE %d: PDU session establishment: %v", i, err)
		}
	}
	if err := sw.Set(ctx, "fixed:3"); err != nil {
		t.Fatal(err)
	}
	if err := sw.Set(ctx, "fixed:0"); err == nil || !strings.Contains(err.Error(), "fixed:N needs a whole N") {
		t.Fatalf("fixed:0: %v, want the AMF's refusal", err)
	}
	if e := amfMetric(t, cfg, "l25gc_amf_limiter_emax"); e != 3 {
		t.Errorf("E_max %v on /metrics, want 3 (the refused switch kept fixed:3)", e)
	}
	waitAMFMetric(t, cfg, "l25gc_amf_limiter_ecurrent", 0)
	waitAMFMetric(t, cfg, "l25gc_amf_limiter_queue_length", 0)
}
