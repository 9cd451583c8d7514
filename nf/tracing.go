package nf

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/tracing"
)

// newTracing is the NF process's span export (config tracing.otlp); nil,
// tracing off, when the config names no collector or the exporter cannot
// be built (logged: tracing is never a reason not to serve).
func newTracing(cfg *config.Config, log *slog.Logger, nfType models.NrfNfManagementNfType) *tracing.Provider {
	if !cfg.Tracing.On() {
		return nil
	}
	p, err := tracing.New(tracing.Options{Service: "l25gc-" + strings.ToLower(string(nfType)), OTLP: cfg.Tracing.OTLP})
	if err != nil {
		log.Warn("tracing off", "err", err)
		return nil
	}
	log.Info("tracing", "otlp", cfg.Tracing.OTLP)
	return p
}

// traced puts the client span and traceparent on the NF's requests when
// tracing is on; off, rt itself, so an SBI call costs what it did.
func traced(p *tracing.Provider, rt http.RoundTripper) http.RoundTripper {
	if !p.On() {
		return rt
	}
	return tracing.RoundTripper(rt)
}
