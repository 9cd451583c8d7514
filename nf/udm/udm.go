// Package udm is the unified data management function of L25GC+ (TS 29.503):
// Nudm_UEAuthentication (SUCI deconcealment by the SIDF, 5G HE AV generation
// by the ARPF with SQN management, auth events), Nudm_UECM (AMF registration
// for 3GPP access) and Nudm_SDM (subscription data of the UE, subscriptions
// to its changes). Subscriber data lives in the UDR (TS 29.504); the UDM
// keeps only what it must serialise or remember between requests.
package udm

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/security"
)

// NF is the UDM.
type NF struct {
	env   *nf.Env
	log   *slog.Logger
	id    string
	keys  security.HomeNetworkKeys
	udr   *udrClient
	ues   *ueState
	seen  *recentUsers // subscribers the UDR answered for a moment ago
	pairs *pairReads   // step 14b reads shared by the two SDM Gets
}

// New builds the UDM; it fails when a configured SUCI key is unusable.
func New(env *nf.Env) (*NF, error) {
	keys, err := homeNetworkKeys(env.Config.UDM.SUCIKeys)
	if err != nil {
		return nil, fmt.Errorf("udm: %w", err)
	}
	cfg := env.Config
	return &NF{
		env: env, log: env.Log, keys: keys,
		id:  sbi.InstanceID(models.NrfNfManagementNfType_UDM, cfg.AdvertisedAddr(cfg.UDM.SBIPort)),
		udr: &udrClient{c: env.Client, nrf: env.NRF}, ues: newUEState(), seen: newRecentUsers(), pairs: newPairReads(),
	}, nil
}

// Handler serves nudm-ueau, nudm-uecm and nudm-sdm.
func (n *NF) Handler() http.Handler {
	mux := http.NewServeMux()
	n.routeUEAU(mux)
	n.routeUECM(mux)
	n.routeSDM(mux)
	n.routeSession(mux)
	return mux
}

// Profile is the UDM's NRF profile (TS 29.510 6.1.6.2.2).
func (n *NF) Profile() models.NrfNfManagementNfProfile {
	cfg := n.env.Config
	return sbi.Profile(n.id, models.NrfNfManagementNfType_UDM, cfg.AdvertisedIP(), cfg.UDM.SBIPort, n.env.PLMN(),
		models.ServiceName_NUDM_UEAU, models.ServiceName_NUDM_UECM, models.ServiceName_NUDM_SDM)
}

// Start logs the home network public keys, which USIMs (and the simulator)
// need to conceal SUPIs (TS 33.501 6.12.2).
func (n *NF) Start(context.Context) error {
	for _, k := range n.keys {
		pub, err := k.PublicKey()
		if err != nil {
			return fmt.Errorf("udm: SUCI key %d: %w", k.ID, err)
		}
		n.log.Info("SUCI home network public key", "keyId", k.ID, "scheme", schemeName(k.Scheme), "publicKey", hex.EncodeToString(pub))
	}
	return nil
}

// Stop has no background work to end.
func (n *NF) Stop(context.Context) {}
