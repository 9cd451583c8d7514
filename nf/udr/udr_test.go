package udr

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/free5gc/openapi/models"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/nf/udr/store/embedded"
	"github.com/l25gc/l25gc/nf/udr/store/mongodb"
	"github.com/l25gc/l25gc/nf/udr/store/storetest"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
	"github.com/l25gc/l25gc/test/ferretdb"
)

var ctx = context.Background()

func TestMain(m *testing.M) { sbitest.Main(m) }

// newUDR is a UDR over st (a fresh embedded store when nil) with the
// default config.
func newUDR(t *testing.T, st store.Store) *NF {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	if st == nil {
		var err error
		if st, err = OpenStore(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	n := NewWithStore(&nf.Env{Config: cfg, Log: log}, st)
	t.Cleanup(func() { n.Stop(ctx) })
	return n
}

// server is a UDR served over one transport, and a client over the same.
type server struct {
	URL   string
	tr    sbi.Transport
	token string // the admin token, sent by call to the provisioning API
}

// testUDR serves newUDR(st) over tr through the SBI middleware, as nf.Run
// serves it.
func testUDR(t *testing.T, tr sbi.Transport, st store.Store) (*NF, *server) {
	t.Helper()
	n := newUDR(t, st)
	return n, &server{URL: sbitest.Serve(t, tr, n.Handler()), tr: tr, token: n.adminToken}
}

// adminClient is a provisioning client of srv bearing n's admin token.
func adminClient(t *testing.T, n *NF, srv *server) *prov.Client {
	t.Helper()
	tok, err := prov.ReadToken(n.env.Config.AdminTokenPath())
	if err != nil {
		t.Fatal(err)
	}
	return prov.NewClient(srv.URL, srv.tr.RoundTripper(), tok)
}

// call sends a request and decodes a 2xx JSON answer into out, or a
// ProblemDetails into the returned value.
func (s *server) call(t *testing.T, method, url, body string, out any) (int, models.ProblemDetails) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if strings.Contains(url, prov.BasePath) && s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := sbitest.HTTPClient(s.tr).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var pd models.ProblemDetails
	if resp.StatusCode/100 != 2 {
		if ct := resp.Header.Get("Content-Type"); ct != sbi.ContentTypeProblem {
			t.Fatalf("%s %s: %d with Content-Type %q, want ProblemDetails: %s", method, url, resp.StatusCode, ct, data)
		}
		_ = json.Unmarshal(data, &pd)
	} else if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, data)
		}
	}
	return resp.StatusCode, pd
}

func wantProblem(t *testing.T, what string, status int, pd models.ProblemDetails, wantStatus int, wantCause string) {
	t.Helper()
	if status != wantStatus || pd.Cause != wantCause {
		t.Errorf("%s: %d %s (%s), want %d %s", what, status, pd.Cause, pd.Detail, wantStatus, wantCause)
	}
}

const ue1 = "imsi-208930000000001"

func TestStartProvisionsConfiguredRangesOnce(t *testing.T) {
	n := newUDR(t, nil)
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	_, total, _ := n.store.List(ctx, 0, 0)
	if total != config.DefaultSubscriberCount {
		t.Fatalf("%d subscribers after Start, want %d", total, config.DefaultSubscriberCount)
	}
	if _, err := n.store.IncrementSQN(ctx, ue1, 32); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(ctx); err != nil { // a restart of the UDR
		t.Fatal(err)
	}
	a, _ := n.store.AuthSubscription(ctx, ue1)
	if a.SequenceNumber.Sqn != "000000000040" || a.EncOpcKey != config.DefaultOPc || a.EncPermanentKey != config.DefaultK {
		t.Fatalf("after a second Start: %+v, want SQN 000000000040 kept", a)
	}
}

func TestProfile(t *testing.T) {
	n := newUDR(t, nil)
	p := n.Profile()
	if p.NfType != models.NrfNfManagementNfType_UDR || len(p.NfServices) != 1 || p.NfServices[0].ServiceName != models.ServiceName_NUDR_DR {
		t.Fatalf("profile = %+v", p)
	}
	again := newUDR(t, nil)
	if again.Profile().NfInstanceId != p.NfInstanceId {
		t.Fatal("the instance id changes between runs; a restart would leave a stale NRF registration")
	}
}

