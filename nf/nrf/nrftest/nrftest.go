// Package nrftest lets NF tests discover fake peers through a real NRF
// (package nrf), so consumers are tested with the same discovery path they
// use in production. The NRF, the peers and the clients all run over the
// SBI transport the test gives (package sbitest runs a test over each).
package nrftest

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/nf/nrf"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// Env returns the environment of an NF of nfType under test over tr: cfg
// (defaults when nil), a silent log, an SBI client over tr, and an NRF
// client of an NRF, served over tr, on which peers are registered.
func Env(t testing.TB, tr sbi.Transport, cfg *config.Config, nfType models.NrfNfManagementNfType, peers ...models.NrfNfManagementNfProfile) *nf.Env {
	t.Helper()
	if cfg == nil {
		cfg = config.Default()
	}
	reg := prometheus.NewRegistry()
	m := sbi.NewMetrics(reg)
	client := sbi.NewClient(tr.RoundTripper(), m)
	env := &nf.Env{Config: cfg, Log: logging.Discard(), Transport: tr, Registry: reg, Metrics: m, Client: client}
	n, err := nrf.New(env)
	if err != nil {
		t.Fatal(err)
	}
	env.NRF = sbi.NewNRFClient(client, sbitest.Serve(t, tr, n.Handler()), nfType)
	for _, p := range peers {
		if err := env.NRF.Register(context.Background(), p); err != nil {
			t.Fatalf("register %s peer: %v", p.NfType, err)
		}
	}
	return env
}

// Peer is the profile of an NF of nfType offering services at baseURL (a
// URL Serve returned).
func Peer(t testing.TB, nfType models.NrfNfManagementNfType, baseURL string, services ...models.ServiceName) models.NrfNfManagementNfProfile {
	t.Helper()
	u, err := url.Parse(baseURL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatalf("peer URL %q has no port", baseURL)
	}
	return sbi.Profile(sbi.InstanceID(nfType, u.Host), nfType, u.Hostname(), port,
		models.PlmnId{Mcc: "208", Mnc: "93"}, services...)
}

// Serve serves h over tr (wrapped in sbi.Handler, as nf.Run does) until the
// end of the test, and returns its URL.
func Serve(t testing.TB, tr sbi.Transport, h http.Handler) string {
	t.Helper()
	return sbitest.Serve(t, tr, h)
}
