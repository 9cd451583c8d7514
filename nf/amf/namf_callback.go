package amf

// Namf callbacks: the notifications the AMF asked for when it gave its
// callback URIs to the UDM (Nudm_UECM_DeregistrationNotification,
// Nudm_SDM_Notification; TS 29.503 5.3.2.3, 5.2.2.3) and the PCF (AM policy
// update and termination, TS 29.507 4.2.4.2, 4.2.4.3). The paths are the
// ones callbackURI gives in gmm_registration.go.

import (
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/ratelimit"
	"github.com/l25gc/l25gc/sbi"
)

const callbackPrefix = "/namf-callback/v1/"

func (n *NF) routeCallbacks(mux *http.ServeMux) {
	mux.HandleFunc("POST "+callbackPrefix+"{supi}/dereg-notify", n.handleDeregistrationNotification)
	mux.HandleFunc("POST "+callbackPrefix+"{supi}/sdm-notify", n.handleDataChangeNotification)
	mux.HandleFunc("POST "+callbackPrefix+"am-policy/{supi}/update", n.handlePolicyUpdate)
	mux.HandleFunc("POST "+callbackPrefix+"am-policy/{supi}/terminate", n.handlePolicyTermination)
}

// handleDeregistrationNotification: the UDM no longer has this AMF
// registered for the UE (TS 23.502 4.2.2.2.2 step 14e: the UE registered
// with another AMF; 4.2.2.3.3: subscription withdrawn or re-registration
// required; 4.11.1: the UE moved to EPS), so the UE's context here ends.
// Reasons about SMF registrations do not concern the AMF.
func (n *NF) handleDeregistrationNotification(w http.ResponseWriter, r *http.Request) {
	var d models.DeregistrationData
	if !sbi.DecodeJSON(w, r, &d) {
		return
	}
	supi := r.PathValue("supi")
	switch {
	case d.DeregReason == "":
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "deregReason is mandatory")
		return
	case !endsAMFRegistration(d.DeregReason) || (d.AccessType != "" && d.AccessType != models.AccessType__3_GPP_ACCESS):
		n.log.Info("UDM deregistration notification ignored", "supi", supi, "reason", d.DeregReason, "accessType", d.AccessType)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	n.log.Info("UDM deregistration notification", "supi", supi, "reason", d.DeregReason)
	known := n.onConnectedUE(supi, func(ue *ueContext) {
		ue.udmRegistered = false // the UDM removed the registration itself
		n.startNetworkDeregistration(ue)
		n.step(ue, EvNetworkDeregistration, &input{})
	})
	for _, ue := range n.ues.takeIdleSUPI(supi) { // out of the table: this handler is its only user
		known = true
		n.deregisterParked(ue)
	}
	answerKnown(w, supi, known)
}

// endsAMFRegistration says whether a DeregistrationReason (TS 29.503)
// removes the AMF's registration; the others concern SMF registrations.
// Unknown values are tolerated (TS 29.501 5.2.4: enumerations extend).
func endsAMFRegistration(reason models.DeregistrationReason) bool {
	switch reason {
	case models.DeregistrationReason_UE_INITIAL_REGISTRATION, models.DeregistrationReason_UE_REGISTRATION_AREA_CHANGE,
		models.DeregistrationReason_SUBSCRIPTION_WITHDRAWN, models.DeregistrationReason__5_GS_TO_EPS_MOBILITY,
		models.DeregistrationReason__5_GS_TO_EPS_MOBILITY_UE_INITIAL_REGISTRATION, models.DeregistrationReason_REREGISTRATION_REQUIRED:
		return true
	}
	return false
}

// onNetworkDeregistration ends a connected UE's context on the UDM's word.
// TS 23.502 4.2.2.3.3 would send the UE a Deregistration Request (T3522),
// which this AMF does not implement: it releases the N2 connection, and the
// UE, unknown here from then on, registers afresh at its next contact.
func (n *NF) onNetworkDeregistration(ue *ueContext, _ *input) (State, error) {
	n.endContext(ue)
	if ue.state == StateReleasing {
		return ue.state, nil // already going; its release now forgets it
	}
	n.finishProcedure(ue, procedureOf(ue.state), resultFailure)
	return n.release(ue, causeNasDeregister())
}

// handleDataChangeNotification: the AMF takes the subscription as read at
// registration; a change applies from the UE's next registration.
func (n *NF) handleDataChangeNotification(w http.ResponseWriter, r *http.Request) {
	var m models.ModificationNotification
	if !sbi.DecodeJSON(w, r, &m) {
		return
	}
	if len(m.NotifyItems) == 0 {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "notifyItems is mandatory")
		return
	}
	n.log.Info("UDM subscription data changed; applies at the next registration", "supi", r.PathValue("supi"), "items", len(m.NotifyItems))
	w.WriteHeader(http.StatusNoContent)
}

// handlePolicyUpdate: TS 29.507 4.2.4.2, answered 204. The AMF enforces no
// AM policy yet (service area restrictions, RFSP), so nothing changes.
func (n *NF) handlePolicyUpdate(w http.ResponseWriter, r *http.Request) {
	var u models.PcfAmPolicyControlPolicyUpdate
	if !sbi.DecodeJSON(w, r, &u) {
		return
	}
	if u.ResourceUri == "" {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "resourceUri is mandatory")
		return
	}
	supi := r.PathValue("supi")
	n.log.Info("AM policy update", "supi", supi, "triggers", u.Triggers)
	answerKnown(w, supi, n.ues.known(supi))
}

// handlePolicyTermination: TS 29.507 4.2.4.3 — answered 204, then the AMF
// deletes the association (Npcf_AMPolicyControl_Delete).
func (n *NF) handlePolicyTermination(w http.ResponseWriter, r *http.Request) {
	var t models.PcfAmPolicyControlTerminationNotification
	if !sbi.DecodeJSON(w, r, &t) {
		return
	}
	if t.ResourceUri == "" || t.Cause == "" {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "resourceUri and cause are mandatory")
		return
	}
	supi := r.PathValue("supi")
	n.log.Info("AM policy association terminated by the PCF", "supi", supi, "cause", t.Cause)
	known := n.onConnectedUE(supi, n.deletePolicy)
	var parked []string
	known = n.ues.editIdleSUPI(supi, func(ue *ueContext) {
		parked = append(parked, ue.policyID)
		ue.policyID = ""
	}) || known
	answerKnown(w, supi, known)
	for _, id := range parked {
		n.deleteAMPolicy(supi, id)
	}
}

// answerKnown answers a notification about a UE: 204, or 404
// CONTEXT_NOT_FOUND (TS 29.500 5.2.7.2) when the AMF has no context for it.
func answerKnown(w http.ResponseWriter, supi string, known bool) {
	if !known {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseContextNotFound, "no UE context for "+supi)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// onConnectedUE queues fn on the key of the UE of supi that has an N2
// connection, if there is one: a notification arrives outside the UE's
// events, and only its own events touch a UE.
func (n *NF) onConnectedUE(supi string, fn func(*ueContext)) bool {
	id, ok := n.ues.findSUPI(supi)
	if !ok {
		return false
	}
	_ = n.disp.Dispatch(ratelimit.UE(id), func() {
		if ue := n.ues.get(id); ue != nil && ue.supi == supi {
			fn(ue)
		}
	})
	return true
}
