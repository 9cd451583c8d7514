package upfc

import (
	"context"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/upf/rules"
	"github.com/l25gc/l25gc/upf/shm"
)

// With tracing on, a paged UE's Downlink Data Report (with its PFCP
// request inside) and the Session Modification that releases the buffer
// are spans named by the session's UP SEID: what the paging breakdown
// joins to the SMF's span of the same session (issue 15).
func TestReportAndModificationAreSpansNamedByUPSEID(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p, err := tracing.New(tracing.Options{Service: "l25gc-upf", Exporters: []tracing.SpanExporter{exp}, Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	up := newFakeUserPlane()
	env := nf.NewEnv(testConfig(t), logging.Discard(), sbi.NewTCP(), models.NrfNfManagementNfType_UPF)
	env.Tracing = p
	u, err := NewWithOptions(env, Options{Table: up})
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer u.Stop(context.Background())

	c := newClient(t)
	sink := newReportSink(pfcpx.CauseAccepted)
	c.OnReport(sink.handle)
	ctx := context.Background()
	est, err := c.Establish(ctx, u.N4Addrs()[0], idleSession("10.60.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	up.notes <- shm.Note{UPSEID: est.UPSEID, PDRID: 2}
	sink.wait(t)
	fwd := rules.FAR{ID: 2, Action: rules.ActionForward, Destination: rules.Access, OuterHeader: &rules.OuterHeader{TEID: 0x100, PeerIPv4: gnbAddr}}
	if _, err := c.Modify(ctx, u.N4Addrs()[0], est.UPSEID, &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{fwd}}}); err != nil {
		t.Fatal(err)
	}

	report, modification := awaitSpan(t, exp, tracing.UPFCReport), awaitSpan(t, exp, tracing.UPFCModification)
	for _, s := range []tracetest.SpanStub{report, modification} {
		if got := attr(s, tracing.KeyUPSEID); got != int64(est.UPSEID) {
			t.Errorf("%s: UP SEID %v, want %d", s.Name, got, est.UPSEID)
		}
		if got := attr(s, tracing.KeyHop); got != tracing.HopUPFC {
			t.Errorf("%s: hop %v, want %s", s.Name, got, tracing.HopUPFC)
		}
	}
	var child bool
	for _, s := range exp.GetSpans() {
		child = child || (s.Parent.SpanID() == report.SpanContext.SpanID() && attr(s, tracing.KeyHop) == tracing.HopPFCP)
	}
	if !child {
		t.Error("the report's PFCP request to the SMF is not a child span of the report")
	}
}

// awaitSpan waits for the span named name (the report ends after the
// SMF's answer, on UPF-C's goroutine).
func awaitSpan(t *testing.T, exp *tracetest.InMemoryExporter, name string) tracetest.SpanStub {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range exp.GetSpans() {
			if s.Name == name {
				return s
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no span %q among %d", name, len(exp.GetSpans()))
	return tracetest.SpanStub{}
}

func attr(s tracetest.SpanStub, k attribute.Key) any {
	for _, kv := range s.Attributes {
		if kv.Key == k {
			return kv.Value.AsInterface()
		}
	}
	return nil
}
