package nrf

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// The attack of issue 10: a PUT of a fake UDM profile and a DELETE of the
// real one at the NRF made the AUSF send every SUCI to the attacker. With
// SBI security the NRF lets only the holder of an instance's credential
// change it (TS 33.501 13.3.1), and discovery and tokens need credentials.

// securedNRF serves an NRF with SBI security, guarded as nf.Run guards
// it, and returns its URL and the core secret.
func securedNRF(t *testing.T, tr sbi.Transport) (string, sbi.Secret) {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	secret, err := sbi.LoadOrCreateSecret(cfg.SecretPath())
	if err != nil {
		t.Fatal(err)
	}
	env := &nf.Env{Config: cfg, Log: logging.Discard(), Client: sbitest.Client(tr)}
	env.Secure(sbi.NewSecurity(secret, tr.RoundTripper(), "", models.NrfNfManagementNfType_NRF))
	n, err := New(env)
	if err != nil {
		t.Fatal(err)
	}
	return sbitest.Serve(t, tr, nf.Guard(env, n.Profile(), n.Handler())), secret
}

// nfClient is the SBI client of NF instance id, showing its credential.
func nfClient(tr sbi.Transport, secret sbi.Secret, nrf string, nfType models.NrfNfManagementNfType, id string) *sbi.Client {
	sec := sbi.NewSecurity(secret, tr.RoundTripper(), nrf, nfType)
	sec.Identify(id)
	c := sbitest.Client(tr)
	c.AuthorizeWith(sec)
	return c
}

var ausfID = sbi.InstanceID(models.NrfNfManagementNfType_AUSF, "127.0.0.1:29509")

// fakeUDM is the attacker's UDM, at the attacker's address.
func fakeUDM(id string) models.NrfNfManagementNfProfile {
	return sbi.Profile(id, models.NrfNfManagementNfType_UDM, "10.6.6.6", 29503, models.PlmnId{Mcc: "208", Mnc: "93"},
		models.ServiceName_NUDM_UEAU, models.ServiceName_NUDM_SDM)
}

// discoveredUDMs is what an AUSF finds.
func discoveredUDMs(t *testing.T, ausf *sbi.Client, base string) []string {
	t.Helper()
	res, err := discover(t, ausf, base, url.Values{"target-nf-type": {"UDM"}, "requester-nf-type": {"AUSF"}})
	if err != nil {
		t.Fatalf("the AUSF's discovery: %v", err)
	}
	var out []string
	for _, p := range res.NfInstances {
		u, _ := sbi.ServiceBaseURI(p, models.ServiceName_NUDM_UEAU)
		out = append(out, p.NfInstanceId+"@"+u)
	}
	return out
}

func TestForgedUDMRegistrationIsRefused(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, secret := securedNRF(t, tr)
		ctx := context.Background()
		real := udmProfile()
		udm := nfClient(tr, secret, base, models.NrfNfManagementNfType_UDM, real.NfInstanceId)
		if _, err := udm.Do(ctx, "PUT", base+sbi.NFManagementPath+real.NfInstanceId, real, nil); err != nil {
			t.Fatalf("the real UDM's registration: %v", err)
		}
		ausf := nfClient(tr, secret, base, models.NrfNfManagementNfType_AUSF, ausfID)
		want := discoveredUDMs(t, ausf, base)

		fake := fakeUDM("66666666-6666-5666-8666-666666666666")
		if code := rawPut(t, tr, base+sbi.NFManagementPath+fake.NfInstanceId, fake); code != http.StatusUnauthorized {
			t.Errorf("PUT of a fake UDM without credentials: %d, want 401", code)
		}
		// An NF of the core (here the AUSF's credential) may register
		// only itself: neither a new UDM nor one under the real UDM's id.
		if _, err := ausf.Do(ctx, "PUT", base+sbi.NFManagementPath+fake.NfInstanceId, fake, nil); sbi.StatusOf(err) != http.StatusForbidden {
			t.Errorf("PUT of a fake UDM with another NF's credential: %v, want 403", err)
		}
		over := fakeUDM(real.NfInstanceId)
		if _, err := ausf.Do(ctx, "PUT", base+sbi.NFManagementPath+real.NfInstanceId, over, nil); sbi.StatusOf(err) != http.StatusForbidden {
			t.Errorf("PUT over the real UDM's profile with another NF's credential: %v, want 403", err)
		}
		if got := discoveredUDMs(t, ausf, base); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("the AUSF discovers %v after the attack, want %v", got, want)
		}
	})
}

