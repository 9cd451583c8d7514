package pcf

// Npcf_AMPolicyControl producer (TS 29.507 4.2, resources of 5.3.3).

import (
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// handleCreate is Npcf_AMPolicyControl_Create (TS 29.507 4.2.2): 201 with
// the association's URI as Location.
func (n *NF) handleCreate(w http.ResponseWriter, r *http.Request) {
	var req models.PcfAmPolicyControlPolicyAssociationRequest
	if !sbi.DecodeJSON(w, r, &req) {
		return
	}
	id, d, err := n.create(r.Context(), &req)
	if err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	w.Header().Set("Location", sbi.ResourceURI(r, policiesPath+"/"+id))
	sbi.WriteJSON(w, http.StatusCreated, d)
}

// handleGet reads an association (TS 29.507 5.3.3.3.3.2).
func (n *NF) handleGet(w http.ResponseWriter, r *http.Request) {
	a, ok := n.policies.get(r.PathValue("polAssoId"))
	if !ok {
		notFound(w, r)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, a.decision)
}

// handleUpdate is Npcf_AMPolicyControl_Update (TS 29.507 4.2.3): 200 with
// the new policy.
func (n *NF) handleUpdate(w http.ResponseWriter, r *http.Request) {
	var upd models.PcfAmPolicyControlPolicyAssociationUpdateRequest
	if !sbi.DecodeJSON(w, r, &upd) {
		return
	}
	d, ok := n.update(r.PathValue("polAssoId"), &upd)
	if !ok {
		notFound(w, r)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, models.PcfAmPolicyControlPolicyUpdate{
		ResourceUri: sbi.ResourceURI(r, policiesPath+"/"+r.PathValue("polAssoId")),
		Triggers:    d.Triggers, ServAreaRes: d.ServAreaRes, Rfsp: d.Rfsp,
	})
}

// handleDelete is Npcf_AMPolicyControl_Delete (TS 29.507 4.2.4): 204.
func (n *NF) handleDelete(w http.ResponseWriter, r *http.Request) {
	if !n.policies.remove(r.PathValue("polAssoId")) {
		notFound(w, r)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func notFound(w http.ResponseWriter, r *http.Request) {
	sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseContextNotFound, "no AM policy association "+r.PathValue("polAssoId"))
}
