package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Paging (network-triggered Service Request, TS 23.502 4.2.3.3) starts
// with a downlink packet, not a message of the UE: nothing on its way
// carries a RAN UE NGAP ID (the UE is CM-IDLE), and PFCP carries no trace
// context. So the spans of a paging are joined by what each hop knows of
// the UE:
//   - UPF-C's spans (the Downlink Data Report it sends, the Session
//     Modification that releases the buffer) carry the session's UP SEID;
//   - the SMF's span from the Session Report to the AMF's answer to
//     N1N2MessageTransfer carries the UP SEID and the SUPI (so it ties the
//     two), and its SBI call carries the trace into the AMF;
//   - the AMF's Paging send and the simulator's Paging receive carry the
//     SUPI (the gNB knows the UE by 5G-S-TMSI, the simulator by SUPI);
//   - the answering Service Request is joined as any procedure, by the
//     RAN UE NGAP ID the UE gets with it.

// Attribute keys of the paging join.
const (
	// KeySUPI names the UE (TS 23.003 2.2A) on spans where it has no RAN
	// UE NGAP ID.
	KeySUPI = attribute.Key("l25gc.supi")
	// KeyUPSEID is the UPF's SEID of the PFCP session (TS 29.244 5.6).
	KeyUPSEID = attribute.Key("pfcp.up_seid")
	// KeyTrigger says what started a procedure of the simulator:
	// TriggerDownlink for a downlink packet from the data network.
	KeyTrigger = attribute.Key("l25gc.trigger")
)

// TriggerDownlink: the procedure started when the benchmark sent a
// downlink packet from the data network (paging), not with a message of
// the simulator.
const TriggerDownlink = "downlink packet"

// Hop values of the paging chain.
const (
	HopUPFC  = "upf.c"      // UPF-C's own work on a note of UPF-U or a PFCP request
	HopSMFNF = "smf.paging" // the SMF from a Session Report to the AMF's answer to N1N2MessageTransfer
)

// pagingKey is NGAP Paging's message key: initiating message, procedure
// code 24 (TS 38.413 9.4.7 id-Paging).
var pagingKey = MessageKey(1, 24)

// StartUPFC starts UPF-C's root span name for the session upSEID, at
// at (now when zero). Off (p nil) it returns ctx and the no-op span
// before building anything, so the hook costs nothing.
func StartUPFC(ctx context.Context, p *Provider, name string, upSEID uint64, at time.Time) (context.Context, trace.Span) {
	if p == nil {
		return ctx, noSpan
	}
	return startRoot(ctx, p, name, HopUPFC, at, KeyUPSEID.Int64(int64(upSEID)))
}

// StartSMFReport starts the SMF's root span of a Session Report for the
// session upSEID of supi: its N1N2MessageTransfer is made in it, so the
// AMF's side joins its trace. Off, ctx and the no-op span.
func StartSMFReport(ctx context.Context, p *Provider, supi string, upSEID uint64) (context.Context, trace.Span) {
	if p == nil {
		return ctx, noSpan
	}
	return startRoot(ctx, p, "Session Report → N1N2MessageTransfer answered", HopSMFNF, time.Time{},
		KeySUPI.String(supi), KeyUPSEID.Int64(int64(upSEID)))
}

func startRoot(ctx context.Context, p *Provider, name, hop string, at time.Time, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	kv := append([]attribute.KeyValue{KeyHop.String(hop)}, attrs...)
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithAttributes(kv...)}
	if !at.IsZero() {
		opts = append(opts, trace.WithTimestamp(at))
	}
	return p.tracer.Start(ctx, name, opts...)
}

// SentPaging records the NGAP Paging the AMF writes for the UE supi
// (TS 23.502 4.2.3.3 step 4b): an instant the breakdown pairs with the
// simulator's PagingReceived.
func (a *AMF) SentPaging(supi string) {
	if a == nil {
		return
	}
	_, s := a.tracer.Start(context.Background(), "N2 send Paging", trace.WithAttributes(
		KeyHop.String(HopAMFSend), KeySUPI.String(supi), KeyMessage.Int64(pagingKey)))
	s.End()
}

// PagingReceived records the NGAP Paging the simulated gNB read at at for
// its idle UE supi.
func (r *RAN) PagingReceived(at time.Time, supi string) {
	if r == nil {
		return
	}
	_, s := r.tracer.Start(context.Background(), "N2 receive Paging", trace.WithTimestamp(at),
		trace.WithAttributes(KeyHop.String(HopRANRecv), KeySUPI.String(supi), KeyMessage.Int64(pagingKey)))
	s.End(trace.WithTimestamp(at))
}

// DownlinkProcedure records a procedure of UE supi that a downlink packet
// sent at start began (paging, its first packet), ending at end. ranUE is
// the RAN UE NGAP ID the UE had at the end (its Service Request's); 0 or
// less for none (the simulator's CM-IDLE UEs have 0).
func (r *RAN) DownlinkProcedure(name, supi string, ranUE int64, start, end time.Time) {
	if r == nil {
		return
	}
	kv := []attribute.KeyValue{KeyHop.String(HopProcedure), KeyProcedure.String(name), KeySUPI.String(supi), KeyTrigger.String(TriggerDownlink)}
	if ranUE > 0 {
		kv = append(kv, KeyRANUE.Int64(ranUE))
	}
	_, s := r.tracer.Start(context.Background(), name, trace.WithTimestamp(start), trace.WithAttributes(kv...))
	s.End(trace.WithTimestamp(end))
}

// WithSpan returns ctx carrying span, for work that goes on in span
// elsewhere (the SMF's paging in the background); ctx itself when span
// is not recorded, so nothing is allocated with tracing off.
func WithSpan(ctx context.Context, span trace.Span) context.Context {
	if !traced(span) {
		return ctx
	}
	return trace.ContextWithSpan(ctx, span)
}
