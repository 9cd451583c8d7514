package sbi_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

const (
	udmID  = "5f1c0a6e-0000-5000-8000-000000000001"
	ausfID = "5f1c0a6e-0000-5000-8000-000000000002"
)

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newSecret(t testing.TB) sbi.Secret {
	t.Helper()
	s, err := sbi.LoadOrCreateSecret(filepath.Join(t.TempDir(), sbi.SecretFile))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// miniNRF is the token endpoint and key of an NRF, behind credentials;
// it counts the tokens it issued.
func miniNRF(t testing.TB, tr sbi.Transport, secret sbi.Secret, iss *sbi.TokenIssuer, issued *atomic.Int32) string {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+sbi.AccessTokenPath, func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("nfInstanceId") != sbi.PrincipalOf(r.Context()) {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		rsp, err := iss.Issue(sbi.PrincipalOf(r.Context()), r.PostForm.Get("targetNfType"), strings.Fields(r.PostForm.Get("scope")))
		if err != nil {
			t.Error(err)
		}
		issued.Add(1)
		sbi.WriteJSON(w, http.StatusOK, rsp)
	})
	mux.HandleFunc("GET "+sbi.AccessTokenKeyPath, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(iss.PublicKeyPEM()) })
	sec := sbi.NewSecurity(secret, tr.RoundTripper(), "", models.NrfNfManagementNfType_NRF)
	return sbitest.Serve(t, tr, sec.GuardNRF(mux))
}

// producer serves a UDM whose one service answers 200 with the caller's
// instance id, behind the token check.
func producer(t testing.TB, tr sbi.Transport, secret sbi.Secret, nrf string) string {
	sec := sbi.NewSecurity(secret, tr.RoundTripper(), nrf, models.NrfNfManagementNfType_UDM)
	sec.Identify(udmID)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(sbi.PrincipalOf(r.Context())))
	})
	return sbitest.Serve(t, tr, sec.Guard(h))
}

func call(t testing.TB, tr sbi.Transport, url, authorization string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := sbitest.HTTPClient(tr).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	return resp, b.String()
}

const ueauPath = "/nudm-ueau/v1/suci-0-208-93-0-0-0-00000001/security-information/generate-auth-data"

// TS 29.500 6.7.3, RFC 6750 3: the attack of issue 10 (generate-auth-data
// from anyone) is refused without a token (401, a Bearer challenge with no
// error code), with a token of another service (403 insufficient_scope),
// for another NF (401 invalid_token), expired, or signed by another key;
// the token the NRF issued for the service lets the AUSF in.
func TestProducerRequiresATokenForItsService(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		secret, key := newSecret(t), newKey(t)
		iss := sbi.NewTokenIssuer(key, "nrf-1", time.Hour)
		var issued atomic.Int32
		base := producer(t, tr, secret, miniNRF(t, tr, secret, iss, &issued))
		bearer := func(i *sbi.TokenIssuer, aud string, scopes ...string) string {
			rsp, err := i.Issue(ausfID, aud, scopes)
			if err != nil {
				t.Fatal(err)
			}
			return "Bearer " + rsp.AccessToken
		}
		expired := sbi.NewTokenIssuer(key, "nrf-1", time.Minute)
		expired.SetClock(func() time.Time { return time.Now().Add(-2 * time.Minute) })

		for _, c := range []struct {
			name, auth      string
			status          int
			challengeHas    string
			challengeHasNot string
		}{
			{"no token", "", 401, `Bearer realm=`, "error="},
			{"not a JWT", "Bearer abc.def.ghi", 401, `error="invalid_token"`, ""},
			{"wrong scope", bearer(iss, "UDM", "nudm-sdm"), 403, `error="insufficient_scope"`, ""},
			{"other audience", bearer(iss, "AMF", "nudm-ueau"), 401, `error="invalid_token"`, ""},
			{"expired", bearer(expired, "UDM", "nudm-ueau"), 401, `error="invalid_token"`, ""},
			{"forged signature", bearer(sbi.NewTokenIssuer(newKey(t), "nrf-1", time.Hour), "UDM", "nudm-ueau"), 401, `error="invalid_token"`, ""},
			{"basic credential", "Basic " + basic(ausfID, secret.Credential(ausfID)), 401, "Bearer", ""},
		} {
			resp, _ := call(t, tr, base+ueauPath, c.auth)
			ch := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != c.status || !strings.Contains(ch, c.challengeHas) || (c.challengeHasNot != "" && strings.Contains(ch, c.challengeHasNot)) {
				t.Errorf("%s: %d %q, want %d with %q", c.name, resp.StatusCode, ch, c.status, c.challengeHas)
			}
			if ct := resp.Header.Get("Content-Type"); resp.StatusCode >= 400 && ct != "application/problem+json" {
				t.Errorf("%s: Content-Type %q, want a ProblemDetails", c.name, ct)
			}
		}
		for _, aud := range []string{"UDM", udmID} {
			resp, body := call(t, tr, base+ueauPath, bearer(iss, aud, "nudm-sdm", "nudm-ueau"))
			if resp.StatusCode != 200 || body != ausfID {
				t.Errorf("token for aud %s: %d %q, want 200 naming the consumer %s", aud, resp.StatusCode, body, ausfID)
			}
		}
	})
}

