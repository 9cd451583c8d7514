package tracing_test

import (
	"context"
	"testing"
	"time"

	"github.com/free5gc/ngap/ngapType"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

var cell = ngapx.Cell{TAI: domain.TAI{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, TAC: 1}, CellID: 1 << 12}

// PeekKey must agree with a full decode for what both sides send.
func TestPeekKeyMatchesTheDecodedMessage(t *testing.T) {
	for name, build := range map[string]func() ([]byte, error){
		"InitialUEMessage":     func() ([]byte, error) { return ngapx.BuildInitialUEMessage(7, []byte{0x7e, 0, 0x41}, cell, nil) },
		"UplinkNASTransport":   func() ([]byte, error) { return ngapx.BuildUplinkNASTransport(1, 7, []byte{0x7e, 0, 0x43}, cell) },
		"DownlinkNASTransport": func() ([]byte, error) { return ngapx.BuildDownlinkNASTransport(1, 7, []byte{0x7e, 0, 0x56}) },
	} {
		b, err := build()
		if err != nil {
			t.Fatal(name, err)
		}
		pdu, err := ngapx.Decode(b)
		if err != nil {
			t.Fatal(name, err)
		}
		s, _ := ngapx.Summarize(pdu)
		if got, want := tracing.PeekKey(b), tracing.MessageKey(int(s.Kind), s.Procedure); got != want {
			t.Errorf("%s: PeekKey = %#x, decoded key %#x", name, got, want)
		}
	}
	if tracing.PeekKey([]byte{0}) != -1 {
		t.Error("PeekKey of one octet is not -1")
	}
}

// The simulator and the AMF export to one collector over OTLP/HTTP, as in
// `bench --breakdown`; the breakdown joins their N2 spans by RAN UE NGAP
// ID and message: each message's transit is the receiver's time minus
// the sender's, and the parts add up to the simulator's end to end time.
func TestSimulatorAndAMFSpansJoinAcrossN2(t *testing.T) {
	col, err := tracing.StartCollector("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer col.Close()
	newP := func(service string) *tracing.Provider {
		p, err := tracing.New(tracing.Options{Service: service, OTLP: []string{col.Addr()}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ranP, amfP := newP("l25gc-ransim"), newP("l25gc-amf")
	ran, amf := tracing.NewRAN(ranP), tracing.NewAMF(amfP)
	const ranUE, amfUE = 7, 1

	ul, _ := ngapx.BuildInitialUEMessage(ranUE, []byte{0x7e, 0, 0x41}, cell, nil)
	dl, _ := ngapx.BuildDownlinkNASTransport(amfUE, ranUE, []byte{0x7e, 0, 0x56})
	start := time.Now()
	time.Sleep(time.Millisecond) // the UE builds its Registration Request
	ran.Sent(ranUE, ul)
	time.Sleep(2 * time.Millisecond) // N2 uplink
	at := amf.Now()
	run := amf.Received(at, tracing.Message{Name: "InitialUEMessage", Kind: ngapType.NGAPPDUPresentInitiatingMessage,
		Procedure: ngapType.ProcedureCodeInitialUEMessage, RANUE: ranUE, AMFUE: amfUE}, func() {
		amf.Step(amfUE, "RegistrationRequest")
		time.Sleep(time.Millisecond)
		amf.Sent(amfUE, ranUE, dl)
	})
	run()
	time.Sleep(3 * time.Millisecond) // N2 downlink
	ran.Received(ran.Now(), ranUE, ngapType.NGAPPDUPresentInitiatingMessage, ngapType.ProcedureCodeDownlinkNASTransport)
	ran.Procedure("registration", ranUE, start, time.Now())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, p := range []*tracing.Provider{ranP, amfP} {
		if err := p.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	bs := tracing.Compute(col.Spans())
	if len(bs) != 1 {
		t.Fatalf("%d breakdowns from %d spans, want 1", len(bs), len(col.Spans()))
	}
	rows := map[string]tracing.Hop{}
	var sum float64
	for _, h := range bs[0].Hops {
		rows[h.Name] = h
		if h.Kind == "part" {
			sum += h.Mean
		}
	}
	// Each hop lasted at least what the test slept in it; the clock may
	// add, never take away.
	for name, atLeast := range map[string]float64{tracing.RowN2Uplink: 2, tracing.RowN2Downlink: 3, tracing.RowRAN: 1, "AMF step: RegistrationRequest": 1} {
		if h, ok := rows[name]; !ok || h.Mean < atLeast {
			t.Errorf("%s = %+v, want at least %v ms; rows %v", name, h, atLeast, rows)
		}
	}
	if d := sum - bs[0].EndToEnd.Mean; d > 1e-6 || d < -1e-6 {
		t.Errorf("parts sum to %.6f ms, end to end %.6f ms", sum, bs[0].EndToEnd.Mean)
	}
}

// Off, every hook returns at once without allocating: tracing off costs
// nothing on the AMF's N2 path or an SBI call.
func TestHooksOffDoNotAllocate(t *testing.T) {
	var amf *tracing.AMF
	var ran *tracing.RAN
	run := func() {}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		_ = amf.Received(amf.Now(), tracing.Message{Name: "X"}, run)
		_ = amf.Event(ctx, 1, "answer", run)
		amf.Step(1, "RegistrationRequest")
		amf.Sent(1, 7, nil)
		amf.Child(1, "NAS", tracing.HopCrypto).End()
		_ = amf.Context(ctx, 1)
		ran.Sent(7, nil)
		ran.Received(ran.Now(), 7, 1, 15)
		c, s := tracing.Start(ctx, "store", tracing.HopStore)
		s.End()
		_ = c
	})
	if allocs != 0 {
		t.Errorf("hooks off allocate %.0f times per run, want 0", allocs)
	}
}

// The AMF's SBI calls run after the event that made them has ended: their
// spans must still be that event's children.
func TestChildOfAnEndedSpanIsRecorded(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p := provider(t, "l25gc-amf", exp)
	ctx, parent := p.Tracer().Start(context.Background(), "RegistrationRequest")
	parent.End()
	_, child := tracing.Start(ctx, "SUCI de-concealment", tracing.HopCrypto)
	child.End()
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[1].Parent.SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("spans %v: want the child of the ended parent recorded", spans)
	}
}

// Work an NF goes on with after answering stays in the request's trace;
// without a span, Follow is ctx itself.
func TestFollowCarriesTheRequestSpan(t *testing.T) {
	bg := context.Background()
	if got := tracing.Follow(bg, bg); got != bg {
		t.Error("Follow without a span is not ctx itself")
	}
	exp := tracetest.NewInMemoryExporter()
	p := provider(t, "l25gc-smf", exp)
	req, span := p.Tracer().Start(bg, "POST /nsmf-pdusession/v1/sm-contexts")
	span.End()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	_, child := tracing.Start(tracing.Follow(ctx, req), "PFCP Session Establishment", tracing.HopPFCP)
	child.End()
	if s := exp.GetSpans(); len(s) != 2 || s[1].Parent.SpanID() != span.SpanContext().SpanID() {
		t.Fatalf("spans %v: want the PFCP span under the request's", s)
	}
}
