package pcf

// Npcf_SMPolicyControl producer (TS 29.512 4.2, resources of 5.3).

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

const smPoliciesPath = "/npcf-smpolicycontrol/v1/sm-policies"

func (n *NF) routeSMPolicy(mux *http.ServeMux) {
	mux.HandleFunc("POST "+smPoliciesPath, n.handleSMCreate)
	mux.HandleFunc("GET "+smPoliciesPath+"/{smPolicyId}", n.handleSMGet)
	mux.HandleFunc("POST "+smPoliciesPath+"/{smPolicyId}/update", n.handleSMUpdate)
	mux.HandleFunc("POST "+smPoliciesPath+"/{smPolicyId}/delete", n.handleSMDelete)
}

// handleSMCreate is Npcf_SMPolicyControl_Create (TS 29.512 4.2.2): 201 with
// the SmPolicyDecision and the association's URI as Location.
func (n *NF) handleSMCreate(w http.ResponseWriter, r *http.Request) {
	var req models.SmPolicyContextData
	if !sbi.DecodeJSON(w, r, &req) {
		return
	}
	id, d, err := n.createSM(r.Context(), &req)
	if err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	w.Header().Set("Location", sbi.ResourceURI(r, smPoliciesPath+"/"+id))
	sbi.WriteJSON(w, http.StatusCreated, d)
}

// handleSMGet reads an association (TS 29.512 5.3.3.3.x): its context and
// its decision.
func (n *NF) handleSMGet(w http.ResponseWriter, r *http.Request) {
	p, ok := n.smPolicies.get(r.PathValue("smPolicyId"))
	if !ok {
		smNotFound(w, r)
		return
	}
	d := p.decision
	sbi.WriteJSON(w, http.StatusOK, models.SmPolicyControl{Context: p.context, Policy: &d})
}

// handleSMUpdate is Npcf_SMPolicyControl_Update (TS 29.512 4.2.4): 200 with
// the policy decision made on the reported changes.
func (n *NF) handleSMUpdate(w http.ResponseWriter, r *http.Request) {
	var upd models.SmPolicyUpdateContextData
	if !sbi.DecodeJSON(w, r, &upd) {
		return
	}
	d, ok, err := n.updateSM(r.PathValue("smPolicyId"), &upd)
	switch {
	case !ok:
		smNotFound(w, r)
	case err != nil:
		sbi.WriteError(w, "PCF", err)
	default:
		sbi.WriteJSON(w, http.StatusOK, d)
	}
}

// handleSMDelete is Npcf_SMPolicyControl_Delete (TS 29.512 4.2.5): 204.
// The body (SmPolicyDeleteData: usage reports, release causes) is
// optional and informs no decision here.
func (n *NF) handleSMDelete(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxDeleteBody))
	var del models.SmPolicyDeleteData
	if err == nil && len(body) > 0 {
		err = json.Unmarshal(body, &del)
	}
	if err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidMsgFormat, "request body: "+err.Error())
		return
	}
	if !n.smPolicies.remove(r.PathValue("smPolicyId")) {
		smNotFound(w, r)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// maxDeleteBody bounds SmPolicyDeleteData: usage reports and causes.
const maxDeleteBody = 64 << 10

// smNotFound: the association does not exist (TS 29.512 5.7.3 and TS
// 29.500 5.2.7.2: 404 CONTEXT_NOT_FOUND).
func smNotFound(w http.ResponseWriter, r *http.Request) {
	sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseContextNotFound, "no SM policy association "+r.PathValue("smPolicyId"))
}
