package smf

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/upf/rules"
)

// adminPolicy posts d to the session's admin policy route.
func (s *testSMF) adminPolicy(t *testing.T, token string, d models.SmPolicyDecision) (int, []byte) {
	t.Helper()
	return s.admin(t, "POST", adminPrefix+"/"+subscribed+"/1/policy", token, d)
}

func ambrDecision(up, down string) models.SmPolicyDecision {
	return models.SmPolicyDecision{SessRules: map[string]*models.SessionRule{"s": {SessRuleId: "s", AuthSessAmbr: &models.Ambr{Uplink: up, Downlink: down}}}}
}

// modificationAtUE reads the Modification Command the UE would get.
func modificationAtUE(t *testing.T, n1 []byte) *nasx.GSMModification {
	t.Helper()
	g, err := nasx.ParseGSMAtUE(n1)
	if err != nil || g.Modify == nil {
		t.Fatalf("not a Modification Command: %v % x", err, n1)
	}
	return g.Modify
}

// The UPF refusing a policy change (PFCP cause 75, its rule tables full)
// is a ProblemDetails naming the cause and what did not fit, not the 504
// of an unreachable UPF; the session keeps its policy and the UE and gNB
// hear nothing. A UPF that does not answer is still 504.
func TestPolicyRefusedByTheUPFNamesThePFCPCause(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	token := adminToken(t, s)
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	before := s.n4.only(t)
	s.n4.setFailModify(&rules.CauseError{Cause: 75, Detail: "pfcp cause 75 (No resources available)"})
	d := gbrDecision("2 Mbps", "5 Mbps")
	d.SessRules = ambrDecision("10 Mbps", "10 Mbps").SessRules
	code, body := s.adminPolicy(t, token, d)
	var pd models.ProblemDetails
	if code != 500 || json.Unmarshal(body, &pd) != nil || pd.Cause != "INSUFFICIENT_RESOURCES" {
		t.Fatalf("refused policy: %d %s", code, body)
	}
	for _, want := range []string{"PFCP cause 75", "No resources available", "new QoS flow QFI 2", `PCC rule "gbr"`, "session QER 64", "1 QoS flows"} {
		if !strings.Contains(pd.Detail, want) {
			t.Errorf("detail %q says nothing of %q", pd.Detail, want)
		}
	}
	if strings.Contains(pd.Detail, "the UPF says") {
		t.Errorf("detail %q repeats the cause as the UPF's words", pd.Detail)
	}
	s.n4.setFailModify(&rules.CauseError{Cause: 73, Detail: "pfcp cause 73 (Rule creation/modification Failure): failed rule QER 2"})
	if code, body := s.adminPolicy(t, token, d); code != 500 || !strings.Contains(string(body), "the UPF says: failed rule QER 2") {
		t.Errorf("failed rule: %d %s", code, body)
	}
	s.n4.setFailModify(nil)
	checkQERShape(t, s.n4.only(t), before.QERs[0].MBRUL, before.QERs[0].MBRDL)
	c, _ := s.nf.ctxs.get(ref[len(smContextsPath)+1:])
	if len(c.flows) != 1 || len(c.pending) != 0 || c.ambrUp != before.QERs[0].MBRUL {
		t.Fatalf("the refused change stuck: flows %+v pending %+v AMBR %d", c.flows, c.pending, c.ambrUp)
	}
	if len(s.core.transfers) != 0 {
		t.Fatal("the UE and gNB were told of a change the UPF refused")
	}
	for cause, want := range map[uint8]string{73: "INSUFFICIENT_RESOURCES", 77: "SYSTEM_FAILURE", 64: "SYSTEM_FAILURE"} {
		s.n4.setFailModify(&rules.CauseError{Cause: cause})
		if code, body := s.adminPolicy(t, token, d); code != 500 || !strings.Contains(string(body), want) {
			t.Errorf("PFCP cause %d: %d %s, want 500 %s", cause, code, body, want)
		}
	}
	s.n4.setFailModify(errors.New("no answer from the UPF (T1 x N1)"))
	if code, body := s.adminPolicy(t, token, d); code != 504 || !strings.Contains(string(body), sbi.CauseTargetNFNotReachable) {
		t.Fatalf("unreachable UPF: %d %s, want 504", code, body)
	}
}

