package udr

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/nf/udr/store/storetest"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// The provisioning API shows and changes subscriber keys: without the
// admin token (or with a wrong one, or another scheme) every route is 401
// and neither K nor OPc leaves the UDR, nor does anything change; with it,
// the API works.
func TestProvisioningNeedsTheAdminToken(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, srv := testUDR(t, tr, nil)
		imsi := "208930000000042"
		body := `{"imsi":"` + imsi + `","k":"` + storetest.K + `","opc":"` + storetest.OPc + `"}`
		if _, err := adminClient(t, n, srv).Add(ctx, prov.Subscriber{IMSI: imsi, K: storetest.K, OPc: storetest.OPc}); err != nil {
			t.Fatal(err)
		}
		base := srv.URL + prov.BasePath + "/subscribers"
		routes := []struct{ method, url, body string }{
			{"GET", base, ""},
			{"GET", base + "/" + imsi, ""},
			{"POST", base, strings.Replace(body, "42", "43", 1)},
			{"PUT", base + "/" + imsi, strings.Replace(body, storetest.K, strings.Repeat("0", 32), 1)},
			{"DELETE", base + "/" + imsi, ""},
			{"POST", base + ":bulk", `{"imsi":"208930000000100","count":5,"k":"` + storetest.K + `","opc":"` + storetest.OPc + `"}`},
		}
		credentials := map[string]string{
			"none":         "",
			"wrong token":  "Bearer " + strings.Repeat("ab", 32),
			"token prefix": "Bearer " + n.adminToken[:32],
			"basic scheme": "Basic " + n.adminToken,
			"bare token":   n.adminToken,
		}
		for what, auth := range credentials {
			for _, rt := range routes {
				req, _ := http.NewRequest(rt.method, rt.url, strings.NewReader(rt.body))
				if rt.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				resp, err := sbitest.HTTPClient(tr).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Content-Type") != sbi.ContentTypeProblem ||
					!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("%s, %s %s: %d %s, want a 401 ProblemDetails with a Bearer challenge", what, rt.method, rt.url, resp.StatusCode, data)
				}
				if strings.Contains(string(data), storetest.K) || strings.Contains(string(data), storetest.OPc) {
					t.Errorf("%s, %s %s: key material in the answer: %s", what, rt.method, rt.url, data)
				}
			}
		}
		got, err := adminClient(t, n, srv).Get(ctx, imsi)
		if err != nil || got.K != storetest.K {
			t.Fatalf("with the token: %+v, %v; want the subscriber unchanged by the refused requests", got, err)
		}
		if page, _ := adminClient(t, n, srv).List(ctx, 0, 10); page.Total != 1 {
			t.Fatalf("%d subscribers after the refused requests, want 1", page.Total)
		}
	})
}

// A UDR whose token file cannot be made serves the provisioning API to
// no one (an empty token matches nothing).
func TestNoTokenFileMeansNoProvisioning(t *testing.T) {
	n := newUDR(t, nil)
	n.adminToken = ""
	req, _ := http.NewRequest("GET", prov.BasePath+"/subscribers", nil)
	req.Header.Set("Authorization", "Bearer ")
	if prov.Authorized(req, n.adminToken) {
		t.Fatal("an empty token authorised a request")
	}
}

// A bulk request over udr.max_bulk is refused whole (413 BULK_TOO_LARGE,
// added 0); a store failing midway answers how many were added before it.
func TestBulkIsCappedAndReportsWhatItAdded(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		fs := &failingStore{failAt: 3}
		st, err := OpenStore(ctx, configWithTempDir(t))
		if err != nil {
			t.Fatal(err)
		}
		fs.Store = st
		n, srv := testUDR(t, tr, fs)
		n.maxBulk = 2500
		c := adminClient(t, n, srv)
		r := prov.Range{Subscriber: prov.Subscriber{IMSI: "208930000000001", K: storetest.K, OPc: storetest.OPc}, Count: 2501}
		res, err := c.AddRange(ctx, r)
		if sbi.StatusOf(err) != http.StatusRequestEntityTooLarge || sbi.CauseOf(err) != sbi.CauseBulkTooLarge || res.Added != 0 || res.Requested != 2501 {
			t.Fatalf("count over the cap: %+v, %v; want 413 BULK_TOO_LARGE with 0 added of 2501", res, err)
		}
		r.Count = 2500 // chunks of 1000, 1000, 500: the third store call fails
		res, err = c.AddRange(ctx, r)
		if sbi.StatusOf(err) != http.StatusInternalServerError || res.Added != 2000 || res.Requested != 2500 {
			t.Fatalf("store failing at the third chunk: %+v, %v; want 500 with 2000 added of 2500", res, err)
		}
		if page, _ := c.List(ctx, 0, 1); page.Total != 2000 {
			t.Fatalf("%d stored, want the 2000 reported", page.Total)
		}
	})
}

// A bulk add whose request ends (the client gone) stops at the next chunk
// and says how far it got, instead of adding the whole range regardless.
func TestBulkStopsWhenItsRequestEnds(t *testing.T) {
	fs := &failingStore{failAt: -1}
	st, err := OpenStore(ctx, configWithTempDir(t))
	if err != nil {
		t.Fatal(err)
	}
	fs.Store = st
	n := newUDR(t, fs)
	rctx, cancel := context.WithCancel(ctx)
	fs.afterCall = func(call int) {
		if call == 2 {
			cancel()
		}
	}
	res, err := n.addRange(rctx, prov.Range{Subscriber: prov.Subscriber{IMSI: "208930000000001", K: storetest.K, OPc: storetest.OPc}, Count: 10000})
	if !errors.Is(err, context.Canceled) || res.Added != 2000 {
		t.Fatalf("addRange after its context ended: %+v, %v; want 2000 added and context.Canceled", res, err)
	}
}

// A DNN far beyond an APN's 100 octets (TS 23.003 9.1) is refused by the
// API, naming the field, and not stored.
func TestOverlongDNNIsRefused(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, srv := testUDR(t, tr, nil)
		s := prov.Subscriber{IMSI: "208930000000001", K: storetest.K, OPc: storetest.OPc, DNNs: []string{strings.Repeat("a", 5000)}}
		_, err := adminClient(t, n, srv).Add(ctx, s)
		var pe *sbi.ProblemError
		if !errors.As(err, &pe) || pe.Status != http.StatusBadRequest || !strings.HasPrefix(pe.Problem.Detail, "dnns:") {
			t.Fatalf("5,000-character DNN: %v, want a 400 naming dnns", err)
		}
		_, err = adminClient(t, n, srv).AddRange(ctx, prov.Range{Subscriber: s, Count: 2})
		if sbi.StatusOf(err) != http.StatusBadRequest {
			t.Fatalf("5,000-character DNN in a range: %v, want 400", err)
		}
	})
}

// failingStore fails its failAt-th AddAbsent call (1-based; -1 never) and
// calls afterCall after each successful one.
type failingStore struct {
	store.Store
	failAt, calls int
	afterCall     func(call int)
}

func (f *failingStore) AddAbsent(ctx context.Context, subs []*store.Subscriber) (int, error) {
	f.calls++
	if f.calls == f.failAt {
		return 0, errors.New("disk full")
	}
	added, err := f.Store.AddAbsent(ctx, subs)
	if f.afterCall != nil {
		f.afterCall(f.calls)
	}
	return added, err
}

func configWithTempDir(t *testing.T) *config.Config {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	return cfg
}
