package udr

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/nf/udr/store/storetest"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

func TestSMPolicyData(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, srv := testUDR(t, tr, nil)
		if err := n.store.PutSubscriber(ctx, storetest.Subscriber("208930000000001", "000000000020")); err != nil {
			t.Fatal(err)
		}
		base := srv.URL + DRBase + "/policy-data/ues/"
		var p models.SmPolicyData
		if st, _ := srv.call(t, "GET", base+ue1+"/sm-data", "", &p); st != 200 || len(p.SmPolicySnssaiData) != 2 {
			t.Fatalf("sm-data = %d %+v", st, p)
		}
		q := "?snssai=" + url.QueryEscape(`{"sst":1,"sd":"010203"}`) + "&dnn=internet"
		p = models.SmPolicyData{}
		if st, _ := srv.call(t, "GET", base+ue1+"/sm-data"+q, "", &p); st != 200 || len(p.SmPolicySnssaiData) != 1 ||
			len(p.SmPolicySnssaiData["01010203"].SmPolicyDnnData) != 1 || p.SmPolicySnssaiData["01010203"].SmPolicyDnnData["internet"].SubscCats[0] != "gold" {
			t.Fatalf("sm-data%s = %d %+v", q, st, p)
		}
		st, pd := srv.call(t, "GET", base+ue1+"/sm-data?snssai=1-010203", "", nil)
		wantProblem(t, "sm-data with a malformed snssai", st, pd, http.StatusBadRequest, causeInvalidQuery)
		st, pd = srv.call(t, "GET", base+ue1+"/sm-data?dnn=a..b", "", nil)
		wantProblem(t, "sm-data with a malformed dnn", st, pd, http.StatusBadRequest, causeInvalidQuery)
		st, pd = srv.call(t, "GET", base+"imsi-208930000009999/sm-data", "", nil)
		wantProblem(t, "sm-data of an unknown UE", st, pd, http.StatusNotFound, causeUserNotFound)
	})
}

// A subscriber provisioned with a session QoS carries it in the
// subscription data the SMF reads and in the policy data the PCF reads.
func TestProvisionedSessionQoS(t *testing.T) {
	n, srv := testUDR(t, sbi.NewTCP(), nil)
	c := adminClient(t, n, srv)
	s := prov.Subscriber{IMSI: "208930000000042", K: storetest.K, OPc: storetest.OPc, DNNs: []string{"internet", "ims"},
		Session: &prov.SessionQoS{AMBR: prov.AMBR{Uplink: "100 Mbps", Downlink: "300 Mbps"}, FiveQI: 8, ARPPriority: 2}}
	if _, err := c.Add(ctx, s); err != nil {
		t.Fatal(err)
	}
	ue := "imsi-208930000000042"
	var sm []models.SessionManagementSubscriptionData
	q := "?single-nssai=" + url.QueryEscape(`{"sst":1,"sd":"010203"}`) + "&dnn=ims"
	if st, _ := srv.call(t, "GET", srv.URL+DRBase+"/subscription-data/"+ue+"/20893/provisioned-data/sm-data"+q, "", &sm); st != 200 || len(sm) != 1 {
		t.Fatalf("sm-data = %d %+v", st, sm)
	}
	conf := sm[0].DnnConfigurations["ims"]
	if conf.SessionAmbr.Uplink != "100 Mbps" || conf.SessionAmbr.Downlink != "300 Mbps" || conf.Var5gQosProfile.Var5qi != 8 || conf.Var5gQosProfile.Arp.PriorityLevel != 2 {
		t.Fatalf("DNN configuration = %+v %+v", conf.SessionAmbr, conf.Var5gQosProfile)
	}
	var p models.SmPolicyData
	if st, _ := srv.call(t, "GET", srv.URL+DRBase+"/policy-data/ues/"+ue+"/sm-data", "", &p); st != 200 || len(p.SmPolicySnssaiData["01010203"].SmPolicyDnnData) != 2 {
		t.Fatalf("policy sm-data = %d %+v", st, p)
	}
	got, err := c.Get(ctx, "208930000000042")
	if err != nil || got.Session == nil || *got.Session != *s.Session {
		t.Fatalf("read back = %+v, %v; want session %+v", got.Session, err, s.Session)
	}
	bad := s
	bad.IMSI, bad.Session = "208930000000043", &prov.SessionQoS{FiveQI: 1}
	if _, err := c.Add(ctx, bad); sbi.StatusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "session.5qi") {
		t.Fatalf("GBR 5QI as the default: %v, want 400 naming session.5qi", err)
	}
}

