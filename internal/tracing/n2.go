package tracing

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// N2 cannot carry a trace context (TS 38.413 has no such IE), so the
// simulator and the AMF each record their side of every NGAP message,
// tagged with its RAN UE NGAP ID and message key; the breakdown pairs
// a send on one side with the next receive of the same key and UE on the
// other (same host, same clock): N2 uplink = AMF receive − simulator send,
// N2 downlink = simulator receive − AMF send.

// KeyMessage is the NGAP message key: kind (1 initiating, 2 successful,
// 3 unsuccessful outcome, as ngapType.NGAPPDUPresent*) × 256 + procedure
// code (TS 38.413 9.4.7).
const KeyMessage = attribute.Key("ngap.key")

// MessageKey of an NGAP PDU from kind and procedure code.
func MessageKey(kind int, procedure int64) int64 { return int64(kind)<<8 | procedure&0xff }

// PeekKey reads the message key of an encoded NGAP PDU without decoding it:
// in aligned PER (X.691) the NGAP-PDU CHOICE is an extension bit and a 2-bit
// index in the first octet, and the procedureCode INTEGER (0..255) fills the
// second octet. -1 for fewer than two octets.
func PeekKey(pdu []byte) int64 {
	if len(pdu) < 2 {
		return -1
	}
	return MessageKey(int(pdu[0]>>5&0x3)+1, int64(pdu[1]))
}

// AMF records the AMF's side of N2: a span per NGAP message handled, its
// dispatcher wait, the event's handling (named by its NAS step), instant
// spans for messages sent, and which span is the current one of each UE
// so that SBI calls, crypto and store steps become its children. A nil
// *AMF is off: every method returns at once.
type AMF struct {
	tracer trace.Tracer
	mu     sync.Mutex
	active map[int64]trace.Span // AMF UE NGAP ID → span of the event being handled
}

// NewAMF returns the AMF's N2 tracing over p; nil when p is off.
func NewAMF(p *Provider) *AMF {
	if p == nil {
		return nil
	}
	return &AMF{tracer: p.tracer, active: map[int64]trace.Span{}}
}

// Now is the time a message was read (zero when off: no clock read).
func (a *AMF) Now() time.Time {
	if a == nil {
		return time.Time{}
	}
	return time.Now()
}

// Message identifies a received NGAP message for the spans.
type Message struct {
	Name      string // e.g. InitialUEMessage
	Kind      int    // ngapType.NGAPPDUPresent*
	Procedure int64  // procedure code
	RANUE     int64  // -1 when absent
	AMFUE     int64  // the UE whose key the message runs on; -1 for none
}

// Received wraps run, the dispatcher's closure for a message read at at:
// when it runs, it records the message's span from at, the time queued
// since now as a child, and run itself as the current span of the UE.
func (a *AMF) Received(at time.Time, m Message, run func()) func() {
	if a == nil {
		return run
	}
	queued := time.Now()
	return func() {
		ctx, root := a.tracer.Start(context.Background(), "N2 "+m.Name, trace.WithTimestamp(at),
			trace.WithAttributes(KeyHop.String(HopAMFRecv), KeyRANUE.Int64(m.RANUE), KeyMessage.Int64(MessageKey(m.Kind, m.Procedure))))
		a.handle(ctx, queued, m.AMFUE, m.Name, run)
		root.End()
	}
}

// Event wraps run, an event the AMF puts on a UE's key itself (an SBI
// answer, a timer): queue and handling become children of ctx's span
// (the message that made the call), or of a new root.
func (a *AMF) Event(ctx context.Context, amfUE int64, name string, run func()) func() {
	if a == nil {
		return run
	}
	queued := time.Now()
	return func() {
		ctx, root := a.tracer.Start(ctx, "event "+name, trace.WithTimestamp(queued), trace.WithAttributes(KeyHop.String(HopAMFRecv)))
		a.handle(ctx, queued, amfUE, name, run)
		root.End()
	}
}

// handle records the dispatcher wait since queued, then run as the UE's
// current span.
func (a *AMF) handle(ctx context.Context, queued time.Time, amfUE int64, name string, run func()) {
	_, q := a.tracer.Start(ctx, "dispatcher queue", trace.WithTimestamp(queued), trace.WithAttributes(KeyHop.String(HopQueue)))
	q.End()
	_, step := a.tracer.Start(ctx, name, trace.WithAttributes(KeyHop.String(HopStep)))
	a.setActive(amfUE, step)
	defer func() {
		a.setActive(amfUE, nil)
		step.End()
	}()
	run()
}

