package pcf

// AM policy association procedures at the PCF: establishment (TS 23.502
// 4.16.1.2; TS 29.507 4.2.2), modification initiated by the AMF (4.16.2.1;
// 4.2.3) and termination (4.16.3.2; 4.2.4).

import (
	"context"
	"net/http"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// create establishes the UE's association:
//  1. the request must carry notificationUri and supi (TS 29.507 5.6.2.2);
//  2. the UE's AM policy data comes from the UDR (step 2 of 4.16.1.2;
//     none stored means no UE-specific policy);
//  3. the decision is made and the association stored (step 3).
func (n *NF) create(ctx context.Context, req *models.PcfAmPolicyControlPolicyAssociationRequest) (string, *models.PcfAmPolicyControlPolicyAssociation, error) {
	if req.NotificationUri == "" || req.Supi == "" {
		return "", nil, sbi.Rejectf(http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "notificationUri and supi are mandatory")
	}
	data, err := n.udr.amPolicyData(ctx, req.Supi)
	if err != nil {
		return "", nil, err
	}
	a := &association{request: req, data: data}
	a.decision = decide(req, data)
	id, replaced := n.policies.add(req.Supi, a)
	if replaced != "" {
		n.log.Info("AM policy association replaced", "supi", req.Supi, "old", replaced, "new", id)
	}
	return id, &a.decision, nil
}

// decide is the PCF's AM policy (TS 23.503 6.1.2.1): without operator
// rules it authorises what is subscribed — the service area restrictions
// and RFSP index the AMF got from the UDM — and, when the UE's policy data
// names presence reporting areas, asks the AMF to report on them (PRA_CH,
// TS 29.507 4.2.2.2). No optional feature is supported: suppFeat "".
func decide(req *models.PcfAmPolicyControlPolicyAssociationRequest, data *models.AmPolicyData) models.PcfAmPolicyControlPolicyAssociation {
	d := models.PcfAmPolicyControlPolicyAssociation{Request: req, ServAreaRes: req.ServAreaRes, Rfsp: req.Rfsp}
	if data != nil && len(data.PraInfos) > 0 {
		d.Pras = data.PraInfos
		d.Triggers = []models.PcfAmPolicyControlRequestTrigger{models.PcfAmPolicyControlRequestTrigger_PRA_CH}
	}
	return d
}

// update is the AMF-initiated modification (TS 29.507 4.2.3.2): the
// reported changes replace what the association held and the decision is
// made again; false when the association does not exist.
func (n *NF) update(id string, upd *models.PcfAmPolicyControlPolicyAssociationUpdateRequest) (models.PcfAmPolicyControlPolicyAssociation, bool) {
	var d models.PcfAmPolicyControlPolicyAssociation
	ok := n.policies.update(id, func(a *association) {
		req := *a.request // a copy: decisions already handed out keep the old request
		applyUpdate(&req, upd)
		a.request = &req
		a.decision = decide(a.request, a.data)
		d = a.decision
	})
	return d, ok
}

// applyUpdate copies the attributes an update request carries (TS 29.507
// 5.6.2.3) over the association's request.
func applyUpdate(req *models.PcfAmPolicyControlPolicyAssociationRequest, upd *models.PcfAmPolicyControlPolicyAssociationUpdateRequest) {
	if upd.NotificationUri != "" {
		req.NotificationUri = upd.NotificationUri
	}
	if upd.ServAreaRes != nil {
		req.ServAreaRes = upd.ServAreaRes
	}
	if upd.Rfsp != 0 {
		req.Rfsp = upd.Rfsp
	}
	if upd.UserLoc != nil {
		req.UserLoc = upd.UserLoc
	}
	if upd.AllowedSnssais != nil {
		req.AllowedSnssais = upd.AllowedSnssais
	}
	if upd.TargetSnssais != nil {
		req.TargetSnssais = upd.TargetSnssais
	}
	if upd.Guami != nil {
		req.Guami = upd.Guami
	}
	if upd.AccessTypes != nil {
		req.AccessTypes = upd.AccessTypes
	}
	if upd.RatTypes != nil {
		req.RatTypes = upd.RatTypes
	}
	if upd.UeAmbr != nil {
		req.UeAmbr = upd.UeAmbr
	}
}
