package amf

// The AMF's SBI calls for PDU sessions (TS 23.502 4.3.2.2.1 steps 2-3,
// 4.3.3.2, 4.3.4.2) and slice selection (4.2.2.2.3), behind interfaces of
// their own so tests stand in with an httptest SMF or a fake.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// SessionConsumer is every SBI operation of the AMF's PDU session handling.
type SessionConsumer interface {
	// SMFSelectionData reads the subscriber's SMF selection subscription
	// data (Nudm_SDM_Get smf-select-data, TS 29.503 5.2.2.2.5): the
	// subscribed DNNs per S-NSSAI and the default DNN.
	SMFSelectionData(ctx context.Context, supi string, plmn models.PlmnId) (models.SmfSelectionSubscriptionData, error)
	// SelectSMF finds an SMF serving snssai and dnn (NRF discovery, TS
	// 23.501 6.3.2) and returns the API root of its nsmf-pdusession.
	SelectSMF(ctx context.Context, snssai models.Snssai, dnn string) (string, error)
	// CreateSMContext creates the SM context with the UE's 5GSM message
	// (Nsmf_PDUSession_CreateSMContext, TS 29.502 5.2.2.2).
	CreateSMContext(ctx context.Context, apiRoot string, data models.SmfPduSessionSmContextCreateData, n1 []byte) (SMAnswer, error)
	// UpdateSMContext passes N1 and/or N2 SM information on (TS 29.502 5.2.2.3).
	UpdateSMContext(ctx context.Context, contextURI string, data models.SmfPduSessionSmContextUpdateData, n1, n2 []byte) (SMAnswer, error)
	// ReleaseSMContext releases the SM context (TS 29.502 5.2.2.4).
	ReleaseSMContext(ctx context.Context, contextURI string, data models.SmfPduSessionSmContextReleaseData) error
}

// SMAnswer is what an SMF answered, on success or with an error: the SM
// context's URI (create), and what goes on to the UE (N1) or the gNB (N2).
type SMAnswer struct {
	ContextURI string
	N1         []byte
	N2         []byte
	N2Type     models.N2SmInfoType
	UpCnxState models.UpCnxState
	HoState    models.HoState // the handover state the SMF reached (TS 29.502 6.1.6.2.3)
}

// Content-IDs of the binary parts the AMF sends (TS 29.502 6.1.2.4: any
// id, referred to by RefToBinaryData).
const (
	partN1 = "n1SmMsg"
	partN2 = "n2SmInfo"
)

// sbiSessions is the SessionConsumer over the shared SBI client with NRF
// discovery.
type sbiSessions struct {
	c   *sbi.Client
	nrf *sbi.NRFClient
}

// NewSBISessions returns the SessionConsumer that reaches UDM and SMFs
// found through nrf.
func NewSBISessions(c *sbi.Client, nrf *sbi.NRFClient) SessionConsumer {
	return &sbiSessions{c: c, nrf: nrf}
}

func (s *sbiSessions) SMFSelectionData(ctx context.Context, supi string, plmn models.PlmnId) (models.SmfSelectionSubscriptionData, error) {
	var out models.SmfSelectionSubscriptionData
	if s.nrf == nil {
		return out, errors.New("no NRF to find a UDM")
	}
	base, err := s.nrf.ServiceURI(ctx, models.NrfNfManagementNfType_UDM, models.ServiceName_NUDM_SDM)
	if err != nil {
		return out, fmt.Errorf("no reachable UDM: %v", err)
	}
	pj, _ := json.Marshal(plmn)
	u := base + "/nudm-sdm/v2/" + url.PathEscape(supi) + "/smf-select-data?plmn-id=" + url.QueryEscape(string(pj))
	_, err = s.c.Do(ctx, http.MethodGet, u, nil, &out)
	return out, err
}

// errNoSMF says that no SMF serves the slice and DNN (or the NRF could
// not be asked): the 5GSM message cannot be forwarded.
var errNoSMF = errors.New("no SMF selected")

func (s *sbiSessions) SelectSMF(ctx context.Context, snssai models.Snssai, dnn string) (string, error) {
	if s.nrf == nil {
		return "", errNoSMF
	}
	base, err := s.nrf.Select(ctx, sbi.Query{Target: models.NrfNfManagementNfType_SMF,
		Services: []models.ServiceName{models.ServiceName_NSMF_PDUSESSION}, SNSSAIs: []models.Snssai{snssai}, DNN: dnn})
	if err != nil {
		return "", fmt.Errorf("%w for %s/%s: %v", errNoSMF, snssaiString(snssai), dnn, err)
	}
	return base, nil
}