func TestDeletionOfTheRealUDMIsRefused(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, secret := securedNRF(t, tr)
		ctx := context.Background()
		real := udmProfile()
		uri := base + sbi.NFManagementPath + real.NfInstanceId
		udm := nfClient(tr, secret, base, models.NrfNfManagementNfType_UDM, real.NfInstanceId)
		if _, err := udm.Do(ctx, "PUT", uri, real, nil); err != nil {
			t.Fatal(err)
		}
		ausf := nfClient(tr, secret, base, models.NrfNfManagementNfType_AUSF, ausfID)

		if _, err := sbitest.Client(tr).Do(ctx, "DELETE", uri, nil, nil); sbi.StatusOf(err) != http.StatusUnauthorized {
			t.Errorf("DELETE of the real UDM without credentials: %v, want 401", err)
		}
		forged := nfClient(tr, sbi.Secret("not the core's secret, 32 bytes"), base, models.NrfNfManagementNfType_UDM, real.NfInstanceId)
		if _, err := forged.Do(ctx, "DELETE", uri, nil, nil); sbi.StatusOf(err) != http.StatusUnauthorized {
			t.Errorf("DELETE with a credential of another secret: %v, want 401", err)
		}
		if _, err := ausf.Do(ctx, "DELETE", uri, nil, nil); sbi.StatusOf(err) != http.StatusForbidden {
			t.Errorf("DELETE of the real UDM with another NF's credential: %v, want 403", err)
		}
		suspend := []models.PatchItem{{Op: models.PatchOperation_REPLACE, Path: "/nfStatus", Value: "SUSPENDED"}}
		if _, err := ausf.Do(ctx, "PATCH", uri, suspend, nil); sbi.StatusOf(err) != http.StatusForbidden {
			t.Errorf("PATCH suspending the real UDM with another NF's credential: %v, want 403", err)
		}
		if got := discoveredUDMs(t, ausf, base); len(got) != 1 || !strings.HasPrefix(got[0], real.NfInstanceId+"@") {
			t.Errorf("the AUSF discovers %v after the attack, want the real UDM", got)
		}
		if _, err := udm.Do(ctx, "DELETE", uri, nil, nil); err != nil {
			t.Errorf("the real UDM's own deregistration: %v", err)
		}
	})
}

func tokenRequest(t *testing.T, tr sbi.Transport, base string, form url.Values, auth func(*http.Request)) (int, sbi.AccessTokenErr, sbi.AccessTokenRsp) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+sbi.AccessTokenPath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if auth != nil {
		auth(req)
	}
	resp, err := sbitest.HTTPClient(tr).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e sbi.AccessTokenErr
	var rsp sbi.AccessTokenRsp
	if resp.StatusCode == http.StatusOK {
		_ = decodeJSON(resp, &rsp)
	} else {
		_ = decodeJSON(resp, &e)
	}
	return resp.StatusCode, e, rsp
}

// TS 29.510 5.4.2.2, 5.3.2.2; TS 33.501 13.3.1: discovery and tokens need
// the caller's credential; a token is only for the caller itself and for
// services of the target; the token the NRF signs verifies at a producer
// that fetched the NRF's key, for the service it names only.
func TestDiscoveryAndTokensNeedCredentials(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, secret := securedNRF(t, tr)
		q := url.Values{"target-nf-type": {"UDM"}, "requester-nf-type": {"AUSF"}}
		if _, err := discover(t, sbitest.Client(tr), base, q); sbi.StatusOf(err) != http.StatusUnauthorized {
			t.Errorf("discovery without credentials: %v, want 401", err)
		}
		asAUSF := func(r *http.Request) { r.SetBasicAuth(ausfID, secret.Credential(ausfID)) }
		form := func(id, target, scope string) url.Values {
			return url.Values{"grant_type": {"client_credentials"}, "nfInstanceId": {id}, "nfType": {"AUSF"}, "targetNfType": {target}, "scope": {scope}}
		}
		udmID := udmProfile().NfInstanceId
		for _, c := range []struct {
			name   string
			form   url.Values
			auth   func(*http.Request)
			status int
			code   string
		}{
			{"no credential", form(ausfID, "UDM", "nudm-ueau"), nil, 401, ""},
			{"a token for another instance", form(udmID, "UDM", "nudm-ueau"), asAUSF, 403, "unauthorized_client"},
			{"a scope of another NF type", form(ausfID, "UDM", "namf-comm"), asAUSF, 400, "invalid_scope"},
			{"another grant", func() url.Values { f := form(ausfID, "UDM", "nudm-ueau"); f.Set("grant_type", "password"); return f }(), asAUSF, 400, "unsupported_grant_type"},
		} {
			status, e, _ := tokenRequest(t, tr, base, c.form, c.auth)
			if status != c.status || e.Error != c.code {
				t.Errorf("%s: %d %q, want %d %q", c.name, status, e.Error, c.status, c.code)
			}
		}
		status, _, rsp := tokenRequest(t, tr, base, form(ausfID, "UDM", "nudm-ueau"), asAUSF)
		if status != http.StatusOK || rsp.TokenType != "Bearer" || rsp.ExpiresIn != 3600 {
			t.Fatalf("the AUSF's token request: %d %+v", status, rsp)
		}
		producer := sbi.NewSecurity(secret, tr.RoundTripper(), base, models.NrfNfManagementNfType_UDM)
		producer.Identify(udmID)
		claims, err := producer.Verify(context.Background(), rsp.AccessToken, "nudm-ueau")
		if err != nil || claims.Subject != ausfID {
			t.Fatalf("the UDM's check of the token: %v %+v", err, claims)
		}
		if _, err := producer.Verify(context.Background(), rsp.AccessToken, "nudm-sdm"); err == nil {
			t.Error("a nudm-ueau token was accepted for nudm-sdm")
		}
	})
}

