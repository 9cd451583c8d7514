package pcf

import (
	"context"
	"strings"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/nrf/nrftest"
	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/nf/udr/udrtest"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// The default subscribers of config.Default, as the UDR provisions them:
// DNN internet on slice 1/010203, session AMBR 1 Gbps / 2 Gbps, 5QI 9.
const (
	smUE       = "imsi-" + config.DefaultFirstIMSI
	noPolicyUE = "imsi-208930000000002" // its SM policy data is removed below
)

// pcfOverRealUDR is a PCF whose UDR is package udr with the default
// subscribers; noPolicyUE keeps its subscription but loses its policy data.
func pcfOverRealUDR(t *testing.T, tr sbi.Transport, prepare ...func(store.Store)) (*NF, string, *sbi.Client) {
	t.Helper()
	ctx := context.Background()
	u, peer := udrtest.Serve(t, tr, nil)
	sub, err := u.Store().Subscriber(ctx, noPolicyUE)
	if err != nil {
		t.Fatal(err)
	}
	sub.SMPolicy = models.SmPolicyData{}
	if err := u.Store().PutSubscriber(ctx, sub); err != nil {
		t.Fatal(err)
	}
	for _, f := range prepare {
		f(u.Store())
	}
	env := nrftest.Env(t, tr, nil, models.NrfNfManagementNfType_PCF, peer)
	n, err := New(env)
	if err != nil {
		t.Fatal(err)
	}
	return n, nrftest.Serve(t, tr, n.Handler()), env.Client
}

// smContext is what an SMF sends for a session on DNN internet, slice
// 1/010203, with the subscription the UDM gave it.
func smContext(supi string, pduSessionID int32) models.SmPolicyContextData {
	return models.SmPolicyContextData{Supi: supi, PduSessionId: pduSessionID, PduSessionType: models.PduSessionType_IPV4,
		Dnn: "internet", NotificationUri: "http://smf/cb", SliceInfo: &models.Snssai{Sst: 1, Sd: "010203"},
		AccessType: models.AccessType__3_GPP_ACCESS, RatType: models.RatType_NR, Ipv4Address: "10.60.0.1",
		SubsSessAmbr: &models.Ambr{Uplink: "100 Mbps", Downlink: "200 Mbps"},
		SubsDefQos: &models.SubscribedDefaultQos{Var5qi: 8, PriorityLevel: 3,
			Arp: &models.Arp{PriorityLevel: 3, PreemptCap: models.PreemptionCapability_MAY_PREEMPT, PreemptVuln: models.PreemptionVulnerability_NOT_PREEMPTABLE}}}
}

func createSMPolicy(t *testing.T, c *sbi.Client, base string, req models.SmPolicyContextData) (string, models.SmPolicyDecision) {
	t.Helper()
	var d models.SmPolicyDecision
	h, err := c.Do(context.Background(), "POST", base+smPoliciesPath, req, &d)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	loc := h.Get("Location")
	if !strings.HasPrefix(loc, base+smPoliciesPath+"/") {
		t.Fatalf("Location %q", loc)
	}
	return loc, d
}

func sessionRule(t *testing.T, d models.SmPolicyDecision) *models.SessionRule {
	t.Helper()
	if len(d.SessRules) != 1 || d.SessRules[sessionRuleID] == nil {
		t.Fatalf("session rules = %+v, want one", d.SessRules)
	}
	r := d.SessRules[sessionRuleID]
	if r.SessRuleId != sessionRuleID || r.AuthSessAmbr == nil || r.AuthDefQos == nil || r.AuthDefQos.Arp == nil {
		t.Fatalf("session rule = %+v", r)
	}
	return r
}

func TestSMPolicyLifecycle(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, base, c := pcfOverRealUDR(t, tr)
		ctx := context.Background()
		uri, d := createSMPolicy(t, c, base, smContext(smUE, 1))
		r := sessionRule(t, d)
		if r.AuthSessAmbr.Uplink != "100 Mbps" || r.AuthSessAmbr.Downlink != "200 Mbps" || r.AuthDefQos.Var5qi != 8 ||
			r.AuthDefQos.Arp.PriorityLevel != 3 || r.AuthDefQos.Arp.PreemptCap != models.PreemptionCapability_MAY_PREEMPT {
			t.Fatalf("session rule = %+v %+v, want the subscribed AMBR and default QoS", r.AuthSessAmbr, r.AuthDefQos)
		}
		if len(d.PolicyCtrlReqTriggers) != 2 {
			t.Fatalf("triggers = %v, want SE_AMBR_CH and DEF_QOS_CH", d.PolicyCtrlReqTriggers)
		}

		var got models.SmPolicyControl
		if _, err := c.Do(ctx, "GET", uri, nil, &got); err != nil || got.Context.Supi != smUE || got.Policy.SessRules[sessionRuleID] == nil {
			t.Fatalf("GET: %v %+v", err, got)
		}
		upd := models.SmPolicyUpdateContextData{
			RepPolicyCtrlReqTriggers: []models.PolicyControlRequestTrigger{models.PolicyControlRequestTrigger_SE_AMBR_CH},
			SubsSessAmbr:             &models.Ambr{Uplink: "5 Mbps", Downlink: "10 Mbps"}}
		var nd models.SmPolicyDecision
		if _, err := c.Do(ctx, "POST", uri+"/update", upd, &nd); err != nil {
			t.Fatalf("update: %v", err)
		}
		if r := sessionRule(t, nd); r.AuthSessAmbr.Downlink != "10 Mbps" || r.AuthDefQos.Var5qi != 8 {
			t.Fatalf("after SE_AMBR_CH: %+v %+v", r.AuthSessAmbr, r.AuthDefQos)
		}
		bad := models.SmPolicyUpdateContextData{SubsDefQos: &models.SubscribedDefaultQos{Var5qi: 1, Arp: &models.Arp{PriorityLevel: 1}}}
		if _, err := c.Do(ctx, "POST", uri+"/update", bad, nil); sbi.StatusOf(err) != 400 || sbi.CauseOf(err) != causeErrorInitialParams {
			t.Fatalf("update to a GBR default 5QI: %v, want 400 %s", err, causeErrorInitialParams)
		}
		if _, err := c.Do(ctx, "GET", uri, nil, &got); err != nil || got.Policy.SessRules[sessionRuleID].AuthSessAmbr.Downlink != "10 Mbps" {
			t.Fatalf("a refused update changed the association: %v %+v", err, got.Policy)
		}
		if _, err := c.Do(ctx, "POST", uri+"/delete", models.SmPolicyDeleteData{}, nil); err != nil {
			t.Fatalf("delete: %v", err)
		}
		for _, op := range []struct{ method, uri string }{{"POST", uri + "/delete"}, {"GET", uri}, {"POST", uri + "/update"}} {
			var body any
			if op.method == "POST" {
				body = models.SmPolicyUpdateContextData{}
			}
			if _, err := c.Do(ctx, op.method, op.uri, body, nil); sbi.StatusOf(err) != 404 || sbi.CauseOf(err) != sbi.CauseContextNotFound {
				t.Errorf("%s %s after delete: %v, want 404 CONTEXT_NOT_FOUND", op.method, op.uri[len(base):], err)
			}
		}
		if n.smPolicies.len() != 0 {
			t.Fatalf("%d associations left after delete", n.smPolicies.len())
		}
	})
}

