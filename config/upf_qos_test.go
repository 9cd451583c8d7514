package config

import (
	"strings"
	"testing"
	"time"
)

// upf.qos: a node without it shapes up to 1024 sessions with 50 ms
// queues; out-of-range values are refused naming the field.
func TestUPFQoSDefaultsAndBounds(t *testing.T) {
	c, err := Parse("node.yaml", []byte("upf:\n  qos:\n    max_shaped_sessions: 8\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.UPF.QoS.MaxShapedSessions != 8 || c.UPF.QoS.Queue != 50*time.Millisecond {
		t.Fatalf("upf.qos %+v, want 8 sessions and the 50ms default queue", c.UPF.QoS)
	}
	d, err := Parse("node.yaml", []byte("log_max_files: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d.UPF.QoS.MaxShapedSessions != 1024 {
		t.Fatalf("default max_shaped_sessions %d, want 1024", d.UPF.QoS.MaxShapedSessions)
	}
	for _, c := range []struct{ yaml, want string }{
		{"upf:\n  qos:\n    max_shaped_sessions: -1\n", "node.yaml:3: upf.qos.max_shaped_sessions: must be in 0..65536, got -1"},
		{"upf:\n  qos:\n    queue: 0s\n", "node.yaml:3: upf.qos.queue: must be a duration from 1ms to 1s"},
		{"upf:\n  qos:\n    queue: 2s\n", "node.yaml:3: upf.qos.queue: must be a duration from 1ms to 1s"},
	} {
		if _, err := Parse("node.yaml", []byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}
