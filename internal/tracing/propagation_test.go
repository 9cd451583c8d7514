package tracing_test

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

func TestMain(m *testing.M) { sbitest.Main(m) }

// provider is one NF's tracing, exporting to exp as each span ends.
func provider(t *testing.T, service string, exp *tracetest.InMemoryExporter) *tracing.Provider {
	t.Helper()
	p, err := tracing.New(tracing.Options{Service: service, Exporters: []tracing.SpanExporter{exp}, Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// An AMF span calls the UDM, whose handler calls the UDR, over each SBI
// transport: the traceparent header must make one trace of the five spans,
// each server span the child of its client's span, as a reader of the
// trace in Jaeger expects.
func TestTraceparentMakesOneTraceAcrossTwoServers(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		exp := tracetest.NewInMemoryExporter()
		udr := sbitest.Serve(t, tr, tracing.Handler(provider(t, "l25gc-udr", exp), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("{}"))
		})))
		udmClient := sbi.NewClient(tracing.RoundTripper(tr.RoundTripper()), nil)
		udm := sbitest.Serve(t, tr, tracing.Handler(provider(t, "l25gc-udm", exp), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := udmClient.Do(r.Context(), http.MethodGet, udr+"/nudr-dr/v1/subscription-data/imsi-208930000000001/authentication-data/authentication-subscription", nil, nil); err != nil {
				t.Errorf("UDM → UDR: %v", err)
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("{}"))
		})))
		amf := provider(t, "l25gc-amf", exp)
		amfClient := sbi.NewClient(tracing.RoundTripper(tr.RoundTripper()), nil)
		ctx, root := amf.Tracer().Start(context.Background(), "RegistrationRequest")
		if _, err := amfClient.Do(ctx, http.MethodPost, udm+"/nudm-ueau/v1/suci-0-208-93-0000-0-0-0000000001/security-information/generate-auth-data", map[string]string{}, nil); err != nil {
			t.Fatalf("AMF → UDM: %v", err)
		}
		root.End()

		spans := exp.GetSpans()
		byName := map[string]tracetest.SpanStub{}
		for _, s := range spans {
			byName[s.Resource.Attributes()[0].Value.AsString()+" "+s.SpanKind.String()+" "+s.Name] = s
		}
		want := []string{ // child first, each the child of the next
			"l25gc-udr server GET /nudr-dr/v1/subscription-data/{}/authentication-data/authentication-subscription",
			"l25gc-udm client GET /nudr-dr/v1/subscription-data/{}/authentication-data/authentication-subscription",
			"l25gc-udm server POST /nudm-ueau/v1/{}/security-information/generate-auth-data",
			"l25gc-amf client POST /nudm-ueau/v1/{}/security-information/generate-auth-data",
			"l25gc-amf internal RegistrationRequest",
		}
		if len(spans) != len(want) {
			t.Fatalf("%d spans %v, want %d", len(spans), keys(byName), len(want))
		}
		for i, name := range want {
			s, ok := byName[name]
			if !ok {
				t.Fatalf("no span %q among %v", name, keys(byName))
			}
			if s.SpanContext.TraceID() != root.SpanContext().TraceID() {
				t.Errorf("%q is in trace %s, want the AMF's %s", name, s.SpanContext.TraceID(), root.SpanContext().TraceID())
			}
			if i+1 < len(want) && s.Parent.SpanID() != byName[want[i+1]].SpanContext.SpanID() {
				t.Errorf("%q's parent is %s, want %q", name, s.Parent.SpanID(), want[i+1])
			}
		}
	})
}

func keys(m map[string]tracetest.SpanStub) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// With tracing off the middleware is the handler itself and a request
// leaves without a traceparent: nothing is recorded or exported.
func TestTracingOffAddsNothing(t *testing.T) {
	p, err := tracing.New(tracing.Options{Service: "l25gc-amf"})
	if err != nil || p != nil {
		t.Fatalf("New without collectors = %v, %v; want nil (off)", p, err)
	}
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		var header string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			header = r.Header.Get("Traceparent")
			w.WriteHeader(http.StatusNoContent)
		})
		if got := tracing.Handler(nil, h); got == nil {
			t.Fatal("Handler(nil, h) = nil")
		}
		url := sbitest.Serve(t, tr, tracing.Handler(nil, h))
		c := sbi.NewClient(tracing.RoundTripper(tr.RoundTripper()), nil)
		ctx, span := p.Tracer().Start(context.Background(), "off")
		if span.IsRecording() {
			t.Error("the off provider's span records")
		}
		if _, err := c.Do(ctx, http.MethodGet, url+"/nudm-sdm/v1/x", nil, nil); err != nil {
			t.Fatal(err)
		}
		if header != "" {
			t.Errorf("request carried traceparent %q with tracing off", header)
		}
	})
}
