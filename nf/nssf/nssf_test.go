package nssf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
)

// The default config serves 1/010203 and 1/112233 in TA 208-93/000001.
var (
	sliceA = models.Snssai{Sst: 1, Sd: "010203"}
	sliceB = models.Snssai{Sst: 1, Sd: "112233"}
	sliceC = models.Snssai{Sst: 2, Sd: "000001"} // subscribed, not served
	sliceX = models.Snssai{Sst: 9}               // neither
	ourTAI = models.Tai{PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}, Tac: "000001"}
)

func newNSSF(t *testing.T) (*NF, *nf.Env) {
	t.Helper()
	cfg := config.Default()
	env := nf.NewEnv(cfg, logging.Discard(), sbi.NewTCP(), models.NrfNfManagementNfType_NSSF)
	n, err := New(env)
	if err != nil {
		t.Fatal(err)
	}
	return n, env
}

func jsonQ(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// get asks the NSSF and decodes its answer (or ProblemDetails).
func get(t *testing.T, h http.Handler, q url.Values, out any) (int, models.ProblemDetails) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, SelectionPath+"?"+q.Encode(), nil))
	var p models.ProblemDetails
	if w.Code == http.StatusOK {
		if err := json.Unmarshal(w.Body.Bytes(), out); err != nil {
			t.Fatal(err)
		}
	} else {
		_ = json.Unmarshal(w.Body.Bytes(), &p)
	}
	return w.Code, p
}

func regQuery(info models.SliceInfoForRegistration, tai *models.Tai) url.Values {
	q := url.Values{"nf-type": {"AMF"}, "nf-id": {"amf-1"}, "slice-info-request-for-registration": {jsonQ(info)}}
	if tai != nil {
		q.Set("tai", jsonQ(tai))
	}
	return q
}

func subscribed(defaults []models.Snssai, others ...models.Snssai) []models.SubscribedSnssai {
	var out []models.SubscribedSnssai
	for i := range defaults {
		out = append(out, models.SubscribedSnssai{SubscribedSnssai: &defaults[i], DefaultIndication: true})
	}
	for i := range others {
		out = append(out, models.SubscribedSnssai{SubscribedSnssai: &others[i]})
	}
	return out
}

func allowedOf(a models.AuthorizedNetworkSliceInfo) []models.Snssai {
	var out []models.Snssai
	for _, l := range a.AllowedNssaiList {
		for _, s := range l.AllowedSnssaiList {
			out = append(out, *s.AllowedSnssai)
		}
	}
	return out
}

func same(a, b []models.Snssai) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !domain.SameModelSNSSAI(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TS 23.501 5.15.5.2.1: allowed = requested ∩ subscribed ∩ served; the
// rest rejected with the cause that tells the UE where it may retry.
func TestRegistrationSliceSelection(t *testing.T) {
	n, _ := newNSSF(t)
	h := n.Handler()
	for _, c := range []struct {
		name                           string
		info                           models.SliceInfoForRegistration
		tai                            *models.Tai
		allowed, inPLMN, inTA, configd []models.Snssai
	}{
		{"requested ∩ subscribed ∩ served",
			models.SliceInfoForRegistration{RequestedNssai: []models.Snssai{sliceA, sliceC, sliceX}, SubscribedNssai: subscribed([]models.Snssai{sliceA}, sliceB, sliceC)},
			&ourTAI, []models.Snssai{sliceA}, []models.Snssai{sliceX}, []models.Snssai{sliceC}, []models.Snssai{sliceA, sliceB}},
		{"no request: the subscribed defaults",
			models.SliceInfoForRegistration{SubscribedNssai: subscribed([]models.Snssai{sliceB}, sliceA)},
			nil, []models.Snssai{sliceB}, nil, nil, []models.Snssai{sliceB, sliceA}},
		{"a TA this core does not serve",
			models.SliceInfoForRegistration{RequestedNssai: []models.Snssai{sliceA}, SubscribedNssai: subscribed([]models.Snssai{sliceA})},
			&models.Tai{PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}, Tac: "000099"}, nil, nil, []models.Snssai{sliceA}, []models.Snssai{sliceA}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got models.AuthorizedNetworkSliceInfo
			if code, p := get(t, h, regQuery(c.info, c.tai), &got); code != 200 {
				t.Fatalf("%d %+v", code, p)
			}
			var configured []models.Snssai
			for _, s := range got.ConfiguredNssai {
				configured = append(configured, *s.ConfiguredSnssai)
			}
			switch {
			case !same(allowedOf(got), c.allowed):
				t.Fatalf("allowed %v, want %v", allowedOf(got), c.allowed)
			case !same(got.RejectedNssaiInPlmn, c.inPLMN) || !same(got.RejectedNssaiInTa, c.inTA):
				t.Fatalf("rejected in PLMN %v in TA %v, want %v %v", got.RejectedNssaiInPlmn, got.RejectedNssaiInTa, c.inPLMN, c.inTA)
			case !same(configured, c.configd):
				t.Fatalf("configured %v, want %v", configured, c.configd)
			}
			for _, l := range got.AllowedNssaiList {
				if l.AccessType != models.AccessType__3_GPP_ACCESS || l.AllowedSnssaiList[0].NsiInformationList[0].NrfId == "" {
					t.Fatalf("allowed list %+v: want 3GPP access with the NRF of the slice instance", l)
				}
			}
		})
	}
}

