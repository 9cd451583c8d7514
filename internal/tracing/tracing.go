// Package tracing records where a procedure's time goes (issue 15): OpenTelemetry
// spans per SBI call (client and server, W3C traceparent in the request's
// headers, so over TCP and X-IO alike), per NGAP message the AMF handles
// (with its time queued in the dispatcher), per crypto, store and PFCP
// step, and the simulator's own spans on the UE/gNB side of N2, which
// cannot carry trace context. The collector (collector.go) receives them
// over OTLP/HTTP and the breakdown (breakdown.go) joins the simulator's and
// the AMF's spans by RAN UE NGAP ID and NGAP message and cuts each
// procedure's end-to-end time into hops.
//
// Off is the default and costs nothing: a nil *Provider hands out the
// no-op tracer, and every hook here first asks whether its context holds a
// recording span, returning before any allocation when it does not.
//
// The NF code never names a tracer: the SBI server middleware and the
// AMF's N2 hooks start the root spans with the process's Provider, and
// every child is started from its context's span (Start), so no global
// provider is involved.
package tracing

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// The attribute keys the breakdown reads.
const (
	// KeyHop classifies a span for the breakdown: one of the Hop* values.
	KeyHop = attribute.Key("l25gc.hop")
	// KeyRANUE is the RAN UE NGAP ID (TS 38.413 9.3.3.2) that joins the
	// simulator's and the AMF's spans of one UE.
	KeyRANUE = attribute.Key("ngap.ran_ue_ngap_id")
	// KeyNGAP names the NGAP message (N2 send and receive spans).
	KeyNGAP = attribute.Key("ngap.message")
	// KeyProcedure names the simulator's procedure (registration, pdu...).
	KeyProcedure = attribute.Key("l25gc.procedure")
)

// Hop values: what part of a procedure a span measures.
const (
	HopProcedure = "procedure"  // the simulator's end-to-end span
	HopRANSend   = "ran.send"   // the simulator writes an NGAP message (instant)
	HopRANRecv   = "ran.recv"   // the simulator reads an NGAP message (instant)
	HopAMFRecv   = "amf.recv"   // the AMF read an NGAP message until its handler ended
	HopAMFSend   = "amf.send"   // the AMF writes an NGAP message (instant)
	HopQueue     = "amf.queue"  // an event waited in the AMF's dispatcher
	HopStep      = "amf.step"   // the AMF handles an event (named by its NAS step)
	HopConsumer  = "consumer"   // an NF's consumer code around its SBI requests (encode, discovery, token, decode)
	HopSBIClient = "sbi.client" // an SBI request as its client saw it
	HopSBIServer = "sbi.server" // an SBI request as its server spent it
	HopCrypto    = "crypto"
	HopStore     = "store"
	HopPFCP      = "pfcp"
)

// SpanExporter receives finished spans (an OTLP exporter, a test's memory).
type SpanExporter = sdktrace.SpanExporter

// Provider is one process's tracing: nil is off.
type Provider struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
}

// Options say where a process's spans go.
type Options struct {
	Service string   // resource service.name, e.g. l25gc-amf
	OTLP    []string // host:port of OTLP/HTTP collectors
	// Exporters are extra span exporters (tests keep spans in memory).
	Exporters []SpanExporter
	// Synchronous exports each span as it ends (tests); else batched.
	Synchronous bool
}

// batchTimeout bounds how long an ended span waits to be exported, so a
// benchmark's collector has every span shortly after the last procedure.
const batchTimeout = 200 * time.Millisecond

// New returns the Provider of o, or nil (off) when o names no collector
// and no exporter.
func New(o Options) (*Provider, error) {
	if len(o.OTLP) == 0 && len(o.Exporters) == 0 {
		return nil, nil
	}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", o.Service))),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
	}
	exps := append([]sdktrace.SpanExporter(nil), o.Exporters...)
	for _, ep := range o.OTLP {
		exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(ep), otlptracehttp.WithInsecure())
		if err != nil {
			return nil, errors.Join(errors.New("tracing: OTLP exporter "+ep), err)
		}
		exps = append(exps, exp)
	}
	for _, exp := range exps {
		if o.Synchronous {
			opts = append(opts, sdktrace.WithSyncer(exp))
		} else {
			opts = append(opts, sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(batchTimeout), sdktrace.WithMaxQueueSize(1<<16)))
		}
	}
	tp := sdktrace.NewTracerProvider(opts...)
	return &Provider{tp: tp, tracer: tp.Tracer("github.com/l25gc/l25gc")}, nil
}

// On says whether spans are recorded.
func (p *Provider) On() bool { return p != nil }

// Tracer is the process's tracer: the no-op one when off.
func (p *Provider) Tracer() trace.Tracer {
	if p == nil {
		return noopTracer
	}
	return p.tracer
}

var noopTracer = noop.NewTracerProvider().Tracer("")

// Shutdown exports what is still buffered and stops the exporters.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.tp.Shutdown(ctx)
}

// ForceFlush exports what is buffered now.
func (p *Provider) ForceFlush(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.tp.ForceFlush(ctx)
}

// Start starts a child span of ctx's span, named name and classified as
// hop. When ctx holds no sampled span it returns ctx itself and End of
// the no-op span: no allocation, so a hook costs nothing with tracing off.
// The parent may have ended: the AMF's SBI calls outlive the event that
// made them (traced asks the span context, not IsRecording).
//
//	ctx, span := tracing.Start(ctx, "AUSF 5G-AKA derivation", tracing.HopCrypto)
//	defer span.End()
func Start(ctx context.Context, name, hop string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !traced(parent) {
		return ctx, parent
	}
	return parent.TracerProvider().Tracer("").Start(ctx, name, trace.WithAttributes(KeyHop.String(hop)))
}

// traced says whether children of span are recorded: a sampled span of
// this process's SDK, ended or not. Off, the context's span is the no-op
// one, whose span context is invalid.
func traced(span trace.Span) bool {
	return span.SpanContext().IsSampled()
}

// Follow returns ctx (its deadline and cancellation) carrying from's span,
// for work an NF goes on with after answering the request of from (the
// SMF's establishment after 201 Created): its spans stay in the request's
// trace. ctx itself when from holds no sampled span.
func Follow(ctx, from context.Context) context.Context {
	span := trace.SpanFromContext(from)
	if !traced(span) {
		return ctx
	}
	return trace.ContextWithSpan(ctx, span)
}
