package amf

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/nf/udr/prov"
)

// limiterAdmin sends one request to the AMF's metrics-port routes, with
// the admin token when token is not "".
func limiterAdmin(t *testing.T, h *harness, method, body, token string) (*httptest.ResponseRecorder, LimiterView) {
	t.Helper()
	mux := http.NewServeMux()
	h.amf.RouteMetrics(mux)
	req := httptest.NewRequest(method, LimiterAdminPath, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	var v LimiterView
	if rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", rec.Body, err)
		}
	}
	return rec, v
}

func adminToken(t *testing.T, h *harness) string {
	t.Helper()
	tok, err := prov.EnsureToken(h.cfg.AdminTokenPath())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// An operator (or bench pdu --rounds) switches the mode and reads it back;
// the limiter's gauges follow.
func TestLimiterModeSwitchOverAdmin(t *testing.T) {
	h := newHarness(t, nil)
	tok := adminToken(t, h)
	if rec, v := limiterAdmin(t, h, http.MethodGet, "", tok); rec.Code != http.StatusOK || v.Mode != "adaptive" {
		t.Fatalf("GET: %d %s", rec.Code, rec.Body)
	}
	for _, mode := range []string{"fixed:8", "off", "fixed:2", "adaptive"} {
		rec, v := limiterAdmin(t, h, http.MethodPut, `{"mode":"`+mode+`"}`, tok)
		if rec.Code != http.StatusOK || v.Mode != mode {
			t.Fatalf("PUT %s: %d %s", mode, rec.Code, rec.Body)
		}
		if mode == "fixed:2" {
			h.wantMetric("l25gc_amf_limiter_emax", nil, 2, "E_max after fixed:2")
		}
	}
}

// A bad mode or body is refused with a ProblemDetails naming the field,
// and the mode stays; without the token nothing changes.
func TestLimiterModeSwitchRefusals(t *testing.T) {
	h := newHarness(t, nil)
	tok := adminToken(t, h)
	for _, c := range []struct{ body, token, want string }{
		{`{"mode":"fixed:0"}`, tok, "amf.limiter.mode: fixed:N needs a whole N ≥ 1"},
		{`{"mode":"fast"}`, tok, "amf.limiter.mode: want adaptive, off or fixed:N"},
		{`{"mode":`, tok, "want a JSON body"},
		{`{"mode":"off"}`, "", "needs Authorization: Bearer"},
		{`{"mode":"off"}`, "wrong", "needs Authorization: Bearer"},
	} {
		rec, _ := limiterAdmin(t, h, http.MethodPut, c.body, c.token)
		if rec.Code/100 != 4 || !strings.Contains(rec.Body.String(), c.want) ||
			!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s: %d %q, want a 4xx problem with %q", c.body, rec.Code, rec.Body, c.want)
		}
	}
	if st := h.amf.limiter.State(); st.Setting != "adaptive" {
		t.Fatalf("a refused switch changed the mode to %s", st.Setting)
	}
}
