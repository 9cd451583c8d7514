package smf

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/l25gc/l25gc/internal/tracing"
)

// traceReport starts the SMF's span of a Downlink Data Report for c (TS
// 23.502 4.2.3.3 steps 2a-3a, issue 15's paging breakdown): it names the
// UE's SUPI and the session's UP SEID, which ties UPF-C's spans to the
// UE, and the N1N2MessageTransfer made in it carries the trace to the
// AMF. Off, the no-op span, c not locked.
func (n *NF) traceReport(c *smContext) trace.Span {
	if !n.env.Tracing.On() {
		return noSpan
	}
	c.mu.Lock()
	supi, upSEID := c.supi, c.upSEID
	c.mu.Unlock()
	_, span := tracing.StartSMFReport(context.Background(), n.env.Tracing, supi, upSEID)
	return span
}

var noSpan = trace.SpanFromContext(context.Background())
