package upfc

import (
	"context"
	"net"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/protocol/pfcpx"
)

// UPF-C's spans for the paging breakdown (issue 15, internal/tracing
// paging.go): PFCP carries no trace context, so each is a root span named
// by the session's UP SEID, which the SMF's Session Report span ties to
// the UE's SUPI. Off (no tracing.otlp), each hook is the no-op span and
// reads no clock.

// traceModification is the span of a Session Modification Request for
// upSEID (TS 29.244 7.5.4): its check and the rules written for UPF-U;
// for a paged UE, the rules that release UPF-U's buffer (TS 23.502
// 4.2.3.3 step 12 via 4.2.3.2 steps 16-17).
func (s *Server) traceModification(upSEID uint64) trace.Span {
	_, span := tracing.StartUPFC(context.Background(), s.cfg.Tracing, tracing.UPFCModification, upSEID, time.Time{})
	return span
}

// traceReport starts the span of a Downlink Data Report (TS 23.502
// 4.2.3.3 steps 1-2b): from UPF-C reading UPF-U's note to the SMF's
// Session Report Response.
func (n *NF) traceReport(ctx context.Context, upSEID uint64) (context.Context, trace.Span) {
	return tracing.StartUPFC(ctx, n.env.Tracing, tracing.UPFCReport, upSEID, time.Time{})
}

// requestTraced sends a PFCP request and waits for its answer, as a PFCP
// child span of ctx's span when there is one.
func requestTraced(ctx context.Context, node *pfcpx.Node, peer net.Addr, msg *pfcpx.Message) (*pfcpx.Message, error) {
	_, span := tracing.Start(ctx, pfcpx.TypeName(msg.Header.MessageType), tracing.HopPFCP)
	defer span.End()
	return node.Request(ctx, peer, msg)
}
