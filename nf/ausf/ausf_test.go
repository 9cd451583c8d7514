package ausf

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/nrf/nrftest"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
	"github.com/l25gc/l25gc/security"
)

func TestMain(m *testing.M) { sbitest.Main(m) }

const testSUPI = "imsi-208930000000001"

var (
	testK   = mustHex(config.DefaultK)
	testOPc = mustHex(config.DefaultOPc)
	snn     = security.ServingNetworkName("208", "93")
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// fakeUDM generates real 5G HE AVs (package security) for testSUPI with
// SQN 0x21 and records the authentication results it is told.
type fakeUDM struct {
	mu     sync.Mutex
	events []models.AuthEvent
	ausfID string
}

func (f *fakeUDM) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /nudm-ueau/v1/{id}/security-information/generate-auth-data", func(w http.ResponseWriter, r *http.Request) {
		var req models.AuthenticationInfoRequest
		if !sbi.DecodeJSON(w, r, &req) {
			return
		}
		if r.PathValue("id") != testSUPI && r.PathValue("id") != "suci-0-208-93-0000-0-0-0000000001" {
			sbi.WriteProblem(w, 404, "USER_NOT_FOUND", "")
			return
		}
		f.mu.Lock()
		f.ausfID = req.AusfInstanceId
		f.mu.Unlock()
		av, err := security.GenerateAuthVector(testK, testOPc, []byte{0, 0, 0, 0, 0, 0x21}, []byte{0x80, 0}, nil, req.ServingNetworkName)
		if err != nil {
			sbi.WriteProblem(w, 500, "SYSTEM_FAILURE", err.Error())
			return
		}
		sbi.WriteJSON(w, 200, models.UdmUeauAuthenticationInfoResult{AuthType: models.UdmUeauAuthType__5_G_AKA, Supi: testSUPI,
			AuthenticationVector: &models.AuthenticationVector{AvType: models.AvType__5_G_HE_AKA,
				Rand: hex.EncodeToString(av.RAND), Autn: hex.EncodeToString(av.AUTN),
				XresStar: hex.EncodeToString(av.XRESStar), Kausf: hex.EncodeToString(av.KAUSF)}})
	})
	mux.HandleFunc("POST /nudm-ueau/v1/{supi}/auth-events", func(w http.ResponseWriter, r *http.Request) {
		var ev models.AuthEvent
		if !sbi.DecodeJSON(w, r, &ev) {
			return
		}
		f.mu.Lock()
		f.events = append(f.events, ev)
		f.mu.Unlock()
		sbi.WriteJSON(w, 201, ev)
	})
	return mux
}

func newAUSF(t *testing.T, tr sbi.Transport) (*NF, string, *sbi.Client, *fakeUDM) {
	t.Helper()
	udm := &fakeUDM{}
	udmURL := nrftest.Serve(t, tr, udm.handler())
	env := nrftest.Env(t, tr, nil, models.NrfNfManagementNfType_AUSF,
		nrftest.Peer(t, models.NrfNfManagementNfType_UDM, udmURL, models.ServiceName_NUDM_UEAU))
	n, err := New(env)
	if err != nil {
		t.Fatal(err)
	}
	return n, nrftest.Serve(t, tr, n.Handler()), env.Client, udm
}

// ueAuthCtx decodes UeAuthenticationCtx with its 5gAuthData as Av5gAka.
type ueAuthCtx struct {
	AuthType string                   `json:"authType"`
	AuthData models.Av5gAka           `json:"5gAuthData"`
	Links    map[string][]models.Link `json:"_links"`
	SNN      string                   `json:"servingNetworkName"`
}

func start(t *testing.T, c *sbi.Client, base, id string) (ueAuthCtx, string) {
	t.Helper()
	var out ueAuthCtx
	h, err := c.Do(context.Background(), "POST", base+"/nausf-auth/v1/ue-authentications",
		models.AuthenticationInfo{SupiOrSuci: id, ServingNetworkName: snn}, &out)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	if out.AuthType != "5G_AKA" || len(out.Links["5g-aka"]) != 1 || out.Links["5g-aka"][0].Href != h.Get("Location")+"/5g-aka-confirmation" {
		t.Fatalf("UeAuthenticationCtx %+v, Location %q", out, h.Get("Location"))
	}
	return out, out.Links["5g-aka"][0].Href
}

