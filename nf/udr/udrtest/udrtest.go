// Package udrtest serves a real UDR (package udr, embedded store under a
// test's temporary directory, the config's subscriber ranges provisioned)
// for the tests of the NFs that consume it, so they exercise the paths and
// causes the UDR really speaks.
package udrtest

import (
	"context"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/nrf/nrftest"
	"github.com/l25gc/l25gc/nf/udr"
	"github.com/l25gc/l25gc/sbi"
)

// Serve starts a UDR with cfg (config.Default when nil; its DataDir is
// replaced by a temporary one) over tr and returns it with its NRF profile,
// for nrftest.Env's peers.
func Serve(t testing.TB, tr sbi.Transport, cfg *config.Config) (*udr.NF, models.NrfNfManagementNfProfile) {
	t.Helper()
	if cfg == nil {
		cfg = config.Default()
	}
	cfg.DataDir = t.TempDir()
	ctx := context.Background()
	u, err := udr.New(nrftest.Env(t, tr, cfg, models.NrfNfManagementNfType_UDR))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Stop(ctx) })
	return u, nrftest.Peer(t, models.NrfNfManagementNfType_UDR, nrftest.Serve(t, tr, u.Handler()), models.ServiceName_NUDR_DR)
}
