package pcf

// PCF-initiated SM policy association modification (TS 23.502 4.16.5.2;
// TS 29.512 4.2.3.2, Npcf_SMPolicyControl_UpdateNotify): an operator
// changes a running PDU session's policy at the PCF — a new Session-AMBR,
// PCC rules with their QoS data, new or with new GBR/MBR — and the PCF
// sends the change to the SMF at the association's notificationUri
// (".../update", an SmPolicyNotification). The SMF runs the
// network-requested PDU session modification (TS 23.502 4.3.3.2 step 1b)
// and answers once the UPF has the rules; its refusal (e.g. the UPF's
// PFCP cause, 500 INSUFFICIENT_RESOURCES) comes back to the operator as
// the SMF wrote it, and the association keeps its decision.
//
//	POST /pcf-admin/v1/sm-policies/{supi}/{pduSessionId}/update
//	     an SmPolicyDecision (TS 29.512 5.6.2.7) with what changes;
//	     bearing the core's admin token, as the UDR's and SMF's admin APIs

import (
	"context"
	"errors"
	"maps"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/sbi"
)

const smPolicyAdminPrefix = "/pcf-admin/v1/sm-policies"

func (n *NF) routeSMPolicyAdmin(mux *http.ServeMux) {
	mux.HandleFunc("POST "+smPolicyAdminPrefix+"/{supi}/{pduSessionId}/update", n.handleSMPolicyPush)
}

func (n *NF) handleSMPolicyPush(w http.ResponseWriter, r *http.Request) {
	tok, err := prov.ReadToken(n.env.Config.AdminTokenPath())
	if err != nil || !prov.Authorized(r, tok) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="l25gc-admin"`)
		sbi.WriteProblem(w, http.StatusUnauthorized, "", "the PCF admin API needs Authorization: Bearer <the admin token of the data dir's admin.token>")
		return
	}
	var change models.SmPolicyDecision
	if !sbi.DecodeJSON(w, r, &change) {
		return
	}
	resource := func(id string) string { return sbi.ResourceURI(r, smPoliciesPath+"/"+id) }
	err = n.pushSMPolicy(r.Context(), r.PathValue("supi"), r.PathValue("pduSessionId"), resource, &change)
	var pe *sbi.ProblemError
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.As(err, &pe):
		// The SMF's own answer (its cause, the UPF's PFCP cause) is what
		// the operator needs, not a gateway error.
		sbi.WriteProblem(w, pe.Status, pe.Problem.Cause, "SMF: "+pe.Problem.Detail)
	default:
		sbi.WriteError(w, "SMF", err)
	}
}

// pushSMPolicy sends change to the SMF of the session's association
// (resource names it, TS 29.512 5.6.2.5 resourceUri) and, once the SMF
// took it, keeps it in the association's decision.
func (n *NF) pushSMPolicy(ctx context.Context, supi, psi string, resource func(id string) string, change *models.SmPolicyDecision) error {
	id, ok := n.smPolicies.idOf(supi + "/" + psi)
	p, found := n.smPolicies.get(id)
	if !ok || !found {
		return sbi.Rejectf(http.StatusNotFound, sbi.CauseContextNotFound, "no SM policy association for PDU session %s of %s", psi, supi)
	}
	note := models.SmPolicyNotification{ResourceUri: resource(id), SmPolicyDecision: change}
	if _, err := n.env.Client.Do(ctx, http.MethodPost, p.context.NotificationUri+"/update", note, nil); err != nil {
		return err
	}
	n.smPolicies.update(id, func(p *smPolicy) { p.decision = mergedDecision(p.decision, change) })
	n.log.Info("SM policy pushed to the SMF", "supi", supi, "pduSessionId", psi, "pccRules", len(change.PccRules))
	return nil
}

// mergedDecision is d with change applied: a session rule's AMBR becomes
// the association's session rule's, PCC rules and QoS data are added or
// replaced by ID. d's maps are never changed in place (get hands copies).
func mergedDecision(d models.SmPolicyDecision, change *models.SmPolicyDecision) models.SmPolicyDecision {
	d.PccRules, d.QosDecs, d.SessRules = maps.Clone(d.PccRules), maps.Clone(d.QosDecs), maps.Clone(d.SessRules)
	if d.PccRules == nil {
		d.PccRules, d.QosDecs = map[string]*models.PccRule{}, map[string]*models.QosData{}
	}
	maps.Copy(d.PccRules, change.PccRules)
	maps.Copy(d.QosDecs, change.QosDecs)
	for _, r := range change.SessRules {
		if r == nil || r.AuthSessAmbr == nil {
			continue
		}
		if own := d.SessRules[sessionRuleID]; own != nil {
			cp := *own
			cp.AuthSessAmbr = r.AuthSessAmbr
			d.SessRules[sessionRuleID] = &cp
		}
	}
	return d
}
