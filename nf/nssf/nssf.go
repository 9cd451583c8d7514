// Package nssf is the network slice selection function of L25GC+ (TS
// 29.531 Nnssf_NSSelection; TS 23.501 5.15.5; TS 23.502 4.2.2.2.3, 4.3.2.2.3):
// which of a UE's slices it may use here, and where a PDU session's slice
// is served. The slices this core serves are the node config's snssais
// (every TA of the config serves all of them); one network slice instance
// per S-NSSAI, whose NRF is this core's.
package nssf

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
)

// NF is the NSSF.
type NF struct {
	env    *nf.Env
	log    *slog.Logger
	id     string
	served []models.Snssai
	tais   []domain.TAI
	nrfURI string
	// answers are the encoded answers to registration queries.
	answers *answerCache
}

// New builds the NSSF from the node config.
func New(env *nf.Env) (*NF, error) {
	cfg := env.Config
	n := &NF{env: env, log: env.Log, served: domain.SNSSAIsToModels(cfg.SNSSAIs), nrfURI: cfg.NRFURI(), answers: newAnswerCache(),
		id: sbi.InstanceID(models.NrfNfManagementNfType_NSSF, cfg.AdvertisedAddr(cfg.NSSF.SBIPort))}
	for _, s := range cfg.TACs {
		tac, err := domain.ParseTAC(s)
		if err != nil {
			return nil, err
		}
		n.tais = append(n.tais, domain.TAI{PLMN: cfg.PLMN, TAC: tac})
	}
	return n, nil
}

// Handler serves nnssf-nsselection (TS 29.531 6.1.3.2).
func (n *NF) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+SelectionPath, n.handleSelection)
	return mux
}

// SelectionPath is the network-slice-information resource (TS 29.531 6.1.3.2.1).
const SelectionPath = "/nnssf-nsselection/v2/network-slice-information"

// Profile is the NSSF's NRF profile (TS 29.510 6.1.6.2.2).
func (n *NF) Profile() models.NrfNfManagementNfProfile {
	cfg := n.env.Config
	return sbi.Profile(n.id, models.NrfNfManagementNfType_NSSF, cfg.AdvertisedIP(), cfg.NSSF.SBIPort, n.env.PLMN(),
		models.ServiceName_NNSSF_NSSELECTION)
}

// Start has no background work.
func (n *NF) Start(context.Context) error { return nil }

// Stop has nothing to stop.
func (n *NF) Stop(context.Context) {}
