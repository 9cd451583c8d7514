package smf

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/sbi"
)

// With tracing on, the SMF's handling of a Downlink Data Report is a span
// naming the UE's SUPI and the session's UP SEID, which ends once the
// AMF answered N1N2MessageTransfer: what ties UPF-C's spans to the UE in
// the paging breakdown (issue 15).
func TestDownlinkDataReportIsASpanNamingSUPIAndUPSEID(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, seid := s.idleSession(t, subscribed, 1)
	s.core.setTransferStatus(202)
	exp := tracetest.NewInMemoryExporter()
	p, err := tracing.New(tracing.Options{Service: "l25gc-smf", Exporters: []tracing.SpanExporter{exp}, Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	s.nf.env.Tracing = p
	if cause := s.n4.report(downlinkData(seid)); cause != pfcpCauseAccepted {
		t.Fatalf("report answered cause %d", cause)
	}
	s.core.waitTransfer(t)
	var span tracetest.SpanStub
	waitFor(t, "the report's span ended", func() bool {
		for _, sp := range exp.GetSpans() {
			if attrOf(sp, tracing.KeyHop) == tracing.HopSMFNF {
				span = sp
				return true
			}
		}
		return false
	})
	c, _ := s.nf.ctxs.get(strings.TrimPrefix(ref, smContextsPath+"/"))
	if got := attrOf(span, tracing.KeySUPI); got != subscribed {
		t.Errorf("SUPI %v, want %s", got, subscribed)
	}
	if got := attrOf(span, tracing.KeyUPSEID); got != int64(c.upSEID) {
		t.Errorf("UP SEID %v, want %d", got, c.upSEID)
	}
	if span.EndTime.Sub(span.StartTime) <= 0 || span.EndTime.After(time.Now()) {
		t.Errorf("span %v-%v", span.StartTime, span.EndTime)
	}
}

func attrOf(s tracetest.SpanStub, k attribute.Key) any {
	for _, kv := range s.Attributes {
		if kv.Key == k {
			return kv.Value.AsInterface()
		}
	}
	return nil
}