// TS 29.531 5.2.2.2.3: a PDU session's slice gets its instance and NRF; a
// slice not served is 403 SNSSAI_NOT_SUPPORTED.
func TestPDUSessionSliceSelection(t *testing.T) {
	n, env := newNSSF(t)
	h := n.Handler()
	q := func(s models.Snssai) url.Values {
		return url.Values{"nf-type": {"AMF"}, "nf-id": {"amf-1"}, "slice-info-request-for-pdu-session": {jsonQ(models.SliceInfoForPduSession{
			SNssai: &s, RoamingIndication: models.RoamingIndication_NON_ROAMING})}}
	}
	var got models.AuthorizedNetworkSliceInfo
	if code, p := get(t, h, q(sliceB), &got); code != 200 || got.NsiInformation == nil || got.NsiInformation.NrfId != env.Config.NRFURI()+"/nnrf-disc/v1/nf-instances" {
		t.Fatalf("%d %+v %+v", code, p, got.NsiInformation)
	}
	if code, p := get(t, h, q(sliceX), &got); code != 403 || p.Cause != CauseSNSSAINotSupported {
		t.Fatalf("%d %q, want 403 %s", code, p.Cause, CauseSNSSAINotSupported)
	}
}

// Bad queries get 400 with the cause naming what is wrong.
func TestSelectionBadQueries(t *testing.T) {
	n, _ := newNSSF(t)
	h := n.Handler()
	reg := jsonQ(models.SliceInfoForRegistration{})
	for _, c := range []struct {
		name  string
		q     url.Values
		cause string
	}{
		{"no nf-type", url.Values{"nf-id": {"a"}, "slice-info-request-for-registration": {reg}}, sbi.CauseMandatoryQueryParamMissing},
		{"neither request", url.Values{"nf-type": {"AMF"}, "nf-id": {"a"}}, sbi.CauseInvalidQueryParam},
		{"both requests", url.Values{"nf-type": {"AMF"}, "nf-id": {"a"}, "slice-info-request-for-registration": {reg}, "slice-info-request-for-pdu-session": {"{}"}}, sbi.CauseInvalidQueryParam},
		{"not JSON", url.Values{"nf-type": {"AMF"}, "nf-id": {"a"}, "slice-info-request-for-registration": {"{"}}, sbi.CauseInvalidQueryParam},
		{"bad tai", url.Values{"nf-type": {"AMF"}, "nf-id": {"a"}, "slice-info-request-for-registration": {reg}, "tai": {`{"tac":"zz"}`}}, sbi.CauseInvalidQueryParam},
		{"PDU session without sNssai", url.Values{"nf-type": {"AMF"}, "nf-id": {"a"}, "slice-info-request-for-pdu-session": {"{}"}}, sbi.CauseMandatoryIEMissing},
	} {
		t.Run(c.name, func(t *testing.T) {
			if code, p := get(t, h, c.q, nil); code != 400 || p.Cause != c.cause {
				t.Fatalf("%d %q, want 400 %s", code, p.Cause, c.cause)
			}
		})
	}
}

// Like every NF behind nf.Run, the NSSF takes only requests with an access
// token for its service (TS 33.501 13.4.1): without one 401, with the
// NRF's token for nnssf-nsselection 200.
func TestSelectionNeedsAnAccessToken(t *testing.T) {
	n, env := newNSSF(t)
	secret, err := sbi.LoadOrCreateSecret(filepath.Join(t.TempDir(), sbi.SecretFile))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	env.Security = sbi.NewSecurity(secret, nil, "", models.NrfNfManagementNfType_NSSF)
	env.Security.SetVerifyKey(&key.PublicKey)
	h := nf.Guard(env, n.Profile(), n.Handler())
	q := regQuery(models.SliceInfoForRegistration{RequestedNssai: []models.Snssai{sliceA}, SubscribedNssai: subscribed([]models.Snssai{sliceA})}, nil)
	if code, _ := get(t, h, q, nil); code != http.StatusUnauthorized {
		t.Fatalf("without a token: %d, want 401", code)
	}
	tok, err := sbi.NewTokenIssuer(key, "nrf", time.Hour).Issue("amf-1", "NSSF", []string{"nnssf-nsselection"})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, SelectionPath+"?"+q.Encode(), nil)
	r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("with a token: %d %s", w.Code, w.Body)
	}
}
