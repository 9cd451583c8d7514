package config

import (
	"strings"
	"testing"
	"time"
)

// sbi.xio_spin: 50µs for every NF by default, an override per NF, 0 to
// never spin; out-of-range budgets and unknown NF names are refused
// naming the field.
func TestXIOSpinDefaultsOverridesAndBounds(t *testing.T) {
	d, err := Parse("node.yaml", []byte("log_max_files: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.XIOSpinFor("amf"); got != 50*time.Microsecond {
		t.Fatalf("default AMF spin %v, want 50µs", got)
	}
	if got := d.SBI.XIOSpin.Reply; got != 0 {
		t.Fatalf("default reply poll %v, want 0 (never)", got)
	}
	c, err := Parse("node.yaml", []byte("sbi:\n  xio_spin:\n    budget: 0s\n    nf:\n      amf: 200us\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.XIOSpinFor("amf") != 200*time.Microsecond || c.XIOSpinFor("udm") != 0 {
		t.Fatalf("spin amf %v udm %v, want 200µs and 0 (never)", c.XIOSpinFor("amf"), c.XIOSpinFor("udm"))
	}
	for _, c := range []struct{ yaml, want string }{
		{"sbi:\n  xio_spin:\n    budget: -1us\n", "node.yaml:3: sbi.xio_spin.budget: must be a duration from 0s to 10ms"},
		{"sbi:\n  xio_spin:\n    budget: 1s\n", "node.yaml:3: sbi.xio_spin.budget: must be a duration from 0s to 10ms"},
		{"sbi:\n  xio_spin:\n    reply: 20ms\n", "node.yaml:3: sbi.xio_spin.reply: must be a duration from 0s to 10ms"},
		{"sbi:\n  xio_spin:\n    nf:\n      amff: 10us\n", `sbi.xio_spin.nf.amff: no NF named "amff"`},
		{"sbi:\n  xio_spin:\n    nf:\n      smf: 11ms\n", "sbi.xio_spin.nf.smf: must be a duration from 0s to 10ms"},
		{"sbi:\n  xio_spin:\n    doorbell: semaphore\n", `node.yaml:3: sbi.xio_spin.doorbell: must be "futex" or "eventfd", got "semaphore"`},
	} {
		if _, err := Parse("node.yaml", []byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}

// sbi.xio_spin.doorbell takes either doorbell; unset, it is left to xio
// (its default or $L25GC_XIO_DOORBELL).
func TestXIODoorbellChoice(t *testing.T) {
	for _, bell := range []string{"futex", "eventfd"} {
		c, err := Parse("node.yaml", []byte("sbi:\n  xio_spin:\n    doorbell: "+bell+"\n"))
		if err != nil || c.SBI.XIOSpin.Doorbell != bell {
			t.Errorf("doorbell %s: got %q, %v", bell, c.SBI.XIOSpin.Doorbell, err)
		}
	}
	if d := Default().SBI.XIOSpin.Doorbell; d != "" {
		t.Errorf("default doorbell %q, want unset", d)
	}
}
