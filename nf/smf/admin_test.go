package smf

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
)

func (s *testSMF) admin(t *testing.T, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rsp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer rsp.Body.Close()
	data, _ := io.ReadAll(rsp.Body)
	return rsp.StatusCode, data
}

// The admin API lists the sessions and adds a QoS flow to one by SUPI and
// PDU session ID (the network-requested modification a test or an
// operator triggers without a PCF that pushes updates); only with the
// admin token.
func TestAdminListsSessionsAndAddsAQoSFlow(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	token, err := prov.EnsureToken(s.nf.env.Config.AdminTokenPath())
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	if code, _ := s.admin(t, "GET", adminPrefix, "", nil); code != 401 {
		t.Fatalf("list without the token: %d, want 401", code)
	}
	if code, _ := s.admin(t, "GET", adminPrefix, "wrong", nil); code != 401 {
		t.Fatalf("list with a wrong token: %d, want 401", code)
	}
	code, body := s.admin(t, "GET", adminPrefix, token, nil)
	var list []SessionView
	if code != 200 || json.Unmarshal(body, &list) != nil || len(list) != 1 || list[0].SUPI != subscribed ||
		list[0].State != "active" || list[0].UEIPv4 != "10.60.0.1" || list[0].SNSSAI != "1/010203" {
		t.Fatalf("list: %d %s", code, body)
	}
	decision := models.SmPolicyDecision{
		PccRules: map[string]*models.PccRule{"iperf": {PccRuleId: "iperf", Precedence: 10, RefQosData: []string{"q"},
			FlowInfos: []models.FlowInformation{{FlowDescription: iperfFlow}}}},
		QosDecs: map[string]*models.QosData{"q": {QosId: "q", Var5qi: 7}}}
	if code, body := s.admin(t, "POST", adminPrefix+"/"+subscribed+"/1/policy", token, decision); code != 204 {
		t.Fatalf("policy: %d %s", code, body)
	}
	tr := s.core.waitTransfer(t)
	add, err := ngapx.ParsePDUSessionResourceModifyRequestTransfer(tr.n2)
	if err != nil || len(add) != 1 || add[0].QFI != 2 || add[0].FiveQI != 7 || decodeGSM(t, tr.n1).PDUSessionModificationCommand == nil {
		t.Fatalf("modification sent: %+v %v", add, err)
	}
	if code, _ := s.admin(t, "POST", adminPrefix+"/"+subscribed+"/9/policy", token, decision); code != 404 {
		t.Fatalf("policy for no session: %d, want 404", code)
	}
	if code, _ := s.admin(t, "POST", adminPrefix+"/"+subscribed+"/1/policy", "", decision); code != 401 {
		t.Fatalf("policy without the token: %d, want 401", code)
	}
}
