package nrf

// Nnrf_AccessToken producer (TS 29.510 5.4, 6.3) and the NRF's checks of
// who may change an NF instance (TS 33.501 13.3.1).

import (
	"crypto/ecdsa"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// maxTokenForm bounds an AccessTokenReq form: a few identifiers and scopes.
const maxTokenForm = 4 << 10

// newIssuer loads (or makes) the signing key in the data directory: one
// key across restarts, so tokens already out stay valid.
func (n *NF) newIssuer() (*sbi.TokenIssuer, error) {
	key, err := sbi.LoadOrCreateTokenKey(filepath.Join(n.env.Config.DataDir, sbi.TokenKeyFile))
	if err != nil {
		return nil, err
	}
	cfg := n.env.Config
	iss := sbi.InstanceID(models.NrfNfManagementNfType_NRF, cfg.AdvertisedAddr(cfg.NRF.SBIPort))
	return sbi.NewTokenIssuer(key, iss, cfg.NRF.AccessTokenTTL), nil
}

// TokenKey is the NRF's public verification key (nil without OAuth2).
func (n *NF) TokenKey() *ecdsa.PublicKey {
	if n.issuer == nil {
		return nil
	}
	return n.issuer.PublicKey()
}

// mayChange says whether the caller may register, update or deregister
// instance id: only the NF holding that instance's credential (TS 33.501
// 13.3.1). Without SBI security (sbi.oauth2: off) anyone may.
func (n *NF) mayChange(w http.ResponseWriter, r *http.Request, id string) bool {
	if n.env.Security == nil {
		return true
	}
	if p := sbi.PrincipalOf(r.Context()); p != id {
		n.log.Warn("NF instance change refused", "nfInstanceId", id, "caller", p, "method", r.Method)
		sbi.WriteProblem(w, http.StatusForbidden, sbi.CauseModificationNotAllowed, fmt.Sprintf("credential of %q may not change NF instance %q", p, id))
		return false
	}
	return true
}

// certAllows says whether the caller's client certificate (mutual TLS)
// may change instance id of nfType: it must be one of an NF of that type
// and, when it names NF instances (TS 33.310 6.1.3c, as `l25gc certs
// init` issues them), name id. So neither the core secret alone nor
// another UDM's certificate registers or removes this UDM. Over h2c and
// X-IO there is none to check.
func (n *NF) certAllows(w http.ResponseWriter, r *http.Request, nfType models.NrfNfManagementNfType, id string) bool {
	cn := sbi.CertNameOf(r.Context())
	if n.env.Security == nil || cn == "" {
		return true
	}
	instances := sbi.CertInstancesOf(r.Context())
	if strings.EqualFold(cn, string(nfType)) && (len(instances) == 0 || slices.Contains(instances, id)) {
		return true
	}
	n.log.Warn("NF instance change refused", "certificate", cn, "certInstances", instances, "nfType", nfType, "nfInstanceId", id, "method", r.Method)
	sbi.WriteProblem(w, http.StatusForbidden, sbi.CauseModificationNotAllowed, fmt.Sprintf("the certificate of %q may not change %s instance %s", cn, nfType, id))
	return false
}

// handleAccessToken is AccessTokenRequest (TS 29.510 5.4.2.2, 6.3.3.2):
// the client credentials grant (RFC 6749 4.4) of an NF whose credential
// the guard checked; the token's audience is the target instance, else
// the target NF type, and every scope must be a service of that type.
func (n *NF) handleAccessToken(w http.ResponseWriter, r *http.Request) {
	if n.issuer == nil {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseResourceURIStructureNotFound, "OAuth2 is off (sbi.oauth2)")
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		sbi.WriteProblem(w, http.StatusUnsupportedMediaType, sbi.CauseUnsupportedMediaType, "want application/x-www-form-urlencoded, got "+ct)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenForm)
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	f := r.PostForm
	consumer, aud, scopes, status, code, detail := n.grant(f.Get("grant_type"), f.Get("nfInstanceId"),
		sbi.PrincipalOf(r.Context()), f.Get("targetNfType"), f.Get("targetNfInstanceId"), strings.Fields(f.Get("scope")))
	if code != "" {
		tokenError(w, status, code, detail)
		return
	}
	rsp, err := n.issuer.Issue(consumer, aud, scopes)
	if err != nil {
		sbi.WriteProblem(w, http.StatusInternalServerError, sbi.CauseSystemFailure, err.Error())
		return
	}
	w.Header().Set("Cache-Control", "no-store") // RFC 6749 5.1
	sbi.WriteJSON(w, http.StatusOK, rsp)
}

// grant decides a token request; code is the RFC 6749 5.2 error, "" to grant.
func (n *NF) grant(grantType, consumer, caller, targetType, targetID string, scopes []string) (sub, aud string, granted []string, status int, code, detail string) {
	switch {
	case grantType != "client_credentials":
		return "", "", nil, http.StatusBadRequest, "unsupported_grant_type", "grant_type " + grantType
	case consumer == "":
		return "", "", nil, http.StatusBadRequest, "invalid_request", "nfInstanceId is missing"
	case consumer != caller:
		return "", "", nil, http.StatusForbidden, "unauthorized_client", fmt.Sprintf("credential of %q asks a token for %q", caller, consumer)
	case len(scopes) == 0:
		return "", "", nil, http.StatusBadRequest, "invalid_scope", "scope is missing"
	}
	aud, audType := targetType, models.NrfNfManagementNfType(targetType)
	if targetID != "" {
		p, ok := n.reg.get(targetID)
		if !ok {
			return "", "", nil, http.StatusBadRequest, "invalid_request", "no NF instance " + targetID
		}
		aud, audType = targetID, p.NfType
	}
	if aud == "" {
		return "", "", nil, http.StatusBadRequest, "invalid_request", "targetNfType or targetNfInstanceId is needed"
	}
	for _, s := range scopes {
		if t, ok := sbi.ServiceTarget(s); !ok || t != audType {
			return "", "", nil, http.StatusBadRequest, "invalid_scope", fmt.Sprintf("%s is not a service of %s", s, audType)
		}
	}
	return consumer, aud, scopes, 0, "", ""
}

func tokenError(w http.ResponseWriter, status int, code, detail string) {
	w.Header().Set("Cache-Control", "no-store")
	sbi.WriteJSON(w, status, sbi.AccessTokenErr{Error: code, ErrorDescription: detail})
}

// handleTokenKey hands producers the key to verify tokens with.
func (n *NF) handleTokenKey(w http.ResponseWriter, _ *http.Request) {
	if n.issuer == nil {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseResourceURIStructureNotFound, "OAuth2 is off (sbi.oauth2)")
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	_, _ = w.Write(n.issuer.PublicKeyPEM())
}
