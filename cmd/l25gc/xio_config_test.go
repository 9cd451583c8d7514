package main

import (
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
)

// An NF attaches with its sbi.xio_spin budget; a budget of 0 in the node
// config reaches xio as "never spin", not as xio's own default.
func TestXIOConfigSpin(t *testing.T) {
	cfg := config.Default()
	cfg.SBI.XIOSpin.NF = map[string]time.Duration{"amf": 200 * time.Microsecond, "udm": 0}
	for nf, want := range map[string]time.Duration{"amf": 200 * time.Microsecond, "udm": -1, "smf": 50 * time.Microsecond} {
		if got := xioConfig(cfg, nf).Spin; got != want {
			t.Errorf("%s: spin %v, want %v", nf, got, want)
		}
	}
	if got := xioConfig(cfg, "amf").ReplySpin; got != -1 {
		t.Errorf("the default reply poll 0 reaches xio as %v, want -1 (never poll)", got)
	}
	cfg.SBI.XIOSpin.Reply = 100 * time.Microsecond
	if got := xioConfig(cfg, "amf").ReplySpin; got != 100*time.Microsecond {
		t.Errorf("reply poll %v, want the configured 100µs", got)
	}
}

// sbi.xio_spin.doorbell reaches every NF's attachment as written.
func TestXIOConfigDoorbell(t *testing.T) {
	cfg := config.Default()
	cfg.SBI.XIOSpin.Doorbell = "eventfd"
	if got := xioConfig(cfg, "udm").Doorbell; got != "eventfd" {
		t.Errorf("doorbell %q, want the configured eventfd", got)
	}
}
