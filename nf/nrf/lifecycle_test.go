package nrf

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// clockedNRF serves an NRF with a 4 s heartbeat timer whose clock the test
// moves.
type clockedNRF struct {
	*NF
	base string
	c    *sbi.Client
	now  time.Time
}

func newClockedNRF(t *testing.T, tr sbi.Transport) *clockedNRF {
	t.Helper()
	cfg := config.Default()
	cfg.NRF.HeartbeatTimer = 4 * time.Second
	n, err := New(&nf.Env{Config: cfg, Log: logging.Discard(), Client: sbitest.Client(tr)})
	if err != nil {
		t.Fatal(err)
	}
	cn := &clockedNRF{NF: n, now: time.Unix(1e9, 0), c: sbitest.Client(tr)}
	n.now = func() time.Time { return cn.now }
	cn.base = sbitest.Serve(t, tr, n.Handler())
	return cn
}

func (cn *clockedNRF) put(t *testing.T, p models.NrfNfManagementNfProfile) models.NrfNfManagementNfProfile {
	t.Helper()
	var got models.NrfNfManagementNfProfile
	if _, err := cn.c.Do(context.Background(), "PUT", cn.base+sbi.NFManagementPath+p.NfInstanceId, p, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func (cn *clockedNRF) heartbeat(id string) error {
	patch := []models.PatchItem{{Op: models.PatchOperation_REPLACE, Path: "/nfStatus", Value: "REGISTERED"}}
	_, err := cn.c.Do(context.Background(), "PATCH", cn.base+sbi.NFManagementPath+id, patch, nil)
	return err
}

// discovered lists the instance ids discovery returns for q (requester AMF).
func (cn *clockedNRF) discovered(t *testing.T, q url.Values) []string {
	t.Helper()
	q.Set("requester-nf-type", "AMF")
	res, err := discover(t, cn.c, cn.base, q)
	if err != nil {
		t.Fatalf("%v: %v", q, err)
	}
	ids := []string{}
	for _, p := range res.NfInstances {
		ids = append(ids, p.NfInstanceId)
	}
	return ids
}

func (cn *clockedNRF) status(t *testing.T, id string) models.NrfNfManagementNfStatus {
	t.Helper()
	var p models.NrfNfManagementNfProfile
	if _, err := cn.c.Do(context.Background(), "GET", cn.base+sbi.NFManagementPath+id, nil, &p); err != nil {
		t.Fatal(err)
	}
	return p.NfStatus
}

func TestSilentNFIsSuspendedAndNotDiscovered(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		cn := newClockedNRF(t, tr)
		p := udmProfile()
		if got := cn.put(t, p); got.HeartBeatTimer != 4 {
			t.Fatalf("registration answered heartBeatTimer %d, want the configured 4", got.HeartBeatTimer)
		}
		udms := url.Values{"target-nf-type": {"UDM"}}

		// Heartbeats keep it registered, however long it lives.
		for range 5 {
			cn.now = cn.now.Add(4 * time.Second)
			if err := cn.heartbeat(p.NfInstanceId); err != nil {
				t.Fatal(err)
			}
			cn.suspendSilent(cn.now)
		}
		// A period plus the grace of half a period: still there.
		cn.now = cn.now.Add(6 * time.Second)
		cn.suspendSilent(cn.now)
		if got := cn.discovered(t, udms); len(got) != 1 {
			t.Fatalf("a UDM 6s after its last heartbeat (period 4s + grace 2s) is not discovered: %v", got)
		}
		cn.now = cn.now.Add(time.Second)
		cn.suspendSilent(cn.now)
		if got := cn.discovered(t, udms); len(got) != 0 || cn.status(t, p.NfInstanceId) != "SUSPENDED" {
			t.Fatalf("a UDM silent for 7s is still discovered (%v) or %s", got, cn.status(t, p.NfInstanceId))
		}
		// Heard of again: registered and discovered again.
		if err := cn.heartbeat(p.NfInstanceId); err != nil {
			t.Fatal(err)
		}
		if got := cn.discovered(t, udms); len(got) != 1 || cn.status(t, p.NfInstanceId) != "REGISTERED" {
			t.Fatalf("after a heartbeat the UDM is %s, discovered %v", cn.status(t, p.NfInstanceId), got)
		}
	})
}

