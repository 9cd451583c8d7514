package udm

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
	"github.com/l25gc/l25gc/security"
)

func TestMain(m *testing.M) { sbitest.Main(m) }

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

func subscriber(sqn string) models.AuthenticationSubscription {
	return models.AuthenticationSubscription{AuthenticationMethod: models.AuthMethod__5_G_AKA,
		EncPermanentKey: config.DefaultK, EncOpcKey: config.DefaultOPc,
		SequenceNumber: &models.SequenceNumber{SqnScheme: models.SqnScheme_NON_TIME_BASED, Sqn: sqn}, AuthenticationManagementField: "8000"}
}

func generate(c *sbi.Client, base, supiOrSuci string, resync *models.ResynchronizationInfo) (*models.UdmUeauAuthenticationInfoResult, error) {
	var res models.UdmUeauAuthenticationInfoResult
	_, err := c.Do(context.Background(), "POST", base+"/nudm-ueau/v1/"+supiOrSuci+"/security-information/generate-auth-data",
		models.AuthenticationInfoRequest{ServingNetworkName: snn, AusfInstanceId: "ausf-1", ResynchronizationInfo: resync}, &res)
	return &res, err
}

// ueAccepts runs the UE's side of 5G AKA on the vector: AUTN verifies with
// K/OPc and an SQN fresher than sqnMS, RES* equals XRES*, and KAUSF
// matches. It returns the vector's SQN.
func ueAccepts(t *testing.T, res *models.UdmUeauAuthenticationInfoResult, opc []byte, sqnMS uint64) uint64 {
	t.Helper()
	av := res.AuthenticationVector
	if res.AuthType != models.UdmUeauAuthType__5_G_AKA || av == nil || av.AvType != models.AvType__5_G_HE_AKA {
		t.Fatalf("not a 5G HE AV: %+v", res)
	}
	rnd, autn := mustHex(av.Rand), mustHex(av.Autn)
	resp, err := security.VerifyChallenge(testK, opc, rnd, autn, sqnBytes(sqnMS))
	if err != nil {
		t.Fatalf("UE rejects the vector: %v", err)
	}
	if got := hex.EncodeToString(security.ResStar(resp.CK, resp.IK, snn, rnd, resp.RES)); got != av.XresStar {
		t.Fatalf("UE's RES* %s != XRES* %s", got, av.XresStar)
	}
	if got := hex.EncodeToString(security.KAUSF(resp.CK, resp.IK, snn, resp.SQNXorAK)); got != av.Kausf {
		t.Fatalf("UE's KAUSF %s != %s", got, av.Kausf)
	}
	return sqnValue(resp.SQN)
}

