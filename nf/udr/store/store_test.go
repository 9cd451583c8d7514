package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/nf/udr/store/embedded"
	"github.com/l25gc/l25gc/nf/udr/store/mongodb"
	"github.com/l25gc/l25gc/nf/udr/store/storetest"
	"github.com/l25gc/l25gc/test/ferretdb"
)

type backend struct {
	name string
	// setup prepares the backend for one run of the cases (FerretDB lives
	// as long as that run) and returns how to open a fresh, empty store.
	setup func(t *testing.T) func(t *testing.T) store.Store
	// 50 writers × sqnIncrements concurrent increments in the SQN test.
	sqnIncrements int
}

var backends = []backend{
	{"embedded", setupEmbedded, 100},
	{"mongodb", setupMongoDB, 4},
}

func setupEmbedded(*testing.T) func(t *testing.T) store.Store {
	return func(t *testing.T) store.Store {
		s, err := embedded.Open(filepath.Join(t.TempDir(), "udr.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(context.Background()) })
		return s
	}
}

// setupMongoDB starts one FerretDB; each store is a fresh database on it.
func setupMongoDB(t *testing.T) func(t *testing.T) store.Store {
	uri := ferretdbtest.Start(t)
	n := 0
	return func(t *testing.T) store.Store {
		n++
		s, err := mongodb.Open(context.Background(), uri, fmt.Sprintf("free5gc_%d", n))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(context.Background()) })
		return s
	}
}

func TestStore(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, b backend, s store.Store)
	}{
		{"put get delete", testPutGetDelete},
		{"unknown UE", testUnknown},
		{"add absent keeps SQN", testAddAbsent},
		{"list pages in order", testList},
		{"SQN increments are not lost", testConcurrentSQN},
		{"SQN compare and set", testSetSQN},
		{"provisioned data by PLMN, slice and DNN", testProvisioned},
		{"AMF 3GPP access registration", testAMF3GPP},
		{"SM policy data by slice and DNN", testSMPolicy},
		{"SMF registrations per PDU session", testSMFRegistrations},
		{"policy flow rules and QoS flows", testPolicyFlows},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			open := b.setup(t)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, b, open(t)) })
			}
		})
	}
}

var ctx = context.Background()

func mustPut(t *testing.T, s store.Store, sub *store.Subscriber) {
	t.Helper()
	if err := s.PutSubscriber(ctx, sub); err != nil {
		t.Fatal(err)
	}
}

