package config

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/ratelimit"
)

// amf.limiter is refused at load when it cannot work, naming file, line
// and field.
func TestValidateRefusesBadLimiter(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown mode", "amf:\n  limiter:\n    mode: fast\n", "node.yaml:3: amf.limiter.mode: want adaptive, off or fixed:N"},
		{"fixed zero", "amf:\n  limiter:\n    mode: fixed:0\n", "node.yaml:3: amf.limiter.mode: fixed:N needs a whole N ≥ 1"},
		{"statistic", "amf:\n  limiter:\n    statistic: median\n", "node.yaml:3: amf.limiter.statistic: want mean or a percentile"},
		{"interval", "amf:\n  limiter:\n    interval: 1ms\n", "node.yaml:3: amf.limiter.interval: must be a duration from 10ms to 1m"},
		{"weight one", "amf:\n  limiter:\n    ewma_weight: 1\n", "node.yaml:3: amf.limiter.ewma_weight: must be in [0, 1)"},
		{"threshold", "amf:\n  limiter:\n    threshold: 0s\n", "node.yaml:3: amf.limiter.threshold: must be a positive duration"},
		{"min zero", "amf:\n  limiter:\n    min: 0\n", "node.yaml:3: amf.limiter.min: must be in 1..65536, got 0"},
		{"initial above max", "amf:\n  limiter:\n    initial: 100\n    max: 10\n", "node.yaml:3: amf.limiter.initial: must be in 1..10, got 100"},
		{"max below min", "amf:\n  limiter:\n    min: 5\n    max: 4\n    initial: 5\n", "node.yaml:4: amf.limiter.max: must be in 5..65536, got 4"},
		{"growth below one", "amf:\n  limiter:\n    growth: 0.5\n", "node.yaml:3: amf.limiter.growth: must be from 1 (the paper's +1 per interval) to 16"},
		{"ramp too short", "amf:\n  limiter:\n    ramp_interval: 1ms\n", "node.yaml:3: amf.limiter.ramp_interval: must be 0 (off) or a duration from 10ms to 1m"},
		{"queue", "amf:\n  limiter:\n    queue: 0\n", "node.yaml:3: amf.limiter.queue: must be in 1..1048576, got 0"},
		{"timeout", "amf:\n  limiter:\n    procedure_timeout: 0s\n", "node.yaml:3: amf.limiter.procedure_timeout: must be a positive duration"},
		{"high above queue", "amf:\n  limiter:\n    queue: 10\n    overload_high: 11\n", "node.yaml:4: amf.limiter.overload_high: must be in 1..10, got 11"},
		{"low not below high", "amf:\n  limiter:\n    overload_high: 100\n    overload_low: 100\n", "node.yaml:4: amf.limiter.overload_low: must be in 0..99, got 100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("node.yaml", []byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestLimiterSettings(t *testing.T) {
	cfg, err := Parse("node.yaml", []byte("amf:\n  limiter:\n    mode: fixed:12\n    statistic: p99\n    threshold: 2ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	lc, stat := cfg.AMF.Limiter.Settings()
	if lc.Mode != ratelimit.ModeFixed || lc.Fixed != 12 || lc.Min != 1 || lc.Max != 1024 ||
		lc.Threshold != 2*time.Millisecond || stat.Percentile != 99 || lc.EWMAWeight != 0.3 || lc.Queue != 4096 {
		t.Fatalf("settings %+v %+v", lc, stat)
	}
	d, _ := Default().AMF.Limiter.Settings()
	if d.Mode != ratelimit.ModeAdaptive || d.Initial != InitialPerCPU*runtime.NumCPU() || d.Threshold != 10*time.Millisecond || d.Min != 1 || d.Max != 1024 || d.MaxAge != time.Minute || d.Growth != 2 {
		t.Fatalf("default settings %+v", d)
	}
}

// The slow start looks between intervals by default; 0, or a ramp
// interval not shorter than the interval, turns the looks off.
func TestLimiterRamps(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want bool
	}{
		{"amf:\n  limiter:\n    mode: adaptive\n", true},
		{"amf:\n  limiter:\n    ramp_interval: 0s\n", false},
		{"amf:\n  limiter:\n    interval: 100ms\n", false},
		{"amf:\n  limiter:\n    interval: 1s\n    ramp_interval: 250ms\n", true},
	} {
		cfg, err := Parse("node.yaml", []byte(c.yaml))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.AMF.Limiter.Ramps(); got != c.want {
			t.Errorf("%q: Ramps %v, want %v", c.yaml, got, c.want)
		}
	}
}

// The hold-time rule is on by default with Vegas's bounds per CPU, and
// hold_rule: false turns it off (the A/B switch of bench --limiter).
func TestLimiterHoldRule(t *testing.T) {
	d, _ := Default().AMF.Limiter.Settings()
	cpus := runtime.NumCPU()
	if !d.HoldRule || d.HoldAlpha != HoldAlphaPerCPU*cpus || d.HoldBeta != HoldBetaPerCPU*cpus {
		t.Fatalf("default: hold rule %v α %d β %d, want on with %d and %d", d.HoldRule, d.HoldAlpha, d.HoldBeta,
			HoldAlphaPerCPU*cpus, HoldBetaPerCPU*cpus)
	}
	cfg, err := Parse("node.yaml", []byte("amf:\n  limiter:\n    hold_rule: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if off, _ := cfg.AMF.Limiter.Settings(); off.HoldRule {
		t.Fatal("hold_rule: false left the rule on")
	}
}

// The goodput rule is on by default, and goodput_rule: false turns it
// off (the A/B switch of bench --limiter adaptive/goodput_rule=false).
func TestLimiterGoodputRule(t *testing.T) {
	if d, _ := Default().AMF.Limiter.Settings(); !d.GoodputRule {
		t.Fatal("default: goodput rule off, want on")
	}
	cfg, err := Parse("node.yaml", []byte("amf:\n  limiter:\n    goodput_rule: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if off, _ := cfg.AMF.Limiter.Settings(); off.GoodputRule {
		t.Fatal("goodput_rule: false left the rule on")
	}
}
