// Package ausf is the authentication server function of L25GC+ (TS 29.509
// Nausf_UEAuthentication, 5G AKA of TS 33.501 6.1.3.2): it asks the UDM for
// a 5G HE AV, hands the SEAF (AMF) the 5G SE AV with HXRES*, verifies RES*
// and releases KSEAF and the SUPI only on success.
package ausf

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/security"
)

// contextLifetime bounds how long an authentication waits for its RES*: a
// UE that never answers (or an attacker) cannot make contexts pile up. The
// AMF's T3560 gives up after 5 × 6 s, so 30 s covers a normal exchange.
const contextLifetime = 30 * time.Second

// NF is the AUSF.
type NF struct {
	env *nf.Env
	log *slog.Logger
	id  string
	snn string // the serving network name of this PLMN (TS 24.501 9.12.1)
	udm *udmClient

	auths *authContexts
	// events tracks result reports to the UDM still in flight, so Stop
	// waits for them.
	events sync.WaitGroup
}

// New builds the AUSF.
func New(env *nf.Env) (*NF, error) {
	cfg := env.Config
	return &NF{
		env: env, log: env.Log,
		id:    sbi.InstanceID(models.NrfNfManagementNfType_AUSF, cfg.AdvertisedAddr(cfg.AUSF.SBIPort)),
		snn:   security.ServingNetworkName(cfg.PLMN.MCC, cfg.PLMN.MNC),
		udm:   &udmClient{c: env.Client, nrf: env.NRF},
		auths: newAuthContexts(contextLifetime, time.Now),
	}, nil
}

// Handler serves nausf-auth.
func (n *NF) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /nausf-auth/v1/ue-authentications", n.handleAuthenticate)
	mux.HandleFunc("PUT /nausf-auth/v1/ue-authentications/{authCtxId}/5g-aka-confirmation", n.handleConfirm)
	return mux
}

// Profile is the AUSF's NRF profile (TS 29.510 6.1.6.2.2).
func (n *NF) Profile() models.NrfNfManagementNfProfile {
	cfg := n.env.Config
	return sbi.Profile(n.id, models.NrfNfManagementNfType_AUSF, cfg.AdvertisedIP(), cfg.AUSF.SBIPort, n.env.PLMN(),
		models.ServiceName_NAUSF_AUTH)
}

// Start has no background work: expired contexts are swept as new ones come.
func (n *NF) Start(context.Context) error { return nil }

// Stop waits for the result reports still on their way to the UDM.
func (n *NF) Stop(context.Context) { n.events.Wait() }