// ueAnswers is the UE (RES*) and SEAF (HRES* = HXRES*) side of the challenge.
func ueAnswers(t *testing.T, av models.Av5gAka) (resStar, kseaf []byte) {
	t.Helper()
	rnd := mustHex(av.Rand)
	resp, err := security.VerifyChallenge(testK, testOPc, rnd, mustHex(av.Autn), []byte{0, 0, 0, 0, 0, 0x20})
	if err != nil {
		t.Fatalf("UE rejects the challenge: %v", err)
	}
	resStar = security.ResStar(resp.CK, resp.IK, snn, rnd, resp.RES)
	if got := hex.EncodeToString(security.HResStar(rnd, resStar)); got != av.HxresStar {
		t.Fatalf("SEAF check: HRES* %s != HXRES* %s", got, av.HxresStar)
	}
	return resStar, security.KSEAF(security.KAUSF(resp.CK, resp.IK, snn, resp.SQNXorAK), snn)
}

func confirm(t *testing.T, c *sbi.Client, uri string, resStar []byte) (models.ConfirmationDataResponse, error) {
	t.Helper()
	var out models.ConfirmationDataResponse
	_, err := c.Do(context.Background(), "PUT", uri, models.ConfirmationData{ResStar: hex.EncodeToString(resStar)}, &out)
	return out, err
}

func TestFull5GAKA(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, base, c, udm := newAUSF(t, tr)
		ch, uri := start(t, c, base, "suci-0-208-93-0000-0-0-0000000001")
		resStar, kseaf := ueAnswers(t, ch.AuthData)

		res, err := confirm(t, c, uri, resStar)
		if err != nil || res.AuthResult != models.AusfUeAuthenticationAuthResult_SUCCESS || res.Supi != testSUPI || res.Kseaf != hex.EncodeToString(kseaf) {
			t.Fatalf("confirmation: %v %+v, want success, %s and the UE's KSEAF", err, res, testSUPI)
		}
		// A context confirms once.
		if _, err := confirm(t, c, uri, resStar); sbi.StatusOf(err) != 404 || sbi.CauseOf(err) != "CONTEXT_NOT_FOUND" {
			t.Fatalf("second confirmation: %v, want 404 CONTEXT_NOT_FOUND", err)
		}
		n.Stop(context.Background()) // waits for the result report
		udm.mu.Lock()
		defer udm.mu.Unlock()
		if len(udm.events) != 1 || !udm.events[0].Success || udm.events[0].NfInstanceId != n.id || udm.ausfID != n.id {
			t.Fatalf("UDM was told %+v (ausfInstanceId %q)", udm.events, udm.ausfID)
		}
	})
}

func TestWrongRESStarFails(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, base, c, udm := newAUSF(t, tr)
		ch, uri := start(t, c, base, testSUPI)
		resStar, _ := ueAnswers(t, ch.AuthData)
		resStar[0] ^= 1
		res, err := confirm(t, c, uri, resStar)
		if err != nil || res.AuthResult != models.AusfUeAuthenticationAuthResult_FAILURE || res.Kseaf != "" || res.Supi != "" {
			t.Fatalf("wrong RES*: %v %+v, want AUTHENTICATION_FAILURE without SUPI or KSEAF", err, res)
		}
		n.Stop(context.Background())
		if len(udm.events) != 1 || udm.events[0].Success {
			t.Fatalf("UDM was told %+v, want one failure", udm.events)
		}
	})
}

func TestAuthenticateErrors(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		_, base, c, _ := newAUSF(t, tr)
		ctx := context.Background()
		uri := base + "/nausf-auth/v1/ue-authentications"
		for name, tc := range map[string]struct {
			in     models.AuthenticationInfo
			status int
			cause  string
		}{
			"other PLMN":   {models.AuthenticationInfo{SupiOrSuci: testSUPI, ServingNetworkName: security.ServingNetworkName("001", "01")}, 403, "SERVING_NETWORK_NOT_AUTHORIZED"},
			"unknown UE":   {models.AuthenticationInfo{SupiOrSuci: "imsi-208930000009999", ServingNetworkName: snn}, 404, "USER_NOT_FOUND"},
			"no SUPI/SUCI": {models.AuthenticationInfo{ServingNetworkName: snn}, 400, "MANDATORY_IE_MISSING"},
		} {
			if _, err := c.Do(ctx, "POST", uri, tc.in, nil); sbi.StatusOf(err) != tc.status || sbi.CauseOf(err) != tc.cause {
				t.Errorf("%s: %v, want %d %s", name, err, tc.status, tc.cause)
			}
		}
		if _, err := c.Do(ctx, "POST", uri, "{", nil); sbi.StatusOf(err) != 400 {
			t.Errorf("bad body: %v, want 400", err)
		}
		if _, err := c.Do(ctx, "PUT", uri+"/nope/5g-aka-confirmation", models.ConfirmationData{ResStar: "00"}, nil); sbi.StatusOf(err) != 404 {
			t.Errorf("unknown context: %v, want 404", err)
		}
	})
}