func TestAuthenticationSubscription(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, srv := testUDR(t, tr, nil)
		if err := n.store.PutSubscriber(ctx, storetest.Subscriber("208930000000001", "000000000020")); err != nil {
			t.Fatal(err)
		}
		url := srv.URL + DRBase + "/subscription-data/" + ue1 + "/authentication-data/authentication-subscription"
		var a models.AuthenticationSubscription
		if st, _ := srv.call(t, "GET", url, "", &a); st != 200 || a.EncPermanentKey != storetest.K || a.SequenceNumber.Sqn != "000000000020" {
			t.Fatalf("GET = %d %+v", st, a)
		}
		patches := []struct{ body, sqn string }{
			{`[{"op":"replace","path":"/sequenceNumber","value":"000000000041"}]`, "000000000041"},                               // free5GC v3 UDM
			{`[{"op":"replace","path":"/sequenceNumber","value":{"sqnScheme":"GENERAL","sqn":"000000000061"}}]`, "000000000061"}, // a SequenceNumber
			{`[{"op":"test","path":"/sequenceNumber/sqn","value":"000000000061"},{"op":"replace","path":"/sequenceNumber/sqn","value":"000000000081"}]`, "000000000081"},
		}
		for _, p := range patches {
			if st, pd := srv.call(t, "PATCH", url, p.body, nil); st != http.StatusNoContent {
				t.Fatalf("PATCH %s = %d %+v", p.body, st, pd)
			}
			if srv.call(t, "GET", url, "", &a); a.SequenceNumber.Sqn != p.sqn {
				t.Fatalf("after PATCH %s: SQN %s, want %s", p.body, a.SequenceNumber.Sqn, p.sqn)
			}
		}
		stale := `[{"op":"test","path":"/sequenceNumber/sqn","value":"000000000061"},{"op":"replace","path":"/sequenceNumber/sqn","value":"0000000000a1"}]`
		st, pd := srv.call(t, "PATCH", url, stale, nil)
		wantProblem(t, "PATCH testing a stale SQN", st, pd, http.StatusConflict, causeModNotAllowed)
		st, pd = srv.call(t, "PATCH", url, `[{"op":"replace","path":"/encPermanentKey","value":"00"}]`, nil)
		wantProblem(t, "PATCH of the key", st, pd, http.StatusForbidden, causeModNotAllowed)
		st, pd = srv.call(t, "PATCH", url, `[{"op":"replace","path":"/sequenceNumber/sqn","value":"12"}]`, nil)
		wantProblem(t, "PATCH with a short SQN", st, pd, http.StatusBadRequest, causeInvalidFormat)
		st, pd = srv.call(t, "PATCH", url, `{"op":`, nil)
		wantProblem(t, "PATCH with bad JSON", st, pd, http.StatusBadRequest, "INVALID_MSG_FORMAT")

		unknown := strings.Replace(url, ue1, "imsi-208930000009999", 1)
		st, pd = srv.call(t, "GET", unknown, "", nil)
		wantProblem(t, "GET of an unknown UE", st, pd, http.StatusNotFound, causeUserNotFound)
		st, pd = srv.call(t, "PATCH", unknown, patches[0].body, nil)
		wantProblem(t, "PATCH of an unknown UE", st, pd, http.StatusNotFound, causeUserNotFound)
	})
}

