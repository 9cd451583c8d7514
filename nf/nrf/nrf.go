// Package nrf is the network repository function of L25GC+ (TS 29.510):
// NFManagement (register, heartbeat, deregister, list, status
// subscriptions and notifications) and NFDiscovery over an in-memory
// registry. The NRF does not register with itself.
package nrf

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
)

// NF is the NRF.
type NF struct {
	env       *nf.Env
	log       *slog.Logger
	validity  time.Duration
	heartbeat time.Duration // heartBeatTimer assigned to every NF
	now       func() time.Time
	reg       *registry
	subs      *subscriptions
	issuer    *sbi.TokenIssuer // nil without SBI security

	stopSweep context.CancelFunc
	swept     sync.WaitGroup
}

// New builds the NRF from its environment.
func New(env *nf.Env) (*NF, error) {
	n := &NF{env: env, log: env.Log, validity: env.Config.NRF.ValidityPeriod,
		heartbeat: env.Config.NRF.HeartbeatTimer, now: time.Now, reg: newRegistry()}
	n.subs = newSubscriptions(env.Client, n.log)
	if env.Security != nil {
		var err error
		if n.issuer, err = n.newIssuer(); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Handler serves Nnrf_NFManagement, Nnrf_NFDiscovery and Nnrf_AccessToken
// (TS 29.510 6.1.3, 6.2.3, 6.3.3).
func (n *NF) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /nnrf-nfm/v1/nf-instances/{nfInstanceID}", n.handleRegister)
	mux.HandleFunc("GET /nnrf-nfm/v1/nf-instances/{nfInstanceID}", n.handleGetInstance)
	mux.HandleFunc("PATCH /nnrf-nfm/v1/nf-instances/{nfInstanceID}", n.handleUpdate)
	mux.HandleFunc("DELETE /nnrf-nfm/v1/nf-instances/{nfInstanceID}", n.handleDeregister)
	mux.HandleFunc("GET /nnrf-nfm/v1/nf-instances", n.handleList)
	mux.HandleFunc("POST /nnrf-nfm/v1/subscriptions", n.handleSubscribe)
	mux.HandleFunc("DELETE /nnrf-nfm/v1/subscriptions/{subscriptionID}", n.handleUnsubscribe)
	mux.HandleFunc("GET /nnrf-disc/v1/nf-instances", n.handleDiscover)
	mux.HandleFunc("POST "+sbi.AccessTokenPath, n.handleAccessToken)
	mux.HandleFunc("GET "+sbi.AccessTokenKeyPath, n.handleTokenKey)
	return mux
}

// Profile has no instance id: the NRF is where others register, not a
// registrant (nf.Run skips registration for it).
func (n *NF) Profile() models.NrfNfManagementNfProfile {
	return models.NrfNfManagementNfProfile{NfType: models.NrfNfManagementNfType_NRF,
		NfStatus: models.NrfNfManagementNfStatus_REGISTERED}
}

// Start watches the heartbeats (heartbeat.go).
func (n *NF) Start(ctx context.Context) error {
	ctx, n.stopSweep = context.WithCancel(ctx)
	n.swept.Add(1)
	go func() {
		defer n.swept.Done()
		n.watchHeartbeats(ctx)
	}()
	return nil
}

// Stop ends the heartbeat watch.
func (n *NF) Stop(context.Context) {
	if n.stopSweep != nil {
		n.stopSweep()
		n.swept.Wait()
	}
}
