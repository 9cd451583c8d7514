package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/free5gc/openapi/models"
	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/nf/smf"
	"github.com/l25gc/l25gc/sbi"
)

const cliGBRFlow = "filter=permit out 17 from any to assigned 5001;5qi=1;gbr=2 Mbps/2 Mbps;mbr=5 Mbps/5 Mbps"

// policy set turns its flags into the SM policy decision the SMF applies:
// the session rule's AMBR and one PCC rule per flow, its QoS data carrying
// GBR and MBR; the same flow twice is one rule.
func TestPolicySetDecision(t *testing.T) {
	p := policyFlags{psi: 1, ambr: "10 Mbps/20 Mbps", flows: []string{cliGBRFlow, cliGBRFlow}}
	d, err := p.decision()
	if err != nil {
		t.Fatal(err)
	}
	if a := d.SessRules["cli"].AuthSessAmbr; a.Uplink != "10 Mbps" || a.Downlink != "20 Mbps" {
		t.Fatalf("session AMBR %+v", a)
	}
	if len(d.PccRules) != 1 || len(d.QosDecs) != 1 {
		t.Fatalf("PCC rules %+v", d.PccRules)
	}
	for id, r := range d.PccRules {
		q := d.QosDecs[r.RefQosData[0]]
		if r.PccRuleId != id || r.FlowInfos[0].FlowDescription != "permit out 17 from any to assigned 5001" || q.Var5qi != 1 ||
			q.GbrUl != "2 Mbps" || q.GbrDl != "2 Mbps" || q.MaxbrUl != "5 Mbps" || q.MaxbrDl != "5 Mbps" {
			t.Fatalf("PCC rule %+v, QoS %+v", r, q)
		}
	}
}

func TestPolicySetRejectsBadFlags(t *testing.T) {
	for name, p := range map[string]policyFlags{
		"nothing":         {psi: 1},
		"psi 0":           {psi: 0, ambr: "1 Mbps/1 Mbps"},
		"ambr one way":    {psi: 1, ambr: "10 Mbps"},
		"ambr unit":       {psi: 1, ambr: "10 Mbps/10 furlongs"},
		"gbr 5qi no gbr":  {psi: 1, flows: []string{"filter=10.200.0.2;5qi=1"}},
		"flow no 5qi":     {psi: 1, flows: []string{"filter=10.200.0.2"}},
		"flow bad filter": {psi: 1, flows: []string{"filter=permit in foo;5qi=9"}},
	} {
		if _, err := p.decision(); err == nil {
			t.Errorf("%s: %+v accepted", name, p)
		}
	}
}

// The paper's two cases (issue 13): AMBR 10, a QoS flow GBR 2 / MBR 5 gets
// 5 and the default flow 5; GBR 4 / MBR 7 gets 7 and the default flow 3.
func TestSessionShowPrintsFairShare(t *testing.T) {
	for _, c := range []struct {
		gbr, mbr        uint64
		qosRate, nonQoS string
	}{{2e6, 5e6, "5 / 5 Mbit/s", "5 / 5 Mbit/s"}, {4e6, 7e6, "7 / 7 Mbit/s", "3 / 3 Mbit/s"}} {
		var out bytes.Buffer
		if err := printSession(&out, paperSession(c.gbr, c.mbr)); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out.String(), "\n")
		if len(lines) < 5 || !strings.Contains(lines[1], "10 / 10 Mbit/s") ||
			!strings.Contains(lines[3], c.nonQoS) || !strings.Contains(lines[4], c.qosRate) {
			t.Fatalf("GBR %d MBR %d:\n%s", c.gbr, c.mbr, out.String())
		}
	}
}

// Weights (smf.qos.weights) show per flow and split the excess: AMBR 10,
// GBR 2, the QoS flow weighing 3 and the default flow 1 share the 8 left
// 6:2, so 8 and 2 where equal weights give 6 and 4.
func TestSessionShowPrintsWeights(t *testing.T) {
	s := paperSession(2e6, 10e6)
	s.Flows[0].Weight, s.Flows[1].Weight = 1, 3
	var out bytes.Buffer
	if err := printSession(&out, s); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 5 || !strings.Contains(lines[2], "weight") ||
		!regexp.MustCompile(`^\s+1\s+9\s+1\s+-\s+-\s+2 / 2 Mbit/s`).MatchString(lines[3]) ||
		!regexp.MustCompile(`^\s+2\s+1\s+3\s+.*\s+8 / 8 Mbit/s`).MatchString(lines[4]) {
		t.Fatalf("weights 1 and 3:\n%s", out.String())
	}
}

