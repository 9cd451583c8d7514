package sbi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/free5gc/openapi/models"
)

// The consumer's half of Nnrf_AccessToken (TS 29.510 5.4.2.2): one token
// per (target NF type, service), fetched with the client credentials
// grant and reused until shortly before it expires, so a procedure costs
// no NRF round trip.

type tokenKey struct {
	target models.NrfNfManagementNfType
	scope  string
}

type cachedToken struct {
	token     string
	refreshAt time.Time
}

// tokenFetch lets concurrent requests for one missing token share one
// NRF request.
type tokenFetch struct {
	done  chan struct{}
	token string
	err   error
}

// refreshMargin is how long before expiry a token is replaced: more than
// a request's lifetime, so no request leaves with a token about to lapse.
func refreshMargin(ttl time.Duration) time.Duration {
	return min(ttl/10, time.Minute)
}

func (s *Security) token(ctx context.Context, target models.NrfNfManagementNfType, scope string) (string, error) {
	k := tokenKey{target, scope}
	s.mu.Lock()
	if c, ok := s.tokens[k]; ok && s.now().Before(c.refreshAt) {
		s.mu.Unlock()
		return c.token, nil
	}
	if f, ok := s.inflight[k]; ok {
		s.mu.Unlock()
		select {
		case <-f.done:
			return f.token, f.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	f := &tokenFetch{done: make(chan struct{})}
	s.inflight[k] = f
	s.mu.Unlock()

	rsp, err := s.requestToken(ctx, target, scope)
	s.mu.Lock()
	delete(s.inflight, k)
	if err == nil {
		ttl := time.Duration(rsp.ExpiresIn) * time.Second
		s.tokens[k] = &cachedToken{token: rsp.AccessToken, refreshAt: s.now().Add(ttl - refreshMargin(ttl))}
	}
	s.mu.Unlock()
	f.token, f.err = rsp.AccessToken, err
	close(f.done)
	return f.token, f.err
}

// requestToken is AccessTokenRequest (TS 29.510 6.3.3.2.3.1): a form,
// authenticated with this NF's credential.
func (s *Security) requestToken(ctx context.Context, target models.NrfNfManagementNfType, scope string) (AccessTokenRsp, error) {
	me := s.Principal()
	form := url.Values{
		"grant_type": {"client_credentials"}, "nfInstanceId": {me}, "nfType": {string(s.selfType)},
		"targetNfType": {string(target)}, "scope": {scope},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.nrfURI+AccessTokenPath, strings.NewReader(form.Encode()))
	if err != nil {
		return AccessTokenRsp{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(me, s.secret.Credential(me))
	resp, err := s.hc.Do(req)
	if err != nil {
		return AccessTokenRsp{}, fmt.Errorf("access token for %s %s: %w", target, scope, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return AccessTokenRsp{}, fmt.Errorf("access token for %s %s: %w", target, scope, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e AccessTokenErr
		_ = json.Unmarshal(data, &e)
		return AccessTokenRsp{}, fmt.Errorf("access token for %s %s: NRF answered %s %s %s", target, scope, resp.Status, e.Error, e.ErrorDescription)
	}
	var rsp AccessTokenRsp
	if err := json.Unmarshal(data, &rsp); err != nil || rsp.AccessToken == "" || rsp.ExpiresIn <= 0 {
		return AccessTokenRsp{}, fmt.Errorf("access token for %s %s: malformed answer", target, scope)
	}
	return rsp, nil
}
