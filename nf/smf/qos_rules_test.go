package smf

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/upf/rules"
)

// qerByID finds a QER of the UPF's session.
func qerByID(t *testing.T, s rules.Session, id uint32) rules.QER {
	t.Helper()
	for _, q := range s.QERs {
		if q.ID == id {
			return q
		}
	}
	t.Fatalf("no QER %d in %+v", id, s.QERs)
	return rules.QER{}
}

// checkQERShape asserts the QER contract with UPF-U (TS 29.244 QER): every
// PDR lists its flow's QER first and the session-level QER (QFI 0, MBR =
// Session-AMBR) last.
func checkQERShape(t *testing.T, s rules.Session, ambrUp, ambrDown uint64) {
	t.Helper()
	sq := qerByID(t, s, qerSession)
	if sq.QFI != 0 || sq.MBRUL != ambrUp || sq.MBRDL != ambrDown || sq.GBRUL != 0 || sq.GBRDL != 0 || !sq.GateULOpen || !sq.GateDLOpen {
		t.Fatalf("session QER %+v, want QFI 0, MBR %d/%d", sq, ambrUp, ambrDown)
	}
	for _, p := range s.PDRs {
		if len(p.QERIDs) != 2 || p.QERIDs[1] != qerSession {
			t.Fatalf("PDR %d lists QERs %v, want [flow, %d]", p.ID, p.QERIDs, qerSession)
		}
		if fq := qerByID(t, s, p.QERIDs[0]); fq.QFI == 0 {
			t.Fatalf("PDR %d: flow QER %+v has no QFI", p.ID, fq)
		}
	}
}

// A new session: the default flow's QER has neither GBR nor MBR; the
// PCF's 100/200 Mbps Session-AMBR sits in the session-level QER every PDR
// lists last.
func TestEstablishedSessionHasSessionLevelQER(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	sess := s.n4.only(t)
	checkQERShape(t, sess, 100_000_000, 200_000_000)
	if d := qerByID(t, sess, qerOf(defaultQFI)); d.QFI != defaultQFI || d.MBRUL != 0 || d.MBRDL != 0 || d.GBRUL != 0 || d.GBRDL != 0 {
		t.Fatalf("default flow QER %+v, want QFI 1 and no GBR/MBR", d)
	}
	if len(sess.QERs) != 2 {
		t.Fatalf("QERs %+v, want the default flow's and the session's", sess.QERs)
	}
}

// A network-requested modification (TS 23.502 4.3.3.2) adds a GBR flow:
// its two PDRs list its own QER (GBR 2, MBR 5 Mbps) then the session QER,
// which keeps the AMBR.
func TestModificationAddsGBRFlowUnderSessionQER(t *testing.T) {
	s, _, _ := withGBRFlow(t, setup{})
	sess := s.n4.only(t)
	checkQERShape(t, sess, 100_000_000, 200_000_000)
	if len(sess.PDRs) != 4 {
		t.Fatalf("PDRs %+v, want the default flow's two and the GBR flow's two", sess.PDRs)
	}
	q := qerByID(t, sess, qerOf(2))
	if q.QFI != 2 || q.GBRUL != 2_000_000 || q.GBRDL != 2_000_000 || q.MBRUL != 5_000_000 || q.MBRDL != 5_000_000 {
		t.Fatalf("GBR flow QER %+v", q)
	}
}

// A policy update with a new Session-AMBR updates the session QER at the
// UPF (and nothing else), and the admin view shows the new AMBR and the
// flows' rates; a malformed AMBR is refused and changes nothing.
func TestPolicyUpdateChangesSessionAMBR(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	token := adminToken(t, s)
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	d := gbrDecision("4 Mbps", "7 Mbps")
	d.SessRules = map[string]*models.SessionRule{"s": {SessRuleId: "s", AuthSessAmbr: &models.Ambr{Uplink: "10 Mbps", Downlink: "10 Mbps"}}}
	if code, body := s.admin(t, "POST", adminPrefix+"/"+subscribed+"/1/policy", token, d); code != 204 {
		t.Fatalf("policy: %d %s", code, body)
	}
	s.core.waitTransfer(t)
	checkQERShape(t, s.n4.only(t), 10_000_000, 10_000_000)

	bad := models.SmPolicyDecision{SessRules: map[string]*models.SessionRule{"s": {AuthSessAmbr: &models.Ambr{Uplink: "lots", Downlink: "10 Mbps"}}}}
	if code, _ := s.admin(t, "POST", adminPrefix+"/"+subscribed+"/1/policy", token, bad); code != 400 {
		t.Fatalf("malformed AMBR: %d, want 400", code)
	}
	checkQERShape(t, s.n4.only(t), 10_000_000, 10_000_000)
	badRule := gbrDecision("1 Mbps", "2 Mbps")
	badRule.PccRules["gbr"].PccRuleId, badRule.PccRules["gbr"].FlowInfos[0].FlowDescription = "other", "permit in nonsense"
	badRule.SessRules = map[string]*models.SessionRule{"s": {AuthSessAmbr: &models.Ambr{Uplink: "1 Mbps", Downlink: "1 Mbps"}}}
	if code, _ := s.admin(t, "POST", adminPrefix+"/"+subscribed+"/1/policy", token, badRule); code != 400 {
		t.Fatalf("bad PCC rule: %d, want 400", code)
	}
	checkQERShape(t, s.n4.only(t), 10_000_000, 10_000_000) // the AMBR of a refused decision is not applied

	code, body := s.admin(t, "GET", adminPrefix, token, nil)
	var list []SessionView
	if code != 200 || json.Unmarshal(body, &list) != nil || len(list) != 1 {
		t.Fatalf("list: %d %s", code, body)
	}
	v := list[0]
	i := slices.IndexFunc(v.Flows, func(f FlowView) bool { return f.QFI == 2 })
	if v.AMBRUplinkBps != 10_000_000 || v.AMBRDownlinkBps != 10_000_000 || len(v.Flows) != 2 || i < 0 ||
		v.Flows[i].GBRDownlinkBps != 4_000_000 || v.Flows[i].MBRDownlinkBps != 7_000_000 || !v.Flows[i].GBRFlow || len(v.Flows[i].Filters) != 1 {
		t.Fatalf("session view %s", body)
	}
}

