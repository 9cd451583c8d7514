package sbi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/free5gc/openapi/models"
	"github.com/golang-jwt/jwt/v5"
)

// Nnrf_AccessToken (TS 29.510 5.4, 6.3; TS 33.501 13.4.1): the NRF is the
// OAuth 2.0 authorization server of the core. It signs access tokens with
// ES256 (RFC 7518 3.4) under a P-256 key it generates once and keeps in
// its data directory, so tokens stay valid across an NRF restart.
// Producers verify with the public half, which they fetch from the NRF
// (AccessTokenKeyPath, behind the NF credential): an asymmetric key means
// a producer that can verify tokens cannot mint them, which a shared HMAC
// key (HS256) would allow.

// AccessTokenPath is the token endpoint (TS 29.510 6.3.3.2).
const AccessTokenPath = "/oauth2/token"

// AccessTokenKeyPath is where the NRF hands producers its public key (not
// 3GPP: TS 29.510 leaves key distribution to deployment).
const AccessTokenKeyPath = "/oauth2/key"

// TokenKeyFile is the NRF's signing key's name in the data directory.
const TokenKeyFile = "nrf-token-key.pem"

// AccessTokenClaims are the claims of TS 29.510 6.3.5.2.4: iss (the NRF's
// instance id), sub (the consumer's), aud (the producer's NF type or
// instance id), scope (service names separated by spaces) and exp.
type AccessTokenClaims struct {
	jwt.RegisteredClaims
	Scope string `json:"scope"`
}

// AccessTokenRsp is the NRF's answer (TS 29.510 6.3.5.2.3).
type AccessTokenRsp struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
	Scope       string `json:"scope,omitempty"`
}

// AccessTokenErr is a refused token request (TS 29.510 6.3.5.2.4, RFC 6749 5.2).
type AccessTokenErr struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description,omitempty"`
}

// LoadOrCreateTokenKey reads the NRF's signing key (PKCS #8 PEM) at path,
// generating and saving one (0600) when there is none.
func LoadOrCreateTokenKey(path string) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key, gerr := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if gerr != nil {
			return nil, gerr
		}
		der, merr := x509.MarshalPKCS8PrivateKey(key)
		if merr != nil {
			return nil, merr
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("token key: %w", err)
		}
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			return nil, fmt.Errorf("token key: %w", err)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("token key %s: no PEM block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("token key %s: %w", path, err)
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok || key.Curve != elliptic.P256() {
		return nil, fmt.Errorf("token key %s: not a P-256 ECDSA key", path)
	}
	return key, nil
}

// TokenIssuer signs access tokens: the NRF's half.
type TokenIssuer struct {
	key    *ecdsa.PrivateKey
	kid    string
	issuer string
	ttl    time.Duration
	now    func() time.Time
}

// NewTokenIssuer signs with key as issuer (the NRF's instance id); tokens
// live for ttl.
func NewTokenIssuer(key *ecdsa.PrivateKey, issuer string, ttl time.Duration) *TokenIssuer {
	return &TokenIssuer{key: key, kid: keyID(&key.PublicKey), issuer: issuer, ttl: ttl, now: time.Now}
}

// keyID names a public key (RFC 7515 4.1.4 kid): its hash, so a producer
// holding an older key sees the change.
func keyID(pub *ecdsa.PublicKey) string {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:8])
}

// Issue signs a token for consumer sub to reach audience aud with scopes.
func (i *TokenIssuer) Issue(sub, aud string, scopes []string) (AccessTokenRsp, error) {
	now := i.now()
	claims := AccessTokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: i.issuer, Subject: sub, Audience: jwt.ClaimStrings{aud},
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(i.ttl)),
		},
		Scope: strings.Join(scopes, " "),
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"] = i.kid
	s, err := tok.SignedString(i.key)
	if err != nil {
		return AccessTokenRsp{}, err
	}
	return AccessTokenRsp{AccessToken: s, TokenType: "Bearer", ExpiresIn: int(i.ttl / time.Second), Scope: claims.Scope}, nil
}

// PublicKeyPEM is the verification key producers fetch.
func (i *TokenIssuer) PublicKeyPEM() []byte {
	der, _ := x509.MarshalPKIXPublicKey(&i.key.PublicKey)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// ParsePublicKeyPEM reads a key PublicKeyPEM wrote.
func ParsePublicKeyPEM(data []byte) (*ecdsa.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("token key: no PEM block")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("token key: %w", err)
	}
	pub, ok := k.(*ecdsa.PublicKey)
	if !ok {
		return nil, errors.New("token key: not an ECDSA key")
	}
	return pub, nil
}

// ServiceTarget is the NF type that produces service (TS 29.510 6.1.6.3.11
// ServiceName: "n" + the NF type in lower case + "-" + the service, e.g.
// nudm-ueau → UDM; callbacks such as namf-callback belong to the NF that
// serves them). ok is false for a path that is no SBI service (the
// provisioning API, unknown paths).
func ServiceTarget(service string) (models.NrfNfManagementNfType, bool) {
	dash := strings.IndexByte(service, '-')
	if len(service) < 3 || service[0] != 'n' || dash < 2 {
		return "", false
	}
	t := models.NrfNfManagementNfType(strings.ToUpper(service[1:dash]))
	if !slices.Contains(knownNFTypes, t) {
		return "", false
	}
	return t, true
}

// knownNFTypes are the NF types whose services tokens may name.
var knownNFTypes = []models.NrfNfManagementNfType{
	models.NrfNfManagementNfType_NRF, models.NrfNfManagementNfType_UDM, models.NrfNfManagementNfType_AMF,
	models.NrfNfManagementNfType_SMF, models.NrfNfManagementNfType_AUSF, models.NrfNfManagementNfType_NEF,
	models.NrfNfManagementNfType_PCF, models.NrfNfManagementNfType_SMSF, models.NrfNfManagementNfType_NSSF,
	models.NrfNfManagementNfType_UDR, models.NrfNfManagementNfType_LMF, models.NrfNfManagementNfType_GMLC,
	models.NrfNfManagementNfType_CHF, models.NrfNfManagementNfType_UDSF, models.NrfNfManagementNfType_NWDAF,
	models.NrfNfManagementNfType_UPF, models.NrfNfManagementNfType_BSF,
}

// PublicKey is the key tokens verify with.
func (i *TokenIssuer) PublicKey() *ecdsa.PublicKey { return &i.key.PublicKey }