func basic(user, pass string) string {
	r, _ := http.NewRequest("GET", "http://x/", nil)
	r.SetBasicAuth(user, pass)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}

// TS 29.510 5.4.2.2: a consumer fetches a token per target and service
// and reuses it until shortly before expiry; its requests then pass the
// producer's check. The NRF status notification path carries the NRF's
// credential instead, and a forged one is refused.
func TestClientFetchesCachesAndRenewsTokens(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		secret := newSecret(t)
		iss := sbi.NewTokenIssuer(newKey(t), "nrf-1", time.Hour)
		var issued atomic.Int32
		nrf := miniNRF(t, tr, secret, iss, &issued)
		base := producer(t, tr, secret, nrf)

		sec := sbi.NewSecurity(secret, tr.RoundTripper(), nrf, models.NrfNfManagementNfType_AUSF)
		sec.Identify(ausfID)
		now := time.Now()
		sec.SetClock(func() time.Time { return now })
		c := sbitest.Client(tr)
		c.AuthorizeWith(sec)
		ctx := context.Background()
		for range 3 {
			if _, err := c.Do(ctx, http.MethodPost, base+ueauPath, map[string]string{}, nil); err != nil {
				t.Fatalf("request with the NRF's token: %v", err)
			}
		}
		if n := issued.Load(); n != 1 {
			t.Fatalf("%d token requests for three calls of one service, want 1 (cached)", n)
		}
		now = now.Add(59 * time.Minute) // within the refresh margin of a 1 h token
		if _, err := c.Do(ctx, http.MethodPost, base+ueauPath, map[string]string{}, nil); err != nil {
			t.Fatal(err)
		}
		if n := issued.Load(); n != 2 {
			t.Fatalf("%d token requests after the token neared expiry, want 2 (renewed)", n)
		}

		resp, _ := call(t, tr, base+sbi.NFStatusNotifyPath, "")
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("NF status notification without the NRF's credential: %d, want 401", resp.StatusCode)
		}
		resp, _ = call(t, tr, base+sbi.NFStatusNotifyPath, "Basic "+basic(ausfID, secret.Credential(ausfID)))
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("NF status notification with an AUSF's credential: %d, want 401", resp.StatusCode)
		}
		resp, _ = call(t, tr, base+sbi.NFStatusNotifyPath, "Basic "+basic(sbi.NRFPrincipal, secret.Credential(sbi.NRFPrincipal)))
		if resp.StatusCode != http.StatusOK {
			t.Errorf("NF status notification with the NRF's credential: %d, want it served", resp.StatusCode)
		}
	})
}

// Paths of no SBI service (the provisioning API has its own admin
// credential) are not the token check's.
func TestGuardLeavesNonSBIPathsAlone(t *testing.T) {
	if _, ok := sbi.ServiceTarget("l25gc-prov"); ok {
		t.Fatal("l25gc-prov taken for an SBI service")
	}
	for svc, want := range map[string]models.NrfNfManagementNfType{"nudm-ueau": "UDM", "namf-callback": "AMF", "nnrf-disc": "NRF", "npcf-am-policy-control": "PCF"} {
		if got, ok := sbi.ServiceTarget(svc); !ok || got != want {
			t.Errorf("ServiceTarget(%s) = %s %v, want %s", svc, got, ok, want)
		}
	}
}

