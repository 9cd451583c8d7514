package amf

// Consumer: the AMF's calls to other NFs (TS 23.502 4.2.2.2.2 steps 8-16),
// behind one interface so tests (and a later X-IO message level) can stand in.

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

// AuthVector is what AUSF returns for 5G-AKA (TS 29.509 6.1.6.2.4 Av5gAka)
// plus where to confirm the result.
type AuthVector struct {
	RAND, AUTN, HXRESStar string // hex
	ConfirmURI            string
}

// AuthConfirmation is the AUSF's answer to the RES* (TS 29.509 6.1.6.2.6).
type AuthConfirmation struct {
	Success bool
	SUPI    string
	KSEAF   string // hex
}

// Consumer is every SBI operation the AMF needs.
type Consumer interface {
	// Authenticate starts 5G-AKA (Nausf_UEAuthentication_Authenticate, TS 29.509 5.2.2.2.2).
	Authenticate(ctx context.Context, suciOrSupi, servingNetwork string, resync *models.ResynchronizationInfo) (AuthVector, error)
	// ConfirmAuth sends RES* (TS 29.509 5.2.2.2.2 step 6).
	ConfirmAuth(ctx context.Context, uri, resStar string) (AuthConfirmation, error)
	// RegisterUECM registers this AMF as serving the UE (Nudm_UECM_Registration, TS 29.503 5.3.2.2.2).
	RegisterUECM(ctx context.Context, supi string, reg models.Amf3GppAccessRegistration) error
	// DeregisterUECM purges the registration (TS 29.503 5.3.2.4.2, purgeFlag).
	DeregisterUECM(ctx context.Context, supi string, guami models.Guami) error
	// AMData reads the access and mobility subscription (Nudm_SDM_Get, TS 29.503 5.2.2.2.3).
	AMData(ctx context.Context, supi string, plmn models.PlmnId) (models.AccessAndMobilitySubscriptionData, error)
	// SubscribeSDM subscribes to changes of the subscription data (TS 29.503 5.2.2.3.2).
	SubscribeSDM(ctx context.Context, supi string, sub models.SdmSubscription) error
	// CreateAMPolicy creates the AM policy association and returns its id (TS 29.507 4.2.2.2).
	CreateAMPolicy(ctx context.Context, req models.PcfAmPolicyControlPolicyAssociationRequest) (string, error)
	// DeleteAMPolicy deletes it (TS 29.507 4.2.4.2).
	DeleteAMPolicy(ctx context.Context, id string) error
}

// sbiConsumer is the Consumer over the shared SBI client with NRF discovery.
type sbiConsumer struct {
	c   *sbi.Client
	nrf *sbi.NRFClient
}

// NewSBIConsumer returns the Consumer that reaches peers found through nrf.
func NewSBIConsumer(c *sbi.Client, nrf *sbi.NRFClient) Consumer { return &sbiConsumer{c: c, nrf: nrf} }

// base finds the peer through the NRF. A discovery failure is the peer
// being unreachable: the NRF's HTTP status is not the peer's answer (an NRF
// 404 must not read as USER_NOT_FOUND), so it does not stay in the chain.
func (s *sbiConsumer) base(ctx context.Context, t models.NrfNfManagementNfType, svc models.ServiceName) (string, error) {
	uri, err := s.nrf.ServiceURI(ctx, t, svc)
	if err != nil {
		return "", fmt.Errorf("no reachable %s: %v", t, err)
	}
	return uri, nil
}

// ueAuthCtx is UeAuthenticationCtx decoded loosely: _links values may be a
// Link or an array of Links (TS 29.509 6.1.6.2.3, LinksValueSchema).
type ueAuthCtx struct {
	AuthType   string                     `json:"authType"`
	AuthData   models.Av5gAka             `json:"5gAuthData"`
	Links      map[string]json.RawMessage `json:"_links"`
	ServingNet string                     `json:"servingNetworkName"`
}

func (s *sbiConsumer) Authenticate(ctx context.Context, id, sn string, resync *models.ResynchronizationInfo) (AuthVector, error) {
	base, err := s.base(ctx, models.NrfNfManagementNfType_AUSF, models.ServiceName_NAUSF_AUTH)
	if err != nil {
		return AuthVector{}, err
	}
	in := models.AuthenticationInfo{SupiOrSuci: id, ServingNetworkName: sn, ResynchronizationInfo: resync}
	var out ueAuthCtx
	// An authentication context asked twice (the AUSF died before
	// answering) leaves nothing the UE relies on: the first died with the
	// AUSF, or, never confirmed, expires there (sbi.SafeToRepeat).
	h, err := s.c.Do(sbi.SafeToRepeat(ctx), http.MethodPost, base+"/nausf-auth/v1/ue-authentications", in, &out)
	if err != nil {
		return AuthVector{}, err
	}
	if out.AuthType != string(models.AusfUeAuthenticationAuthType__5_G_AKA) {
		return AuthVector{}, fmt.Errorf("AUSF chose %q; only 5G_AKA is supported", out.AuthType)
	}
	href := linkHref(out.Links["5g-aka"])
	if href == "" {
		href = h.Get("Location") + "/5g-aka-confirmation"
	}
	return AuthVector{RAND: out.AuthData.Rand, AUTN: out.AuthData.Autn, HXRESStar: out.AuthData.HxresStar,
		ConfirmURI: resolve(base, href)}, nil
}

