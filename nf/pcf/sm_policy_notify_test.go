package pcf

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/sbi"
)

// fakeSMFCallback is an SMF's notificationUri: it records the update
// notifications and answers with status (204 when 0) or a ProblemDetails.
type fakeSMFCallback struct {
	mu     sync.Mutex
	notes  []models.SmPolicyNotification
	paths  []string
	status int
}

func (f *fakeSMFCallback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var note models.SmPolicyNotification
	_ = json.NewDecoder(r.Body).Decode(&note)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notes, f.paths = append(f.notes, note), append(f.paths, r.URL.Path)
	if f.status != 0 {
		sbi.WriteProblem(w, f.status, "INSUFFICIENT_RESOURCES", "the UPF refused the N4 Session Modification with PFCP cause 75 (No resources available)")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func pushPolicy(t *testing.T, base, token, path string, d models.SmPolicyDecision) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(d)
	req, _ := http.NewRequest(http.MethodPost, base+smPolicyAdminPrefix+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rsp, err := (&http.Client{Transport: sbi.NewTCP().RoundTripper()}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer rsp.Body.Close()
	body, _ := io.ReadAll(rsp.Body)
	return rsp.StatusCode, body
}

// The operator's policy change at the PCF (TS 23.502 4.16.5.2): the PCF
// sends it to the SMF's notificationUri + /update as an SmPolicyNotification
// naming the association, keeps it in the association's decision, and
// hands the SMF's refusal back as the SMF wrote it (not a 504); only with
// the admin token, and 404 for a session without an association.
func TestPCFPushesAPolicyChangeToTheSMF(t *testing.T) {
	n, base, c := pcfOverRealUDR(t, sbi.NewTCP())
	smf := &fakeSMFCallback{}
	srv, err := sbi.NewTCP().Serve("127.0.0.1:0", smf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	sm := smContext(smUE, 1)
	sm.NotificationUri = "http://" + srv.Addr() + "/nsmf-callback/v1/sm-policies/ref1"
	loc, _ := createSMPolicy(t, c, base, sm)
	n.env.Config.DataDir = t.TempDir() // the token, not in the source tree
	token, err := prov.EnsureToken(n.env.Config.AdminTokenPath())
	if err != nil {
		t.Fatal(err)
	}
	change := models.SmPolicyDecision{
		SessRules: map[string]*models.SessionRule{"cli": {SessRuleId: "cli", AuthSessAmbr: &models.Ambr{Uplink: "12 Mbps", Downlink: "24 Mbps"}}},
		PccRules: map[string]*models.PccRule{"gbr": {PccRuleId: "gbr", Precedence: 10, RefQosData: []string{"gbr"},
			FlowInfos: []models.FlowInformation{{FlowDescription: "permit out 17 from 10.200.0.2 5202 to assigned"}}}},
		QosDecs: map[string]*models.QosData{"gbr": {QosId: "gbr", Var5qi: 1, GbrUl: "4 Mbps", GbrDl: "4 Mbps", MaxbrUl: "7 Mbps", MaxbrDl: "7 Mbps"}}}
	if code, body := pushPolicy(t, base, "", "/"+smUE+"/1/update", change); code != 401 {
		t.Fatalf("without the token: %d %s", code, body)
	}
	if code, body := pushPolicy(t, base, token, "/"+smUE+"/1/update", change); code != 204 {
		t.Fatalf("push: %d %s", code, body)
	}
	smf.mu.Lock()
	note, path := smf.notes[0], smf.paths[0]
	smf.mu.Unlock()
	if path != "/nsmf-callback/v1/sm-policies/ref1/update" || note.ResourceUri != loc || note.SmPolicyDecision == nil ||
		note.SmPolicyDecision.QosDecs["gbr"].GbrDl != "4 Mbps" || note.SmPolicyDecision.SessRules["cli"].AuthSessAmbr.Downlink != "24 Mbps" {
		t.Fatalf("the SMF got %s %+v", path, note)
	}
	id := loc[strings.LastIndex(loc, "/")+1:]
	p, _ := n.smPolicies.get(id)
	if p.decision.PccRules["gbr"] == nil || p.decision.SessRules[sessionRuleID].AuthSessAmbr.Uplink != "12 Mbps" {
		t.Fatalf("the association's decision %+v", p.decision)
	}

	smf.mu.Lock()
	smf.status = 500
	smf.mu.Unlock()
	code, body := pushPolicy(t, base, token, "/"+smUE+"/1/update", change)
	if code != 500 || !strings.Contains(string(body), "INSUFFICIENT_RESOURCES") || !strings.Contains(string(body), "PFCP cause 75") {
		t.Fatalf("the SMF's refusal: %d %s", code, body)
	}
	if code, _ := pushPolicy(t, base, token, "/"+smUE+"/9/update", change); code != 404 {
		t.Fatalf("no association: %d, want 404", code)
	}
}
