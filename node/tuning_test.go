package node

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/hosttune"
)

// coreTuning is a Core as Start makes it, with its haltpoll knob a
// temporary file holding "0" (standing in for sysfs).
func coreTuning(t *testing.T, want *int64) (*Core, string, *bytes.Buffer) {
	t.Helper()
	knob := filepath.Join(t.TempDir(), "guest_halt_poll_ns")
	if err := os.WriteFile(knob, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Tuning.HaltPollNs = want
	out := &bytes.Buffer{}
	return &Core{cfg: cfg, opts: Options{Out: out, HaltPollPath: knob}}, knob, out
}

func knobValue(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// tuning.halt_poll_ns is set while the core runs, recorded for `down`
// and `status`, and put back when it stops; without it in the config a
// KVM guest whose window is 0 gets the default the same way.
func TestCoreAppliesHaltPollAndPutsItBack(t *testing.T) {
	configured := int64(200000)
	for _, c := range []struct {
		configured *int64
		want, says string
	}{
		{&configured, "200000", "(was 0; put back when the core stops)"},
		{nil, fmt.Sprint(hosttune.DefaultHaltPollNs), "the default on a KVM guest at 0"},
	} {
		core, knob, out := coreTuning(t, c.configured)
		if err := core.applyTuning(); err != nil {
			t.Fatal(err)
		}
		if got := knobValue(t, knob); got != c.want {
			t.Fatalf("while up the knob holds %s, want %s", got, c.want)
		}
		if core.tuned == nil || core.tuned.Previous != 0 {
			t.Fatalf("recorded %+v, want the previous 0 to put back", core.tuned)
		}
		core.restoreTuning()
		if got := knobValue(t, knob); got != "0" {
			t.Fatalf("after stop the knob holds %s, want 0 back", got)
		}
		if s := out.String(); !strings.Contains(s, c.says) || !strings.Contains(s, "back to 0 ns") {
			t.Fatalf("output %q does not say %q and that it was put back", s, c.says)
		}
	}
}

// tuning.halt_poll_ns: -1 leaves a guest at 0 as it is.
func TestCoreTuningLeaveKeepsTheHostAtZero(t *testing.T) {
	leave := int64(config.HaltPollLeave)
	c, knob, _ := coreTuning(t, &leave)
	if err := c.applyTuning(); err != nil || c.tuned != nil {
		t.Fatalf("apply: %v, tuned %+v", err, c.tuned)
	}
	if got := knobValue(t, knob); got != "0" {
		t.Fatalf("knob %s, want 0 untouched", got)
	}
}

// Without tuning in the config a window someone set is not touched.
func TestCoreWithoutTuningLeavesTheHostAlone(t *testing.T) {
	c, knob, _ := coreTuning(t, nil)
	if err := os.WriteFile(knob, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.applyTuning(); err != nil || c.tuned != nil {
		t.Fatalf("apply: %v, tuned %+v", err, c.tuned)
	}
	c.restoreTuning()
	if got := knobValue(t, knob); got != "12345" {
		t.Fatalf("knob %s, want the host's 12345 untouched", got)
	}
}

// A host without the driver (bare metal, other hypervisors) is told so and
// the core starts anyway.
func TestCoreOnAHostWithoutHaltPollSaysSo(t *testing.T) {
	ns := int64(200000)
	c, _, out := coreTuning(t, &ns)
	c.opts.HaltPollPath = filepath.Join(t.TempDir(), "absent")
	if err := c.applyTuning(); err != nil {
		t.Fatalf("apply on a host without the knob: %v, want a message only", err)
	}
	if c.tuned != nil || !strings.Contains(out.String(), "nothing to tune") {
		t.Fatalf("tuned %+v, output %q", c.tuned, out)
	}
}