// suciVectors reads the TS 33.501 C.4 scheme outputs (a copy of shared/testvectors).
func suciVectors(t *testing.T) (profileA, profileB, msin string) {
	t.Helper()
	b, err := os.ReadFile("../../security/testdata/vectors/suci.json")
	if err != nil {
		t.Fatalf("test vectors (shared/testvectors): %v", err)
	}
	var v struct {
		A map[string]string `json:"profile_a"`
		B map[string]string `json:"profile_b"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out := func(p map[string]string) string { return p["eph_public_key"] + p["ciphertext"] + p["mac_tag"] }
	msin, err = security.BCDToMSIN(mustHex(v.A["plaintext"]))
	if err != nil {
		t.Fatal(err)
	}
	return out(v.A), out(v.B), msin
}

func TestSUCIDeconcealment(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		outA, outB, msin := suciVectors(t)
		udr := newFakeUDR()
		supi := "imsi-20893" + msin
		udr.add(t, supi, subscriber("000000000020"))
		udr.add(t, "imsi-208930000000001", subscriber("000000000020"))
		_, base, c := newUDM(t, tr, udr)

		// Default keys: id 1 Profile A, id 2 Profile B (the C.4 private keys).
		for name, tc := range map[string]struct{ id, supi string }{
			"profile A": {"suci-0-208-93-0000-1-1-" + outA, supi},
			"profile B": {"suci-0-208-93-0000-2-2-" + outB, supi},
			"null":      {"suci-0-208-93-0000-0-0-0000000001", "imsi-208930000000001"},
			"SUPI":      {"imsi-208930000000001", "imsi-208930000000001"},
		} {
			res, err := generate(c, base, tc.id, nil)
			if err != nil || res.Supi != tc.supi {
				t.Errorf("%s: %v, SUPI %q, want %q", name, err, res.Supi, tc.supi)
				continue
			}
			ueAccepts(t, res, testOPc, 0x20)
		}

		for name, tc := range map[string]struct {
			id     string
			status int
			cause  string
		}{
			"unknown key id":          {"suci-0-208-93-0000-1-9-" + outA, 403, "AUTHENTICATION_REJECTED"},
			"key of the other scheme": {"suci-0-208-93-0000-1-2-" + outA, 403, "AUTHENTICATION_REJECTED"},
			"corrupted output":        {"suci-0-208-93-0000-1-1-00" + outA[2:], 403, "AUTHENTICATION_REJECTED"},
			"unknown scheme":          {"suci-0-208-93-0000-3-1-" + outA, 501, "UNSUPPORTED_PROTECTION_SCHEME"},
			"not hex":                 {"suci-0-208-93-0000-1-1-zz", 400, "MANDATORY_IE_INCORRECT"},
			"neither":                 {"msisdn-123", 400, "MANDATORY_IE_INCORRECT"},
			"unknown SUPI":            {"imsi-208930000009999", 404, "USER_NOT_FOUND"},
			"unknown null SUCI":       {"suci-0-208-93-0000-0-0-0000009999", 404, "USER_NOT_FOUND"},
		} {
			if _, err := generate(c, base, tc.id, nil); sbi.StatusOf(err) != tc.status || sbi.CauseOf(err) != tc.cause {
				t.Errorf("%s: %v, want %d %s", name, err, tc.status, tc.cause)
			}
		}
	})
}

func TestConcurrentVectorsGetDistinctSQNs(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		udr := newFakeUDR()
		const supi, start = "imsi-208930000000001", 0x20
		udr.add(t, supi, subscriber("000000000020"))
		_, base, c := newUDM(t, tr, udr)

		const n = 50
		sqns := make([]uint64, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := generate(c, base, supi, nil)
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				sqns[i] = ueAccepts(t, res, testOPc, start)
			}()
		}
		wg.Wait()
		seen := map[uint64]bool{}
		for _, s := range sqns {
			if seen[s] || s <= start || s > start+n {
				t.Fatalf("SQNs issued: %x (duplicate or out of %x..%x)", sqns, start+1, start+n)
			}
			seen[s] = true
		}
		w := udr.written(supi)
		if len(w) != n || w[n-1] != fmt.Sprintf("%012x", start+n) {
			t.Fatalf("UDR saw SQNs %v, want %d increments ending at %012x", w, n, start+n)
		}
	})
}

func TestResynchronisation(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		udr := newFakeUDR()
		const supi = "imsi-208930000000001"
		udr.add(t, supi, subscriber("000000000020"))
		_, base, c := newUDM(t, tr, udr)

		// The USIM has seen SQN 0x5000 (e.g. from another core): it rejects the
		// vector with AUTS (TS 33.102 6.3.3).
		const sqnMS = 0x5000
		res, err := generate(c, base, supi, nil)
		if err != nil {
			t.Fatal(err)
		}
		rnd, autn := mustHex(res.AuthenticationVector.Rand), mustHex(res.AuthenticationVector.Autn)
		_, err = security.VerifyChallenge(testK, testOPc, rnd, autn, sqnBytes(sqnMS))
		var sf *security.SynchFailure
		if !asSynch(err, &sf) {
			t.Fatalf("UE with SQN_MS %x: %v, want a synchronisation failure", sqnMS, err)
		}
		resync := &models.ResynchronizationInfo{Rand: res.AuthenticationVector.Rand, Auts: hex.EncodeToString(sf.AUTS)}

		// A corrupted MAC-S is refused and leaves SQN alone.
		bad := *resync
		bad.Auts = resync.Auts[:len(resync.Auts)-2] + "00"
		if bad.Auts == resync.Auts {
			bad.Auts = resync.Auts[:len(resync.Auts)-2] + "ff"
		}
		if _, err := generate(c, base, supi, &bad); sbi.StatusOf(err) != 403 || sbi.CauseOf(err) != "AUTHENTICATION_REJECTED" {
			t.Fatalf("bad MAC-S: %v, want 403 AUTHENTICATION_REJECTED", err)
		}

		res, err = generate(c, base, supi, resync)
		if err != nil {
			t.Fatal(err)
		}
		if got := ueAccepts(t, res, testOPc, sqnMS); got != sqnMS+1 {
			t.Fatalf("after resync the vector has SQN %x, want %x", got, sqnMS+1)
		}
		if w := udr.written(supi); w[len(w)-1] != fmt.Sprintf("%012x", sqnMS+1) {
			t.Fatalf("UDR SQN after resync: %v", w)
		}
	})
}

func TestLegacyDocumentWithOP(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		udr := newFakeUDR()
		const supi = "imsi-208930000000002"
		op := mustHex("cdc202d5123e20f62b6d676ac72cb318")
		udr.add(t, supi, map[string]any{
			"authenticationMethod": "5G_AKA", "authenticationManagementField": "8000",
			"permanentKey":   map[string]string{"permanentKeyValue": config.DefaultK},
			"milenage":       map[string]any{"op": map[string]string{"opValue": hex.EncodeToString(op)}},
			"sequenceNumber": map[string]string{"sqn": "000000000001"},
		})
		_, base, c := newUDM(t, tr, udr)
		res, err := generate(c, base, supi, nil)
		if err != nil {
			t.Fatal(err)
		}
		opc, err := security.DeriveOPc(testK, op)
		if err != nil {
			t.Fatal(err)
		}
		ueAccepts(t, res, opc, 1)
	})
}

func TestAuthEvents(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		udr := newFakeUDR()
		const supi = "imsi-208930000000001"
		udr.add(t, supi, subscriber("000000000020"))
		n, base, c := newUDM(t, tr, udr)
		ev := models.AuthEvent{NfInstanceId: "ausf-1", Success: true, AuthType: models.UdmUeauAuthType__5_G_AKA, ServingNetworkName: snn}
		ctx := context.Background()
		if _, err := c.Do(ctx, "POST", base+"/nudm-ueau/v1/imsi-208930000009999/auth-events", ev, nil); sbi.StatusOf(err) != 404 {
			t.Fatalf("event of a subscriber the UDR does not know: %v, want 404", err)
		}
		if _, err := generate(c, base, supi, nil); err != nil {
			t.Fatal(err)
		}
		h, err := c.Do(ctx, "POST", base+"/nudm-ueau/v1/"+supi+"/auth-events", ev, nil)
		if err != nil || h.Get("Location") == "" {
			t.Fatalf("event: %v, Location %q", err, h.Get("Location"))
		}
		if got, ok := n.ues.lastEvent(supi); !ok || !got.Success || got.TimeStamp == nil {
			t.Fatalf("stored event %+v %v", got, ok)
		}
		if _, err := c.Do(ctx, "POST", base+"/nudm-ueau/v1/"+supi+"/auth-events", models.AuthEvent{Success: true}, nil); sbi.StatusOf(err) != 400 {
			t.Fatalf("event without mandatory IEs: %v, want 400", err)
		}
	})
}

// The AUSF reports a result to the UDM instance it selects, which need not
// be the one that issued the vector (a UDM set, or a restarted UDM).
func TestAuthEventOfAVectorAnotherUDMIssued(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		udr := newFakeUDR()
		const supi = "imsi-208930000000001"
		udr.add(t, supi, subscriber("000000000020"))
		_, base1, c := newUDM(t, tr, udr)
		n2, base2, _ := newUDM(t, tr, udr)
		if _, err := generate(c, base1, supi, nil); err != nil {
			t.Fatal(err)
		}
		ev := models.AuthEvent{NfInstanceId: "ausf-1", Success: true, AuthType: models.UdmUeauAuthType__5_G_AKA, ServingNetworkName: snn}
		if _, err := c.Do(context.Background(), "POST", base2+"/nudm-ueau/v1/"+supi+"/auth-events", ev, nil); err != nil {
			t.Fatalf("result reported to the other UDM: %v", err)
		}
		if got, ok := n2.ues.lastEvent(supi); !ok || !got.Success {
			t.Fatalf("the other UDM stored %+v %v", got, ok)
		}
	})
}

func TestUECMAndSDM(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		udr := newFakeUDR()
		const supi = "imsi-208930000000001"
		udr.add(t, supi, subscriber("000000000020"))
		_, base, c := newUDM(t, tr, udr)
		ctx := context.Background()
		guami := models.Guami{PlmnId: &models.PlmnIdNid{Mcc: "208", Mnc: "93"}, AmfId: "cafe00"}
		reg := models.Amf3GppAccessRegistration{AmfInstanceId: "amf-1", DeregCallbackUri: "http://amf/cb", Guami: &guami, RatType: models.RatType_NR}
		regURI := base + "/nudm-uecm/v1/" + supi + "/registrations/amf-3gpp-access"

		h, err := c.Do(ctx, "PUT", regURI, reg, nil)
		if err != nil || h.Get("Location") != regURI {
			t.Fatalf("UECM registration: %v, Location %q", err, h.Get("Location"))
		}
		if _, err := c.Do(ctx, "PUT", base+"/nudm-uecm/v1/imsi-208930000009999/registrations/amf-3gpp-access", reg, nil); sbi.CauseOf(err) != "USER_NOT_FOUND" {
			t.Fatalf("registration of an unknown UE: %v, want 404 USER_NOT_FOUND", err)
		}
		if _, err := c.Do(ctx, "PUT", regURI, models.Amf3GppAccessRegistration{AmfInstanceId: "amf-1"}, nil); sbi.StatusOf(err) != 400 {
			t.Fatalf("registration without guami: %v, want 400", err)
		}
		other := models.Guami{PlmnId: guami.PlmnId, AmfId: "cafe01"}
		if _, err := c.Do(ctx, "PATCH", regURI, models.Amf3GppAccessRegistrationModification{Guami: &other, PurgeFlag: true}, nil); sbi.CauseOf(err) != "INVALID_GUAMI" {
			t.Fatalf("purge by another AMF: %v, want 403 INVALID_GUAMI", err)
		}
		if _, err := c.Do(ctx, "PATCH", regURI, models.Amf3GppAccessRegistrationModification{Guami: &guami, PurgeFlag: true}, nil); err != nil {
			t.Fatalf("purge: %v", err)
		}
		if got := udr.amfRegs[supi]; !got.PurgeFlag || got.Supi != supi {
			t.Fatalf("UDR context data after purge: %+v", got)
		}

		var am models.AccessAndMobilitySubscriptionData
		if _, err := c.Do(ctx, "GET", base+"/nudm-sdm/v2/"+supi+`/am-data?plmn-id={"mcc":"208","mnc":"93"}`, nil, &am); err != nil || am.Nssai == nil {
			t.Fatalf("am-data: %v %+v", err, am)
		}
		var nssai models.Nssai
		if _, err := c.Do(ctx, "GET", base+"/nudm-sdm/v2/"+supi+"/nssai", nil, &nssai); err != nil || len(nssai.DefaultSingleNssais) != 1 {
			t.Fatalf("nssai: %v %+v", err, nssai)
		}
		if _, err := c.Do(ctx, "GET", base+"/nudm-sdm/v2/imsi-208930000009999/am-data", nil, nil); sbi.StatusOf(err) != 404 || sbi.CauseOf(err) != "USER_NOT_FOUND" {
			t.Fatalf("am-data of an unknown UE: %v, want 404 USER_NOT_FOUND", err)
		}
		if _, err := c.Do(ctx, "GET", base+"/nudm-sdm/v2/"+supi+"/am-data?plmn-id=20893", nil, nil); sbi.StatusOf(err) != 400 {
			t.Fatalf("am-data with a bad plmn-id: %v, want 400", err)
		}
		if _, err := c.Do(ctx, "GET", base+"/nudm-sdm/v2/"+supi+"/ue-context-in-smf-data", nil, nil); err != nil {
			t.Fatalf("ue-context-in-smf-data: %v", err)
		}

		sub := models.SdmSubscription{NfInstanceId: "amf-1", CallbackReference: "http://amf/sdm", MonitoredResourceUris: []string{supi + "/am-data"}}
		var created models.SdmSubscription
		h, err = c.Do(ctx, "POST", base+"/nudm-sdm/v2/"+supi+"/sdm-subscriptions", sub, &created)
		if err != nil || created.SubscriptionId == "" || h.Get("Location") != base+"/nudm-sdm/v2/"+supi+"/sdm-subscriptions/"+created.SubscriptionId {
			t.Fatalf("subscribe: %v %+v Location %q", err, created, h.Get("Location"))
		}
		var again models.SdmSubscription
		if _, err := c.Do(ctx, "POST", base+"/nudm-sdm/v2/"+supi+"/sdm-subscriptions", sub, &again); err != nil || again.SubscriptionId != created.SubscriptionId {
			t.Fatalf("the same subscription again made a new one: %v %s vs %s", err, again.SubscriptionId, created.SubscriptionId)
		}
		subURI := base + "/nudm-sdm/v2/" + supi + "/sdm-subscriptions/" + created.SubscriptionId
		if _, err := c.Do(ctx, "DELETE", subURI, nil, nil); err != nil {
			t.Fatalf("unsubscribe: %v", err)
		}
		if _, err := c.Do(ctx, "DELETE", subURI, nil, nil); sbi.StatusOf(err) != 404 {
			t.Fatalf("second unsubscribe: %v, want 404", err)
		}
	})
}

func TestStartLogsPublicKeys(t *testing.T) {
	var buf bytes.Buffer
	n, _, _ := newUDM(t, sbi.NewTCP(), newFakeUDR()) // no SBI call: one transport is enough
	n.log = newTextLogger(&buf)
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// TS 33.501 C.4 home network public keys of the default private keys.
	for _, pub := range []string{"5a8d38864820197c3394b92613b20b91633cbd897119273bf8e4a6f4eec0a650",
		"0272da71976234ce833a6907425867b82e074d44ef907dfb4b3e21c1c2256ebcd1"} {
		if !bytes.Contains(buf.Bytes(), []byte(pub)) {
			t.Errorf("start log lacks public key %s:\n%s", pub, buf.String())
		}
	}
}

func TestNewRejectsBadKeys(t *testing.T) {
	cfg := config.Default()
	cfg.UDM.SUCIKeys = []config.SUCIKey{{ID: 1, Scheme: "profile_c", PrivateKey: config.DefaultSUCIProfileAKey}}
	if _, err := homeNetworkKeys(cfg.UDM.SUCIKeys); err == nil {
		t.Fatal("an unknown scheme was accepted")
	}
	cfg.UDM.SUCIKeys = []config.SUCIKey{{ID: 1, Scheme: "profile_b", PrivateKey: "00"}}
	if _, err := homeNetworkKeys(cfg.UDM.SUCIKeys); err == nil {
		t.Fatal("a one-byte P-256 private key was accepted")
	}
}

func TestSQNMovedByAnotherUDMIsReadAgain(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		udr := newFakeUDR()
		const supi = "imsi-208930000000001"
		udr.add(t, supi, subscriber("000000000020"))
		_, base, c := newUDM(t, tr, udr)
		udr.mu.Lock()
		udr.moveOnce = "000000000100"
		udr.mu.Unlock()
		res, err := generate(c, base, supi, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := ueAccepts(t, res, testOPc, 0x20); got != 0x101 {
			t.Fatalf("vector SQN %x after the SQN moved to 0x100, want 0x101", got)
		}
	})
}
