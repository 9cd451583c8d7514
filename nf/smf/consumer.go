package smf

// Consumer: the SMF's calls to the UDM (Nudm_SDM sm-data, TS 29.503
// 5.2.2.2.5; Nudm_UECM SMF registration, 5.3.2.2.3), the PCF
// (Npcf_SMPolicyControl, TS 29.512 4.2) and the AMF
// (Namf_Communication_N1N2MessageTransfer, TS 29.518 5.2.2.3.1; the SM
// context status notification, TS 29.502 5.2.2.5).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
)

// peers reaches the NFs the SMF consumes, found through the NRF.
type peers struct {
	env *nf.Env
}

func (p peers) uri(ctx context.Context, q sbi.Query) (string, error) {
	return p.env.NRF.Select(ctx, q)
}

// smData reads the UE's session management subscription for the slice
// and DNN (TS 29.503 6.1.3.5.3.1); none (404) is an empty list.
func (p peers) smData(ctx context.Context, supi string, snssai models.Snssai, dnn string) ([]models.SessionManagementSubscriptionData, error) {
	base, err := p.uri(ctx, sbi.Query{Target: models.NrfNfManagementNfType_UDM, Services: []models.ServiceName{models.ServiceName_NUDM_SDM}})
	if err != nil {
		return nil, err
	}
	nssai, _ := json.Marshal(snssai)
	q := url.Values{"single-nssai": {string(nssai)}, "dnn": {dnn}}
	var out []models.SessionManagementSubscriptionData
	_, err = p.env.Client.Do(ctx, http.MethodGet, base+"/nudm-sdm/v2/"+url.PathEscape(supi)+"/sm-data?"+q.Encode(), nil, &out)
	if sbi.StatusOf(err) == http.StatusNotFound {
		return nil, nil
	}
	return out, err
}

// registerSMF is Nudm_UECM_Registration for the session (TS 29.503
// 5.3.2.2.3): PUT .../registrations/smf-registrations/{pduSessionId}.
func (p peers) registerSMF(ctx context.Context, supi string, psi uint8, reg models.SmfRegistration) error {
	base, err := p.uri(ctx, sbi.Query{Target: models.NrfNfManagementNfType_UDM, Services: []models.ServiceName{models.ServiceName_NUDM_UECM}})
	if err != nil {
		return err
	}
	_, err = p.env.Client.Do(ctx, http.MethodPut, uecmPath(base, supi, psi), reg, nil)
	return err
}

// deregisterSMF is Nudm_UECM_Deregistration (TS 29.503 5.3.2.3.3).
func (p peers) deregisterSMF(ctx context.Context, supi string, psi uint8) error {
	base, err := p.uri(ctx, sbi.Query{Target: models.NrfNfManagementNfType_UDM, Services: []models.ServiceName{models.ServiceName_NUDM_UECM}})
	if err != nil {
		return err
	}
	_, err = p.env.Client.Do(ctx, http.MethodDelete, uecmPath(base, supi, psi), nil, nil)
	if sbi.StatusOf(err) == http.StatusNotFound {
		return nil // gone already
	}
	return err
}

func uecmPath(base, supi string, psi uint8) string {
	return base + "/nudm-uecm/v1/" + url.PathEscape(supi) + "/registrations/smf-registrations/" + strconv.Itoa(int(psi))
}

// errNoPCF: no PCF offers SM policy control; the SMF applies local
// policy (TS 23.502 4.3.2.2.1 step 7a, dynamic PCC not deployed).
var errNoPCF = errors.New("no PCF offers npcf-smpolicycontrol")

// createPolicy is Npcf_SMPolicyControl_Create (TS 29.512 4.2.2): the
// decision and the association's URI.
func (p peers) createPolicy(ctx context.Context, data models.SmPolicyContextData) (*models.SmPolicyDecision, string, error) {
	base, err := p.uri(ctx, sbi.Query{Target: models.NrfNfManagementNfType_PCF, Services: []models.ServiceName{models.ServiceName_NPCF_SMPOLICYCONTROL}})
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", errNoPCF, err)
	}
	var d models.SmPolicyDecision
	h, err := p.env.Client.Do(ctx, http.MethodPost, base+"/npcf-smpolicycontrol/v1/sm-policies", data, &d)
	if err != nil {
		return nil, "", err
	}
	loc := h.Get("Location")
	if loc == "" {
		return nil, "", errors.New("PCF: SM policy created without a Location")
	}
	return &d, loc, nil
}

// deletePolicy is Npcf_SMPolicyControl_Delete (TS 29.512 4.2.5).
func (p peers) deletePolicy(ctx context.Context, uri string) error {
	_, err := p.env.Client.Do(ctx, http.MethodPost, uri+"/delete", models.SmPolicyDeleteData{}, nil)
	if sbi.StatusOf(err) == http.StatusNotFound {
		return nil
	}
	return err
}