// A new Session-AMBR alone (TS 23.502 4.3.3.2): the session QER at the
// UPF, the Session-AMBR IE in the UE's Modification Command and the PDU
// Session Aggregate Maximum Bit Rate in the gNB's Modify Request Transfer;
// the same AMBR again changes nothing.
func TestNewSessionAMBRReachesTheUEAndTheGNB(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	token := adminToken(t, s)
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	if code, body := s.adminPolicy(t, token, ambrDecision("12 Mbps", "24 Mbps")); code != 204 {
		t.Fatalf("policy: %d %s", code, body)
	}
	checkQERShape(t, s.n4.only(t), 12e6, 24e6)
	tr := s.core.waitTransfer(t)
	m := modificationAtUE(t, tr.n1)
	if m.AMBR == nil || m.AMBR.UplinkBps != 12e6 || m.AMBR.DownlinkBps != 24e6 || len(m.QoSRules) != 0 || len(m.QoSFlows) != 0 {
		t.Fatalf("Modification Command %+v AMBR %+v", m, m.AMBR)
	}
	n2, err := ngapx.ParseModifyRequestTransfer(tr.n2)
	if err != nil || n2.AMBR == nil || n2.AMBR.Up != 12e6 || n2.AMBR.Down != 24e6 || len(n2.AddOrModify) != 0 {
		t.Fatalf("modify request transfer %+v %v", n2, err)
	}
	if tr.req.N2InfoContainer == nil || tr.req.N2InfoContainer.SmInfo.N2InfoContent.NgapIeType != models.AmfCommunicationNgapIeType_PDU_RES_MOD_REQ {
		t.Fatalf("N2 info container %+v", tr.req.N2InfoContainer)
	}
	if code, _ := s.adminPolicy(t, token, ambrDecision("12 Mbps", "24 Mbps")); code != 204 || len(s.core.transfers) != 0 {
		t.Fatalf("the same AMBR again: %d, %d transfers", code, len(s.core.transfers))
	}
	if code, _ := s.adminPolicy(t, token, ambrDecision("0 Mbps", "24 Mbps")); code != 400 {
		t.Fatalf("a zero AMBR: %d, want 400", code)
	}
}