func testPutGetDelete(t *testing.T, _ backend, s store.Store) {
	in := storetest.Subscriber("208930000000001", "000000000020")
	mustPut(t, s, in)
	got, err := s.Subscriber(ctx, in.UeID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Auth.EncPermanentKey != storetest.K || got.Auth.EncOpcKey != storetest.OPc || got.SQN() != "000000000020" ||
		got.Auth.AuthenticationManagementField != "8000" || got.Auth.AuthenticationMethod != models.AuthMethod__5_G_AKA {
		t.Fatalf("auth = %+v, want K, OPc, SQN 000000000020, AMF 8000, 5G_AKA", got.Auth)
	}
	if got.ServingPlmnID != storetest.Plmn || len(got.AM.Nssai.DefaultSingleNssais) != 2 || got.AM.SubscribedUeAmbr.Downlink != "2 Gbps" {
		t.Fatalf("am = %+v", got.AM)
	}
	if len(got.SM) != 2 || got.SM[0].DnnConfigurations["ims.mnc093.mcc208.gprs"].SessionAmbr == nil {
		t.Fatalf("sm = %+v, want 2 slices with the dotted DNN kept", got.SM)
	}
	if len(got.SMFSelection.SubscribedSnssaiInfos) != 2 || len(got.AMPolicy.SubscCats) != 1 {
		t.Fatalf("smf selection %+v, am policy %+v", got.SMFSelection, got.AMPolicy)
	}

	in.Auth.EncOpcKey = "00112233445566778899aabbccddeeff"
	mustPut(t, s, in)
	if a, _ := s.AuthSubscription(ctx, in.UeID); a.EncOpcKey != in.Auth.EncOpcKey {
		t.Fatalf("after replace OPc = %s", a.EncOpcKey)
	}
	if err := s.DeleteSubscriber(ctx, in.UeID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscriber(ctx, in.UeID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after delete: %v, want ErrNotFound", err)
	}
	if err := s.DeleteSubscriber(ctx, in.UeID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
}

func testUnknown(t *testing.T, _ backend, s store.Store) {
	mustPut(t, s, storetest.Subscriber("208930000000001", "000000000020"))
	ue := "imsi-208930000009999"
	checks := map[string]error{}
	_, checks["Subscriber"] = s.Subscriber(ctx, ue)
	_, checks["AuthSubscription"] = s.AuthSubscription(ctx, ue)
	_, checks["IncrementSQN"] = s.IncrementSQN(ctx, ue, 1)
	checks["SetSQN"] = s.SetSQN(ctx, ue, "", "000000000001")
	_, checks["AMData"] = s.AMData(ctx, ue, storetest.Plmn)
	_, checks["SMFSelection"] = s.SMFSelection(ctx, ue, storetest.Plmn)
	_, checks["SMData"] = s.SMData(ctx, ue, storetest.Plmn, nil, "")
	_, checks["AMPolicy"] = s.AMPolicy(ctx, ue)
	checks["PutAMF3GPPAccess"] = s.PutAMF3GPPAccess(ctx, ue, &models.Amf3GppAccessRegistration{AmfInstanceId: "x"})
	_, checks["AMF3GPPAccess"] = s.AMF3GPPAccess(ctx, ue)
	for op, err := range checks {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of an unknown UE: %v, want ErrNotFound", op, err)
		}
	}
}

func testAddAbsent(t *testing.T, _ backend, s store.Store) {
	subs := []*store.Subscriber{
		storetest.Subscriber("208930000000001", "000000000020"),
		storetest.Subscriber("208930000000002", "000000000020"),
	}
	if n, err := s.AddAbsent(ctx, subs); err != nil || n != 2 {
		t.Fatalf("first AddAbsent = %d, %v; want 2", n, err)
	}
	if _, err := s.IncrementSQN(ctx, subs[0].UeID, 32); err != nil {
		t.Fatal(err)
	}
	more := append(subs, storetest.Subscriber("208930000000003", "000000000020"))
	if n, err := s.AddAbsent(ctx, more); err != nil || n != 1 {
		t.Fatalf("second AddAbsent = %d, %v; want 1", n, err)
	}
	a, err := s.AuthSubscription(ctx, subs[0].UeID)
	if err != nil || a.SequenceNumber.Sqn != "000000000040" {
		t.Fatalf("SQN after re-provisioning = %+v, %v; want 000000000040 kept", a.SequenceNumber, err)
	}
}

func testList(t *testing.T, _ backend, s store.Store) {
	var subs []*store.Subscriber
	for i := 5; i >= 1; i-- { // inserted out of order
		subs = append(subs, storetest.Subscriber(fmt.Sprintf("20893000000000%d", i), "000000000001"))
	}
	if _, err := s.AddAbsent(ctx, subs); err != nil {
		t.Fatal(err)
	}
	page, total, err := s.List(ctx, 1, 2)
	if err != nil || total != 5 || len(page) != 2 {
		t.Fatalf("List(1,2) = %d subs, total %d, %v; want 2 of 5", len(page), total, err)
	}
	if page[0].UeID != "imsi-208930000000002" || page[1].UeID != "imsi-208930000000003" {
		t.Fatalf("page = %s, %s; want ...002, ...003", page[0].UeID, page[1].UeID)
	}
	if page[0].SQN() != "000000000001" || len(page[0].SM) != 2 {
		t.Fatalf("listed subscriber incomplete: %+v", page[0])
	}
	rest, _, err := s.List(ctx, 4, 100)
	if err != nil || len(rest) != 1 || rest[0].UeID != "imsi-208930000000005" {
		t.Fatalf("last page = %v, %v", rest, err)
	}
	if none, total, err := s.List(ctx, 10, 10); err != nil || len(none) != 0 || total != 5 {
		t.Fatalf("page past the end = %v, %d, %v", none, total, err)
	}
}

// testConcurrentSQN: concurrent authentications of one UE each get their
// own SQN (TS 33.102 C.3); none is lost.
func testConcurrentSQN(t *testing.T, b backend, s store.Store) {
	sub := storetest.Subscriber("208930000000001", "000000000000")
	mustPut(t, s, sub)
	const writers = 50
	seen := make(chan string, writers*b.sqnIncrements)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < b.sqnIncrements; i++ {
				sqn, err := s.IncrementSQN(ctx, sub.UeID, 1)
				if err != nil {
					t.Error(err)
					return
				}
				seen <- sqn
			}
		}()
	}
	wg.Wait()
	close(seen)
	distinct := map[string]bool{}
	for sqn := range seen {
		if distinct[sqn] {
			t.Fatalf("SQN %s handed out twice", sqn)
		}
		distinct[sqn] = true
	}
	want := fmt.Sprintf("%012x", writers*b.sqnIncrements)
	if a, err := s.AuthSubscription(ctx, sub.UeID); err != nil || a.SequenceNumber.Sqn != want {
		t.Fatalf("SQN = %v, %v; want %s", a.SequenceNumber, err, want)
	}
}

