package udm

// What the UDM serves the SMF for PDU sessions (TS 23.502 4.3.2.2.1 steps
// 4 and 6b): Nudm_SDM_Get of the session management subscription data
// (TS 29.503 5.2.2.2.4, resource sm-data of 6.1.3.6), and Nudm_UECM
// Registration/Deregistration of the SMF serving a PDU session (5.3.2.2.3,
// 5.3.2.3.2; resource smf-registrations/{pduSessionId} of 6.2.3.4), kept
// in the UDR's context data.

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/sbi"
)

const smfRegsPath = "/registrations/smf-registrations"

func (n *NF) routeSession(mux *http.ServeMux) {
	mux.HandleFunc("GET /nudm-sdm/v2/{supi}/sm-data", n.handleSMData)
	mux.HandleFunc("PUT /nudm-uecm/v1/{ueId}"+smfRegsPath+"/{pduSessionId}", n.handleRegisterSMF)
	mux.HandleFunc("DELETE /nudm-uecm/v1/{ueId}"+smfRegsPath+"/{pduSessionId}", n.handleDeregisterSMF)
	mux.HandleFunc("GET /nudm-uecm/v1/{ueId}"+smfRegsPath, n.handleGetSMFs)
}

// handleSMData answers SmSubsData in its plain form, the UE's
// SessionManagementSubscriptionData for the serving PLMN, narrowed by the
// query parameters single-nssai and dnn (TS 29.503 6.1.3.6.3.1). When the
// narrowed list is empty the UE has no subscription for that slice and
// DNN: 404 DATA_NOT_FOUND, which the SMF turns into a 5GSM reject (TS
// 24.501 #27 missing or unknown DNN).
func (n *NF) handleSMData(w http.ResponseWriter, r *http.Request) {
	supi, plmn, ok := n.supiAndPLMN(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	if !validSMDataQuery(w, q.Get("single-nssai"), q.Get("dnn")) {
		return
	}
	sm, empty, err := n.udr.smData(r.Context(), supi, plmn, q.Get("single-nssai"), q.Get("dnn"))
	if err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	if empty && (q.Get("single-nssai") != "" || q.Get("dnn") != "") {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseDataNotFound, "no session management subscription for this S-NSSAI and DNN")
		return
	}
	if len(sm) == 0 {
		sm = json.RawMessage("null") // no body from the UDR: what encoding its nil list gave
	}
	// The bytes sbi.WriteJSON gave for the decoded list: our UDR encodes
	// the same models, compact, and the encoder ends with a newline.
	sbi.WriteRawJSON(w, http.StatusOK, append(sm, '\n'))
}

// validSMDataQuery checks single-nssai (a JSON Snssai) and dnn; on failure
// it has answered 400 INVALID_QUERY_PARAM.
func validSMDataQuery(w http.ResponseWriter, snssai, dnn string) bool {
	if snssai != "" {
		var s models.Snssai
		err := json.Unmarshal([]byte(snssai), &s)
		if err == nil {
			_, err = domain.SNSSAIFromModel(s)
		}
		if err != nil {
			sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidQueryParam, "single-nssai: "+err.Error())
			return false
		}
	}
	if dnn != "" {
		if _, err := domain.ParseDNN(dnn); err != nil {
			sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidQueryParam, "dnn: "+err.Error())
			return false
		}
	}
	return true
}

// pduSessionParam reads the path's PDU session id; on failure it has
// answered 400.
func pduSessionParam(w http.ResponseWriter, r *http.Request) (int32, bool) {
	id, err := domain.ParsePDUSessionID(r.PathValue("pduSessionId"))
	if err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, err.Error())
		return 0, false
	}
	return id, true
}

// handleRegisterSMF is Nudm_UECM_Registration by an SMF (TS 29.503
// 5.3.2.2.3): 201 with Location for a new registration, 200 when it
// replaces the session's earlier one.
func (n *NF) handleRegisterSMF(w http.ResponseWriter, r *http.Request) {
	supi, ok := supiParam(w, r, "ueId")
	if !ok {
		return
	}
	id, ok := pduSessionParam(w, r)
	if !ok {
		return
	}
	var reg models.SmfRegistration
	if !sbi.DecodeJSON(w, r, &reg) {
		return
	}
	// Mandatory attributes, TS 29.503 6.2.6.2.3.
	if reg.SmfInstanceId == "" || reg.SingleNssai == nil || reg.PlmnId == nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "smfInstanceId, pduSessionId, singleNssai and plmnId are mandatory")
		return
	}
	if reg.PduSessionId != 0 && reg.PduSessionId != id {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, "pduSessionId of the body is not the path's")
		return
	}
	reg.PduSessionId = id
	created, err := n.udr.putSMFRegistration(r.Context(), supi, &reg)
	if err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	if !created {
		sbi.WriteJSON(w, http.StatusOK, reg)
		return
	}
	w.Header().Set("Location", sbi.ResourceURI(r, "/nudm-uecm/v1/"+supi+smfRegsPath+"/"+strconv.Itoa(int(id))))
	sbi.WriteJSON(w, http.StatusCreated, reg)
}

// handleDeregisterSMF is Nudm_UECM_Deregistration by an SMF (TS 29.503
// 5.3.2.3.2): 204, or 404 CONTEXT_NOT_FOUND for a session not registered.
func (n *NF) handleDeregisterSMF(w http.ResponseWriter, r *http.Request) {
	supi, ok := supiParam(w, r, "ueId")
	if !ok {
		return
	}
	id, ok := pduSessionParam(w, r)
	if !ok {
		return
	}
	err := n.udr.deleteSMFRegistration(r.Context(), supi, id)
	if sbi.CauseOf(err) == sbi.CauseDataNotFound {
		err = sbi.Rejectf(http.StatusNotFound, sbi.CauseContextNotFound, "no SMF is registered for PDU session %d of %s", id, supi)
	}
	if err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleGetSMFs is Nudm_UECM_Get of the SMF registrations (TS 29.503
// 5.3.2.5.x): SmfRegistrationInfo, or 404 CONTEXT_NOT_FOUND when none.
func (n *NF) handleGetSMFs(w http.ResponseWriter, r *http.Request) {
	supi, ok := supiParam(w, r, "ueId")
	if !ok {
		return
	}
	regs, err := n.udr.smfRegistrations(r.Context(), supi)
	if err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	if len(regs) == 0 {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseContextNotFound, "no SMF is registered for "+supi)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, models.SmfRegistrationInfo{SmfRegistrationList: regs})
}

// ueContextInSMF lists the UE's registered PDU sessions (TS 29.503
// 6.1.6.2.x UeContextInSmfData, pduSessions keyed by PDU session id).
func ueContextInSMF(regs []models.SmfRegistration) models.UeContextInSmfData {
	out := models.UeContextInSmfData{}
	if len(regs) == 0 {
		return out
	}
	out.PduSessions = make(map[string]models.PduSession, len(regs))
	for _, r := range regs {
		out.PduSessions[strconv.Itoa(int(r.PduSessionId))] = models.PduSession{
			Dnn: r.Dnn, SmfInstanceId: r.SmfInstanceId, PlmnId: r.PlmnId, SingleNssai: r.SingleNssai}
	}
	return out
}