// n1n2 is one Namf_Communication_N1N2MessageTransfer: a 5GSM message
// and/or an N2 SM information for the UE's PDU session.
type n1n2 struct {
	supi, amfID string
	psi         uint8
	snssai      models.Snssai
	n1          []byte
	n2          []byte
	n2Type      models.N2SmInfoType
	// For paging (TS 29.518 6.1.6.2.3): the ARP and 5QI of the flow with
	// downlink data (paging policy differentiation), and where the AMF
	// tells the SMF that the UE could not be reached.
	arp        *models.Arp
	fiveQI     uint8
	failureURI string
}

const (
	contentIDN1 = "n1msg"
	contentIDN2 = "n2msg"
)

// transfer sends m to the AMF serving the UE (TS 29.518 6.1.3.5.3.1:
// POST .../ue-contexts/{ueContextId}/n1-n2-messages, multipart/related).
func (p peers) transfer(ctx context.Context, m n1n2) error {
	_, err := p.transferCause(ctx, m)
	return err
}

// transferCause is transfer, returning the AMF's cause: whether it passed
// the message on (N1_N2_TRANSFER_INITIATED, 200) or pages the UE first
// (ATTEMPTING_TO_REACH_UE, 202; TS 29.518 5.2.2.3.1.2).
func (p peers) transferCause(ctx context.Context, m n1n2) (models.N1N2MessageTransferCause, error) {
	q := sbi.Query{Target: models.NrfNfManagementNfType_AMF, Services: []models.ServiceName{models.ServiceName_NAMF_COMM}, TargetInstanceID: m.amfID}
	base, err := p.uri(ctx, q)
	if err != nil {
		return "", err
	}
	req := models.N1N2MessageTransferReqData{PduSessionId: int32(m.psi), Arp: m.arp, Var5qi: int32(m.fiveQI),
		N1n2FailureTxfNotifURI: m.failureURI}
	var parts []sbi.Part
	if m.n1 != nil {
		req.N1MessageContainer = &models.N1MessageContainer{N1MessageClass: models.N1MessageClass_SM,
			N1MessageContent: &models.RefToBinaryData{ContentId: contentIDN1}}
		parts = append(parts, sbi.Part{ContentID: contentIDN1, ContentType: sbi.ContentTypeNAS, Data: m.n1})
	}
	if m.n2 != nil {
		snssai := m.snssai
		req.N2InfoContainer = &models.N2InfoContainer{N2InformationClass: models.N2InformationClass_SM,
			SmInfo: &models.N2SmInformation{PduSessionId: int32(m.psi), SNssai: &snssai,
				N2InfoContent: &models.N2InfoContent{NgapIeType: ngapIEType(m.n2Type), NgapData: &models.RefToBinaryData{ContentId: contentIDN2}}}}
		parts = append(parts, sbi.Part{ContentID: contentIDN2, ContentType: sbi.ContentTypeNGAP, Data: m.n2})
	}
	var rsp models.N1N2MessageTransferRspData
	err = p.postRelated(ctx, base+"/namf-comm/v1/ue-contexts/"+url.PathEscape(m.supi)+"/n1-n2-messages", req, parts, &rsp)
	return rsp.Cause, err
}

// ngapIEType names the NGAP IE an N2 SM information is (TS 29.518
// 6.1.6.3.11 NgapIeType).
func ngapIEType(t models.N2SmInfoType) models.AmfCommunicationNgapIeType {
	switch t {
	case models.N2SmInfoType_PDU_RES_SETUP_REQ:
		return models.AmfCommunicationNgapIeType_PDU_RES_SETUP_REQ
	case models.N2SmInfoType_PDU_RES_MOD_REQ:
		return models.AmfCommunicationNgapIeType_PDU_RES_MOD_REQ
	case models.N2SmInfoType_PDU_RES_REL_CMD:
		return models.AmfCommunicationNgapIeType_PDU_RES_REL_CMD
	}
	return ""
}

// notifyReleased tells the AMF the SM context is gone (TS 29.502
// 5.2.2.5 SMContextStatusNotify).
func (p peers) notifyReleased(ctx context.Context, uri string) error {
	if uri == "" {
		return nil
	}
	n := models.SmfPduSessionSmContextStatusNotification{StatusInfo: &models.StatusInfo{ResourceStatus: models.ResourceStatus_RELEASED}}
	_, err := p.env.Client.Do(ctx, http.MethodPost, uri, n, nil)
	return err
}

// postRelated POSTs a multipart/related body through the SBI client (its
// access token, metrics, and a non-2xx answer as an *sbi.ProblemError).
func (p peers) postRelated(ctx context.Context, uri string, v any, parts []sbi.Part, out any) error {
	_, err := p.env.Client.DoRelated(ctx, http.MethodPost, uri, v, parts, out)
	return err
}