// Changing an existing flow's GBR/MBR: the same PCC rule (or another rule
// with the same filter) with new rates updates the flow's QER at the UPF
// (no new PDRs), sends a "modify existing" QoS flow description and a QoS
// Flow Add or Modify item, and the admin view shows the new rates at once.
// A gNB that cannot take the change gets the old QER back at the UPF.
func TestPolicyChangesAnExistingFlowsRates(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	token := adminToken(t, s)
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	if code, body := s.adminPolicy(t, token, gbrDecision("2 Mbps", "5 Mbps")); code != 204 {
		t.Fatalf("add: %d %s", code, body)
	}
	s.core.waitTransfer(t)
	s.modifyAnswered(t, ref, ngapx.ModifyResponse{QFIs: []uint8{2}})

	changed := gbrDecision("4 Mbps", "7 Mbps")
	changed.PccRules["gbr"].PccRuleId = "other-id" // the same filter names the flow
	if code, body := s.adminPolicy(t, token, changed); code != 204 {
		t.Fatalf("change: %d %s", code, body)
	}
	mods := s.n4.modifications()
	last := mods[len(mods)-1]
	if len(last.Create.PDRs) != 0 || len(last.Update.QERs) != 1 || last.Update.QERs[0].ID != 2 ||
		last.Update.QERs[0].GBRDL != 4e6 || last.Update.QERs[0].MBRUL != 7e6 {
		t.Fatalf("N4 modification %+v", last)
	}
	tr := s.core.waitTransfer(t)
	m := modificationAtUE(t, tr.n1)
	if m.AMBR != nil || len(m.QoSRules) != 0 || len(m.QoSFlows) != 1 || m.QoSFlows[0].QFI != 2 || m.QoSFlows[0].OperationCode != 3 {
		t.Fatalf("Modification Command %+v", m)
	}
	desc, _ := nasx.ParseQoSFlows(mustFlowBytes(t, m))
	if desc[0].GFBRDown != 4e6 || desc[0].MFBRUp != 7e6 {
		t.Fatalf("flow description %+v", desc[0])
	}
	n2, err := ngapx.ParseModifyRequestTransfer(tr.n2)
	if err != nil || len(n2.AddOrModify) != 1 || n2.AddOrModify[0].QFI != 2 || n2.AddOrModify[0].GFBRUp != 4e6 || n2.AddOrModify[0].MFBRDown != 7e6 {
		t.Fatalf("modify request transfer %+v %v", n2, err)
	}
	if v := s.flowView(t, token, 2); v.GBRDownlinkBps != 4e6 || v.MBRUplinkBps != 7e6 || v.Pending {
		t.Fatalf("admin view %+v", v)
	}
	// The gNB fails the change: the UPF gets the old rates back.
	s.modifyAnswered(t, ref, ngapx.ModifyResponse{FailedQFIs: []uint8{2}})
	q := s.n4.only(t).QERs[slices.IndexFunc(s.n4.only(t).QERs, func(q rules.QER) bool { return q.ID == 2 })]
	if q.GBRDL != 2e6 || q.MBRUL != 5e6 {
		t.Fatalf("QER after the gNB's failure %+v, want GBR 2 MBR 5 Mbit/s", q)
	}
	if v := s.flowView(t, token, 2); v.GBRDownlinkBps != 2e6 {
		t.Fatalf("admin view after the failure %+v", v)
	}
}

func mustFlowBytes(t *testing.T, m *nasx.GSMModification) []byte {
	t.Helper()
	b, err := m.QoSFlows.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// modifyAnswered delivers the gNB's Modify Response and the UE's
// Modification Complete.
func (s *testSMF) modifyAnswered(t *testing.T, ref string, r ngapx.ModifyResponse) {
	t.Helper()
	rsp, _ := ngapx.BuildPDUSessionResourceModifyResponseTransfer(r)
	a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N2SmInfo: &models.RefToBinaryData{ContentId: "n2"},
		N2SmInfoType: models.N2SmInfoType_PDU_RES_MOD_RSP}, n2Part(rsp))
	b := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}},
		n1Part(gsmMsg(1, 0, nas.MsgTypePDUSessionModificationComplete)))
	if a.status != 200 || b.status != 200 {
		t.Fatalf("modify response %d, complete %d", a.status, b.status)
	}
}

// sessionView is the one session as the admin API shows it.
func (s *testSMF) sessionView(t *testing.T, token string) SessionView {
	t.Helper()
	code, body := s.admin(t, "GET", adminPrefix, token, nil)
	var list []SessionView
	if code != 200 || json.Unmarshal(body, &list) != nil || len(list) != 1 {
		t.Fatalf("list: %d %s", code, body)
	}
	return list[0]
}

// flowView is flow qfi of the one session as the admin API shows it.
func (s *testSMF) flowView(t *testing.T, token string, qfi uint8) FlowView {
	t.Helper()
	v := s.sessionView(t, token)
	i := slices.IndexFunc(v.Flows, func(f FlowView) bool { return f.QFI == qfi })
	if i < 0 {
		t.Fatalf("no flow %d in %+v", qfi, v)
	}
	return v.Flows[i]
}
