package udm

// Nudm_SubscriberDataManagement producer (TS 29.503 5.2, resources of
// 6.1.3): the UE's subscription data read from the UDR's provisioned data
// for the serving PLMN, and subscriptions to changes of it.

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/sbi"
)

func (n *NF) routeSDM(mux *http.ServeMux) {
	mux.HandleFunc("GET /nudm-sdm/v2/{supi}/am-data", n.handleAMData)
	mux.HandleFunc("GET /nudm-sdm/v2/{supi}/nssai", n.handleNSSAI)
	mux.HandleFunc("GET /nudm-sdm/v2/{supi}/smf-select-data", n.handleSMFSelectData)
	mux.HandleFunc("GET /nudm-sdm/v2/{supi}/ue-context-in-smf-data", n.handleUEContextInSMFData)
	mux.HandleFunc("POST /nudm-sdm/v2/{ueId}/sdm-subscriptions", n.handleSubscribe)
	mux.HandleFunc("DELETE /nudm-sdm/v2/{ueId}/sdm-subscriptions/{subscriptionId}", n.handleUnsubscribe)
}

// servingPLMN reads the plmn-id query parameter (a JSON PlmnId, TS 29.503
// 6.1.3.5.3.1) as the UDR's servingPlmnId key "<MCC><MNC>"; absent, the
// UE is at home. On failure it has answered 400.
func (n *NF) servingPLMN(w http.ResponseWriter, r *http.Request) (string, bool) {
	s := r.URL.Query().Get("plmn-id")
	if s == "" {
		return n.env.Config.PLMN.String(), true
	}
	var m models.PlmnId
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidQueryParam, "plmn-id "+s+" is not a PlmnId")
		return "", false
	}
	p, err := domain.PLMNFromModel(&m)
	if err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidQueryParam, "plmn-id "+s+": "+err.Error())
		return "", false
	}
	return p.String(), true
}

// handleAMData is Nudm_SDM_Get of the access and mobility subscription data
// (TS 29.503 5.2.2.2.3; TS 23.502 4.2.2.2.2 step 14b).
func (n *NF) handleAMData(w http.ResponseWriter, r *http.Request) {
	supi, plmn, ok := n.supiAndPLMN(w, r)
	if !ok {
		return
	}
	am, err := n.provisionedSet(r.Context(), supi, plmn, setAM)
	if err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	n.seen.saw(supi)
	sbi.WriteRawJSON(w, http.StatusOK, am)
}

// handleNSSAI is Nudm_SDM_Get of the subscribed NSSAI (5.2.2.2.2), the
// nssai part of the AM data.
func (n *NF) handleNSSAI(w http.ResponseWriter, r *http.Request) {
	am, ok := n.amData(w, r)
	if !ok {
		return
	}
	if am.Nssai == nil {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseDataNotFound, "no subscribed NSSAI")
		return
	}
	sbi.WriteJSON(w, http.StatusOK, am.Nssai)
}

func (n *NF) amData(w http.ResponseWriter, r *http.Request) (*models.AccessAndMobilitySubscriptionData, bool) {
	supi, plmn, ok := n.supiAndPLMN(w, r)
	if !ok {
		return nil, false
	}
	am, err := n.udr.amData(r.Context(), supi, plmn)
	if err != nil {
		sbi.WriteError(w, "UDR", err)
		return nil, false
	}
	return am, true
}

// supiAndPLMN reads the SUPI of the path and the serving PLMN of the
// query that SDM Gets of provisioned data name; on failure it has answered.
func (n *NF) supiAndPLMN(w http.ResponseWriter, r *http.Request) (supi, plmn string, ok bool) {
	if supi, ok = supiParam(w, r, "supi"); !ok {
		return "", "", false
	}
	if plmn, ok = n.servingPLMN(w, r); !ok {
		return "", "", false
	}
	return supi, plmn, true
}

// handleSMFSelectData is Nudm_SDM_Get of the SMF selection subscription
// data (5.2.2.2.5).
func (n *NF) handleSMFSelectData(w http.ResponseWriter, r *http.Request) {
	supi, plmn, ok := n.supiAndPLMN(w, r)
	if !ok {
		return
	}
	sel, err := n.provisionedSet(r.Context(), supi, plmn, setSMFSel)
	if err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	n.seen.saw(supi)
	sbi.WriteRawJSON(w, http.StatusOK, sel)
}

// handleUEContextInSMFData is Nudm_SDM_Get of the UE's context in SMF data
// (5.2.2.2.7): the PDU sessions SMFs registered (Nudm_UECM, 5.3.2.2.3).
func (n *NF) handleUEContextInSMFData(w http.ResponseWriter, r *http.Request) {
	supi, ok := supiParam(w, r, "supi")
	if !ok {
		return
	}
	regs, err := n.udr.smfRegistrations(r.Context(), supi)
	if err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, ueContextInSMF(regs))
}

// handleSubscribe is Nudm_SDM_Subscribe (5.2.2.3.2): 201 with the
// subscription and its URI.
func (n *NF) handleSubscribe(w http.ResponseWriter, r *http.Request) {
	supi, ok := supiParam(w, r, "ueId")
	if !ok {
		return
	}
	var sub models.SdmSubscription
	if !sbi.DecodeJSON(w, r, &sub) {
		return
	}
	// Mandatory attributes, TS 29.503 6.1.6.2.3.
	if sub.NfInstanceId == "" || sub.CallbackReference == "" || len(sub.MonitoredResourceUris) == 0 {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "nfInstanceId, callbackReference and monitoredResourceUris are mandatory")
		return
	}
	if err := n.knownUser(r.Context(), supi); err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	sub.SubscriptionId = n.ues.subscribe(supi, sub)
	w.Header().Set("Location", sbi.ResourceURI(r, "/nudm-sdm/v2/"+supi+"/sdm-subscriptions/"+sub.SubscriptionId))
	sbi.WriteJSON(w, http.StatusCreated, sub)
}

// handleUnsubscribe is Nudm_SDM_Unsubscribe (5.2.2.4.2): 204, or 404
// SUBSCRIPTION_NOT_FOUND.
func (n *NF) handleUnsubscribe(w http.ResponseWriter, r *http.Request) {
	supi, ok := supiParam(w, r, "ueId")
	if !ok {
		return
	}
	if !n.ues.unsubscribe(supi, r.PathValue("subscriptionId")) {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseSubscriptionNotFound, "no subscription "+r.PathValue("subscriptionId")+" of "+supi)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// knownUser says whether the UDR holds the subscriber (USER_NOT_FOUND
// otherwise). A UE with an AMF registered here, or whose data the UDR
// answered a moment ago (known_users.go), is known without asking.
func (n *NF) knownUser(ctx context.Context, supi string) error {
	if _, ok := n.ues.getAMF(supi); ok || n.seen.known(supi) {
		return nil
	}
	_, err := n.udr.amData(ctx, supi, n.env.Config.PLMN.String())
	return err
}