func (a *AMF) setActive(amfUE int64, s trace.Span) {
	if amfUE < 0 {
		return
	}
	a.mu.Lock()
	if s == nil {
		delete(a.active, amfUE)
	} else {
		a.active[amfUE] = s
	}
	a.mu.Unlock()
}

func (a *AMF) current(amfUE int64) trace.Span {
	a.mu.Lock()
	s := a.active[amfUE]
	a.mu.Unlock()
	return s
}

// Step names the UE's current span after the procedure step it turned
// out to be (the NAS message, known once decoded).
func (a *AMF) Step(amfUE int64, name string) {
	if a == nil {
		return
	}
	if s := a.current(amfUE); s != nil {
		s.SetName(name)
	}
}

// Context returns ctx with the UE's current span as its span, so that an
// SBI call started from it is that span's child.
func (a *AMF) Context(ctx context.Context, amfUE int64) context.Context {
	if a == nil {
		return ctx
	}
	if s := a.current(amfUE); s != nil {
		return trace.ContextWithSpan(ctx, s)
	}
	return ctx
}

// Child starts a span of hop under the UE's current span (crypto, store);
// the no-op span when off or when the UE has none.
func (a *AMF) Child(amfUE int64, name, hop string) trace.Span {
	if a == nil {
		return noSpan
	}
	s := a.current(amfUE)
	if s == nil {
		return noSpan
	}
	_, c := a.tracer.Start(trace.ContextWithSpan(context.Background(), s), name, trace.WithAttributes(KeyHop.String(hop)))
	return c
}

var noSpan = trace.SpanFromContext(context.Background())

// Sent records an NGAP message written to the UE's gNB.
func (a *AMF) Sent(amfUE, ranUE int64, pdu []byte) {
	if a == nil {
		return
	}
	ctx := a.Context(context.Background(), amfUE)
	_, s := a.tracer.Start(ctx, "N2 send", trace.WithAttributes(KeyHop.String(HopAMFSend), KeyRANUE.Int64(ranUE), KeyMessage.Int64(PeekKey(pdu))))
	s.End()
}

// RAN records the simulator's side of N2 and its procedures. Nil is off.
type RAN struct {
	tracer trace.Tracer
}

// NewRAN returns the simulator's tracing over p; nil when p is off.
func NewRAN(p *Provider) *RAN {
	if p == nil {
		return nil
	}
	return &RAN{tracer: p.tracer}
}

// Sent records an NGAP message the simulated gNB writes for ranUE.
func (r *RAN) Sent(ranUE int64, pdu []byte) {
	if r == nil {
		return
	}
	r.instant("N2 send", HopRANSend, ranUE, PeekKey(pdu), time.Now())
}

// Received records an NGAP message read at at for ranUE, once decoded.
func (r *RAN) Received(at time.Time, ranUE int64, kind int, procedure int64) {
	if r == nil {
		return
	}
	r.instant("N2 receive", HopRANRecv, ranUE, MessageKey(kind, procedure), at)
}

// Now is the time a message was read (zero when off).
func (r *RAN) Now() time.Time {
	if r == nil {
		return time.Time{}
	}
	return time.Now()
}

func (r *RAN) instant(name, hop string, ranUE, key int64, at time.Time) {
	_, s := r.tracer.Start(context.Background(), name, trace.WithTimestamp(at),
		trace.WithAttributes(KeyHop.String(hop), KeyRANUE.Int64(ranUE), KeyMessage.Int64(key)))
	s.End(trace.WithTimestamp(at))
}

// Procedure records one procedure of a UE as the simulator measured it:
// its end-to-end span, from start to end.
func (r *RAN) Procedure(name string, ranUE int64, start, end time.Time) {
	if r == nil {
		return
	}
	_, s := r.tracer.Start(context.Background(), name, trace.WithTimestamp(start),
		trace.WithAttributes(KeyHop.String(HopProcedure), KeyProcedure.String(name), KeyRANUE.Int64(ranUE)))
	s.End(trace.WithTimestamp(end))
}