func TestSMFRegistrationResource(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, srv := testUDR(t, tr, nil)
		if err := n.store.PutSubscriber(ctx, storetest.Subscriber("208930000000001", "000000000020")); err != nil {
			t.Fatal(err)
		}
		regs := srv.URL + DRBase + "/subscription-data/" + ue1 + "/context-data/smf-registrations"
		reg := `{"smfInstanceId":"5f0a6c1e-0000-5000-8000-000000000002","pduSessionId":9,"singleNssai":{"sst":1,"sd":"010203"},"dnn":"internet","plmnId":{"mcc":"208","mnc":"93"}}`
		var created models.SmfRegistration
		if st, pd := srv.call(t, "PUT", regs+"/5", reg, &created); st != http.StatusCreated || created.PduSessionId != 5 {
			t.Fatalf("PUT = %d %+v %+v; want 201 with the path's PDU session id", st, pd, created)
		}
		if st, pd := srv.call(t, "PUT", regs+"/5", reg, nil); st != http.StatusNoContent {
			t.Fatalf("PUT again = %d %+v, want 204", st, pd)
		}
		var one models.SmfRegistration
		if st, _ := srv.call(t, "GET", regs+"/5", "", &one); st != 200 || one.Dnn != "internet" {
			t.Fatalf("GET = %d %+v", st, one)
		}
		var all []models.SmfRegistration
		if st, _ := srv.call(t, "GET", regs, "", &all); st != 200 || len(all) != 1 {
			t.Fatalf("GET all = %d %+v", st, all)
		}
		if st, pd := srv.call(t, "DELETE", regs+"/5", "", nil); st != http.StatusNoContent {
			t.Fatalf("DELETE = %d %+v", st, pd)
		}
		st, pd := srv.call(t, "DELETE", regs+"/5", "", nil)
		wantProblem(t, "DELETE again", st, pd, http.StatusNotFound, causeDataNotFound)
		st, pd = srv.call(t, "GET", regs+"/5", "", nil)
		wantProblem(t, "GET after DELETE", st, pd, http.StatusNotFound, causeDataNotFound)
		st, pd = srv.call(t, "PUT", regs+"/0", reg, nil)
		wantProblem(t, "PUT of PDU session 0", st, pd, http.StatusBadRequest, "INVALID_MSG_FORMAT")
		st, pd = srv.call(t, "PUT", regs+"/5", `{"pduSessionId":5}`, nil)
		wantProblem(t, "PUT without smfInstanceId", st, pd, http.StatusBadRequest, causeMandatoryMissing)
		st, pd = srv.call(t, "PUT", strings.Replace(regs, ue1, "imsi-208930000009999", 1)+"/5", reg, nil)
		wantProblem(t, "PUT for an unknown UE", st, pd, http.StatusNotFound, causeUserNotFound)
	})
}

func TestOperatorSpecificQosFlows(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, srv := testUDR(t, tr, nil)
		sub := storetest.Subscriber("208930000000001", "000000000020")
		bare := storetest.Subscriber("208930000000002", "000000000020")
		bare.FlowRules, bare.QosFlows = nil, nil
		for _, s := range []*store.Subscriber{sub, bare} {
			if err := n.store.PutSubscriber(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		base := srv.URL + DRBase + "/policy-data/ues/"
		var got map[string]struct {
			DataType string `json:"dataType"`
			Value    struct {
				FlowRules []store.FlowRule `json:"flowRules"`
				QosFlows  []store.QosFlow  `json:"qosFlows"`
			} `json:"value"`
		}
		if st, _ := srv.call(t, "GET", base+ue1+"/operator-specific-data", "", &got); st != 200 || got[QosFlowsKey].DataType != "object" ||
			len(got[QosFlowsKey].Value.FlowRules) != 1 || got[QosFlowsKey].Value.QosFlows[0].GBRUL != "2 Mbps" {
			t.Fatalf("operator-specific-data = %d %+v", st, got)
		}
		got = nil
		if st, _ := srv.call(t, "GET", base+bare.UeID+"/operator-specific-data", "", &got); st != 200 || len(got) != 0 {
			t.Fatalf("operator-specific-data of a UE without QoS flows = %d %+v, want an empty map", st, got)
		}
		st, pd := srv.call(t, "GET", base+"imsi-208930000009999/operator-specific-data", "", nil)
		wantProblem(t, "operator-specific-data of an unknown UE", st, pd, http.StatusNotFound, causeUserNotFound)
	})
}
