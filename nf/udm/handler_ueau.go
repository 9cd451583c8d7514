package udm

// Nudm_UEAuthentication producer (TS 29.503 5.4, resources of 6.3.3).

import (
	"context"
	"net/http"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

func (n *NF) routeUEAU(mux *http.ServeMux) {
	mux.HandleFunc("POST /nudm-ueau/v1/{supiOrSuci}/security-information/generate-auth-data", n.handleGenerateAuthData)
	mux.HandleFunc("POST /nudm-ueau/v1/{supi}/auth-events", n.handleAuthEvent)
}

// handleGenerateAuthData is Nudm_UEAuthentication_Get (TS 29.503 5.4.2.2):
// 200 AuthenticationInfoResult with a 5G HE AV.
func (n *NF) handleGenerateAuthData(w http.ResponseWriter, r *http.Request) {
	var req models.AuthenticationInfoRequest
	if !sbi.DecodeJSON(w, r, &req) {
		return
	}
	res, err := n.generateAuthData(r.Context(), r.PathValue("supiOrSuci"), &req)
	if err != nil {
		n.log.Info("no authentication vector", "supiOrSuci", r.PathValue("supiOrSuci"), "err", err)
		sbi.WriteError(w, "UDR", err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, res)
}

// handleAuthEvent is Nudm_UEAuthentication_ResultConfirmation (TS 29.503
// 5.4.2.3; TS 33.501 6.1.4.1: the AUSF reports the result so the UDM can
// link it to later procedures): 201 with the stored AuthEvent.
func (n *NF) handleAuthEvent(w http.ResponseWriter, r *http.Request) {
	supi := r.PathValue("supi")
	var ev models.AuthEvent
	if !sbi.DecodeJSON(w, r, &ev) {
		return
	}
	if ev.NfInstanceId == "" || ev.ServingNetworkName == "" || ev.AuthType == "" {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "nfInstanceId, servingNetworkName and authType are mandatory")
		return
	}
	if ev.TimeStamp == nil {
		now := time.Now().UTC()
		ev.TimeStamp = &now
	}
	if !n.ues.putEvent(supi, ev) && !n.adoptAuthEvent(r.Context(), supi, ev) {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseUserNotFound, "no authentication vector was issued for "+supi)
		return
	}
	n.log.Debug("authentication result", "supi", supi, "success", ev.Success, "ausf", ev.NfInstanceId)
	w.Header().Set("Location", "/nudm-ueau/v1/"+supi+"/auth-events/"+newID())
	sbi.WriteJSON(w, http.StatusCreated, ev)
}

// adoptAuthEvent stores the result of an authentication another UDM of
// the set (or this one before a restart) issued the vector for: the AUSF
// reports to whichever instance it selects. Only a subscriber the UDR
// knows is stored, so reports for made-up SUPIs cannot grow the table.
func (n *NF) adoptAuthEvent(ctx context.Context, supi string, ev models.AuthEvent) bool {
	if _, err := n.udr.authSubscription(ctx, supi); err != nil {
		return false
	}
	n.ues.markAuthenticating(supi)
	return n.ues.putEvent(supi, ev)
}
