package config

import (
	"strings"
	"testing"
)

func TestTracingEndpointsMustBeHostPort(t *testing.T) {
	c := Default()
	if c.Tracing.On() {
		t.Fatal("tracing is on by default")
	}
	c.Tracing.OTLP = []string{"127.0.0.1:4318", "jaeger"}
	err := c.validateFor(Builtin, "l25gc.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "tracing.otlp[1]") {
		t.Fatalf("validate = %v, want an error naming tracing.otlp[1]", err)
	}
	c.Tracing.OTLP = c.Tracing.OTLP[:1]
	if err := c.validateFor(Builtin, "l25gc.yaml", nil); err != nil {
		t.Fatalf("validate of a host:port endpoint: %v", err)
	}
}