func paperSession(gbr, mbr uint64) smf.SessionView {
	return smf.SessionView{SUPI: "imsi-208930000000001", PDUSessionID: 1, DNN: "internet", State: "active",
		AMBRUplinkBps: 10e6, AMBRDownlinkBps: 10e6, Flows: []smf.FlowView{{QFI: 1, FiveQI: 9},
			{QFI: 2, FiveQI: 1, GBRFlow: true, GBRUplinkBps: gbr, GBRDownlinkBps: gbr, MBRUplinkBps: mbr, MBRDownlinkBps: mbr,
				Filters: []string{"permit out 17 from any to assigned 5001"}}}}
}

// fakeSMFAdmin serves the SMF admin API's two routes for the CLI: the
// session list, and policy POSTs it records.
type fakeSMFAdmin struct {
	mu       sync.Mutex
	policies map[string]models.SmPolicyDecision
}

func (f *fakeSMFAdmin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer secret-token" {
		http.Error(w, "no", http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == smfAdminPath:
		json.NewEncoder(w).Encode([]smf.SessionView{paperSession(2e6, 5e6), {SUPI: "imsi-208930000000002", PDUSessionID: 1}})
	case r.Method == http.MethodPost && r.URL.Path == smfAdminPath+"/imsi-208930000000003/1/policy":
		sbi.WriteProblem(w, http.StatusInternalServerError, "INSUFFICIENT_RESOURCES",
			"the UPF refused the N4 Session Modification with PFCP cause 75 (No resources available): new QoS flow QFI 5 did not fit")
	case r.Method == http.MethodPost && (strings.HasPrefix(r.URL.Path, smfAdminPath+"/") || strings.HasPrefix(r.URL.Path, pcfAdminPath+"/")):
		var d models.SmPolicyDecision
		if json.NewDecoder(r.Body).Decode(&d) != nil {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.policies[r.URL.Path] = d
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

func runCLI(t *testing.T, cmd *cobra.Command, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "l25gc", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().String("config", "", "")
	root.AddCommand(cmd)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// The commands reach the SMF with the admin token: session show prints
// only the asked subscriber's sessions; policy set posts to its session.
func TestSessionShowAndPolicySetTalkToTheSMF(t *testing.T) {
	fake := &fakeSMFAdmin{policies: map[string]models.SmPolicyDecision{}}
	srv, err := sbi.NewTCP().Serve("127.0.0.1:0", fake)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	tok := filepath.Join(t.TempDir(), "admin.token")
	if err := os.WriteFile(tok, []byte("secret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "http://" + srv.Addr()
	out, err := runCLI(t, newSessionCmd(), "session", "--smf", url, "--token-file", tok, "show", "208930000000001")
	if err != nil || !strings.Contains(out, "imsi-208930000000001 PDU session 1") || strings.Contains(out, "208930000000002") {
		t.Fatalf("session show: %v\n%s", err, out)
	}
	if _, err := runCLI(t, newSessionCmd(), "session", "--smf", url, "--token-file", tok, "show", "208930000000009"); err == nil {
		t.Fatal("session show of a subscriber without sessions did not fail")
	}
	// --via smf posts to the SMF's admin API, the default to the PCF's.
	for via, path := range map[string]string{"smf": smfAdminPath + "/imsi-208930000000001/2/policy", "pcf": pcfAdminPath + "/imsi-208930000000001/2/update"} {
		out, err = runCLI(t, newPolicyCmd(), "policy", "--smf", url, "--pcf", url, "--token-file", tok, "set", "208930000000001",
			"--pdu-session", "2", "--session-ambr", "10 Mbps/10 Mbps", "--qos-flow", cliGBRFlow, "--via", via)
		fake.mu.Lock()
		d, ok := fake.policies[path]
		fake.mu.Unlock()
		if err != nil || !ok || d.SessRules["cli"].AuthSessAmbr.Downlink != "10 Mbps" || len(d.PccRules) != 1 {
			t.Fatalf("policy set --via %s: %v %s, got %+v", via, err, out, fake.policies)
		}
	}
	// A policy the UPF cannot install: the SMF's ProblemDetails, its cause
	// and detail, is what the user reads.
	_, err = runCLI(t, newPolicyCmd(), "policy", "--smf", url, "--token-file", tok, "set", "208930000000003", "--qos-flow", cliGBRFlow, "--via", "smf")
	if err == nil || !strings.Contains(err.Error(), "500 Internal Server Error INSUFFICIENT_RESOURCES: the UPF refused") ||
		!strings.Contains(err.Error(), "PFCP cause 75 (No resources available)") || strings.Contains(err.Error(), "{") {
		t.Fatalf("refused policy set: %v", err)
	}
}