// A status subscription belongs to the NF whose credential made it: no
// other may make one in its name or end it (else an attacker with any
// credential could stop the AUSF hearing that its UDM left).
func TestSubscriptionsBelongToTheirNF(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, secret := securedNRF(t, tr)
		ctx := context.Background()
		ausf := nfClient(tr, secret, base, models.NrfNfManagementNfType_AUSF, ausfID)
		udm := nfClient(tr, secret, base, models.NrfNfManagementNfType_UDM, udmProfile().NfInstanceId)
		sub := func(req string) models.NrfNfManagementSubscriptionData {
			return models.NrfNfManagementSubscriptionData{NfStatusNotificationUri: "http://127.0.0.1:29509" + sbi.NFStatusNotifyPath,
				ReqNfInstanceId: req, ReqNotifEvents: []models.NotificationEventType{models.NotificationEventType_DEREGISTERED}}
		}
		if _, err := udm.Do(ctx, "POST", base+sbi.SubscriptionsPath, sub(ausfID), nil); sbi.StatusOf(err) != http.StatusForbidden {
			t.Errorf("a subscription in the AUSF's name with the UDM's credential: %v, want 403", err)
		}
		var made models.NrfNfManagementSubscriptionData
		if _, err := ausf.Do(ctx, "POST", base+sbi.SubscriptionsPath, sub(""), &made); err != nil || made.ReqNfInstanceId != ausfID {
			t.Fatalf("the AUSF's subscription: %v, reqNfInstanceId %q", err, made.ReqNfInstanceId)
		}
		uri := base + sbi.SubscriptionsPath + "/" + made.SubscriptionId
		if _, err := udm.Do(ctx, "DELETE", uri, nil, nil); sbi.StatusOf(err) != http.StatusForbidden {
			t.Errorf("DELETE of the AUSF's subscription with the UDM's credential: %v, want 403", err)
		}
		if _, err := ausf.Do(ctx, "DELETE", uri, nil, nil); err != nil {
			t.Errorf("the AUSF ending its own subscription: %v", err)
		}
	})
}