// Without subscribed values from the SMF the PCF authorises its defaults,
// those the UDR provisions (1 Gbps / 2 Gbps, 5QI 9, ARP 8); without SM
// policy data for the UE the subscription alone decides.
func TestSMPolicyDefaultsAndNoPolicyData(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		_, base, c := pcfOverRealUDR(t, tr)
		req := smContext(noPolicyUE, 5)
		req.SubsSessAmbr, req.SubsDefQos = nil, nil
		_, d := createSMPolicy(t, c, base, req)
		r := sessionRule(t, d)
		if r.AuthSessAmbr.Uplink != "1 Gbps" || r.AuthSessAmbr.Downlink != "2 Gbps" || r.AuthDefQos.Var5qi != 9 || r.AuthDefQos.Arp.PriorityLevel != 8 {
			t.Fatalf("defaults: %+v %+v", r.AuthSessAmbr, r.AuthDefQos)
		}
	})
}

func TestOneSMPolicyPerSession(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, base, c := pcfOverRealUDR(t, tr)
		first, _ := createSMPolicy(t, c, base, smContext(smUE, 1))
		createSMPolicy(t, c, base, smContext(smUE, 2))
		again, _ := createSMPolicy(t, c, base, smContext(smUE, 1))
		if first == again || n.smPolicies.len() != 2 {
			t.Fatalf("%d associations (first %s, again %s), want 2: session 1's second create replaces its first", n.smPolicies.len(), first, again)
		}
		if _, err := c.Do(context.Background(), "GET", first, nil, nil); sbi.StatusOf(err) != 404 {
			t.Fatalf("replaced association: %v, want 404", err)
		}
	})
}

