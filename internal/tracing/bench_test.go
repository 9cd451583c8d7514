package tracing_test

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// BenchmarkSBIRoundTrip measures one SBI request and answer over tcp and
// xio, side by side in one run:
//
//   - plain: the transport as nf.NewEnv built it before tracing;
//
//   - off: the tracing hooks in place (client RoundTripper, server
//     Handler with a nil Provider) and no span in the context, the cost a
//     hook adds when tracing is off (nf.NewEnv does not even install them
//     then);
//
//   - on: every request traced, client and server span, exported to memory.
//
//     go test -run - -bench SBIRoundTrip -benchmem ./internal/tracing
func BenchmarkSBIRoundTrip(b *testing.B) {
	for _, tr := range sbitest.Transports() {
		if tr.Name() == "xio-socket" {
			continue
		}
		exp := tracetest.NewInMemoryExporter()
		on, err := tracing.New(tracing.Options{Service: "bench", Exporters: []tracing.SpanExporter{exp}})
		if err != nil {
			b.Fatal(err)
		}
		answer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"supi":"imsi-208930000000001"}`))
		})
		for _, c := range []struct {
			name   string
			p      *tracing.Provider
			client http.RoundTripper
			server http.Handler
		}{
			{"plain", nil, tr.RoundTripper(), answer},
			{"off", nil, tracing.RoundTripper(tr.RoundTripper()), tracing.Handler(nil, answer)},
			{"on", on, tracing.RoundTripper(tr.RoundTripper()), tracing.Handler(on, answer)},
		} {
			b.Run(tr.Name()+"/"+c.name, func(b *testing.B) {
				url := sbitest.Serve(b, tr, c.server) + "/nudm-sdm/v2/imsi-208930000000001/am-data"
				client := sbi.NewClient(c.client, nil)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					ctx, root := context.Background(), trace.SpanFromContext(context.Background())
					if c.p != nil {
						ctx, root = c.p.Tracer().Start(ctx, "RegistrationRequest")
					}
					var out map[string]string
					if _, err := client.Do(ctx, http.MethodGet, url, nil, &out); err != nil {
						b.Fatal(err)
					}
					root.End()
				}
				b.StopTimer()
				exp.Reset()
			})
		}
		_ = on.Shutdown(context.Background())
	}
}
