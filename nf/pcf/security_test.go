package pcf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/nrf/nrftest"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// Npcf_SMPolicyControl is guarded like the AM policy service (TS 29.500
// 6.7.3): the NRF grants tokens of scope npcf-smpolicycontrol for the PCF,
// whose profile lists the service, and the PCF serves sm-policies only to
// a token of that scope.
func TestSMPolicyNeedsItsScope(t *testing.T) {
	if target, ok := sbi.ServiceTarget(string(models.ServiceName_NPCF_SMPOLICYCONTROL)); !ok || target != models.NrfNfManagementNfType_PCF {
		t.Fatalf("the NRF would grant npcf-smpolicycontrol for %q (%v), want PCF", target, ok)
	}
	n, err := New(nrftest.Env(t, sbi.NewTCP(), nil, models.NrfNfManagementNfType_PCF))
	if err != nil {
		t.Fatal(err)
	}
	if p := n.Profile(); !slices.ContainsFunc(p.NfServices, func(s models.NrfNfManagementNfService) bool {
		return s.ServiceName == models.ServiceName_NPCF_SMPOLICYCONTROL
	}) {
		t.Fatalf("the PCF's profile lists no npcf-smpolicycontrol: %+v", p.NfServices)
	}
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		secret, err := sbi.LoadOrCreateSecret(filepath.Join(t.TempDir(), sbi.SecretFile))
		if err != nil {
			t.Fatal(err)
		}
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		iss := sbi.NewTokenIssuer(key, "nrf-1", time.Hour)
		keys := http.NewServeMux()
		keys.HandleFunc("GET "+sbi.AccessTokenKeyPath, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(iss.PublicKeyPEM()) })
		nrf := sbitest.Serve(t, tr, sbi.NewSecurity(secret, tr.RoundTripper(), "", models.NrfNfManagementNfType_NRF).GuardNRF(keys))
		sec := sbi.NewSecurity(secret, tr.RoundTripper(), nrf, models.NrfNfManagementNfType_PCF)
		sec.Identify(n.id)
		base := sbitest.Serve(t, tr, sec.Guard(n.Handler()))
		token := func(scope string) string {
			rsp, err := iss.Issue("smf-1", "PCF", []string{scope})
			if err != nil {
				t.Fatal(err)
			}
			return "Bearer " + rsp.AccessToken
		}
		for _, c := range []struct {
			name, auth string
			status     int
		}{
			{"no token", "", 401},
			{"a token of the AM policy service", token("npcf-am-policy-control"), 403},
			{"a token of npcf-smpolicycontrol", token("npcf-smpolicycontrol"), 400}, // through the guard: the empty context is refused
		} {
			req, _ := http.NewRequest(http.MethodPost, base+smPoliciesPath, strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			resp, err := sbitest.HTTPClient(tr).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.status)
			}
		}
	})
}