// notifications serves a subscriber's notification endpoint and passes
// every notification on.
func notifications(t *testing.T, tr sbi.Transport) (string, <-chan models.NrfNfManagementNotificationData) {
	ch := make(chan models.NrfNfManagementNotificationData, 16)
	base := sbitest.Serve(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var nd models.NrfNfManagementNotificationData
		if err := json.NewDecoder(r.Body).Decode(&nd); err != nil {
			t.Errorf("notification: %v", err)
		}
		ch <- nd
		w.WriteHeader(http.StatusNoContent)
	}))
	return base + sbi.NFStatusNotifyPath, ch
}

func next(t *testing.T, ch <-chan models.NrfNfManagementNotificationData) models.NrfNfManagementNotificationData {
	t.Helper()
	select {
	case nd := <-ch:
		return nd
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}
	return models.NrfNfManagementNotificationData{}
}

func TestSubscribersHearOfRegistrationSuspensionAndDeregistration(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		cn := newClockedNRF(t, tr)
		uri, ch := notifications(t, tr)
		sub := models.NrfNfManagementSubscriptionData{NfStatusNotificationUri: uri, ReqNfInstanceId: "amf-1",
			SubscrCond: &models.SubscrCond{NfType: "UDM"}}
		var created models.NrfNfManagementSubscriptionData
		h, err := cn.c.Do(context.Background(), "POST", cn.base+sbi.SubscriptionsPath, sub, &created)
		if err != nil || created.SubscriptionId == "" || h.Get("Location") != cn.base+sbi.SubscriptionsPath+"/"+created.SubscriptionId {
			t.Fatalf("subscribe: %v %+v Location %q", err, created, h.Get("Location"))
		}
		// Another NF type does not concern this subscriber.
		smf := sbi.Profile("smf-1", models.NrfNfManagementNfType_SMF, "127.0.0.2", 29502, models.PlmnId{Mcc: "208", Mnc: "93"})
		cn.put(t, smf)

		p := udmProfile()
		instance := cn.env.Config.NRFURI() + sbi.NFManagementPath + p.NfInstanceId
		cn.put(t, p)
		if nd := next(t, ch); nd.Event != "NF_REGISTERED" || nd.NfInstanceUri != instance || nd.NfProfile == nil || nd.NfProfile.NfType != "UDM" {
			t.Fatalf("after registration: %+v", nd)
		}
		cn.now = cn.now.Add(time.Minute)
		cn.suspendSilent(cn.now)
		if nd := next(t, ch); nd.Event != "NF_PROFILE_CHANGED" || nd.NfProfile == nil || nd.NfProfile.NfStatus != "SUSPENDED" {
			t.Fatalf("after missed heartbeats: %+v", nd)
		}
		if _, err := cn.c.Do(context.Background(), "DELETE", cn.base+sbi.NFManagementPath+p.NfInstanceId, nil, nil); err != nil {
			t.Fatal(err)
		}
		if nd := next(t, ch); nd.Event != "NF_DEREGISTERED" || nd.NfInstanceUri != instance {
			t.Fatalf("after deregistration: %+v", nd)
		}

		if _, err := cn.c.Do(context.Background(), "DELETE", cn.base+sbi.SubscriptionsPath+"/"+created.SubscriptionId, nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := cn.c.Do(context.Background(), "DELETE", cn.base+sbi.SubscriptionsPath+"/"+created.SubscriptionId, nil, nil); sbi.StatusOf(err) != 404 {
			t.Fatalf("second unsubscribe: %v, want 404", err)
		}
		if cn.subs.wantedBy(models.NotificationEventType_REGISTERED, &p) != 0 {
			t.Fatal("the subscription outlived its deletion")
		}
	})
}

func TestSubscriptionNeedsANotificationURI(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		cn := newClockedNRF(t, tr)
		sub := models.NrfNfManagementSubscriptionData{NfStatusNotificationUri: "/relative"}
		if _, err := cn.c.Do(context.Background(), "POST", cn.base+sbi.SubscriptionsPath, sub, nil); sbi.StatusOf(err) != 400 {
			t.Fatalf("subscription without an absolute URI: %v, want 400", err)
		}
	})
}

