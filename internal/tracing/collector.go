package tracing

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one finished span as the collector keeps it.
type Span struct {
	TraceID, SpanID, ParentID string // hex; ParentID "" for a root
	Name                      string
	Service                   string // the exporting process's service.name
	Start, End                time.Time
	Attrs                     map[string]any // string, int64, float64 or bool
}

// Str is a string attribute ("" when absent).
func (s *Span) Str(key attribute.Key) string { v, _ := s.Attrs[string(key)].(string); return v }

// Int is an integer attribute and whether it is present.
func (s *Span) Int(key attribute.Key) (int64, bool) {
	v, ok := s.Attrs[string(key)].(int64)
	return v, ok
}

// Duration of the span.
func (s *Span) Duration() time.Duration { return s.End.Sub(s.Start) }

// Collector is an OTLP/HTTP receiver (POST /v1/traces, protobuf, as
// otlptracehttp sends) that keeps every span in memory: the benchmark's
// own collector, which its cores and simulator export to.
type Collector struct {
	mu    sync.Mutex
	spans []Span
	srv   *http.Server
	addr  string
	last  time.Time // when the latest span arrived
}

// maxExport bounds one export request's body.
const maxExport = 64 << 20

// StartCollector listens on addr ("127.0.0.1:0" for any free port).
func StartCollector(addr string) (*Collector, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tracing collector: %w", err)
	}
	c := &Collector{addr: ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", c.export)
	c.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = c.srv.Serve(ln) }() // ends with Close
	return c, nil
}

// Addr is the host:port exporters send to.
func (c *Collector) Addr() string { return c.addr }

// Close stops receiving.
func (c *Collector) Close() error { return c.srv.Close() }

func (c *Collector) export(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = http.MaxBytesReader(w, r.Body, maxExport)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req collectorpb.ExportTraceServiceRequest
	if err := proto.Unmarshal(data, &req); err != nil {
		http.Error(w, "OTLP: "+err.Error(), http.StatusBadRequest)
		return
	}
	c.Add(Decode(&req)...)
	out, _ := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Add keeps spans (the receiver, and tests).
func (c *Collector) Add(spans ...Span) {
	c.mu.Lock()
	c.spans = append(c.spans, spans...)
	c.last = time.Now()
	c.mu.Unlock()
}

// Spans returns a copy of what arrived so far.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.spans...)
}

// Take returns what arrived and forgets it (one benchmark run's spans).
func (c *Collector) Take() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.spans
	c.spans = nil
	return s
}

// Quiet waits until no span has arrived for quiet since the call or the
// latest arrival, or ctx ends: the exporters batch (batchTimeout), so the
// last spans of a run arrive a little after its last procedure.
func (c *Collector) Quiet(ctx context.Context, quiet time.Duration) {
	t := time.NewTicker(quiet / 4)
	defer t.Stop()
	called := time.Now()
	for {
		c.mu.Lock()
		idle := time.Since(c.last)
		c.mu.Unlock()
		idle = min(idle, time.Since(called))
		if idle >= quiet {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Decode flattens an OTLP export request into Spans.
func Decode(req *collectorpb.ExportTraceServiceRequest) []Span {
	var out []Span
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				out = append(out, decodeSpan(sp, service))
			}
		}
	}
	return out
}

func decodeSpan(sp *tracepb.Span, service string) Span {
	s := Span{
		TraceID: hex.EncodeToString(sp.GetTraceId()), SpanID: hex.EncodeToString(sp.GetSpanId()),
		Name: sp.GetName(), Service: service,
		Start: time.Unix(0, int64(sp.GetStartTimeUnixNano())), End: time.Unix(0, int64(sp.GetEndTimeUnixNano())),
		Attrs: make(map[string]any, len(sp.GetAttributes())),
	}
	if p := sp.GetParentSpanId(); len(p) > 0 {
		s.ParentID = hex.EncodeToString(p)
	}
	for _, kv := range sp.GetAttributes() {
		s.Attrs[kv.GetKey()] = anyValue(kv.GetValue())
	}
	return s
}

func anyValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	}
	return nil
}
