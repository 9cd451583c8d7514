package sbi

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/free5gc/openapi/models"
	"github.com/golang-jwt/jwt/v5"
)

// Security is an NF's SBI security with sbi.oauth2 on: the credential it
// shows the NRF, the tokens it fetches and caches as a consumer, and the
// checks it makes as a producer (TS 33.501 13.3, 13.4.1; TS 29.500 6.7.3).
// nil means the core runs without (a benchmark, or a test of handlers).
type Security struct {
	secret    Secret
	nrfURI    string
	selfType  models.NrfNfManagementNfType
	hc        *http.Client // to the NRF: tokens and the key, outside sbi.Client
	principal atomic.Pointer[string]

	mu       sync.Mutex
	tokens   map[tokenKey]*cachedToken
	inflight map[tokenKey]*tokenFetch

	verifiedMu sync.RWMutex
	verified   map[string]*AccessTokenClaims // by the whole token: signature checked

	keyMu      sync.Mutex
	key        atomic.Pointer[verifyKey]
	keyFetched time.Time
	now        func() time.Time
}

type verifyKey struct {
	pub *ecdsa.PublicKey
	kid string
}

// NewSecurity is the security of an NF of selfType whose NRF is at nrfURI,
// reached over rt.
func NewSecurity(secret Secret, rt http.RoundTripper, nrfURI string, selfType models.NrfNfManagementNfType) *Security {
	s := &Security{secret: secret, nrfURI: nrfURI, selfType: selfType,
		hc:     &http.Client{Transport: rt, Timeout: RequestTimeout},
		tokens: map[tokenKey]*cachedToken{}, verified: map[string]*AccessTokenClaims{}, inflight: map[tokenKey]*tokenFetch{}, now: time.Now}
	if selfType == models.NrfNfManagementNfType_NRF {
		s.Identify(NRFPrincipal)
	}
	return s
}

// Identify sets the instance id this NF authenticates as and is the
// audience of (nf.Run, once the profile is known).
func (s *Security) Identify(instanceID string) { s.principal.Store(&instanceID) }

// Principal is who this NF authenticates as.
func (s *Security) Principal() string {
	if p := s.principal.Load(); p != nil {
		return *p
	}
	return ""
}

// Secret is the core secret the NRF checks credentials with.
func (s *Security) Secret() Secret { return s.secret }

// Authorize adds what req needs to be accepted: the NF credential for the
// NRF (and, from the NRF, for its notifications), else an access token for
// the service of the path. A path of no SBI service goes as it is.
func (s *Security) Authorize(ctx context.Context, req *http.Request) error {
	p := req.URL.Path
	service := serviceOfPath(p)
	if strings.HasPrefix(p, "/oauth2/") || strings.HasPrefix(service, "nnrf-") || p == NFStatusNotifyPath {
		me := s.Principal()
		req.SetBasicAuth(me, s.secret.Credential(me))
		return nil
	}
	target, ok := ServiceTarget(service)
	if !ok {
		return nil
	}
	tok, err := s.token(ctx, target, service)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

// Guard is the producer's check of every request (TS 29.500 6.7.3): a
// request to an SBI service carries an access token the NRF signed, not
// expired, for this NF's type or instance, whose scope names the service
// of the path; else 401 (no or a bad token) or 403 (insufficient_scope),
// with WWW-Authenticate as RFC 6750 3 says. The NRF's status notifications
// (TS 29.510 5.2.2.6) carry the NRF's credential instead: it is the
// authorization server, not a client of itself, and a forged notification
// would empty a consumer's discovery cache. Paths of no SBI service (the
// provisioning API, with its own admin credential) pass through.
func (s *Security) Guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == NFStatusNotifyPath {
			if p, ok := s.secret.Authenticate(r); !ok || p != NRFPrincipal {
				unauthorized(w, `Basic realm="l25gc"`, "NRF credential required")
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		service := serviceOfPath(r.URL.Path)
		if _, ok := ServiceTarget(service); !ok {
			h.ServeHTTP(w, r)
			return
		}
		claims, err := s.Verify(r.Context(), bearer(r), service)
		if err != nil {
			refuse(w, err)
			return
		}
		serveAs(h, w, r, r.Context(), claims.Subject)
	})
}

// GuardNRF is the NRF's check of every request: a valid NF credential
// (TS 33.501 13.3.1). Which instance the caller may change is the NRF
// handlers' check, against PrincipalOf and, under mutual TLS, CertNameOf.
func (s *Security) GuardNRF(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.secret.Authenticate(r)
		if !ok {
			unauthorized(w, `Basic realm="l25gc"`, "NF credential required")
			return
		}
		serveAs(h, w, r, withCertName(r).Context(), p)
	})
}