// The sbi client of a real NRF drops a peer as soon as the NRF suspends it.
func TestConsumerDropsASuspendedPeerAtOnce(t *testing.T) {
	tr := sbi.NewTCP()
	cn := newClockedNRF(t, tr)
	consumer := sbi.NewNRFClient(sbitest.Client(tr), cn.base, models.NrfNfManagementNfType_AMF)
	seen := make(chan struct{}, 16)
	notify := sbitest.Serve(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		consumer.NotifyHandler().ServeHTTP(w, r)
		seen <- struct{}{}
	}))
	consumer.NotifyAt(notify + sbi.NFStatusNotifyPath)
	a, b := udmProfile(), udmProfile()
	b.NfInstanceId = sbi.InstanceID(models.NrfNfManagementNfType_UDM, "127.0.0.2:29503")
	b.NfServices[0].ApiPrefix = "http://127.0.0.2:29503"
	cn.put(t, a)
	cn.now = cn.now.Add(3 * time.Second)
	cn.put(t, b)

	ctx := context.Background()
	bases := map[string]bool{}
	for range 4 {
		base, err := consumer.ServiceURI(ctx, models.NrfNfManagementNfType_UDM, models.ServiceName_NUDM_UEAU)
		if err != nil {
			t.Fatal(err)
		}
		bases[base] = true
	}
	if len(bases) != 2 {
		t.Fatalf("two UDMs registered, selections used %v", bases)
	}
	cn.now = cn.now.Add(4 * time.Second) // a silent for 7s, b for 4s
	cn.suspendSilent(cn.now)
	<-seen
	for range 4 {
		base, err := consumer.ServiceURI(ctx, models.NrfNfManagementNfType_UDM, models.ServiceName_NUDM_UEAU)
		if err != nil || base != "http://127.0.0.2:29503" {
			t.Fatalf("after a's suspension: %q %v, want only b", base, err)
		}
	}
}

func TestDiscoveryHonoursEveryParameter(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		cn := newClockedNRF(t, tr)
		plmn := models.PlmnId{Mcc: "208", Mnc: "93"}
		tai := func(tac string) models.Tai { return models.Tai{PlmnId: &plmn, Tac: tac} }
		internet := sbi.Profile("smf-internet", models.NrfNfManagementNfType_SMF, "127.0.0.2", 29502, plmn, models.ServiceName_NSMF_PDUSESSION)
		internet.SmfInfo = &models.SmfInfo{TaiList: []models.Tai{tai("000001")}, SNssaiSmfInfoList: []models.SnssaiSmfInfoItem{
			{SNssai: &models.ExtSnssai{Sst: 1}, DnnSmfInfoList: []models.DnnSmfInfoItem{{Dnn: "internet"}}}}}
		internet.Locality = "node-a"
		ims := sbi.Profile("smf-ims", models.NrfNfManagementNfType_SMF, "127.0.0.3", 29502, plmn, models.ServiceName_NSMF_PDUSESSION)
		ims.SmfInfo = &models.SmfInfo{TaiList: []models.Tai{tai("000002")}, SNssaiSmfInfoList: []models.SnssaiSmfInfoItem{
			{SNssai: &models.ExtSnssai{Sst: 1}, DnnSmfInfoList: []models.DnnSmfInfoItem{{Dnn: "ims"}}}}}
		ims.Locality = "node-b"
		onlyForAMF := sbi.Profile("smf-amf-only", models.NrfNfManagementNfType_SMF, "127.0.0.4", 29502, plmn, models.ServiceName_NSMF_PDUSESSION)
		onlyForAMF.AllowedNfTypes = []models.NrfNfManagementNfType{models.NrfNfManagementNfType_AMF}
		onlyForAMF.Locality = "node-b"
		for _, p := range []models.NrfNfManagementNfProfile{internet, ims, onlyForAMF} {
			cn.put(t, p)
		}
		smf := func(kv ...string) url.Values {
			q := url.Values{"target-nf-type": {"SMF"}}
			for i := 0; i < len(kv); i += 2 {
				q.Set(kv[i], kv[i+1])
			}
			return q
		}
		sorted := func(ids []string) []string { sort.Strings(ids); return ids }
		cases := []struct {
			name string
			q    url.Values
			want []string
		}{
			{"dnn", smf("dnn", "internet"), []string{"smf-amf-only", "smf-internet"}},
			{"dnn in another case", smf("dnn", "IMS"), []string{"smf-amf-only", "smf-ims"}},
			{"tai", smf("tai", `{"plmnId":{"mcc":"208","mnc":"93"},"tac":"000002"}`), []string{"smf-amf-only", "smf-ims"}},
			{"instance", smf("target-nf-instance-id", "smf-ims"), []string{"smf-ims"}},
			{"limit", smf("limit", "1"), []string{"smf-amf-only"}},
		}
		for _, tc := range cases {
			if got := sorted(cn.discovered(t, tc.q)); len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) ||
				(len(got) > 1 && got[1] != tc.want[1]) {
				t.Errorf("%s %v: %v, want %v", tc.name, tc.q, got, tc.want)
			}
		}
		// allowedNfTypes: an AUSF does not discover the AMF-only SMF.
		q := smf()
		q.Set("requester-nf-type", "AUSF")
		res, err := discover(t, cn.c, cn.base, q)
		if err != nil || len(res.NfInstances) != 2 {
			t.Fatalf("an AUSF discovered %d SMFs (%v), want the 2 not restricted to AMFs", len(res.NfInstances), err)
		}
		// preferred-locality: node-b first, node-a after with a worse priority.
		q = smf("preferred-locality", "node-b")
		q.Set("requester-nf-type", "AMF")
		res, err = discover(t, cn.c, cn.base, q)
		if err != nil || len(res.NfInstances) != 3 || res.NfInstances[2].NfInstanceId != "smf-internet" ||
			res.NfInstances[2].Priority <= res.NfInstances[0].Priority {
			t.Fatalf("preferred-locality node-b: %v %+v", err, res.NfInstances)
		}
	})
}

