package config

import (
	"fmt"
	"net"
)

// Tracing says where the NFs send their OpenTelemetry spans (issue 15):
// each NF exports its spans over OTLP/HTTP to every endpoint listed, e.g. a
// Jaeger or Tempo collector (port 4318), or the in-process collector of
// `l25gc bench --breakdown`. No endpoint (the default) is tracing off: a
// no-op provider, nothing recorded, no header added to SBI requests.
type Tracing struct {
	OTLP []string `yaml:"otlp,omitempty"` // host:port of OTLP/HTTP collectors
}

// On says whether the NFs record spans.
func (t Tracing) On() bool { return len(t.OTLP) > 0 }

// tracing checks each endpoint is host:port, the form the OTLP/HTTP
// exporter dials (it adds /v1/traces itself).
func (v *validator) tracing(t *Tracing) {
	for i, ep := range t.OTLP {
		host, port, err := net.SplitHostPort(ep)
		if err != nil || host == "" || port == "" {
			v.fail(fmt.Sprintf("tracing.otlp[%d]", i), "want host:port of an OTLP/HTTP collector (e.g. 127.0.0.1:4318), got %q", ep)
		}
	}
}