func TestSMPolicyCreateErrors(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		_, base, c := pcfOverRealUDR(t, tr)
		mod := func(f func(*models.SmPolicyContextData)) models.SmPolicyContextData {
			r := smContext(smUE, 1)
			f(&r)
			return r
		}
		cases := []struct {
			what   string
			body   any
			status int
			cause  string
		}{
			{"no sliceInfo", mod(func(r *models.SmPolicyContextData) { r.SliceInfo = nil }), 400, sbi.CauseMandatoryIEMissing},
			{"no notificationUri", mod(func(r *models.SmPolicyContextData) { r.NotificationUri = "" }), 400, sbi.CauseMandatoryIEMissing},
			{"a malformed supi", mod(func(r *models.SmPolicyContextData) { r.Supi = "imsi-1" }), 400, sbi.CauseMandatoryIEIncorrect},
			{"PDU session 300", mod(func(r *models.SmPolicyContextData) { r.PduSessionId = 300 }), 400, sbi.CauseMandatoryIEIncorrect},
			{"a malformed dnn", mod(func(r *models.SmPolicyContextData) { r.Dnn = "a..b" }), 400, sbi.CauseMandatoryIEIncorrect},
			{"an unknown UE", mod(func(r *models.SmPolicyContextData) { r.Supi = "imsi-208939999999999" }), 400, causeUserUnknown},
			{"a DNN the policy data lacks", mod(func(r *models.SmPolicyContextData) { r.Dnn = "ims" }), 403, causePolicyContextDenied},
			{"a slice the policy data lacks", mod(func(r *models.SmPolicyContextData) { r.SliceInfo = &models.Snssai{Sst: 2} }), 403, causePolicyContextDenied},
			{"a malformed session AMBR", mod(func(r *models.SmPolicyContextData) { r.SubsSessAmbr.Uplink = "fast" }), 400, causeErrorInitialParams},
			{"a default QoS without ARP", mod(func(r *models.SmPolicyContextData) { r.SubsDefQos.Arp = nil }), 400, causeErrorInitialParams},
			{"ARP priority 0", mod(func(r *models.SmPolicyContextData) { r.SubsDefQos.Arp.PriorityLevel = 0 }), 400, causeErrorInitialParams},
			{"not an SmPolicyContextData", []string{"x"}, 400, sbi.CauseInvalidMsgFormat},
		}
		for _, tc := range cases {
			if _, err := c.Do(context.Background(), "POST", base+smPoliciesPath, tc.body, nil); sbi.StatusOf(err) != tc.status || sbi.CauseOf(err) != tc.cause {
				t.Errorf("%s: %v, want %d %s", tc.what, err, tc.status, tc.cause)
			}
		}
	})
}

