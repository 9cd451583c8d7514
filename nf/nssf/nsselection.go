package nssf

// Nnssf_NSSelection_Get (TS 29.531 5.2.2.2): for registration (5.2.2.2.2,
// TS 23.502 4.2.2.2.3) the allowed, configured and rejected NSSAI; for a
// PDU session (5.2.2.2.3, TS 23.502 4.3.2.2.3) the slice instance and its
// NRF.

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/sbi"
)

// CauseSNSSAINotSupported is the answer for a slice this PLMN does not
// serve (TS 29.531 table 6.1.3.2.3.1-3, 403).
const CauseSNSSAINotSupported = "SNSSAI_NOT_SUPPORTED"

// nsiID names the one network slice instance of each served S-NSSAI.
const nsiID = "1"

func (n *NF) handleSelection(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	// TS 29.531 6.1.3.2.3.1: nf-type and nf-id are mandatory.
	if q.Get("nf-type") == "" || q.Get("nf-id") == "" {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryQueryParamMissing, "nf-type and nf-id are mandatory")
		return
	}
	reg, pdu := q.Get("slice-info-request-for-registration"), q.Get("slice-info-request-for-pdu-session")
	key := answerKey(reg, q.Get("tai"))
	if reg != "" && pdu == "" {
		if body, ok := n.answers.get(key); ok {
			sbi.WriteRawJSON(w, http.StatusOK, body)
			return
		}
	}
	tai, ok := n.readTAI(w, q.Get("tai"))
	if !ok {
		return
	}
	switch {
	case reg != "" && pdu == "":
		var info models.SliceInfoForRegistration
		if !decodeParam(w, "slice-info-request-for-registration", reg, &info) {
			return
		}
		body, err := json.Marshal(n.forRegistration(info, tai))
		if err != nil {
			sbi.WriteProblem(w, http.StatusInternalServerError, sbi.CauseSystemFailure, err.Error())
			return
		}
		n.answers.put(key, body)
		sbi.WriteRawJSON(w, http.StatusOK, body)
	case pdu != "" && reg == "":
		var info models.SliceInfoForPduSession
		if !decodeParam(w, "slice-info-request-for-pdu-session", pdu, &info) {
			return
		}
		n.answerPDUSession(w, info, tai)
	default:
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidQueryParam,
			"exactly one of slice-info-request-for-registration and slice-info-request-for-pdu-session is served")
	}
}

// decodeParam reads a JSON query parameter (TS 29.501 5.2.4: objects in
// queries go as JSON).
func decodeParam(w http.ResponseWriter, name, v string, out any) bool {
	if err := json.Unmarshal([]byte(v), out); err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidQueryParam, name+": "+err.Error())
		return false
	}
	return true
}

// readTAI reads the optional tai parameter; nil when absent.
func (n *NF) readTAI(w http.ResponseWriter, v string) (*domain.TAI, bool) {
	if v == "" {
		return nil, true
	}
	var m models.Tai
	if !decodeParam(w, "tai", v, &m) {
		return nil, false
	}
	t, err := domain.TAIFromModel(&m)
	if err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidQueryParam, "tai: "+err.Error())
		return nil, false
	}
	return &t, true
}

// servedIn says whether slice s is served in tai (all of ours serve all
// slices; a TA of no config serves none).
func (n *NF) servedIn(s models.Snssai, tai *domain.TAI) bool {
	if tai != nil && !slices.Contains(n.tais, *tai) {
		return false
	}
	return contains(n.served, s)
}

func contains(list []models.Snssai, s models.Snssai) bool {
	return slices.ContainsFunc(list, func(x models.Snssai) bool { return domain.SameModelSNSSAI(x, s) })
}

// forRegistration: TS 23.501 5.15.5.2.1. The allowed NSSAI is the
// requested S-NSSAIs (the default subscribed ones without a request) that
// are subscribed and served in the TA; a requested one not subscribed is
// rejected in the PLMN, one subscribed but not served here in the TA (the
// two rejection causes of TS 24.501 9.11.3.46). The configured NSSAI is
// the subscribed S-NSSAIs this PLMN serves (TS 23.501 5.15.4.2).
func (n *NF) forRegistration(info models.SliceInfoForRegistration, tai *domain.TAI) models.AuthorizedNetworkSliceInfo {
	var subscribed, defaults []models.Snssai
	for _, s := range info.SubscribedNssai {
		if s.SubscribedSnssai == nil {
			continue
		}
		subscribed = append(subscribed, *s.SubscribedSnssai)
		if s.DefaultIndication {
			defaults = append(defaults, *s.SubscribedSnssai)
		}
	}
	want := info.RequestedNssai
	if len(want) == 0 {
		want = defaults
	}
	var out models.AuthorizedNetworkSliceInfo
	var allowed []models.AllowedSnssai
	for _, s := range want {
		switch {
		case !contains(subscribed, s):
			out.RejectedNssaiInPlmn = append(out.RejectedNssaiInPlmn, s)
		case !n.servedIn(s, tai):
			out.RejectedNssaiInTa = append(out.RejectedNssaiInTa, s)
		case !slices.ContainsFunc(allowed, func(a models.AllowedSnssai) bool { return domain.SameModelSNSSAI(*a.AllowedSnssai, s) }):
			allowed = append(allowed, models.AllowedSnssai{AllowedSnssai: &s, NsiInformationList: []models.NsiInformation{n.nsi()}})
		}
	}
	if len(allowed) > 0 {
		out.AllowedNssaiList = []models.AllowedNssai{{AllowedSnssaiList: allowed, AccessType: models.AccessType__3_GPP_ACCESS}}
	}
	for i := range subscribed {
		if contains(n.served, subscribed[i]) {
			out.ConfiguredNssai = append(out.ConfiguredNssai, models.ConfiguredSnssai{ConfiguredSnssai: &subscribed[i]})
		}
	}
	return out
}

// answerPDUSession: TS 29.531 5.2.2.2.3 — the slice instance serving the
// session's S-NSSAI and the NRF to discover its SMF at; a slice not
// served is 403 SNSSAI_NOT_SUPPORTED.
func (n *NF) answerPDUSession(w http.ResponseWriter, info models.SliceInfoForPduSession, tai *domain.TAI) {
	if info.SNssai == nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "sNssai is mandatory")
		return
	}
	if !n.servedIn(*info.SNssai, tai) {
		sbi.WriteProblem(w, http.StatusForbidden, CauseSNSSAINotSupported, "S-NSSAI not served here")
		return
	}
	nsi := n.nsi()
	sbi.WriteJSON(w, http.StatusOK, models.AuthorizedNetworkSliceInfo{NsiInformation: &nsi})
}

func (n *NF) nsi() models.NsiInformation {
	return models.NsiInformation{NrfId: n.nrfURI + "/nnrf-disc/v1/nf-instances", NsiId: nsiID,
		NrfNfMgtUri: n.nrfURI + "/nnrf-nfm/v1/nf-instances", NrfAccessTokenUri: n.nrfURI + sbi.AccessTokenPath}
}