func linkHref(raw json.RawMessage) string {
	var one models.Link
	if json.Unmarshal(raw, &one) == nil && one.Href != "" {
		return one.Href
	}
	var many []models.Link
	if json.Unmarshal(raw, &many) == nil && len(many) > 0 {
		return many[0].Href
	}
	return ""
}

// resolve makes a relative href absolute against the service's base URI.
func resolve(base, href string) string {
	u, err := url.Parse(href)
	if err != nil || u.IsAbs() {
		return href
	}
	b, err := url.Parse(base)
	if err != nil {
		return href
	}
	return b.ResolveReference(u).String()
}

func (s *sbiConsumer) ConfirmAuth(ctx context.Context, uri, resStar string) (AuthConfirmation, error) {
	var out models.ConfirmationDataResponse
	if _, err := s.c.Do(ctx, http.MethodPut, uri, models.ConfirmationData{ResStar: resStar}, &out); err != nil {
		return AuthConfirmation{}, err
	}
	return AuthConfirmation{Success: out.AuthResult == models.AusfUeAuthenticationAuthResult_SUCCESS,
		SUPI: out.Supi, KSEAF: out.Kseaf}, nil
}

func (s *sbiConsumer) RegisterUECM(ctx context.Context, supi string, reg models.Amf3GppAccessRegistration) error {
	base, err := s.base(ctx, models.NrfNfManagementNfType_UDM, models.ServiceName_NUDM_UECM)
	if err != nil {
		return err
	}
	_, err = s.c.Do(ctx, http.MethodPut, base+"/nudm-uecm/v1/"+url.PathEscape(supi)+"/registrations/amf-3gpp-access", reg, nil)
	return err
}

func (s *sbiConsumer) DeregisterUECM(ctx context.Context, supi string, guami models.Guami) error {
	base, err := s.base(ctx, models.NrfNfManagementNfType_UDM, models.ServiceName_NUDM_UECM)
	if err != nil {
		return err
	}
	patch := models.Amf3GppAccessRegistrationModification{Guami: &guami, PurgeFlag: true}
	_, err = s.c.Do(ctx, http.MethodPatch, base+"/nudm-uecm/v1/"+url.PathEscape(supi)+"/registrations/amf-3gpp-access", patch, nil)
	return err
}

func (s *sbiConsumer) AMData(ctx context.Context, supi string, plmn models.PlmnId) (models.AccessAndMobilitySubscriptionData, error) {
	var out models.AccessAndMobilitySubscriptionData
	base, err := s.base(ctx, models.NrfNfManagementNfType_UDM, models.ServiceName_NUDM_SDM)
	if err != nil {
		return out, err
	}
	pj, _ := json.Marshal(plmn)
	u := base + "/nudm-sdm/v2/" + url.PathEscape(supi) + "/am-data?plmn-id=" + url.QueryEscape(string(pj))
	_, err = s.c.Do(ctx, http.MethodGet, u, nil, &out)
	return out, err
}

func (s *sbiConsumer) SubscribeSDM(ctx context.Context, supi string, sub models.SdmSubscription) error {
	base, err := s.base(ctx, models.NrfNfManagementNfType_UDM, models.ServiceName_NUDM_SDM)
	if err != nil {
		return err
	}
	_, err = s.c.Do(ctx, http.MethodPost, base+"/nudm-sdm/v2/"+url.PathEscape(supi)+"/sdm-subscriptions", sub, nil)
	return err
}

func (s *sbiConsumer) CreateAMPolicy(ctx context.Context, req models.PcfAmPolicyControlPolicyAssociationRequest) (string, error) {
	base, err := s.base(ctx, models.NrfNfManagementNfType_PCF, models.ServiceName_NPCF_AM_POLICY_CONTROL)
	if err != nil {
		return "", err
	}
	h, err := s.c.Do(ctx, http.MethodPost, base+"/npcf-am-policy-control/v1/policies", req, nil)
	if err != nil {
		return "", err
	}
	loc := h.Get("Location")
	if loc == "" {
		return "", errors.New("PCF created the AM policy association without a Location")
	}
	return loc[strings.LastIndex(loc, "/")+1:], nil
}

func (s *sbiConsumer) DeleteAMPolicy(ctx context.Context, id string) error {
	base, err := s.base(ctx, models.NrfNfManagementNfType_PCF, models.ServiceName_NPCF_AM_POLICY_CONTROL)
	if err != nil {
		return err
	}
	_, err = s.c.Do(ctx, http.MethodDelete, base+"/npcf-am-policy-control/v1/policies/"+url.PathEscape(id), nil, nil)
	return err
}
