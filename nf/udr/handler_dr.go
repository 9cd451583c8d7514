package udr

// Nudr_DataRepository (TS 29.504 5.2.2), the resources the UDM and PCF use:
// authentication subscription (TS 29.505 5.4.2.2/5.4.2.3), provisioned data
// (5.2.2.2), AMF 3GPP access registration (context data, 5.2.2.3) and AM
// policy data (TS 29.519 5.2.2).

import (
	"fmt"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/sbi"
)

// DRBase is the API root of nudr-dr.
const DRBase = "/nudr-dr/v1"

func (n *NF) routeDR(mux *http.ServeMux) {
	sub := DRBase + "/subscription-data/{ueId}"
	mux.HandleFunc("GET "+sub+"/authentication-data/authentication-subscription", n.getAuthSubscription)
	mux.HandleFunc("PATCH "+sub+"/authentication-data/authentication-subscription", n.patchAuthSubscription)
	mux.HandleFunc("POST "+sub+SQNReservationPath, n.reserveSQN)
	mux.HandleFunc("GET "+sub+"/{servingPlmnId}/provisioned-data", n.getProvisionedData)
	mux.HandleFunc("GET "+sub+"/{servingPlmnId}/provisioned-data/am-data", n.getAMData)
	mux.HandleFunc("GET "+sub+"/{servingPlmnId}/provisioned-data/smf-selection-subscription-data", n.getSMFSelection)
	mux.HandleFunc("GET "+sub+"/{servingPlmnId}/provisioned-data/sm-data", n.getSMData)
	mux.HandleFunc("PUT "+sub+"/context-data/amf-3gpp-access", n.putAMF3GPPAccess)
	mux.HandleFunc("GET "+sub+"/context-data/amf-3gpp-access", n.getAMF3GPPAccess)
	mux.HandleFunc("GET "+DRBase+"/policy-data/ues/{ueId}/am-data", n.getAMPolicy)
}

func (n *NF) getAuthSubscription(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	a, err := n.store.AuthSubscription(r.Context(), ue)
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, a)
}

// patchAuthSubscription moves the SQN (TS 29.505 5.4.2.3, JSON Patch of
// RFC 6902). A "test" of the SQN before the "replace" makes it a
// compare-and-set: the patch fails with 409 if another authentication moved
// the SQN meanwhile, so concurrent UDMs never hand out one SQN twice.
func (n *NF) patchAuthSubscription(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	var items []models.PatchItem
	if !sbi.DecodeJSON(w, r, &items) {
		return
	}
	p, status, err := parseSQNPatch(items)
	if err != nil {
		cause := causeInvalidFormat
		if status == http.StatusForbidden {
			cause = causeModNotAllowed
		}
		sbi.WriteProblem(w, status, cause, err.Error())
		return
	}
	if err := n.store.SetSQN(r.Context(), ue, p.expected, p.next); err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// sqnPatch is what a patch of the authentication subscription asks.
type sqnPatch struct {
	expected string // from a "test" operation; "" for none
	next     string
}

// parseSQNPatch accepts the shapes UDMs send: path /sequenceNumber/sqn with
// the SQN (open5gs, free5GC v4), or /sequenceNumber with the SQN string
// (free5GC v3) or a SequenceNumber object. Other fields are provisioned,
// not patched: 403 MODIFICATION_NOT_ALLOWED.
func parseSQNPatch(items []models.PatchItem) (sqnPatch, int, error) {
	var p sqnPatch
	if len(items) == 0 {
		return p, http.StatusBadRequest, fmt.Errorf("empty patch")
	}
	for i, it := range items {
		sqn, err := sqnOfPatchValue(it)
		if err != nil {
			return p, http.StatusForbidden, fmt.Errorf("patch item %d: %w", i, err)
		}
		if err := store.CheckSQN(sqn); err != nil {
			return p, http.StatusBadRequest, fmt.Errorf("patch item %d: %w", i, err)
		}
		switch it.Op {
		case models.PatchOperation_TEST:
			p.expected = sqn
		case models.PatchOperation_REPLACE, models.PatchOperation_ADD:
			p.next = sqn
		default:
			return p, http.StatusForbidden, fmt.Errorf("patch item %d: operation %q on the SQN", i, it.Op)
		}
	}
	if p.next == "" {
		return p, http.StatusBadRequest, fmt.Errorf("the patch replaces no SQN")
	}
	return p, 0, nil
}

func sqnOfPatchValue(it models.PatchItem) (string, error) {
	switch it.Path {
	case "/sequenceNumber/sqn":
		if s, ok := it.Value.(string); ok {
			return s, nil
		}
	case "/sequenceNumber":
		switch v := it.Value.(type) {
		case string:
			return v, nil
		case map[string]any:
			if s, ok := v["sqn"].(string); ok {
				return s, nil
			}
		}
	default:
		return "", fmt.Errorf("path %q is not modifiable; only the SQN is", it.Path)
	}
	return "", fmt.Errorf("path %q: value is not an SQN", it.Path)
}

func (n *NF) getAMData(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	am, err := n.store.AMData(r.Context(), ue, r.PathValue("servingPlmnId"))
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, am)
}

func (n *NF) getSMFSelection(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	sel, err := n.store.SMFSelection(r.Context(), ue, r.PathValue("servingPlmnId"))
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, sel)
}

// getSMData answers SmSubsData in its plain form, an array of
// SessionManagementSubscriptionData (TS 29.505 6.1.6.2.x SmSubsData oneOf;
// the extended form only matters with shared data, which we do not keep).
// Query parameters single-nssai (a JSON Snssai) and dnn filter it.
func (n *NF) getSMData(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	q := r.URL.Query()
	snssai, ok := snssaiQuery(w, q.Get("single-nssai"), "single-nssai")
	if !ok {
		return
	}
	sm, err := n.store.SMData(r.Context(), ue, r.PathValue("servingPlmnId"), snssai, q.Get("dnn"))
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, sm)
}

// putAMF3GPPAccess stores the serving AMF the UDM registered (TS 29.505
// 5.2.2.3; the UDM's UECM registration, TS 29.503 5.3.2.2.2).
func (n *NF) putAMF3GPPAccess(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	var reg models.Amf3GppAccessRegistration
	if !sbi.DecodeJSON(w, r, &reg) {
		return
	}
	if reg.AmfInstanceId == "" {
		sbi.WriteProblem(w, http.StatusBadRequest, causeMandatoryMissing, "amfInstanceId is mandatory (TS 29.503 6.2.6.2.2)")
		return
	}
	if err := n.store.PutAMF3GPPAccess(r.Context(), ue, &reg); err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (n *NF) getAMF3GPPAccess(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	reg, err := n.store.AMF3GPPAccess(r.Context(), ue)
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, reg)
}

// getAMPolicy is the PCF's AM policy data (TS 29.519 5.2.2, AmPolicyData).
func (n *NF) getAMPolicy(w http.ResponseWriter, r *http.Request) {
	ue := r.PathValue("ueId")
	p, err := n.store.AMPolicy(r.Context(), ue)
	if err != nil {
		n.writeStoreError(r.Context(), w, ue, err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, p)
}