func TestDiscoveryRefusesWhatItCannotHonour(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		cn := newClockedNRF(t, tr)
		base := func() url.Values { return url.Values{"target-nf-type": {"UDM"}, "requester-nf-type": {"AMF"}} }
		cases := []struct {
			param, value string
		}{
			{"pgw-ind", "true"}, // a real TS 29.510 parameter this NRF does not support
			{"tai", `{"tac":"000001"}`},
			{"snssais", `[{"sst":1,"sd":"12"}]`},
			{"limit", "0"},
			{"target-nf-type", "udm"},
		}
		for _, tc := range cases {
			q := base()
			q.Set(tc.param, tc.value)
			_, err := discover(t, cn.c, cn.base, q)
			var pe *sbi.ProblemError
			if !errors.As(err, &pe) || pe.Status != 400 || pe.Problem.Cause != "INVALID_QUERY_PARAM" ||
				len(pe.Problem.InvalidParams) != 1 || pe.Problem.InvalidParams[0].Param != tc.param {
				t.Errorf("%s=%s: %v %+v, want 400 INVALID_QUERY_PARAM naming %s", tc.param, tc.value, err, pe, tc.param)
			}
		}
		_, err := discover(t, cn.c, cn.base, url.Values{})
		var pe *sbi.ProblemError
		if !errors.As(err, &pe) || pe.Problem.Cause != "MANDATORY_QUERY_PARAM_MISSING" || len(pe.Problem.InvalidParams) != 2 {
			t.Fatalf("no parameters: %v %+v, want both mandatory ones named", err, pe)
		}
		q := base()
		q.Set("requester-nf-instance-id", "amf-1") // says who asks: accepted
		if _, err := discover(t, cn.c, cn.base, q); err != nil {
			t.Fatalf("requester-nf-instance-id: %v", err)
		}
	})
}

// wantedBy counts the subscriptions notified of ev about p.
func (s *subscriptions) wantedBy(ev models.NotificationEventType, p *models.NrfNfManagementNfProfile) int {
	return len(s.wanting(ev, p))
}

// An NF whose profile the NRF no longer has (the NRF restarted, or removed
// it) learns so from its heartbeat's 404 and registers again.
func TestHeartbeatOfAnUnknownInstanceRegistersAgain(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		cn := newClockedNRF(t, tr)
		nfc := sbi.NewNRFClient(sbitest.Client(tr), cn.base, models.NrfNfManagementNfType_UDM)
		p := udmProfile()
		ctx := context.Background()
		if err := nfc.Register(ctx, p); err != nil {
			t.Fatal(err)
		}
		if nfc.HeartbeatPeriod() != 4*time.Second {
			t.Fatalf("heartbeat period %v, want the NRF's 4s", nfc.HeartbeatPeriod())
		}
		cn.reg.remove(p.NfInstanceId) // as after an NRF restart
		if err := nfc.Heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
		if got := cn.status(t, p.NfInstanceId); got != "REGISTERED" {
			t.Fatalf("after the heartbeat's 404 the profile is %q, want registered again", got)
		}
	})
}
