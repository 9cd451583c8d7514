// Package nrf is the network repository function of L25GC+ (TS 29.510):
// NFManagement (register, heartbeat, deregister, list) and NFDiscovery over
// an in-memory registry. The NRF does not register with itself.
package nrf

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf"
)

// NF is the NRF.
type NF struct {
	env      *nf.Env
	log      *slog.Logger
	validity time.Duration
	reg      *registry
}

// New builds the NRF from its environment.
func New(env *nf.Env) (*NF, error) {
	return &NF{env: env, log: env.Log.With("nf", "nrf"), validity: env.Config.NRF.ValidityPeriod, reg: newRegistry()}, nil
}

// Handler serves Nnrf_NFManagement and Nnrf_NFDiscovery (TS 29.510 6.1.3, 6.2.3).
func (n *NF) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /nnrf-nfm/v1/nf-instances/{nfInstanceID}", n.handleRegister)
	mux.HandleFunc("GET /nnrf-nfm/v1/nf-instances/{nfInstanceID}", n.handleGetInstance)
	mux.HandleFunc("PATCH /nnrf-nfm/v1/nf-instances/{nfInstanceID}", n.handleUpdate)
	mux.HandleFunc("DELETE /nnrf-nfm/v1/nf-instances/{nfInstanceID}", n.handleDeregister)
	mux.HandleFunc("GET /nnrf-nfm/v1/nf-instances", n.handleList)
	mux.HandleFunc("GET /nnrf-disc/v1/nf-instances", n.handleDiscover)
	return mux
}

// Profile has no instance id: the NRF is where others register, not a
// registrant (nf.Run skips registration for it).
func (n *NF) Profile() models.NrfNfManagementNfProfile {
	return models.NrfNfManagementNfProfile{NfType: models.NrfNfManagementNfType_NRF,
		NfStatus: models.NrfNfManagementNfStatus_REGISTERED}
}

// Start has nothing to run in the background.
func (n *NF) Start(context.Context) error { return nil }

// Stop has nothing to stop.
func (n *NF) Stop(context.Context) {}
