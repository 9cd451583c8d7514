package sbi

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// NF credentials at the NRF (TS 33.501 13.3.1: the NRF and the NFs
// authenticate each other before NFManagement, discovery and token
// requests). Over mutual TLS the client certificate would say who calls;
// over h2c and X-IO, which carry no peer identity, every NF of a core
// proves its instance id with a credential derived from one core secret
// the supervisor keeps in the data directory (0600, readable only by the
// account that runs the core): HMAC-SHA256(secret, instance id), sent as
// the password of HTTP Basic authentication with the instance id as the
// user (RFC 6749 2.3.1, client_secret_basic). The NRF recomputes it, so it
// stores nothing per NF, and a caller without the secret can neither
// register, change or remove an instance nor obtain a token.
//
// The threat is a caller on the network, not a compromised NF process:
// every NF of a node runs under one account and could read the secret.

// SecretFile is the core secret's name in the data directory; a core
// spanning nodes copies it to each node like the CA.
const SecretFile = "sbi.secret"

// NRFPrincipal is the name the NRF authenticates as towards NFs (its
// NFStatusNotify requests, TS 29.510 5.2.2.6).
const NRFPrincipal = "nrf"

// Secret is the core secret that NF credentials derive from.
type Secret []byte

// LoadOrCreateSecret reads the secret at path, creating a random one
// (0600) when the file does not exist. Concurrent starters agree: the
// file appears whole, by a link that fails when another won.
func LoadOrCreateSecret(path string) (Secret, error) {
	if s, err := readSecret(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sbi secret: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".sbi.secret-*")
	if err != nil {
		return nil, fmt.Errorf("sbi secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(hex.EncodeToString(b) + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err != nil {
		return nil, fmt.Errorf("sbi secret %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("sbi secret %s: %w", path, err)
	}
	return readSecret(path)
}

// LoadSecret reads the core secret at path: what a node without the NRF
// does, since a secret of its own would not be the NRF's.
func LoadSecret(path string) (Secret, error) {
	s, err := readSecret(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: copy the core secret from the NRF's node there (sbi.secret_file)", err)
	}
	return s, err
}

func readSecret(path string) (Secret, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sbi secret: %w", err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(b) < 16 {
		return nil, fmt.Errorf("sbi secret %s: want at least 32 hex digits", path)
	}
	return b, nil
}

// Credential is the password of principal (an NF instance id, or NRFPrincipal).
func (s Secret) Credential(principal string) string {
	m := hmac.New(sha256.New, s)
	m.Write([]byte(principal))
	return hex.EncodeToString(m.Sum(nil))
}

// valid says whether cred is principal's credential, in constant time.
func (s Secret) valid(principal, cred string) bool {
	return principal != "" && hmac.Equal([]byte(s.Credential(principal)), []byte(cred))
}

// Authenticate returns the principal whose valid credential r carries.
func (s Secret) Authenticate(r *http.Request) (string, bool) {
	user, pass, ok := r.BasicAuth()
	if !ok || !s.valid(user, pass) {
		return "", false
	}
	return user, true
}

type principalKey struct{}

// WithPrincipal records the authenticated caller in ctx.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// PrincipalOf is the caller a credential guard authenticated ("" = none
// was checked: the core runs without SBI security).
func PrincipalOf(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

type certKey struct{}

// certID is what a verified client certificate says of its holder.
type certID struct {
	name      string
	instances []string
}

// CertNameOf is the common name of the client certificate the caller
// showed under mutual TLS ("" over h2c and X-IO). `l25gc certs init`
// names an NF's certificate after its NF (udm, ausf…), so it says which
// NF type the caller is, whatever the credential claims.
func CertNameOf(ctx context.Context) string {
	c, _ := ctx.Value(certKey{}).(certID)
	return c.name
}

// CertInstancesOf are the NF instance ids the caller's client certificate
// names (URI SANs urn:uuid:…, TS 33.310 6.1.3c), none for a certificate
// that names none (a tool's, or an operator's issued per NF type).
func CertInstancesOf(ctx context.Context) []string {
	c, _ := ctx.Value(certKey{}).(certID)
	return c.instances
}

// withCertName records the verified client certificate of r.
func withCertName(r *http.Request) *http.Request {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		return r
	}
	leaf := r.TLS.VerifiedChains[0][0]
	id := certID{name: leaf.Subject.CommonName}
	for _, u := range leaf.URIs {
		if u.Scheme == "urn" && strings.HasPrefix(u.Opaque, "uuid:") {
			id.instances = append(id.instances, strings.TrimPrefix(u.Opaque, "uuid:"))
		}
	}
	return r.WithContext(context.WithValue(r.Context(), certKey{}, id))
}
