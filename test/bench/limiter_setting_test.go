package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
)

// A setting with overrides changes exactly the fields it names, on top of
// the run's config.
func TestLimiterSettingOverrides(t *testing.T) {
	got, err := ParseLimiters("off,adaptive/threshold=25ms/ramp_interval=0s/growth=1")
	if err != nil || len(got) != 2 || got[1] != "adaptive/threshold=25ms/ramp_interval=0s/growth=1" {
		t.Fatalf("%v %v", got, err)
	}
	l := config.DefaultLimiter()
	l.Max = 77 // the run's own value, not named: kept
	if err := applyLimiterSetting(&l, got[1]); err != nil {
		t.Fatal(err)
	}
	if l.Mode != "adaptive" || l.Threshold != 25*time.Millisecond || l.RampInterval != 0 || l.Growth != 1 || l.Max != 77 {
		t.Fatalf("limiter %+v", l)
	}
}

// A bad override is refused before any core starts, naming the field.
func TestLimiterSettingRefused(t *testing.T) {
	for bad, want := range map[string]string{
		"adaptive/threshold":         "want key=value",
		"adaptive/growth=0.5":        "amf.limiter.growth",
		"adaptive/threshold=0s":      "amf.limiter.threshold",
		"adaptive/mode=off":          "want key=value",
		"adaptive/no_such_field=1":   "no_such_field",
		"fixed:0/threshold=25ms":     "fixed:N",
		"adaptive/ramp_interval=1ms": "amf.limiter.ramp_interval",
	} {
		if _, err := ParseLimiters(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %q", bad, err, want)
		}
	}
}

func TestLimiterFileName(t *testing.T) {
	for in, want := range map[string]string{"fixed:8": "fixed8", "adaptive/threshold=25ms": "adaptive-threshold25ms", "off": "off"} {
		if got := limiterFileName(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
	if !isAdaptive("adaptive/growth=1") || isAdaptive("fixed:8") {
		t.Error("isAdaptive")
	}
}

// The batch experiment applies a whole setting to its core's config, not
// just its mode (it used to write "adaptive/hold_rule=false" into
// amf.limiter.mode, which the core refused at start).
func TestBatchConfigAppliesTheWholeSetting(t *testing.T) {
	o := BatchOptions{RegistrationOptions: RegistrationOptions{Config: config.Default()}}
	cfg, err := batchConfig(o, "adaptive/hold_rule=false")
	if err != nil {
		t.Fatal(err)
	}
	if l := cfg.AMF.Limiter; l.Mode != "adaptive" || l.HoldRule || l.Growth != 2 {
		t.Fatalf("limiter %+v, want adaptive without the hold-time rule, the rest default", l)
	}
	if !o.Config.AMF.Limiter.HoldRule {
		t.Fatal("the run's own config was changed")
	}
}