func TestProvisionedAndPolicyData(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, srv := testUDR(t, tr, nil)
		if err := n.store.PutSubscriber(ctx, storetest.Subscriber("208930000000001", "000000000020")); err != nil {
			t.Fatal(err)
		}
		base := srv.URL + DRBase + "/subscription-data/" + ue1 + "/20893/provisioned-data/"
		var am models.AccessAndMobilitySubscriptionData
		if st, _ := srv.call(t, "GET", base+"am-data", "", &am); st != 200 || len(am.Nssai.DefaultSingleNssais) != 2 {
			t.Fatalf("am-data = %d %+v", st, am)
		}
		var sel models.SmfSelectionSubscriptionData
		if st, _ := srv.call(t, "GET", base+"smf-selection-subscription-data", "", &sel); st != 200 || len(sel.SubscribedSnssaiInfos) != 2 {
			t.Fatalf("smf-selection-subscription-data = %d %+v", st, sel)
		}
		var sm []models.SessionManagementSubscriptionData
		q := "?single-nssai=" + url.QueryEscape(`{"sst":1,"sd":"112233"}`) + "&dnn=internet"
		if st, _ := srv.call(t, "GET", base+"sm-data"+q, "", &sm); st != 200 || len(sm) != 1 || sm[0].SingleNssai.Sd != "112233" {
			t.Fatalf("sm-data%s = %d %+v", q, st, sm)
		}
		st, pd := srv.call(t, "GET", base+"sm-data?single-nssai=1-112233", "", nil)
		wantProblem(t, "sm-data with a malformed single-nssai", st, pd, http.StatusBadRequest, causeInvalidQuery)
		st, pd = srv.call(t, "GET", base+"sm-data?single-nssai="+url.QueryEscape(`{"sst":300}`), "", nil)
		wantProblem(t, "sm-data with SST 300 (TS 23.003 28.4.2: one octet)", st, pd, http.StatusBadRequest, causeInvalidQuery)
		if st, _ := srv.call(t, "GET", base+"sm-data?single-nssai="+url.QueryEscape(`{"sst":1}`), "", &sm); st != 200 || len(sm) != 0 {
			t.Fatalf("sm-data of the SST-only slice = %d %+v, want none: an absent SD is no wildcard (TS 23.501 5.15.2.1)", st, sm)
		}
		var pol models.AmPolicyData
		if st, _ := srv.call(t, "GET", srv.URL+DRBase+"/policy-data/ues/"+ue1+"/am-data", "", &pol); st != 200 || pol.SubscCats[0] != "free5gc" {
			t.Fatalf("policy am-data = %d %+v", st, pol)
		}

		st, pd = srv.call(t, "GET", strings.Replace(base, "/20893/", "/00101/", 1)+"am-data", "", nil)
		wantProblem(t, "am-data of a known UE for another PLMN", st, pd, http.StatusNotFound, causeDataNotFound)
		st, pd = srv.call(t, "GET", strings.Replace(base, ue1, "imsi-208930000009999", 1)+"am-data", "", nil)
		wantProblem(t, "am-data of an unknown UE", st, pd, http.StatusNotFound, causeUserNotFound)
		st, pd = srv.call(t, "GET", srv.URL+DRBase+"/policy-data/ues/imsi-208930000009999/am-data", "", nil)
		wantProblem(t, "policy am-data of an unknown UE", st, pd, http.StatusNotFound, causeUserNotFound)
		st, pd = srv.call(t, "GET", srv.URL+DRBase+"/no-such-resource", "", nil)
		wantProblem(t, "an unknown path", st, pd, http.StatusNotFound, causeNotFound)
	})
}

func TestAMF3GPPAccessRegistration(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, srv := testUDR(t, tr, nil)
		if err := n.store.PutSubscriber(ctx, storetest.Subscriber("208930000000001", "000000000020")); err != nil {
			t.Fatal(err)
		}
		url := srv.URL + DRBase + "/subscription-data/" + ue1 + "/context-data/amf-3gpp-access"
		st, pd := srv.call(t, "GET", url, "", nil)
		wantProblem(t, "GET before any registration", st, pd, http.StatusNotFound, causeDataNotFound)
		reg := `{"amfInstanceId":"4f0a6c1e-0000-5000-8000-000000000001","deregCallbackUri":"http://127.0.0.1:29518/dereg","guami":{"plmnId":{"mcc":"208","mnc":"93"},"amfId":"cafe00"},"ratType":"NR"}`
		if st, pd := srv.call(t, "PUT", url, reg, nil); st != http.StatusNoContent {
			t.Fatalf("PUT = %d %+v", st, pd)
		}
		var got models.Amf3GppAccessRegistration
		if st, _ := srv.call(t, "GET", url, "", &got); st != 200 || got.Guami.AmfId != "cafe00" {
			t.Fatalf("GET = %d %+v", st, got)
		}
		st, pd = srv.call(t, "PUT", url, `{"deregCallbackUri":"http://x"}`, nil)
		wantProblem(t, "PUT without amfInstanceId", st, pd, http.StatusBadRequest, causeMandatoryMissing)
		st, pd = srv.call(t, "PUT", url, `not json`, nil)
		wantProblem(t, "PUT with bad JSON", st, pd, http.StatusBadRequest, "INVALID_MSG_FORMAT")
		st, pd = srv.call(t, "PUT", strings.Replace(url, ue1, "imsi-208930000009999", 1), reg, nil)
		wantProblem(t, "PUT for an unknown UE", st, pd, http.StatusNotFound, causeUserNotFound)
	})
}

