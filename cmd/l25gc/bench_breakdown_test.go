package main

import (
	"strings"
	"testing"

	"github.com/l25gc/l25gc/config"
)

// --breakdown against a running core whose config names no collector
// would print a breakdown without the core's spans: refused, saying what
// to set.
func TestBreakdownWithAMFNeedsTheCoresCollector(t *testing.T) {
	tf := traceFlags{breakdown: true}
	tr, err := tf.startFor("127.0.0.1:38412", config.Default())
	if err == nil || !strings.Contains(err.Error(), "tracing.otlp") {
		tr.Close()
		t.Fatalf("err %v, want one naming tracing.otlp", err)
	}
	cfg := config.Default()
	cfg.Tracing.OTLP = []string{"127.0.0.1:0"}
	if tr, err = tf.startFor("127.0.0.1:38412", cfg); err != nil || tr == nil {
		t.Fatalf("with tracing.otlp set: %v", err)
	}
	tr.Close()
}
