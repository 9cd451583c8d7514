package tracing

import (
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// propagator carries the W3C trace context (traceparent, tracestate) in a
// request's headers: X-IO's message level copies headers like HTTP/2 does,
// so one propagation serves every SBI transport.
var propagator = propagation.TraceContext{}

// Handler wraps an NF's SBI handler: a request gets a server span, a child
// of the client's span when its traceparent names one, else a root.
// With p nil (off) it returns h itself.
func Handler(p *Provider, h http.Handler) http.Handler {
	if p == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := p.tracer.Start(ctx, Operation(r.Method, r.URL.Path),
			trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(KeyHop.String(HopSBIServer)))
		sw := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() { endHTTP(span, sw.status) }()
		h.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// RoundTripper wraps rt: a request whose context holds a recording span
// gets a client span and carries its traceparent; any other request goes
// to rt untouched.
func RoundTripper(rt http.RoundTripper) http.RoundTripper { return clientRT{rt} }

type clientRT struct{ next http.RoundTripper }

func (c clientRT) RoundTrip(req *http.Request) (*http.Response, error) {
	parent := trace.SpanFromContext(req.Context())
	if !traced(parent) {
		return c.next.RoundTrip(req)
	}
	ctx, span := parent.TracerProvider().Tracer("").Start(req.Context(), Operation(req.Method, req.URL.Path),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(KeyHop.String(HopSBIClient)))
	// A RoundTripper must not change the caller's request (net/http).
	req = req.Clone(ctx)
	propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return nil, err
	}
	endHTTP(span, resp.StatusCode)
	return resp, nil
}

// Unwrap reaches the transport underneath (for code that inspects it).
func (c clientRT) Unwrap() http.RoundTripper { return c.next }

func endHTTP(span trace.Span, status int) {
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, strconv.Itoa(status))
	}
	span.End()
}

// Operation names an SBI request by method and path, with each segment
// that identifies a resource (a SUPI, a context reference, a number)
// replaced by {}: "PUT /nudm-uecm/v1/imsi-208930000000001/registrations/amf-3gpp-access"
// is "PUT /nudm-uecm/v1/{}/registrations/amf-3gpp-access", one row of the
// breakdown for every UE.
func Operation(method, path string) string {
	var b strings.Builder
	b.Grow(len(method) + 1 + len(path))
	b.WriteString(method)
	b.WriteByte(' ')
	for i, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		b.WriteByte('/')
		if i != 1 && identifies(seg) { // segment 1 is the API version (v1)
			b.WriteString("{}")
		} else {
			b.WriteString(seg)
		}
	}
	return b.String()
}

// identifies says whether a path segment names one resource rather than
// a collection: a number, or a token with 4 digits or more (SUPIs, SUCIs,
// UUIDs); "5g-aka-confirmation" and "amf-3gpp-access" stay.
func identifies(seg string) bool {
	digits := 0
	for i := 0; i < len(seg); i++ {
		if seg[i] >= '0' && seg[i] <= '9' {
			digits++
		}
	}
	return digits >= 4 || (digits > 0 && digits == len(seg))
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusRecorder) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