// The subscriber's QoS flows on the session's slice and DNN become PCC
// rules with their QoS data; those of another DNN and an unusable one do
// not.
func TestSMPolicyPCCRulesFromQosFlows(t *testing.T) {
	withFlows := func(st store.Store) {
		sub, err := st.Subscriber(context.Background(), smUE)
		if err != nil {
			t.Fatal(err)
		}
		sub.FlowRules = []store.FlowRule{
			{Filter: "10.200.0.2", Precedence: 10, Snssai: "01010203", Dnn: "internet", QosRef: 1},
			{Filter: "permit out udp from 10.200.0.0/24 5000 to assigned", Precedence: 20, Snssai: "01010203", Dnn: "internet", QosRef: 2},
			{Filter: "not a filter", Snssai: "01010203", Dnn: "internet", QosRef: 1},
			{Filter: "10.200.0.9", Snssai: "01010203", Dnn: "ims", QosRef: 3},
		}
		sub.QosFlows = []store.QosFlow{
			{Snssai: "01010203", Dnn: "internet", QosRef: 1, FiveQI: 2, MBRUL: "5 Mbps", MBRDL: "5 Mbps", GBRUL: "2 Mbps", GBRDL: "2 Mbps"},
			{Snssai: "01010203", Dnn: "internet", QosRef: 2, FiveQI: 7, MBRUL: "1 Mbps", MBRDL: "1 Mbps"},
			{Snssai: "01010203", Dnn: "ims", QosRef: 3, FiveQI: 5},
		}
		if err := st.PutSubscriber(context.Background(), sub); err != nil {
			t.Fatal(err)
		}
	}
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		_, base, c := pcfOverRealUDR(t, tr, withFlows)
		uri, d := createSMPolicy(t, c, base, smContext(smUE, 1))
		if len(d.PccRules) != 2 || len(d.QosDecs) != 2 {
			t.Fatalf("PCC rules %+v, QoS data %+v; want 2 and 2", d.PccRules, d.QosDecs)
		}
		byPrec := map[int32]*models.PccRule{}
		for id, r := range d.PccRules {
			if r.PccRuleId != id || len(r.RefQosData) != 1 || d.QosDecs[r.RefQosData[0]] == nil || len(r.FlowInfos) != 1 {
				t.Fatalf("PCC rule %s = %+v", id, r)
			}
			byPrec[r.Precedence] = r
		}
		gbr := byPrec[10]
		if gbr == nil || gbr.FlowInfos[0].FlowDescription != "permit out ip from 10.200.0.2 to assigned" || gbr.FlowInfos[0].FlowDirection != models.FlowDirection_BIDIRECTIONAL {
			t.Fatalf("rule of the address filter = %+v", gbr)
		}
		q := d.QosDecs[gbr.RefQosData[0]]
		if q.Var5qi != 2 || q.GbrUl != "2 Mbps" || q.MaxbrDl != "5 Mbps" || q.Arp == nil || q.Arp.PriorityLevel != 3 {
			t.Fatalf("QoS data = %+v, want 5QI 2, GBR 2 Mbps, MBR 5 Mbps, the session's ARP", q)
		}
		if r := byPrec[20]; r == nil || r.FlowInfos[0].FlowDescription != "permit out udp from 10.200.0.0/24 5000 to assigned" || d.QosDecs[r.RefQosData[0]].Var5qi != 7 {
			t.Fatalf("rule of the IPFilterRule = %+v", r)
		}
		var nd models.SmPolicyDecision
		if _, err := c.Do(context.Background(), "POST", uri+"/update", models.SmPolicyUpdateContextData{SubsSessAmbr: &models.Ambr{Uplink: "1 Mbps", Downlink: "1 Mbps"}}, &nd); err != nil || len(nd.PccRules) != 2 {
			t.Fatalf("update: %v, %d PCC rules; want them kept", err, len(nd.PccRules))
		}
		other := smContext(smUE, 2)
		other.SliceInfo = &models.Snssai{Sst: 1, Sd: "112233"}
		if _, d := createSMPolicy(t, c, base, other); len(d.PccRules) != 0 {
			t.Fatalf("a session on another slice got PCC rules %+v", d.PccRules)
		}
	})
}