func testSetSQN(t *testing.T, _ backend, s store.Store) {
	sub := storetest.Subscriber("208930000000001", "00000000000a")
	mustPut(t, s, sub)
	if err := s.SetSQN(ctx, sub.UeID, "000000000001", "000000000002"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("SetSQN with a stale expected value: %v, want ErrConflict", err)
	}
	if err := s.SetSQN(ctx, sub.UeID, "00000000000A", "00000000000b"); err != nil {
		t.Fatalf("SetSQN with the current value (other case): %v", err)
	}
	if err := s.SetSQN(ctx, sub.UeID, "", "ffffffffffff"); err != nil {
		t.Fatal(err)
	}
	if next, err := s.IncrementSQN(ctx, sub.UeID, 2); err != nil || next != "000000000001" {
		t.Fatalf("increment past 2^48-1 = %s, %v; want wrap to 000000000001", next, err)
	}
	if err := s.SetSQN(ctx, sub.UeID, "", "xyz"); err == nil {
		t.Fatal("SetSQN accepted a malformed SQN")
	}
}

func testProvisioned(t *testing.T, _ backend, s store.Store) {
	sub := storetest.Subscriber("208930000000001", "000000000020")
	mustPut(t, s, sub)
	if _, err := s.AMData(ctx, sub.UeID, "00101"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("AM data for another PLMN: %v, want ErrNotFound", err)
	}
	am, err := s.AMData(ctx, sub.UeID, storetest.Plmn)
	if err != nil || am.Gpsis[0] != "msisdn-0900000000" {
		t.Fatalf("AM data = %+v, %v", am, err)
	}
	sel, err := s.SMFSelection(ctx, sub.UeID, storetest.Plmn)
	if err != nil || sel.SubscribedSnssaiInfos["01112233"].DnnInfos[0].Dnn != "internet" {
		t.Fatalf("SMF selection = %+v, %v", sel, err)
	}
	all, err := s.SMData(ctx, sub.UeID, storetest.Plmn, nil, "")
	if err != nil || len(all) != 2 {
		t.Fatalf("SM data = %d sets, %v; want 2", len(all), err)
	}
	one, err := s.SMData(ctx, sub.UeID, storetest.Plmn, &models.Snssai{Sst: 1, Sd: "112233"}, "")
	if err != nil || len(one) != 1 || one[0].SingleNssai.Sd != "112233" {
		t.Fatalf("SM data of slice 1/112233 = %+v, %v", one, err)
	}
	dotted, err := s.SMData(ctx, sub.UeID, storetest.Plmn, nil, "ims.mnc093.mcc208.gprs")
	if err != nil || len(dotted) != 1 || dotted[0].SingleNssai.Sd != "010203" {
		t.Fatalf("SM data with the dotted DNN = %+v, %v", dotted, err)
	}
	if none, err := s.SMData(ctx, sub.UeID, storetest.Plmn, &models.Snssai{Sst: 2}, ""); err != nil || len(none) != 0 {
		t.Fatalf("SM data of an unsubscribed slice = %+v, %v; want none", none, err)
	}
	pol, err := s.AMPolicy(ctx, sub.UeID)
	if err != nil || pol.SubscCats[0] != "free5gc" {
		t.Fatalf("AM policy = %+v, %v", pol, err)
	}
}

