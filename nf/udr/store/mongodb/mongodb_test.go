package mongodb_test

import (
	"context"
	"encoding/hex"
	"testing"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/udr/store/mongodb"
	"github.com/l25gc/l25gc/nf/udr/store/storetest"
	"github.com/l25gc/l25gc/security"
	"github.com/l25gc/l25gc/test/ferretdb"
)

var ctx = context.Background()

// server starts FerretDB and returns our store and a raw client on database db.
func server(t *testing.T, db string) (*mongodb.Store, *mongo.Database) {
	t.Helper()
	uri := ferretdbtest.Start(t)
	s, err := mongodb.Open(ctx, uri, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(ctx) })
	c, err := mongo.Connect(ctx, options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(ctx) })
	return s, c.Database(db)
}

func insertDocs(t *testing.T, db *mongo.Database, docs map[string][]bson.M) {
	t.Helper()
	for coll, ds := range docs {
		for _, d := range ds {
			if _, err := db.Collection(coll).InsertOne(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A subscriber written by free5GC's web console is read unchanged, and an
// SQN update touches only the SQN of its document.
func TestReadsFree5GCWebConsoleSubscriber(t *testing.T) {
	s, db := server(t, "free5gc")
	ue := "imsi-208930000000003"
	insertDocs(t, db, storetest.Free5GCDocs(ue, "20893", "000000000023"))

	a, err := s.AuthSubscription(ctx, ue)
	if err != nil {
		t.Fatal(err)
	}
	if a.EncPermanentKey != storetest.K || a.EncOpcKey != storetest.OPc || a.SequenceNumber.Sqn != "000000000023" ||
		a.AuthenticationManagementField != "8000" || a.AuthenticationMethod != models.AuthMethod__5_G_AKA {
		t.Fatalf("auth subscription = %+v", a)
	}
	am, err := s.AMData(ctx, ue, "20893")
	if err != nil || am.Nssai.DefaultSingleNssais[1].Sd != "112233" || am.Nssai.DefaultSingleNssais[1].Sst != 1 || am.SubscribedUeAmbr.Uplink != "1 Gbps" {
		t.Fatalf("am data = %+v, %v", am, err)
	}
	sm, err := s.SMData(ctx, ue, "20893", &models.Snssai{Sst: 1, Sd: "010203"}, "internet")
	if err != nil || len(sm) != 1 || sm[0].DnnConfigurations["internet"].Var5gQosProfile.Var5qi != 9 {
		t.Fatalf("sm data = %+v, %v", sm, err)
	}
	sel, err := s.SMFSelection(ctx, ue, "20893")
	if err != nil || len(sel.SubscribedSnssaiInfos) != 2 {
		t.Fatalf("smf selection = %+v, %v", sel, err)
	}
	if pol, err := s.AMPolicy(ctx, ue); err != nil || pol.SubscCats[0] != "free5gc" {
		t.Fatalf("am policy = %+v, %v", pol, err)
	}
	smp, err := s.SMPolicy(ctx, ue, &models.Snssai{Sst: 1, Sd: "010203"}, "internet")
	if err != nil || smp.SmPolicySnssaiData["01010203"].SmPolicyDnnData["internet"].Dnn != "internet" || smp.SmPolicySnssaiData["01010203"].Snssai.Sd != "010203" {
		t.Fatalf("sm policy = %+v, %v", smp, err)
	}
	rules, flows, err := s.PolicyFlows(ctx, ue)
	if err != nil || len(rules) != 1 || rules[0].Filter != "10.200.0.2/32" || rules[0].QosRef != 1 || len(flows) != 1 || flows[0].FiveQI != 2 || flows[0].GBRDL != "2 Mbps" {
		t.Fatalf("flow rules and QoS flows = %+v %+v, %v", rules, flows, err)
	}
	sub, err := s.Subscriber(ctx, ue)
	if err != nil || sub.ServingPlmnID != "20893" || len(sub.SM) != 2 || sub.OP != "" {
		t.Fatalf("subscriber = %+v, %v", sub, err)
	}

	if next, err := s.IncrementSQN(ctx, ue, 1); err != nil || next != "000000000024" {
		t.Fatalf("IncrementSQN = %s, %v", next, err)
	}
	var raw bson.M
	if err := db.Collection(mongodb.CollAuth).FindOne(ctx, bson.M{"ueId": ue}).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	seq, _ := raw["sequenceNumber"].(bson.M)
	if seq["sqn"] != "000000000024" || seq["sqnScheme"] != "GENERAL" || raw["tenantId"] == nil || raw["encOpcKey"] != storetest.OPc {
		t.Fatalf("stored document after the SQN update = %v", raw)
	}
}

// The pre-v3.4 web console shape (permanentKey, milenage.op, SQN string)
// is read too: OPc is derived from OP as free5GC's UDM did.
func TestReadsLegacyFree5GCAuthShape(t *testing.T) {
	s, db := server(t, "free5gc")
	ue := "imsi-208930000000004"
	docs := storetest.Free5GCDocs(ue, "20893", "000000000023")
	docs[mongodb.CollAuth] = []bson.M{storetest.LegacyFree5GCAuthDoc(ue, storetest.OP, "0000000000ff")}
	insertDocs(t, db, docs)

	a, err := s.AuthSubscription(ctx, ue)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := hex.DecodeString(storetest.K)
	op, _ := hex.DecodeString(storetest.OP)
	opc, _ := security.DeriveOPc(k, op)
	if a.EncPermanentKey != storetest.K || a.EncOpcKey != hex.EncodeToString(opc) || a.SequenceNumber.Sqn != "0000000000ff" {
		t.Fatalf("legacy auth subscription = %+v", a)
	}
	if next, err := s.IncrementSQN(ctx, ue, 1); err != nil || next != "000000000100" {
		t.Fatalf("IncrementSQN = %s, %v", next, err)
	}
	if a, _ := s.AuthSubscription(ctx, ue); a.SequenceNumber.Sqn != "000000000100" {
		t.Fatalf("SQN after update = %s", a.SequenceNumber.Sqn)
	}
}

// What we write is laid out as free5GC reads it.
func TestWritesFree5GCLayout(t *testing.T) {
	s, db := server(t, "free5gc")
	sub := storetest.Subscriber("208930000000001", "000000000020")
	if err := s.PutSubscriber(ctx, sub); err != nil {
		t.Fatal(err)
	}
	find := func(coll string, filter bson.M) bson.M {
		t.Helper()
		var m bson.M
		if err := db.Collection(coll).FindOne(ctx, filter).Decode(&m); err != nil {
			t.Fatalf("%s %v: %v", coll, filter, err)
		}
		return m
	}
	auth := find(mongodb.CollAuth, bson.M{"ueId": sub.UeID})
	if auth["encPermanentKey"] != storetest.K || auth["encOpcKey"] != storetest.OPc || auth["authenticationMethod"] != "5G_AKA" {
		t.Fatalf("auth document = %v", auth)
	}
	if seq, _ := auth["sequenceNumber"].(bson.M); seq["sqn"] != "000000000020" {
		t.Fatalf("auth sequenceNumber = %v", auth["sequenceNumber"])
	}
	web := find(mongodb.CollWebAuth, bson.M{"ueId": sub.UeID})
	if pk, _ := web["permanentKey"].(bson.M); pk["permanentKeyValue"] != storetest.K {
		t.Fatalf("web auth document = %v", web)
	}
	find(mongodb.CollAM, bson.M{"ueId": sub.UeID, "servingPlmnId": "20893"})
	find(mongodb.CollSMFSel, bson.M{"ueId": sub.UeID, "servingPlmnId": "20893"})
	find(mongodb.CollAMPolicy, bson.M{"ueId": sub.UeID})
	sm := find(mongodb.CollSM, bson.M{"ueId": sub.UeID, "servingPlmnId": "20893", "singleNssai.sd": "010203"})
	dnns, _ := sm["dnnConfigurations"].(bson.M)
	if _, ok := dnns["ims_mnc093_mcc208_gprs"]; !ok {
		t.Fatalf("dnnConfigurations keys = %v, want the dotted DNN escaped as free5GC does", dnns)
	}
	pol := find(mongodb.CollSMPolicy, bson.M{"ueId": sub.UeID})
	slices, _ := pol["smPolicySnssaiData"].(bson.M)
	slice, _ := slices["01010203"].(bson.M)
	perDNN, _ := slice["smPolicyDnnData"].(bson.M)
	if _, ok := perDNN["ims_mnc093_mcc208_gprs"]; !ok || slice["snssai"] == nil {
		t.Fatalf("policyData.ues.smData = %v, want smPolicySnssaiData keyed 01010203 with escaped DNN keys", pol)
	}
	if _, err := s.PutSMFRegistration(ctx, sub.UeID, &models.SmfRegistration{SmfInstanceId: "smf-1", PduSessionId: 3,
		SingleNssai: &models.Snssai{Sst: 1, Sd: "010203"}, PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}}); err != nil {
		t.Fatal(err)
	}
	if fr := find(mongodb.CollFlowRule, bson.M{"ueId": sub.UeID, "servingPlmnId": "20893", "snssai": "01010203", "dnn": "internet"}); fr["filter"] == nil || fr["qosRef"] == nil {
		t.Fatalf("flowRule document = %v", fr)
	}
	if qf := find(mongodb.CollQosFlow, bson.M{"ueId": sub.UeID, "servingPlmnId": "20893", "qosRef": 1}); qf["5qi"] == nil || qf["mbrUL"] != "5 Mbps" {
		t.Fatalf("qosFlow document = %v", qf)
	}
	if reg := find(mongodb.CollSMFRegs, bson.M{"ueId": sub.UeID, "pduSessionId": 3}); reg["smfInstanceId"] != "smf-1" {
		t.Fatalf("smfRegistrations document = %v", reg)
	}
}