func TestProvisioningAPI(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, srv := testUDR(t, tr, nil)
		c := adminClient(t, n, srv)
		s := prov.Subscriber{IMSI: "001010000000001", K: strings.ToUpper(storetest.K), OP: storetest.OP}
		got, err := c.Add(ctx, s)
		if err != nil || got.K != storetest.K || got.SQN != prov.DefaultSQN || got.AMF != prov.DefaultAMF || len(got.SNSSAIs) != 2 || got.DNNs[0] != "internet" {
			t.Fatalf("Add = %+v, %v; want defaults filled in", got, err)
		}
		if _, err := c.Add(ctx, s); sbi.StatusOf(err) != http.StatusConflict {
			t.Fatalf("Add of an existing IMSI: %v, want 409", err)
		}
		if got, err := c.Get(ctx, s.IMSI); err != nil || got.OP != storetest.OP || got.OPc != "" {
			t.Fatalf("Get = %+v, %v; want OP shown back", got, err)
		}
		s.OP, s.OPc, s.SQN = "", storetest.OPc, "0000000000ff"
		if _, err := c.Put(ctx, s); err != nil {
			t.Fatal(err)
		}
		if got, _ := c.Get(ctx, s.IMSI); got.OPc != storetest.OPc || got.SQN != "0000000000ff" {
			t.Fatalf("after Put: %+v", got)
		}

		res, err := c.AddRange(ctx, prov.Range{Subscriber: prov.Subscriber{IMSI: "208930000000001", K: storetest.K, OPc: storetest.OPc}, Count: 10000})
		if err != nil || res.Added != 10000 {
			t.Fatalf("AddRange(10000) = %+v, %v", res, err)
		}
		res, err = c.AddRange(ctx, prov.Range{Subscriber: prov.Subscriber{IMSI: "208930000009999", K: storetest.K, OPc: storetest.OPc}, Count: 3})
		if err != nil || res.Added != 1 || res.Existing != 2 {
			t.Fatalf("overlapping AddRange = %+v, %v; want 1 added, 2 existing", res, err)
		}
		page, err := c.List(ctx, 1, 2)
		if err != nil || page.Total != 10002 || len(page.Subscribers) != 2 || page.Subscribers[0].IMSI != "208930000000001" {
			t.Fatalf("List(1, 2) = %+v, %v", page, err)
		}

		if err := c.Delete(ctx, s.IMSI); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, s.IMSI); sbi.StatusOf(err) != http.StatusNotFound || sbi.CauseOf(err) != causeUserNotFound {
			t.Fatalf("Get after Delete: %v, want 404 USER_NOT_FOUND", err)
		}
		if err := c.Delete(ctx, s.IMSI); sbi.StatusOf(err) != http.StatusNotFound {
			t.Fatalf("second Delete: %v, want 404", err)
		}

		bad := []struct{ what, method, path, body string }{
			{"bad JSON", "POST", "/subscribers", `{"imsi":`},
			{"short K", "POST", "/subscribers", `{"imsi":"001010000000002","k":"00","opc":"` + storetest.OPc + `"}`},
			{"both OP and OPc", "POST", "/subscribers", `{"imsi":"001010000000002","k":"` + storetest.K + `","op":"` + storetest.OP + `","opc":"` + storetest.OPc + `"}`},
			{"bad S-NSSAI", "PUT", "/subscribers/001010000000002", `{"imsi":"001010000000002","k":"` + storetest.K + `","opc":"` + storetest.OPc + `","snssais":[{"sst":1,"sd":"12"}]}`},
			{"IMSI differs from the path", "PUT", "/subscribers/001010000000003", `{"imsi":"001010000000002","k":"` + storetest.K + `","opc":"` + storetest.OPc + `"}`},
			{"range overflowing 15 digits", "POST", "/subscribers:bulk", `{"imsi":"999999999999999","count":2,"k":"` + storetest.K + `","opc":"` + storetest.OPc + `"}`},
			{"negative offset", "GET", "/subscribers?offset=-1", ``},
		}
		for _, b := range bad {
			st, pd := srv.call(t, b.method, srv.URL+prov.BasePath+b.path, b.body, nil)
			if st != http.StatusBadRequest || pd.Status != http.StatusBadRequest {
				t.Errorf("%s: %d %+v, want a 400 ProblemDetails", b.what, st, pd)
			}
		}
	})
}