func (s *sbiSessions) CreateSMContext(ctx context.Context, apiRoot string, data models.SmfPduSessionSmContextCreateData, n1 []byte) (SMAnswer, error) {
	data.N1SmMsg = &models.RefToBinaryData{ContentId: partN1}
	var out models.SmfPduSessionSmContextCreatedData
	a, err := s.c.DoRelated(ctx, http.MethodPost, apiRoot+"/nsmf-pdusession/v1/sm-contexts", data,
		[]sbi.Part{{ContentID: partN1, ContentType: sbi.ContentTypeNAS, Data: n1}}, &out)
	ans := answerOf(a, err)
	if err != nil {
		return ans, err
	}
	loc := a.Header.Get("Location")
	if loc == "" {
		return ans, errors.New("SMF created the SM context without a Location")
	}
	ans.ContextURI = resolve(apiRoot+"/nsmf-pdusession/v1/sm-contexts/", loc)
	if ans.N2 == nil {
		ans.N2Type = out.N2SmInfoType
		ans.N2 = partOf(a.Parts, out.N2SmInfo)
	}
	ans.UpCnxState = out.UpCnxState
	return ans, nil
}

func (s *sbiSessions) UpdateSMContext(ctx context.Context, uri string, data models.SmfPduSessionSmContextUpdateData, n1, n2 []byte) (SMAnswer, error) {
	var parts []sbi.Part
	if n1 != nil {
		data.N1SmMsg = &models.RefToBinaryData{ContentId: partN1}
		parts = append(parts, sbi.Part{ContentID: partN1, ContentType: sbi.ContentTypeNAS, Data: n1})
	}
	if n2 != nil {
		data.N2SmInfo = &models.RefToBinaryData{ContentId: partN2}
		parts = append(parts, sbi.Part{ContentID: partN2, ContentType: sbi.ContentTypeNGAP, Data: n2})
	}
	var out models.SmContextUpdatedData
	a, err := s.c.DoRelated(ctx, http.MethodPost, uri+"/modify", data, parts, &out)
	ans := answerOf(a, err)
	if err != nil {
		return ans, err
	}
	ans.N1, ans.N2, ans.N2Type = partOf(a.Parts, out.N1SmMsg), partOf(a.Parts, out.N2SmInfo), out.N2SmInfoType
	ans.UpCnxState = out.UpCnxState
	ans.HoState = out.HoState
	return ans, nil
}

func (s *sbiSessions) ReleaseSMContext(ctx context.Context, uri string, data models.SmfPduSessionSmContextReleaseData) error {
	_, err := s.c.DoRelated(ctx, http.MethodPost, uri+"/release", data, nil, nil)
	return err
}

// answerOf reads the binary parts of an error answer (SmContextCreateError,
// SmContextUpdateError, TS 29.502 6.1.6.2.7/6.1.6.2.9): the N1 message the
// SMF has for the UE, e.g. PDU Session Establishment Reject.
func answerOf(a sbi.RelatedAnswer, err error) SMAnswer {
	var pe *sbi.ProblemError
	if !errors.As(err, &pe) || len(pe.Body) == 0 {
		return SMAnswer{}
	}
	var e struct {
		N1SmMsg      *models.RefToBinaryData `json:"n1SmMsg"`
		N2SmInfo     *models.RefToBinaryData `json:"n2SmInfo"`
		N2SmInfoType models.N2SmInfoType     `json:"n2SmInfoType"`
	}
	if json.Unmarshal(pe.Body, &e) != nil {
		return SMAnswer{}
	}
	return SMAnswer{N1: partOf(a.Parts, e.N1SmMsg), N2: partOf(a.Parts, e.N2SmInfo), N2Type: e.N2SmInfoType}
}

// partOf finds the binary part a RefToBinaryData names; nil when absent.
func partOf(parts map[string]sbi.Part, ref *models.RefToBinaryData) []byte {
	if ref == nil {
		return nil
	}
	if p, ok := parts[strings.Trim(ref.ContentId, "<>")]; ok {
		return p.Data
	}
	return nil
}

func snssaiString(s models.Snssai) string {
	if s.Sd == "" {
		return fmt.Sprint(s.Sst)
	}
	return fmt.Sprintf("%d/%s", s.Sst, s.Sd)
}
