package registry

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
)

// wrongMethod is a route of each NF asked with a method it does not serve.
var wrongMethod = map[string][2]string{
	"nrf":  {"DELETE", "/nnrf-disc/v1/nf-instances"},
	"udr":  {"DELETE", "/nudr-dr/v1/subscription-data/imsi-208930000000001/authentication-data/authentication-subscription"},
	"udm":  {"GET", "/nudm-ueau/v1/imsi-208930000000001/security-information/generate-auth-data"},
	"ausf": {"GET", "/nausf-auth/v1/ue-authentications"},
	"pcf":  {"PUT", "/npcf-am-policy-control/v1/policies"},
	"nssf": {"DELETE", "/nnssf-nsselection/v2/network-slice-information"},
	"smf":  {"GET", "/nsmf-pdusession/v1/sm-contexts"},
	"amf":  {"GET", "/namf-callback/v1/imsi-208930000000001/dereg-notify"},
}

// Every NF of the table answers as TS 29.500 5.2.7.2 says, by construction
// of the shared SBI wrapper: an unknown path is a 404 ProblemDetails, a
// known one asked with another method a 405 ProblemDetails, and a body in
// XML a 415 UNSUPPORTED_MEDIA_TYPE, never text/plain or a served request.
func TestEveryNFAnswersWithProblemDetails(t *testing.T) {
	for _, e := range Table {
		if !e.HasSBI() {
			continue // UPF-C: N4 only
		}
		t.Run(e.Name, func(t *testing.T) {
			cfg := config.Default()
			cfg.DataDir, cfg.LogDir = t.TempDir(), t.TempDir()
			env := nf.NewEnv(cfg, logging.Discard(), sbi.NewTCP(), e.Type)
			f, err := e.New(env)
			if err != nil {
				t.Fatal(err)
			}
			h := sbi.Handler(f.Handler(), env.Metrics, env.Log)
			wm, ok := wrongMethod[e.Name]
			if !ok {
				t.Fatalf("no route of %s in wrongMethod: add one", e.Name)
			}
			cases := []struct {
				what, method, path, ctype string
				status                    int
			}{
				{"unknown path", "GET", "/no-such-api/v1/x", "", http.StatusNotFound},
				{"wrong method", wm[0], wm[1], "", http.StatusMethodNotAllowed},
				{"XML body", "POST", wm[1], "application/xml", http.StatusUnsupportedMediaType},
			}
			for _, c := range cases {
				var body *strings.Reader
				if c.ctype != "" {
					body = strings.NewReader("<supiOrSuci>imsi-208930000000001</supiOrSuci>")
				} else {
					body = strings.NewReader("")
				}
				req := httptest.NewRequest(c.method, c.path, body)
				if c.ctype != "" {
					req.Header.Set("Content-Type", c.ctype)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				var pd models.ProblemDetails
				err := json.Unmarshal(rec.Body.Bytes(), &pd)
				if rec.Code != c.status || rec.Header().Get("Content-Type") != sbi.ContentTypeProblem || err != nil || int(pd.Status) != c.status {
					t.Errorf("%s (%s %s): %d %s %q, want a %d ProblemDetails", c.what, c.method, c.path, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), c.status)
				}
			}
		})
	}
}
