package nrf

// Nnrf_NFDiscovery producer (TS 29.510 5.3.2.2, resource of 6.2.3.2).

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/sbi"
)

// query is the part of a discovery request the NRF filters on.
type query struct {
	target     models.NrfNfManagementNfType
	services   []models.ServiceName
	snssais    []models.Snssai
	plmns      []models.PlmnId
	instanceID string
}

// handleDiscover answers NFDiscover with the REGISTERED instances matching
// the query, valid for the configured validity period (6.2.6.2.3).
func (n *NF) handleDiscover(w http.ResponseWriter, r *http.Request) {
	q, param, err := parseQuery(r.URL.Query())
	if err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidQueryParam, param+": "+err.Error())
		return
	}
	if param != "" {
		// TS 29.510 6.2.3.2.3.1: target-nf-type and requester-nf-type are mandatory.
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryQueryParamMissing, param+" is missing")
		return
	}
	res := models.SearchResult{ValidityPeriod: int32(n.validity.Seconds()), NfInstances: []models.NrfNfDiscoveryNfProfile{}}
	for _, p := range n.reg.match(q.matches) {
		dp, err := discoveryProfile(p)
		if err != nil {
			n.log.Warn("profile not convertible for discovery", "nfInstanceId", p.NfInstanceId, "err", err)
			continue
		}
		res.NfInstances = append(res.NfInstances, dp)
	}
	sbi.WriteJSON(w, http.StatusOK, res)
}

// parseQuery reads the query parameters of 6.2.3.2.3.1. It returns the name
// of the first missing mandatory parameter (err nil), or of the first
// malformed one (err set).
func parseQuery(v url.Values) (q query, param string, err error) {
	for _, m := range []string{"target-nf-type", "requester-nf-type"} {
		if v.Get(m) == "" {
			return q, m, nil
		}
	}
	q.target = models.NrfNfManagementNfType(v.Get("target-nf-type"))
	q.instanceID = v.Get("target-nf-instance-id")
	for _, s := range splitList(v["service-names"]) {
		q.services = append(q.services, models.ServiceName(s))
	}
	// Arrays of objects are JSON in the query (TS 29.501 5.2.4, content application/json).
	if s := v.Get("snssais"); s != "" {
		if err := json.Unmarshal([]byte(s), &q.snssais); err != nil {
			return q, "snssais", err
		}
	}
	if s := v.Get("target-plmn-list"); s != "" {
		if err := json.Unmarshal([]byte(s), &q.plmns); err != nil {
			return q, "target-plmn-list", err
		}
	}
	return q, "", nil
}

// splitList reads an array of strings sent in form style: comma separated,
// or the parameter repeated (both occur in the field).
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// matches says whether a registered profile answers the query.
func (q query) matches(p *models.NrfNfManagementNfProfile) bool {
	return p.NfType == q.target &&
		p.NfStatus == models.NrfNfManagementNfStatus_REGISTERED &&
		(q.instanceID == "" || p.NfInstanceId == q.instanceID) &&
		q.offersService(p) && q.servesSlice(p) && q.servesPLMN(p)
}

// offersService: at least one requested service is offered.
func (q query) offersService(p *models.NrfNfManagementNfProfile) bool {
	if len(q.services) == 0 {
		return true
	}
	for _, s := range p.NfServices {
		if slices.Contains(q.services, s.ServiceName) {
			return true
		}
	}
	return false
}

// servesSlice: a profile without sNssais serves every slice (TS 29.510
// 6.1.6.2.2); otherwise one of its entries must serve a requested S-NSSAI
// (domain.MatchModelSNSSAI: wildcardSd and sdRanges as declared, an entry
// without an SD only the SST-only slice).
func (q query) servesSlice(p *models.NrfNfManagementNfProfile) bool {
	if len(q.snssais) == 0 || len(p.SNssais) == 0 {
		return true
	}
	for _, want := range q.snssais {
		for _, have := range p.SNssais {
			if domain.MatchModelSNSSAI(have, want) {
				return true
			}
		}
	}
	return false
}

// servesPLMN: a profile without plmnList serves the NRF's PLMN, which we
// treat as any; otherwise one requested PLMN must be listed.
func (q query) servesPLMN(p *models.NrfNfManagementNfProfile) bool {
	if len(q.plmns) == 0 || len(p.PlmnList) == 0 {
		return true
	}
	for _, want := range q.plmns {
		if slices.Contains(p.PlmnList, want) {
			return true
		}
	}
	return false
}