func testAMF3GPP(t *testing.T, _ backend, s store.Store) {
	sub := storetest.Subscriber("208930000000001", "000000000020")
	mustPut(t, s, sub)
	reg := &models.Amf3GppAccessRegistration{
		AmfInstanceId: "b3a1e1c4-0000-4000-8000-000000000001", DeregCallbackUri: "http://127.0.0.1:29518/dereg",
		Guami: &models.Guami{PlmnId: &models.PlmnIdNid{Mcc: "208", Mnc: "93"}, AmfId: "cafe00"}, RatType: models.RatType_NR,
	}
	if err := s.PutAMF3GPPAccess(ctx, sub.UeID, reg); err != nil {
		t.Fatal(err)
	}
	reg.AmfInstanceId = "changed after the call"
	got, err := s.AMF3GPPAccess(ctx, sub.UeID)
	if err != nil || got.AmfInstanceId != "b3a1e1c4-0000-4000-8000-000000000001" || got.Guami.AmfId != "cafe00" {
		t.Fatalf("AMF registration = %+v, %v", got, err)
	}
	got.Guami.AmfId = "changed by a reader" // a reader's copy is its own, all the way down
	if again, err := s.AMF3GPPAccess(ctx, sub.UeID); err != nil || again.Guami.AmfId != "cafe00" {
		t.Fatalf("AMF registration after a reader changed its copy = %+v, %v", again, err)
	}
	mustPut(t, s, sub) // re-provisioning keeps the UE's current registration
	if _, err := s.AMF3GPPAccess(ctx, sub.UeID); err != nil {
		t.Fatalf("AMF registration after re-provisioning: %v", err)
	}
}

func testSMPolicy(t *testing.T, _ backend, s store.Store) {
	sub := storetest.Subscriber("208930000000001", "000000000020")
	mustPut(t, s, sub)
	all, err := s.SMPolicy(ctx, sub.UeID, nil, "")
	if err != nil || len(all.SmPolicySnssaiData) != 2 || all.SmPolicySnssaiData["01010203"].SmPolicyDnnData["internet"].SubscCats[0] != "gold" {
		t.Fatalf("SM policy data = %+v, %v", all, err)
	}
	dotted, err := s.SMPolicy(ctx, sub.UeID, &models.Snssai{Sst: 1, Sd: "010203"}, "ims.mnc093.mcc208.gprs")
	if err != nil || len(dotted.SmPolicySnssaiData) != 1 || len(dotted.SmPolicySnssaiData["01010203"].SmPolicyDnnData) != 1 ||
		dotted.SmPolicySnssaiData["01010203"].SmPolicyDnnData["ims.mnc093.mcc208.gprs"].Dnn != "ims.mnc093.mcc208.gprs" {
		t.Fatalf("SM policy data of 1/010203 and the dotted DNN = %+v, %v", dotted, err)
	}
	if none, err := s.SMPolicy(ctx, sub.UeID, &models.Snssai{Sst: 2}, ""); err != nil || len(none.SmPolicySnssaiData) != 0 {
		t.Fatalf("SM policy data of an unsubscribed slice = %+v, %v; want none", none, err)
	}
	again, _ := s.SMPolicy(ctx, sub.UeID, nil, "")
	if len(again.SmPolicySnssaiData["01010203"].SmPolicyDnnData) != 2 {
		t.Fatal("filtering changed the stored policy data")
	}
	bare := storetest.Subscriber("208930000000002", "000000000020")
	bare.SMPolicy = models.SmPolicyData{}
	mustPut(t, s, bare)
	if _, err := s.SMPolicy(ctx, bare.UeID, nil, ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SM policy data of a UE without any: %v, want ErrNotFound", err)
	}
	if _, err := s.SMPolicy(ctx, "imsi-208930000009999", nil, ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SM policy data of an unknown UE: %v, want ErrNotFound", err)
	}
}

