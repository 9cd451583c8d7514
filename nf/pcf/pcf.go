// Package pcf is the policy control function of L25GC+: access and
// mobility policy (TS 29.507 Npcf_AMPolicyControl; TS 23.502 4.16.1.2,
// 4.16.2.1, 4.16.3.2), one AM policy association per UE decided from the
// AMF's request and the UE's AM policy data, and session management policy
// (TS 29.512 Npcf_SMPolicyControl; TS 23.502 4.16.4-4.16.6), one SM policy
// association per PDU session decided from the SMF's context and the UE's
// SM policy data, both kept in the UDR (TS 29.519).
package pcf

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/gopool"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
)

const policiesPath = "/npcf-am-policy-control/v1/policies"

// NF is the PCF.
type NF struct {
	env        *nf.Env
	log        *slog.Logger
	id         string
	udr        *udrClient
	policies   *table[association] // AM policies, one per UE (by SUPI)
	smPolicies *table[smPolicy]    // SM policies, one per PDU session (by SUPI and PDU session id)
	// workers run the parallel UDR read of an SM policy creation on
	// goroutines whose stacks have grown already (internal/gopool).
	workers *gopool.Pool
}

// New builds the PCF.
func New(env *nf.Env) (*NF, error) {
	cfg := env.Config
	return &NF{env: env, log: env.Log,
		id:  sbi.InstanceID(models.NrfNfManagementNfType_PCF, cfg.AdvertisedAddr(cfg.PCF.SBIPort)),
		udr: &udrClient{c: env.Client, nrf: env.NRF}, policies: newTable[association](), smPolicies: newTable[smPolicy](),
		workers: gopool.New(0)}, nil
}

// Handler serves npcf-am-policy-control and npcf-smpolicycontrol.
func (n *NF) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+policiesPath, n.handleCreate)
	mux.HandleFunc("GET "+policiesPath+"/{polAssoId}", n.handleGet)
	mux.HandleFunc("POST "+policiesPath+"/{polAssoId}/update", n.handleUpdate)
	mux.HandleFunc("DELETE "+policiesPath+"/{polAssoId}", n.handleDelete)
	n.routeSMPolicy(mux)
	n.routeSMPolicyAdmin(mux)
	return mux
}

// Profile is the PCF's NRF profile (TS 29.510 6.1.6.2.2).
func (n *NF) Profile() models.NrfNfManagementNfProfile {
	cfg := n.env.Config
	return sbi.Profile(n.id, models.NrfNfManagementNfType_PCF, cfg.AdvertisedIP(), cfg.PCF.SBIPort, n.env.PLMN(),
		models.ServiceName_NPCF_AM_POLICY_CONTROL, models.ServiceName_NPCF_SMPOLICYCONTROL)
}

// Start has no background work.
func (n *NF) Start(context.Context) error { return nil }

// Stop has no background work to end.
func (n *NF) Stop(context.Context) {}
