package config

import (
	"fmt"
	"strings"
	"testing"
)

// tuning.halt_poll_ns: absent leaves the host alone (nil), a value in
// 0..10ms is taken, anything else is refused naming the field.
func TestTuningHaltPollIsOptionalAndBounded(t *testing.T) {
	d, err := Parse("node.yaml", []byte("log_max_files: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Tuning.HaltPollNs != nil {
		t.Fatalf("default halt_poll_ns %d, want unset (leave the host alone)", *d.Tuning.HaltPollNs)
	}
	for _, v := range []int64{0, 200000} {
		c, err := Parse("node.yaml", []byte(fmt.Sprintf("tuning:\n  halt_poll_ns: %d\n", v)))
		if err != nil {
			t.Fatal(err)
		}
		if c.Tuning.HaltPollNs == nil || *c.Tuning.HaltPollNs != v {
			t.Fatalf("halt_poll_ns %v, want %d", c.Tuning.HaltPollNs, v)
		}
	}
	for _, y := range []string{"tuning:\n  halt_poll_ns: -1\n", "tuning:\n  halt_poll_ns: 10000001\n"} {
		if _, err := Parse("node.yaml", []byte(y)); err == nil || !strings.Contains(err.Error(), "tuning.halt_poll_ns: must be from 0 to 10000000 ns") {
			t.Errorf("%q: got %v", y, err)
		}
	}
}