func adminToken(t *testing.T, s *testSMF) string {
	t.Helper()
	token, err := prov.EnsureToken(s.nf.env.Config.AdminTokenPath())
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// gbrDecision is a PCC rule for iperfFlow with a GBR 5QI (1) and the given
// GBR and MBR both ways.
func gbrDecision(gbr, mbr string) models.SmPolicyDecision {
	return models.SmPolicyDecision{
		PccRules: map[string]*models.PccRule{"gbr": {PccRuleId: "gbr", Precedence: 10, RefQosData: []string{"q"},
			FlowInfos: []models.FlowInformation{{FlowDescription: iperfFlow}}}},
		QosDecs: map[string]*models.QosData{"q": {QosId: "q", Var5qi: 1, GbrUl: gbr, GbrDl: gbr, MaxbrUl: mbr, MaxbrDl: mbr}}}
}

// smf.qos.weights reach the UPF in each flow QER by the flow's 5QI: the
// default flow (5QI 9) and a GBR flow (5QI 1) get theirs at once, a 5QI
// not listed 1 (said, so an Update QER does not keep the old weight), and
// the admin view shows them; without weights no QER carries one.
func TestFlowQERsCarryTheir5QIsWeight(t *testing.T) {
	s, token, _ := withGBRFlow(t, setup{cfg: func(c *config.Config) { c.SMF.QoS.Weights = map[string]int{"1": 3, "9": 2} }})
	sess := s.n4.only(t)
	checkQERShape(t, sess, 100_000_000, 200_000_000)
	if q := qerByID(t, sess, qerOf(defaultQFI)); q.Weight != 2 {
		t.Fatalf("default flow QER %+v, want weight 2 (5QI 9)", q)
	}
	if q := qerByID(t, sess, qerOf(2)); q.Weight != 3 {
		t.Fatalf("GBR flow QER %+v, want weight 3 (5QI 1)", q)
	}
	if q := qerByID(t, sess, qerSession); q.Weight != 0 {
		t.Fatalf("session QER %+v carries a weight", q)
	}
	code, body := s.admin(t, "GET", adminPrefix, token, nil)
	var list []SessionView
	if code != 200 || json.Unmarshal(body, &list) != nil || len(list) != 1 || len(list[0].Flows) != 2 ||
		list[0].Flows[0].Weight != 2 || list[0].Flows[1].Weight != 3 {
		t.Fatalf("session view: %d %s, want weights 2 and 3", code, body)
	}

	plain := newTestSMF(t, sbi.NewTCP(), setup{})
	plain.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	if q := qerByID(t, plain.n4.only(t), qerOf(defaultQFI)); q.Weight != 0 {
		t.Fatalf("without smf.qos.weights: default flow QER %+v, want no weight", q)
	}
}

// A policy moving a flow to another 5QI sends an Update QER with that
// 5QI's weight, 1 when it is not listed.
func TestPolicyChangingA5QIChangesItsWeight(t *testing.T) {
	s, token, ref := withGBRFlow(t, setup{cfg: func(c *config.Config) { c.SMF.QoS.Weights = map[string]int{"1": 3} }})
	if q := qerByID(t, s.n4.only(t), qerOf(2)); q.Weight != 3 {
		t.Fatalf("GBR flow QER %+v, want weight 3", q)
	}
	s.modifyAnswered(t, ref, ngapx.ModifyResponse{QFIs: []uint8{2}})
	d := gbrDecision("2 Mbps", "5 Mbps")
	d.QosDecs["q"].Var5qi = 2
	if code, body := s.admin(t, "POST", adminPrefix+"/"+subscribed+"/1/policy", token, d); code != 204 {
		t.Fatalf("policy: %d %s", code, body)
	}
	s.core.waitTransfer(t)
	if q := qerByID(t, s.n4.only(t), qerOf(2)); q.Weight != 1 {
		t.Fatalf("after 5QI 2: GBR flow QER %+v, want weight 1", q)
	}
}

// withGBRFlow is an active session to which a network-requested
// modification added a GBR flow (QFI 2, 5QI 1, GBR 2 and MBR 5 Mbps).
func withGBRFlow(t *testing.T, o setup) (s *testSMF, token, ref string) {
	t.Helper()
	s = newTestSMF(t, sbi.NewTCP(), o)
	token = adminToken(t, s)
	ref, _ = s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	if code, body := s.admin(t, "POST", adminPrefix+"/"+subscribed+"/1/policy", token, gbrDecision("2 Mbps", "5 Mbps")); code != 204 {
		t.Fatalf("policy: %d %s", code, body)
	}
	s.core.waitTransfer(t)
	return s, token, ref
}