func testSMFRegistrations(t *testing.T, _ backend, s store.Store) {
	sub := storetest.Subscriber("208930000000001", "000000000020")
	mustPut(t, s, sub)
	reg := func(id int32, smf string) *models.SmfRegistration {
		return &models.SmfRegistration{SmfInstanceId: smf, PduSessionId: id, Dnn: "internet",
			SingleNssai: &models.Snssai{Sst: 1, Sd: "010203"}, PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}}
	}
	for _, r := range []*models.SmfRegistration{reg(5, "smf-a"), reg(1, "smf-a")} {
		if replaced, err := s.PutSMFRegistration(ctx, sub.UeID, r); err != nil || replaced {
			t.Fatalf("put session %d: replaced %v, %v", r.PduSessionId, replaced, err)
		}
	}
	if replaced, err := s.PutSMFRegistration(ctx, sub.UeID, reg(5, "smf-b")); err != nil || !replaced {
		t.Fatalf("put session 5 again: replaced %v, %v; want replaced", replaced, err)
	}
	mustPut(t, s, sub) // re-provisioning keeps the UE's sessions
	got, err := s.SMFRegistrations(ctx, sub.UeID)
	if err != nil || len(got) != 2 || got[0].PduSessionId != 1 || got[1].PduSessionId != 5 || got[1].SmfInstanceId != "smf-b" || got[1].SingleNssai.Sd != "010203" {
		t.Fatalf("registrations = %+v, %v; want sessions 1 and 5 (smf-b)", got, err)
	}
	if err := s.DeleteSMFRegistration(ctx, sub.UeID, 5); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSMFRegistration(ctx, sub.UeID, 5); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if got, _ := s.SMFRegistrations(ctx, sub.UeID); len(got) != 1 || got[0].PduSessionId != 1 {
		t.Fatalf("after delete: %+v", got)
	}
	if _, err := s.PutSMFRegistration(ctx, "imsi-208930000009999", reg(1, "smf-a")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("registration of an unknown UE: %v, want ErrNotFound", err)
	}
	if err := s.DeleteSubscriber(ctx, sub.UeID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SMFRegistrations(ctx, sub.UeID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("registrations of a deleted UE: %v, want ErrNotFound", err)
	}
}

func testPolicyFlows(t *testing.T, _ backend, s store.Store) {
	sub := storetest.Subscriber("208930000000001", "000000000020")
	mustPut(t, s, sub)
	rules, flows, err := s.PolicyFlows(ctx, sub.UeID)
	if err != nil || len(rules) != 1 || rules[0] != sub.FlowRules[0] || len(flows) != 1 || flows[0] != sub.QosFlows[0] {
		t.Fatalf("flows = %+v %+v, %v; want those stored", rules, flows, err)
	}
	got, err := s.Subscriber(ctx, sub.UeID)
	if err != nil || len(got.FlowRules) != 1 || len(got.QosFlows) != 1 {
		t.Fatalf("subscriber's flows = %+v %+v, %v", got.FlowRules, got.QosFlows, err)
	}
	bare := storetest.Subscriber("208930000000002", "000000000020")
	bare.FlowRules, bare.QosFlows = nil, nil
	mustPut(t, s, bare)
	if rules, flows, err := s.PolicyFlows(ctx, bare.UeID); err != nil || len(rules)+len(flows) != 0 {
		t.Fatalf("flows of a UE without any = %+v %+v, %v; want none, no error", rules, flows, err)
	}
	sub.QosFlows = nil
	mustPut(t, s, sub) // replaced: the QoS flow goes
	if _, flows, _ := s.PolicyFlows(ctx, sub.UeID); len(flows) != 0 {
		t.Fatalf("QoS flows after re-provisioning without them: %+v", flows)
	}
	if _, _, err := s.PolicyFlows(ctx, "imsi-208930000009999"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("flows of an unknown UE: %v, want ErrNotFound", err)
	}
}
