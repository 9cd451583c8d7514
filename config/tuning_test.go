package config

import (
	"fmt"
	"strings"
	"testing"
)

// tuning.halt_poll_ns: absent is the default (nil: node sets
// hosttune.DefaultHaltPollNs on a guest at 0), a value in 0..10ms or -1
// (leave the host alone) is taken, anything else is refused naming the
// field.
func TestTuningHaltPollIsOptionalAndBounded(t *testing.T) {
	d, err := Parse("node.yaml", []byte("log_max_files: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Tuning.HaltPollNs != nil {
		t.Fatalf("default halt_poll_ns %d, want unset (the node's default)", *d.Tuning.HaltPollNs)
	}
	for _, v := range []int64{-1, 0, 200000} {
		c, err := Parse("node.yaml", []byte(fmt.Sprintf("tuning:\n  halt_poll_ns: %d\n", v)))
		if err != nil {
			t.Fatal(err)
		}
		if c.Tuning.HaltPollNs == nil || *c.Tuning.HaltPollNs != v {
			t.Fatalf("halt_poll_ns %v, want %d", c.Tuning.HaltPollNs, v)
		}
	}
	for _, y := range []string{"tuning:\n  halt_poll_ns: -2\n", "tuning:\n  halt_poll_ns: 10000001\n"} {
		if _, err := Parse("node.yaml", []byte(y)); err == nil || !strings.Contains(err.Error(), "tuning.halt_poll_ns: must be from 0 to 10000000 ns (10 ms), or -1 to leave the host alone") {
			t.Errorf("%q: got %v", y, err)
		}
	}
}

// tuning.procs: one P for every NF by default, an override per NF, 0 for
// Go's own default; negative counts and unknown NF names are refused
// naming the field.
func TestTuningProcsDefaultsOverridesAndBounds(t *testing.T) {
	d, err := Parse("node.yaml", []byte("log_max_files: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.ProcsFor("amf"); got != 1 {
		t.Fatalf("default AMF procs %d, want 1", got)
	}
	c, err := Parse("node.yaml", []byte("tuning:\n  halt_poll_ns: 0\n  procs:\n    nf:\n      amf: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ProcsFor("amf") != 2 || c.ProcsFor("udm") != 1 {
		t.Fatalf("procs amf %d udm %d, want 2 and the default 1", c.ProcsFor("amf"), c.ProcsFor("udm"))
	}
	if c, err := Parse("node.yaml", []byte("tuning:\n  procs:\n    all: 0\n")); err != nil || c.ProcsFor("smf") != 0 {
		t.Fatalf("all: 0 gave %v, %v; want 0 (Go's default)", c, err)
	}
	for _, c := range []struct{ yaml, want string }{
		{"tuning:\n  procs:\n    all: -1\n", "node.yaml:3: tuning.procs.all: must be from 0 (Go's default) to 1024, got -1"},
		{"tuning:\n  procs:\n    nf:\n      amff: 2\n", `tuning.procs.nf.amff: no NF named "amff"`},
		{"tuning:\n  procs:\n    nf:\n      smf: 5000\n", "tuning.procs.nf.smf: must be from 0 (Go's default) to 1024, got 5000"},
	} {
		if _, err := Parse("node.yaml", []byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}