// A subscriber inserted in free5GC's exact documents is served through the
// SBI like one of ours, and its SQN moves in place.
func TestFree5GCDatabaseThroughSBI(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		uri := ferretdbtest.Start(t)
		raw, err := mongo.Connect(ctx, options.Client().ApplyURI(uri))
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Disconnect(ctx)
		ue := "imsi-208930000000007"
		for coll, docs := range storetest.Free5GCDocs(ue, "20893", "000000000023") {
			for _, d := range docs {
				if _, err := raw.Database("free5gc").Collection(coll).InsertOne(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
		}
		st, err := mongodb.Open(ctx, uri, "free5gc")
		if err != nil {
			t.Fatal(err)
		}
		n, srv := testUDR(t, tr, st)

		auth := srv.URL + DRBase + "/subscription-data/" + ue + "/authentication-data/authentication-subscription"
		var a models.AuthenticationSubscription
		if code, _ := srv.call(t, "GET", auth, "", &a); code != 200 || a.EncOpcKey != storetest.OPc || a.SequenceNumber.Sqn != "000000000023" {
			t.Fatalf("GET auth = %d %+v", code, a)
		}
		if code, pd := srv.call(t, "PATCH", auth, `[{"op":"replace","path":"/sequenceNumber","value":{"sqn":"000000000043"}}]`, nil); code != 204 {
			t.Fatalf("PATCH = %d %+v", code, pd)
		}
		if srv.call(t, "GET", auth, "", &a); a.SequenceNumber.Sqn != "000000000043" {
			t.Fatalf("SQN after PATCH = %s", a.SequenceNumber.Sqn)
		}
		var sm []models.SessionManagementSubscriptionData
		if code, _ := srv.call(t, "GET", srv.URL+DRBase+"/subscription-data/"+ue+"/20893/provisioned-data/sm-data", "", &sm); code != 200 || len(sm) != 2 {
			t.Fatalf("sm-data = %d %+v", code, sm)
		}
		got, err := adminClient(t, n, srv).Get(ctx, "208930000000007")
		if err != nil || got.K != storetest.K || got.OPc != storetest.OPc || len(got.SNSSAIs) != 2 || got.DNNs[0] != "internet" {
			t.Fatalf("provisioning view = %+v, %v", got, err)
		}
	})
}

// The embedded store the config names lives under data_dir and survives a
// restart of the UDR.
func TestEmbeddedStoreUnderDataDir(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.(*embedded.Store); !ok || StorePath(cfg) != filepath.Join(cfg.DataDir, "udr.db") {
		t.Fatalf("store %T at %s", st, StorePath(cfg))
	}
	if err := st.PutSubscriber(ctx, storetest.Subscriber("208930000000001", "000000000020")); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st, err = OpenStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	if _, err := st.Subscriber(ctx, ue1); err != nil {
		t.Fatalf("after reopening: %v", err)
	}
}