// Under mutual TLS the client certificate names the NF (`l25gc certs
// init` issues "udm", "ausf"…): even with the core secret, so a credential
// for any instance, a caller holding the AUSF's certificate cannot
// register a UDM nor delete the real one; the UDM's certificate can.
func TestMutualTLSCertificateMustNameTheNFType(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	if err := sbi.EnsureCA(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nrf", "udm", "ausf"} {
		if err := sbi.IssueCert(dir, name, sbi.CertHosts("127.0.0.1")); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	secret, err := sbi.LoadOrCreateSecret(cfg.SecretPath())
	if err != nil {
		t.Fatal(err)
	}
	tlsTransport := func(name string) *sbi.TCP {
		server, client, err := sbi.TLSConfigs(sbi.TLSMutual, dir, name)
		if err != nil {
			t.Fatal(err)
		}
		return sbi.NewTCPTLS(server, client)
	}
	nrfTr := tlsTransport("nrf")
	env := &nf.Env{Config: cfg, Log: logging.Discard(), Client: sbitest.Client(nrfTr)}
	env.Secure(sbi.NewSecurity(secret, nrfTr.RoundTripper(), "", models.NrfNfManagementNfType_NRF))
	n, err := New(env)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := nrfTr.Serve("127.0.0.1:0", sbi.Handler(nf.Guard(env, n.Profile(), n.Handler()), nil, logging.Discard()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	base := "https://" + srv.Addr()

	real := udmProfile()
	uri := base + sbi.NFManagementPath + real.NfInstanceId
	ctx := context.Background()
	withAUSFCert := nfClient(tlsTransport("ausf"), secret, base, models.NrfNfManagementNfType_UDM, real.NfInstanceId)
	if _, err := withAUSFCert.Do(ctx, "PUT", uri, real, nil); sbi.StatusOf(err) != http.StatusForbidden {
		t.Errorf("PUT of a UDM with the UDM's credential but the AUSF's certificate: %v, want 403", err)
	}
	udm := nfClient(tlsTransport("udm"), secret, base, models.NrfNfManagementNfType_UDM, real.NfInstanceId)
	if _, err := udm.Do(ctx, "PUT", uri, real, nil); err != nil {
		t.Fatalf("the UDM's registration with its certificate: %v", err)
	}
	if _, err := withAUSFCert.Do(ctx, "DELETE", uri, nil, nil); sbi.StatusOf(err) != http.StatusForbidden {
		t.Errorf("DELETE of the UDM with the AUSF's certificate: %v, want 403", err)
	}
	if _, err := udm.Do(ctx, "DELETE", uri, nil, nil); err != nil {
		t.Errorf("the UDM's deregistration with its certificate: %v", err)
	}
}

// A certificate that names its NF instance (TS 33.310 6.1.3c; `l25gc certs
// init` puts it in) changes only that instance: the certificate of one
// UDM, with the core secret, cannot register or remove another UDM.
func TestMutualTLSCertificateNamingAnInstanceChangesOnlyIt(t *testing.T) {
	real := udmProfile()
	dir := filepath.Join(t.TempDir(), "certs")
	other := filepath.Join(t.TempDir(), "certs")
	if err := sbi.EnsureCA(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{sbi.CACertFile, sbi.CAKeyFile} { // one CA, two UDM certificates
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(sbi.IssueCert(dir, "nrf", sbi.CertHosts("127.0.0.1")))
	must(sbi.IssueCert(dir, "udm", sbi.CertHosts("127.0.0.1"), real.NfInstanceId))
	must(sbi.IssueCert(other, "udm", sbi.CertHosts("127.0.0.1"), "5b5a3a40-0000-5000-8000-000000000002"))
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	secret, err := sbi.LoadOrCreateSecret(cfg.SecretPath())
	must(err)
	tlsTransport := func(dir, name string) *sbi.TCP {
		server, client, err := sbi.TLSConfigs(sbi.TLSMutual, dir, name)
		must(err)
		return sbi.NewTCPTLS(server, client)
	}
	nrfTr := tlsTransport(dir, "nrf")
	env := &nf.Env{Config: cfg, Log: logging.Discard(), Client: sbitest.Client(nrfTr)}
	env.Secure(sbi.NewSecurity(secret, nrfTr.RoundTripper(), "", models.NrfNfManagementNfType_NRF))
	n, err := New(env)
	must(err)
	srv, err := nrfTr.Serve("127.0.0.1:0", sbi.Handler(nf.Guard(env, n.Profile(), n.Handler()), nil, logging.Discard()))
	must(err)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	base := "https://" + srv.Addr()
	uri := base + sbi.NFManagementPath + real.NfInstanceId
	ctx := context.Background()

	otherUDM := nfClient(tlsTransport(other, "udm"), secret, base, models.NrfNfManagementNfType_UDM, real.NfInstanceId)
	if _, err := otherUDM.Do(ctx, "PUT", uri, real, nil); sbi.StatusOf(err) != http.StatusForbidden {
		t.Errorf("PUT of a UDM with another UDM instance's certificate: %v, want 403", err)
	}
	udm := nfClient(tlsTransport(dir, "udm"), secret, base, models.NrfNfManagementNfType_UDM, real.NfInstanceId)
	if _, err := udm.Do(ctx, "PUT", uri, real, nil); err != nil {
		t.Fatalf("the UDM's registration with its own certificate: %v", err)
	}
	if _, err := otherUDM.Do(ctx, "DELETE", uri, nil, nil); sbi.StatusOf(err) != http.StatusForbidden {
		t.Errorf("DELETE of the UDM with another UDM instance's certificate: %v, want 403", err)
	}
	if _, err := udm.Do(ctx, "DELETE", uri, nil, nil); err != nil {
		t.Errorf("the UDM's deregistration with its own certificate: %v", err)
	}
}
