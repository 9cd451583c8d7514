package prov

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// The provisioning API changes and shows subscriber keys, so every request
// carries the node's admin token as an RFC 6750 bearer token. The token is
// 32 random bytes in hex, in a file only its owner can read: `l25gc up`
// creates it (EnsureToken), the UDR reads it, `l25gc subscriber` sends it.

// tokenBytes is the admin token's entropy: 256 bits.
const tokenBytes = 32

// EnsureToken returns the admin token in path, creating the file (mode
// 0600, its directory 0700 if absent) with a fresh random token first if
// there is none.
func EnsureToken(path string) (string, error) {
	tok, err := ReadToken(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return tok, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	tok = hex.EncodeToString(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // another process made it first: use theirs
		return ReadToken(path)
	}
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	_, err = f.WriteString(tok + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("admin token %s: %w", path, err)
	}
	return tok, nil
}

// ReadToken reads the admin token in path. A file others can read or
// write is refused: whoever reads the token can read every subscriber's K.
func ReadToken(path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("admin token %s: mode %04o lets others read it; chmod 600 %s", path, info.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("admin token %s: the file is empty", path)
	}
	return tok, nil
}

// Authorized says whether r carries "Authorization: Bearer <token>" (RFC
// 6750 2.1), comparing in constant time so that the answer's timing does
// not tell how much of a guess was right. An empty token authorises
// nothing.
func Authorized(r *http.Request, token string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// bearer adds the admin token to every request of a client.
type bearer struct {
	rt    http.RoundTripper
	value []string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context()) // a RoundTripper must not change its request
	r.Header["Authorization"] = b.value
	return b.rt.RoundTrip(r)
}

func (b bearer) CloseIdleConnections() {
	if c, ok := b.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