// A UDM that cannot be found, or is registered but no longer serves, costs
// the request a 504 TARGET_NF_NOT_REACHABLE (TS 29.500 5.2.7.2): at once,
// or once the client stopped waiting for it to restart (sbi/retry.go).
func TestUDMUnreachable(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		for name, peers := range map[string][]models.NrfNfManagementNfProfile{
			"not registered": nil,
			"not serving":    {nrftest.Peer(t, models.NrfNfManagementNfType_UDM, sbitest.Unserved(t, tr), models.ServiceName_NUDM_UEAU)},
		} {
			env := nrftest.Env(t, tr, nil, models.NrfNfManagementNfType_AUSF, peers...)
			n, err := New(env)
			if err != nil {
				t.Fatal(err)
			}
			base := nrftest.Serve(t, tr, n.Handler())
			_, err = env.Client.Do(context.Background(), "POST", base+"/nausf-auth/v1/ue-authentications",
				models.AuthenticationInfo{SupiOrSuci: testSUPI, ServingNetworkName: snn}, nil)
			if sbi.StatusOf(err) != 504 || sbi.CauseOf(err) != "TARGET_NF_NOT_REACHABLE" {
				t.Errorf("UDM %s: %v, want 504 TARGET_NF_NOT_REACHABLE", name, err)
			}
		}
	})
}

func TestContextsExpire(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, base, c, _ := newAUSF(t, tr)
		now := time.Now()
		var mu sync.Mutex
		n.auths.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

		ch, uri := start(t, c, base, testSUPI)
		resStar, _ := ueAnswers(t, ch.AuthData)
		for range 9 { // abandoned authentications
			start(t, c, base, testSUPI)
		}
		advance(contextLifetime)
		if _, err := confirm(t, c, uri, resStar); sbi.StatusOf(err) != 404 {
			t.Fatalf("confirmation after %v: %v, want 404", contextLifetime, err)
		}
		start(t, c, base, testSUPI) // sweeps the abandoned ones
		if got := n.auths.len(); got != 1 {
			t.Fatalf("%d contexts kept after expiry, want 1", got)
		}
	})
}

// An AMF that gives up on an authentication releases the whole chain: the
// AUSF's handler context ends, so its pending call to the UDM is cancelled
// and the UDM stops working on an answer nobody waits for.
func TestAMFGivingUpCancelsTheUDMCall(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		started, released := make(chan struct{}), make(chan struct{})
		udm := http.NewServeMux()
		udm.HandleFunc("POST /nudm-ueau/v1/{id}/security-information/generate-auth-data", func(w http.ResponseWriter, r *http.Request) {
			close(started)
			<-r.Context().Done()
			close(released)
		})
		env := nrftest.Env(t, tr, nil, models.NrfNfManagementNfType_AUSF,
			nrftest.Peer(t, models.NrfNfManagementNfType_UDM, nrftest.Serve(t, tr, udm), models.ServiceName_NUDM_UEAU))
		n, err := New(env)
		if err != nil {
			t.Fatal(err)
		}
		base := nrftest.Serve(t, tr, n.Handler())
		ctx, giveUp := context.WithCancel(context.Background())
		go func() { <-started; giveUp() }()
		_, err = env.Client.Do(ctx, "POST", base+"/nausf-auth/v1/ue-authentications",
			models.AuthenticationInfo{SupiOrSuci: testSUPI, ServingNetworkName: snn}, nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("AMF's call: %v, want context.Canceled", err)
		}
		select {
		case <-released:
		case <-time.After(5 * time.Second): // a bound on a hang, not a measurement
			t.Fatal("the UDM still works on the request 5 s after the AMF gave up")
		}
	})
}