// The secret file is made once, 0600, and read back the same.
func TestSecretIsPrivateAndStable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d", sbi.SecretFile)
	a, err := sbi.LoadOrCreateSecret(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sbi.LoadOrCreateSecret(path)
	if err != nil || a.Credential("x") != b.Credential("x") {
		t.Fatalf("second load: %v, credentials differ", err)
	}
	if st, _ := statMode(path); st != 0o600 {
		t.Errorf("mode %o, want 600", st)
	}
}

// BenchmarkTokenVerification is what the producer's check costs per
// request (issue 10: quote it): go test -run - -bench TokenVerification ./sbi
func BenchmarkTokenVerification(b *testing.B) {
	secret := newSecret(b)
	key := newKey(b)
	iss := sbi.NewTokenIssuer(key, "nrf-1", time.Hour)
	sec := sbi.NewSecurity(secret, nil, "", models.NrfNfManagementNfType_UDM)
	sec.Identify(udmID)
	sec.SetVerifyKey(&key.PublicKey)
	rsp, err := iss.Issue(ausfID, "UDM", []string{"nudm-ueau", "nudm-sdm"})
	if err != nil {
		b.Fatal(err)
	}
	h := sec.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	req, _ := http.NewRequest(http.MethodPost, "http://udm"+ueauPath, nil)
	req.Header.Set("Authorization", "Bearer "+rsp.AccessToken)
	w := &discardWriter{h: http.Header{}}
	// cached: the steady state, a consumer reusing its token; first use:
	// the ES256 verification every new token costs once.
	for _, first := range []bool{false, true} {
		name := map[bool]string{false: "cached", true: "first-use"}[first]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if first {
					sec.ForgetVerified()
				}
				h.ServeHTTP(w, req)
				if w.status != 0 {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}

// A token the producer verified before is refused once it expires: the
// verified-token cache keeps the expiry check.
func TestVerifiedTokenExpires(t *testing.T) {
	key := newKey(t)
	sec := sbi.NewSecurity(newSecret(t), nil, "", models.NrfNfManagementNfType_UDM)
	sec.SetVerifyKey(&key.PublicKey)
	now := time.Now()
	sec.SetClock(func() time.Time { return now })
	rsp, err := sbi.NewTokenIssuer(key, "nrf-1", time.Hour).Issue(ausfID, "UDM", []string{"nudm-ueau"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sec.Verify(context.Background(), rsp.AccessToken, "nudm-ueau"); err != nil {
		t.Fatalf("fresh token: %v", err)
	}
	now = now.Add(61 * time.Minute)
	if _, err := sec.Verify(context.Background(), rsp.AccessToken, "nudm-ueau"); err == nil {
		t.Fatal("a verified token was accepted after it expired")
	}
}

type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }

func statMode(path string) (uint32, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return uint32(st.Mode().Perm()), nil
}

// A request the guard admitted is counted under its route's service: the
// guard hands the mux a copy of the request (carrying the principal), and
// the route the mux matched there must reach Handler's metrics, or every
// authenticated request would count as unmatched.
func TestAuthenticatedRequestsCountUnderTheirRoute(t *testing.T) {
	key := newKey(t)
	sec := sbi.NewSecurity(newSecret(t), nil, "", models.NrfNfManagementNfType_UDM)
	sec.Identify(udmID)
	sec.SetVerifyKey(&key.PublicKey)
	rsp, err := sbi.NewTokenIssuer(key, "nrf-1", time.Hour).Issue(ausfID, "UDM", []string{"nudm-ueau"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /nudm-ueau/v1/{supiOrSuci}/security-information/generate-auth-data", func(w http.ResponseWriter, r *http.Request) {
		if sbi.PrincipalOf(r.Context()) != ausfID {
			t.Errorf("principal %q, want the token's subject %q", sbi.PrincipalOf(r.Context()), ausfID)
		}
		w.WriteHeader(http.StatusOK)
	})
	reg := prometheus.NewRegistry()
	h := sbi.Handler(sec.Guard(mux), sbi.NewMetrics(reg), logging.Discard())
	req := httptest.NewRequest(http.MethodPost, ueauPath, nil)
	req.Header.Set("Authorization", "Bearer "+rsp.AccessToken)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if n := servedCount(t, reg, "nudm-ueau", "200"); n != 1 {
		t.Fatalf("nudm-ueau 200s counted %d, want 1 (unmatched: %d)", n, servedCount(t, reg, sbi.UnmatchedRoute, "200"))
	}
}