// serveAs serves r as principal. The request h sees is a copy carrying the
// principal; the route the mux matched in it is copied back, because
// Handler labels its metrics with r.Pattern of the request it holds
// (otherwise every authenticated request would count as unmatched).
func serveAs(h http.Handler, w http.ResponseWriter, r *http.Request, ctx context.Context, principal string) {
	inner := r.WithContext(WithPrincipal(ctx, principal))
	h.ServeHTTP(w, inner)
	r.Pattern = inner.Pattern
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// authError is a refused token: its status and RFC 6750 3.1 error code.
type authError struct {
	status int
	code   string // invalid_token | insufficient_scope | "" (no token)
	detail string
	scope  string
}

func (e *authError) Error() string { return e.code + ": " + e.detail }

func refuse(w http.ResponseWriter, err error) {
	var ae *authError
	if !errors.As(err, &ae) {
		ae = &authError{status: http.StatusUnauthorized, code: "invalid_token", detail: err.Error()}
	}
	challenge := `Bearer realm="l25gc"`
	if ae.code != "" {
		challenge += fmt.Sprintf(`, error=%q, error_description=%q`, ae.code, ae.detail)
	}
	if ae.scope != "" {
		challenge += fmt.Sprintf(`, scope=%q`, ae.scope)
	}
	w.Header().Set("WWW-Authenticate", challenge)
	WriteProblem(w, ae.status, "", ae.detail)
}

func unauthorized(w http.ResponseWriter, challenge, detail string) {
	w.Header().Set("WWW-Authenticate", challenge)
	WriteProblem(w, http.StatusUnauthorized, "", detail)
}

// Verify checks raw as an access token for service at this NF: the NRF's
// ES256 signature, exp, aud (this NF's type or instance id) and scope.
func (s *Security) Verify(ctx context.Context, raw, service string) (*AccessTokenClaims, error) {
	if raw == "" {
		// RFC 6750 3.1: no error code when the request had no token.
		return nil, &authError{status: http.StatusUnauthorized, detail: "access token required"}
	}
	claims, err := s.verifySignature(ctx, raw)
	if err != nil {
		return nil, &authError{status: http.StatusUnauthorized, code: "invalid_token", detail: err.Error()}
	}
	me := s.Principal()
	if !slices.ContainsFunc(claims.Audience, func(a string) bool { return a == string(s.selfType) || (me != "" && a == me) }) {
		return nil, &authError{status: http.StatusUnauthorized, code: "invalid_token", detail: "token audience is not this NF"}
	}
	if !hasScope(claims.Scope, service) {
		return nil, &authError{status: http.StatusForbidden, code: "insufficient_scope", detail: "token scope lacks " + service, scope: service}
	}
	return claims, nil
}

// hasScope says whether the space-separated scope (RFC 6749 3.3) names service.
func hasScope(scope, service string) bool {
	for scope != "" {
		var s string
		s, scope, _ = strings.Cut(scope, " ")
		if s == service {
			return true
		}
	}
	return false
}

// maxVerified bounds the verified-token cache: consumers reuse a token
// for its lifetime, so a producer sees few distinct ones.
const maxVerified = 4096

// verifySignature checks raw's signature and expiry. A token verified
// before is looked up by its whole text, which its signature covers, and
// only its expiry checked again: an ECDSA verification costs about a
// hundred times the lookup, on every request.
func (s *Security) verifySignature(ctx context.Context, raw string) (*AccessTokenClaims, error) {
	s.verifiedMu.RLock()
	c, ok := s.verified[raw]
	s.verifiedMu.RUnlock()
	if ok {
		if !s.now().Before(c.ExpiresAt.Time) {
			return nil, jwt.ErrTokenExpired
		}
		return c, nil
	}
	var claims AccessTokenClaims
	_, err := jwt.ParseWithClaims(raw, &claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return s.verifyKey(ctx, kid)
	}, jwt.WithValidMethods([]string{jwt.SigningMethodES256.Alg()}), jwt.WithExpirationRequired(), jwt.WithTimeFunc(s.now))
	if err != nil {
		return nil, err
	}
	s.verifiedMu.Lock()
	if len(s.verified) >= maxVerified {
		clear(s.verified) // the live tokens come back at their next use
	}
	s.verified[raw] = &claims
	s.verifiedMu.Unlock()
	return &claims, nil
}

// keyRefetch bounds how often an unknown kid makes the producer ask the
// NRF again, so forged tokens cannot flood the NRF through it.
const keyRefetch = 10 * time.Second

// verifyKey is the NRF's public key named kid, fetched once and again
// when the NRF's key changed.
func (s *Security) verifyKey(ctx context.Context, kid string) (*ecdsa.PublicKey, error) {
	if k := s.key.Load(); k != nil && k.kid == kid {
		return k.pub, nil
	}
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	if k := s.key.Load(); k != nil && (k.kid == kid || s.now().Sub(s.keyFetched) < keyRefetch) {
		if k.kid != kid {
			return nil, errors.New("token signed by an unknown key")
		}
		return k.pub, nil
	}
	pub, err := s.fetchKey(ctx)
	s.keyFetched = s.now()
	if err != nil {
		return nil, err
	}
	k := &verifyKey{pub: pub, kid: keyID(pub)}
	s.key.Store(k)
	if k.kid != kid {
		return nil, errors.New("token signed by an unknown key")
	}
	return pub, nil
}

// SetVerifyKey installs the NRF's public key (tests, or a key file).
func (s *Security) SetVerifyKey(pub *ecdsa.PublicKey) {
	s.key.Store(&verifyKey{pub: pub, kid: keyID(pub)})
}

func (s *Security) fetchKey(ctx context.Context) (*ecdsa.PublicKey, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.nrfURI+AccessTokenKeyPath, nil)
	if err != nil {
		return nil, err
	}
	me := s.Principal()
	req.SetBasicAuth(me, s.secret.Credential(me))
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("NRF token key: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	if err != nil {
		return nil, fmt.Errorf("NRF token key: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("NRF token key: %s", resp.Status)
	}
	return ParsePublicKeyPEM(data)
}

// serviceOfPath is the service a request path names, its first segment
// (TS 29.501 4.4.1: {apiRoot}/{apiName}/{apiVersion}/…): the scope a
// token must carry. Its own function, not the metrics' label, which may
// change for reasons of its own.
func serviceOfPath(path string) string {
	path = strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(path, '/'); i >= 0 {
		path = path[:i]
	}
	return path
}
