package udm

// Nudm_UEContextManagement producer (TS 29.503 5.3, resource of 6.2.3.2):
// the AMF serving the UE over 3GPP access, stored in the UDR's context data.

import (
	"context"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/sbi"
)

const amf3GPPPath = "/registrations/amf-3gpp-access"

func (n *NF) routeUECM(mux *http.ServeMux) {
	mux.HandleFunc("PUT /nudm-uecm/v1/{ueId}"+amf3GPPPath, n.handleRegisterAMF)
	mux.HandleFunc("PATCH /nudm-uecm/v1/{ueId}"+amf3GPPPath, n.handleUpdateAMF)
	mux.HandleFunc("GET /nudm-uecm/v1/{ueId}"+amf3GPPPath, n.handleGetAMF)
}

// supiParam reads the UE of the path, an IMSI-based SUPI; on failure it has
// answered 400.
func supiParam(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	supi := r.PathValue(name)
	if _, err := domain.ParseSUPI(supi); err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, name+": "+err.Error())
		return "", false
	}
	return supi, true
}

// handleRegisterAMF is Nudm_UECM_Registration for 3GPP access (TS 29.503
// 5.3.2.2.2; TS 23.502 4.2.2.2.2 step 14a): 201 for a new registration,
// 200 when it replaces one.
func (n *NF) handleRegisterAMF(w http.ResponseWriter, r *http.Request) {
	supi, ok := supiParam(w, r, "ueId")
	if !ok {
		return
	}
	var reg models.Amf3GppAccessRegistration
	if !sbi.DecodeJSON(w, r, &reg) {
		return
	}
	// Mandatory attributes, TS 29.503 6.2.6.2.2.
	if reg.AmfInstanceId == "" || reg.DeregCallbackUri == "" || reg.Guami == nil || reg.RatType == "" {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "amfInstanceId, deregCallbackUri, guami and ratType are mandatory")
		return
	}
	reg.Supi = supi
	if err := n.udr.putAMF3GPPAccess(r.Context(), supi, &reg); err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	if n.ues.putAMF(supi, reg) {
		sbi.WriteJSON(w, http.StatusOK, reg)
		return
	}
	w.Header().Set("Location", sbi.ResourceURI(r, "/nudm-uecm/v1/"+supi+amf3GPPPath))
	sbi.WriteJSON(w, http.StatusCreated, reg)
}

// handleUpdateAMF is Nudm_UECM_Update (TS 29.503 5.3.2.4.2), used by the
// AMF with purgeFlag when the UE deregisters. Only the registered AMF, named
// by its GUAMI, may update: another gets 403 INVALID_GUAMI (6.2.3.2.3.2).
func (n *NF) handleUpdateAMF(w http.ResponseWriter, r *http.Request) {
	supi, ok := supiParam(w, r, "ueId")
	if !ok {
		return
	}
	var mod models.Amf3GppAccessRegistrationModification
	if !sbi.DecodeJSON(w, r, &mod) {
		return
	}
	if mod.Guami == nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "guami is mandatory")
		return
	}
	reg, err := n.registeredAMF(r.Context(), supi)
	if err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	if !domain.SameModelGUAMI(reg.Guami, mod.Guami) {
		sbi.WriteProblem(w, http.StatusForbidden, sbi.CauseInvalidGUAMI, "the GUAMI is not the registered AMF's")
		return
	}
	applyModification(&reg, &mod)
	if err := n.udr.putAMF3GPPAccess(r.Context(), supi, &reg); err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	n.ues.putAMF(supi, reg)
	w.WriteHeader(http.StatusNoContent)
}

// registeredAMF is the UE's serving AMF: remembered, or read back from the
// UDR's context data (after a UDM restart); 404 CONTEXT_NOT_FOUND if none.
func (n *NF) registeredAMF(ctx context.Context, supi string) (models.Amf3GppAccessRegistration, error) {
	if reg, ok := n.ues.getAMF(supi); ok {
		return reg, nil
	}
	reg, err := n.udr.amf3GPPAccess(ctx, supi)
	if sbi.CauseOf(err) == sbi.CauseDataNotFound {
		return models.Amf3GppAccessRegistration{}, sbi.Rejectf(http.StatusNotFound, sbi.CauseContextNotFound, "no AMF is registered for %s", supi)
	}
	if err != nil {
		return models.Amf3GppAccessRegistration{}, err
	}
	return *reg, nil
}

func applyModification(reg *models.Amf3GppAccessRegistration, mod *models.Amf3GppAccessRegistrationModification) {
	reg.PurgeFlag = mod.PurgeFlag
	if mod.Pei != "" {
		reg.Pei = mod.Pei
	}
	if mod.ImsVoPs != "" {
		reg.ImsVoPs = mod.ImsVoPs
	}
	if mod.BackupAmfInfo != nil {
		reg.BackupAmfInfo = mod.BackupAmfInfo
	}
}

// handleGetAMF is Nudm_UECM_Get for 3GPP access (TS 29.503 5.3.2.5).
func (n *NF) handleGetAMF(w http.ResponseWriter, r *http.Request) {
	supi, ok := supiParam(w, r, "ueId")
	if !ok {
		return
	}
	reg, err := n.registeredAMF(r.Context(), supi)
	if err != nil {
		sbi.WriteError(w, "UDR", err)
		return
	}
	sbi.WriteJSON(w, http.StatusOK, reg)
}
