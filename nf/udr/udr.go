// Package udr is the unified data repository of L25GC+: Nudr_DataRepository
// (TS 29.504) over the subscription data of TS 29.505 and the policy data of
// TS 29.519, kept in a store.Store (embedded file or free5GC's MongoDB
// layout), plus the subscriber provisioning API of package prov.
//
// Files by role: context.go (the store and start-up provisioning),
// handler_dr.go (nudr-dr), handler_prov.go (l25gc-prov), problem.go (how
// store errors become ProblemDetails). The UDR consumes no other NF's
// service, so it has no consumer.go.
package udr

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/sbi"
)

// NF is the UDR.
type NF struct {
	env      *nf.Env
	log      *slog.Logger
	id       string
	store    store.Store
	plmn     string // serving PLMN of provisioned data, "<MCC><MNC>"
	defaults prov.Defaults
	// adminToken authorises the provisioning API; "" (no token file could
	// be made) authorises nothing.
	adminToken string
	maxBulk    int // subscribers per bulk request (udr.max_bulk)
}

var _ nf.Function = (*NF)(nil)

// New builds the UDR over the store the config names (udr.store: embedded,
// a file relative to data_dir, or mongodb). Start provisions the config's
// subscriber ranges; Stop closes the store.
func New(env *nf.Env) (*NF, error) {
	st, err := OpenStore(context.Background(), env.Config)
	if err != nil {
		return nil, fmt.Errorf("udr: %w", err)
	}
	return NewWithStore(env, st), nil
}

// NewWithStore builds the UDR over an open store, which it owns from now on.
// The provisioning API's admin token comes from its file (created if
// absent, as `l25gc up` does); without one the API refuses every request.
func NewWithStore(env *nf.Env, st store.Store) *NF {
	cfg := env.Config
	n := &NF{
		env: env, log: env.Log, store: withTracing(env.Tracing.On(), st),
		id:       sbi.InstanceID(models.NrfNfManagementNfType_UDR, cfg.AdvertisedAddr(cfg.UDR.SBIPort)),
		plmn:     cfg.PLMN.String(),
		defaults: defaultsOf(cfg),
		maxBulk:  cfg.UDR.MaxBulk,
	}
	tok, err := prov.EnsureToken(cfg.AdminTokenPath())
	if err != nil {
		n.log.Error("the provisioning API refuses every request", "err", err)
	}
	n.adminToken = tok
	if n.maxBulk < 1 {
		n.maxBulk = config.Default().UDR.MaxBulk
	}
	return n
}

// Store is the UDR's data, for tools that run in the UDR's process.
func (n *NF) Store() store.Store { return n.store }

// Handler serves nudr-dr and the provisioning API.
func (n *NF) Handler() http.Handler {
	mux := http.NewServeMux()
	n.routeDR(mux)
	n.routeSession(mux)
	n.routeProv(mux)
	return mux // unknown paths and methods: sbi.Handler's 404 and 405 ProblemDetails
}

// Profile is the UDR's NRF profile (TS 29.510 6.1.6.2.2), under an instance
// id derived from its address, so a restart replaces its registration.
func (n *NF) Profile() models.NrfNfManagementNfProfile {
	cfg := n.env.Config
	return sbi.Profile(n.id, models.NrfNfManagementNfType_UDR, cfg.AdvertisedIP(), cfg.UDR.SBIPort, n.env.PLMN(),
		models.ServiceName_NUDR_DR)
}

// Start provisions the configured subscriber ranges that are absent; those
// already stored keep their data, their SQN especially.
func (n *NF) Start(ctx context.Context) error {
	return n.provisionConfigured(ctx)
}

// Stop closes the store (the embedded one syncs its file).
func (n *NF) Stop(ctx context.Context) {
	if err := n.store.Close(ctx); err != nil {
		n.log.Error("closing the store", "err", err)
	}
}
