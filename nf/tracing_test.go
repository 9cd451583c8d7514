package nf_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
)

// An NF started with tracing.otlp exports a server span per request,
// the child of the caller's span named in traceparent; without it, the
// collector receives nothing, whatever the caller sends.
func TestNFExportsServerSpansOnlyWithTracingOn(t *testing.T) {
	for _, on := range []bool{true, false} {
		col, err := tracing.StartCollector("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer col.Close()
		cfg := config.Default()
		if on {
			cfg.Tracing.OTLP = []string{col.Addr()}
		}
		env := nf.NewEnv(cfg, logging.Discard(), sbi.NewTCP(), models.NrfNfManagementNfType_UDM)
		if env.Tracing.On() != on {
			t.Fatalf("tracing.otlp %v: env.Tracing.On() = %v", cfg.Tracing.OTLP, env.Tracing.On())
		}
		addr := freeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- nf.Run(ctx, env, function{}, addr, "") }()

		caller, _ := tracing.New(tracing.Options{Service: "caller", OTLP: []string{col.Addr()}})
		cctx, root := caller.Tracer().Start(context.Background(), "RegistrationRequest")
		c := sbi.NewClient(tracing.RoundTripper(sbi.NewTCP().RoundTripper()), nil)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) { // a bound on a hang
			_, err := c.Do(cctx, http.MethodGet, "http://"+addr+"/nudm-sdm/v2/imsi-208930000000001/am-data", nil, nil)
			if sbi.StatusOf(err) == http.StatusNotFound || time.Now().After(deadline) {
				break
			}
		}
		root.End()
		cancel()
		if err := <-done; err != nil { // Run's shutdown flushes the NF's spans
			t.Fatal(err)
		}
		_ = caller.Shutdown(context.Background())
		var server []tracing.Span
		for _, s := range col.Spans() {
			if s.Service == "l25gc-udm" {
				server = append(server, s)
			}
		}
		switch {
		case on && (len(server) != 1 || server[0].TraceID != root.SpanContext().TraceID().String()):
			t.Errorf("tracing on: UDM spans %+v, want one server span in the caller's trace", server)
		case !on && len(server) != 0:
			t.Errorf("tracing off: the UDM exported %d spans", len(server))
		}
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
