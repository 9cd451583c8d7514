package sbi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

const tokenPath = "/oauth2/token"

// echoMux answers 201 to a POST of authPath and of tokenPath, reading the body.
func echoMux() *http.ServeMux {
	mux := http.NewServeMux()
	created := func(w http.ResponseWriter, r *http.Request) { sbi.WriteJSON(w, http.StatusCreated, nil) }
	mux.HandleFunc("POST "+authPath, created)
	mux.HandleFunc("POST "+tokenPath, created)
	return mux
}

// post sends body as ctype and returns the status and the ProblemDetails
// of the answer (zero when it is not one).
func post(t *testing.T, tr sbi.Transport, url, ctype, body string) (int, models.ProblemDetails) {
	t.Helper()
	resp, err := sbitest.HTTPClient(tr).Post(url, ctype, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var pd models.ProblemDetails
	if resp.Header.Get("Content-Type") == sbi.ContentTypeProblem {
		if err := json.NewDecoder(resp.Body).Decode(&pd); err != nil {
			t.Fatalf("%s answer: %v", url, err)
		}
	}
	return resp.StatusCode, pd
}

// TS 29.500 5.2.7.2: a body of a media type the API does not use is 415
// UNSUPPORTED_MEDIA_TYPE, never served (the handler would have answered
// 201); the JSON types pass, and a form only where a route takes one.
func TestWrongMediaTypeIs415(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base := sbitest.Serve(t, tr, sbi.Handler(echoMux(), nil, logging.Discard(),
			sbi.AcceptMediaTypes(tokenPath, "application/x-www-form-urlencoded")))
		refused := []struct{ path, ctype string }{
			{authPath, "application/xml"},
			{authPath, ""},
			{authPath, "application/x-www-form-urlencoded"},
			{authPath, "text/plain"},
			{authPath, "application/json;;"},
		}
		for _, c := range refused {
			st, pd := post(t, tr, base+c.path, c.ctype, `{"supiOrSuci":"imsi-208930000000001"}`)
			if st != http.StatusUnsupportedMediaType || pd.Cause != sbi.CauseUnsupportedMediaType || pd.Status != 415 {
				t.Errorf("POST %s as %q: %d %+v, want a 415 UNSUPPORTED_MEDIA_TYPE ProblemDetails", c.path, c.ctype, st, pd)
			}
		}
		accepted := []struct{ path, ctype string }{
			{authPath, "application/json"},
			{authPath, "application/json; charset=utf-8"},
			{authPath, "application/merge-patch+json"},
			{authPath, "application/json-patch+json"},
			{authPath, "application/problem+json"},
			{tokenPath, "application/x-www-form-urlencoded"},
			{tokenPath, "application/json"},
		}
		for _, c := range accepted {
			if st, pd := post(t, tr, base+c.path, c.ctype, `{}`); st != http.StatusCreated {
				t.Errorf("POST %s as %q: %d %+v, want 201", c.path, c.ctype, st, pd)
			}
		}
		if st, pd := post(t, tr, base+authPath, "application/xml", ""); st != http.StatusCreated {
			t.Errorf("POST without a body: %d %+v, want 201 (no body, no media type to check)", st, pd)
		}
	})
}

// The router's own answers are ProblemDetails too (TS 29.500 5.2.7.2), not
// net/http's text/plain: an unknown path is 404
// RESOURCE_URI_STRUCTURE_NOT_FOUND, a known path with another method 405
// naming the allowed ones.
func TestRouterAnswersAreProblemDetails(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base := sbitest.Serve(t, tr, sbi.Handler(echoMux(), nil, logging.Discard()))
		c := sbitest.Client(tr)
		_, err := c.Do(context.Background(), "GET", base+"/nope/v1/x", nil, nil)
		var pe *sbi.ProblemError
		if !asProblem(err, &pe) || pe.Status != 404 || pe.Problem.Status != 404 || pe.Problem.Cause != sbi.CauseResourceURIStructureNotFound {
			t.Fatalf("unknown path: %v, want a 404 RESOURCE_URI_STRUCTURE_NOT_FOUND ProblemDetails", err)
		}
		h, err := c.Do(context.Background(), "DELETE", base+authPath, nil, nil)
		if !asProblem(err, &pe) || pe.Status != 405 || pe.Problem.Status != 405 || !strings.Contains(pe.Problem.Detail, "POST") || h.Get("Allow") == "" {
			t.Fatalf("wrong method: %v (Allow %q), want a 405 ProblemDetails naming POST", err, h.Get("Allow"))
		}
	})
}

func asProblem(err error, pe **sbi.ProblemError) bool {
	p, ok := err.(*sbi.ProblemError)
	if !ok || p.Problem.Title == "" { // Title: the body was a ProblemDetails
		return false
	}
	*pe = p
	return true
}

// Metrics are labelled by route, never by raw path: 50,000 unique unknown
// paths (a scanner) add one label set, so /metrics keeps its size.
func TestUnknownPathsShareOneMetricsLabel(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := sbi.Handler(echoMux(), sbi.NewMetrics(reg), logging.Discard())
	scan := func(from, to int) {
		for i := from; i < to; i++ {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", fmt.Sprintf("/scan-%d/v1/x%d", i, i), nil))
		}
	}
	auth := httptest.NewRequest("POST", authPath, strings.NewReader(`{}`))
	auth.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), auth)
	invent := func(from, to int) { // methods a client invents share one label
		for i := from; i < to; i++ {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(fmt.Sprintf("M%d", i), "/scan/v1/x", nil))
		}
	}
	scan(0, 10)
	invent(0, 10)
	labelsBefore, sizeBefore := servedLabelSets(t, reg), metricsSize(t, reg)
	scan(10, 50_000)
	invent(10, 1000)
	if got := servedLabelSets(t, reg); got != labelsBefore {
		t.Fatalf("label sets grew from %d to %d over 50,000 unknown paths", labelsBefore, got)
	}
	// Counts and sums grow by a few digits per line; one more label set
	// would add about 2 KB.
	if got := metricsSize(t, reg); got > sizeBefore+1024 {
		t.Fatalf("/metrics grew from %d to %d bytes over 50,000 unknown paths", sizeBefore, got)
	}
	if n := servedCount(t, reg, sbi.UnmatchedRoute, "404"); n != 50_000 {
		t.Fatalf("unmatched GET 404s counted %d, want 50000", n)
	}
	if n := servedCount(t, reg, "nausf-auth", "201"); n != 1 {
		t.Fatalf("nausf-auth 201s counted %d, want 1 (the route's service)", n)
	}
}

func servedLabelSets(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "l25gc_sbi_server_request_duration_seconds" {
			return len(mf.GetMetric())
		}
	}
	return 0
}

func metricsSize(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.Len()
}

// Requests an NF makes to URIs its peers chose (callbacks) cannot grow the
// client metrics without bound either: past 1,024 label sets they share
// the service label "other".
func TestClientMetricsAreBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	reg := prometheus.NewRegistry()
	c := sbi.NewClient(srv.Client().Transport, sbi.NewMetrics(reg))
	for i := range 3000 {
		if _, err := c.Do(context.Background(), "POST", fmt.Sprintf("%s/cb-%d/notify", srv.URL, i), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "l25gc_sbi_client_request_duration_seconds" && len(mf.GetMetric()) > 1025 {
			t.Fatalf("%d client label sets after calls to 3,000 callback paths, want at most 1,025", len(mf.GetMetric()))
		}
	}
}
