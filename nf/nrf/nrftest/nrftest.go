// Package nrftest lets NF tests discover fake peers through a real NRF
// (package nrf) served by httptest, so consumers are tested with the same
// discovery path they use in production.
package nrftest

import (
	"context"
	"net/http"
	"net/http/httptest"
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
)

// Env returns the environment of an NF of nfType under test: cfg (defaults
// when nil), a silent log, an SBI client over HTTP/1.1 (httptest speaks
// it), and an NRF client of an NRF on which peers are registered.
func Env(t testing.TB, cfg *config.Config, nfType models.NrfNfManagementNfType, peers ...models.NrfNfManagementNfProfile) *nf.Env {
	t.Helper()
	if cfg == nil {
		cfg = config.Default()
	}
	reg := prometheus.NewRegistry()
	m := sbi.NewMetrics(reg)
	client := sbi.NewClient(http.DefaultTransport, m)
	env := &nf.Env{Config: cfg, Log: logging.Discard(), Registry: reg, Metrics: m, Client: client}
	n, err := nrf.New(env)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sbi.Handler(n.Handler(), nil, env.Log))
	t.Cleanup(srv.Close)
	env.NRF = sbi.NewNRFClient(client, srv.URL, nfType)
	for _, p := range peers {
		if err := env.NRF.Register(context.Background(), p); err != nil {
			t.Fatalf("register %s peer: %v", p.NfType, err)
		}
	}
	return env
}

// Peer is the profile of an NF of nfType offering services at baseURL (an
// httptest server's URL).
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

// Serve serves h (wrapped in sbi.Handler, as nf.Run does) on an httptest
// server closed at the end of the test, and returns its URL.
func Serve(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(sbi.Handler(h, nil, logging.Discard()))
	t.Cleanup(srv.Close)
	return srv.URL
}
