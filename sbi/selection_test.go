package sbi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// scriptedNRF answers every discovery with what answer returns for its
// query, counts the discoveries per query string and records
// subscriptions.
type scriptedNRF struct {
	mu      sync.Mutex
	answer  func(q url.Values) []models.NrfNfDiscoveryNfProfile
	asked   map[string]int
	subs    []map[string]any
	total   atomic.Int32
	putBody chan models.NrfNfManagementNfProfile
}

func newScriptedNRF(answer func(q url.Values) []models.NrfNfDiscoveryNfProfile) *scriptedNRF {
	return &scriptedNRF{answer: answer, asked: map[string]int{}}
}

func (f *scriptedNRF) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == sbi.SubscriptionsPath:
		var sub map[string]any
		_ = json.NewDecoder(r.Body).Decode(&sub)
		f.mu.Lock()
		f.subs = append(f.subs, sub)
		f.mu.Unlock()
		sbi.WriteJSON(w, http.StatusCreated, sub)
	case r.Method == http.MethodGet && r.URL.Path == sbi.NFDiscoveryPath:
		f.total.Add(1)
		f.mu.Lock()
		f.asked[r.URL.RawQuery]++
		f.mu.Unlock()
		time.Sleep(2 * time.Millisecond) // let concurrent callers pile up
		sbi.WriteJSON(w, http.StatusOK, models.SearchResult{ValidityPeriod: 60, NfInstances: f.answer(r.URL.Query())})
	default:
		sbi.WriteProblem(w, http.StatusNotFound, "RESOURCE_NOT_FOUND", r.URL.Path)
	}
}

func (f *scriptedNRF) subscriptions() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.subs...)
}

// udm is a UDM profile serving nudm-uecm at base, ranked by prio, capacity, load.
func udm(id, base string, prio, capacity, load int32) models.NrfNfDiscoveryNfProfile {
	return models.NrfNfDiscoveryNfProfile{NfInstanceId: id, NfType: "UDM", NfStatus: "REGISTERED",
		Priority: prio, Capacity: capacity, Load: load,
		NfServices: []models.NrfNfDiscoveryNfService{{ServiceName: models.ServiceName_NUDM_UECM, ApiPrefix: base}}}
}

var uecm = sbi.Query{Target: models.NrfNfManagementNfType_UDM, Services: []models.ServiceName{models.ServiceName_NUDM_UECM}}

func TestDiscoveryIsCachedPerWholeQuery(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		fake := newScriptedNRF(func(url.Values) []models.NrfNfDiscoveryNfProfile {
			return []models.NrfNfDiscoveryNfProfile{udm("a", "http://127.0.0.9:1", 0, 0, 0)}
		})
		n := sbi.NewNRFClient(sbitest.Client(tr), sbitest.Serve(t, tr, fake), models.NrfNfManagementNfType_AMF)
		slice := uecm
		slice.SNSSAIs = []models.Snssai{{Sst: 1, Sd: "010203"}}
		other := slice
		other.SNSSAIs = []models.Snssai{{Sst: 1, Sd: "112233"}}
		withDNN, withTAI, there, one := slice, slice, slice, slice
		withDNN.DNN = "internet"
		withTAI.TAI = &models.Tai{PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}, Tac: "000001"}
		there.PreferredLocality = "node-b"
		one.TargetInstanceID = "a"
		queries := []sbi.Query{uecm, slice, other, withDNN, withTAI, there, one}

		var wg sync.WaitGroup
		for range 10 {
			for _, q := range queries {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := n.Search(context.Background(), q); err != nil {
						t.Error(err)
					}
				}()
			}
		}
		wg.Wait()
		if got := fake.total.Load(); got != int32(len(queries)) {
			t.Fatalf("%d distinct queries asked 10 times each reached the NRF %d times, want once each", len(queries), got)
		}
		want := url.Values{"target-nf-type": {"UDM"}, "requester-nf-type": {"AMF"}, "service-names": {"nudm-uecm"},
			"snssais": {`[{"sst":1,"sd":"010203"}]`}, "dnn": {"internet"}}
		if fake.asked[want.Encode()] != 1 {
			t.Fatalf("the NRF was not asked %s; it was asked %v", want.Encode(), fake.asked)
		}
	})
}

// selectN selects q n times and counts the base URIs chosen.
func selectN(t *testing.T, n *sbi.NRFClient, q sbi.Query, times int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for range times {
		base, err := n.Select(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		got[base]++
	}
	return got
}

func TestSelectionByPriorityThenCapacityThenLoad(t *testing.T) {
	profiles := []models.NrfNfDiscoveryNfProfile{
		udm("low-priority", "http://10.0.0.1:1", 2, 100, 0),
		udm("small", "http://10.0.0.2:1", 1, 10, 0),
		udm("busy", "http://10.0.0.3:1", 1, 50, 90),
		udm("best", "http://10.0.0.4:1", 1, 50, 10),
	}
	// A service's own priority overrides its profile's (TS 29.510 6.1.6.2.3).
	override := udm("service-says-3", "http://10.0.0.5:1", 0, 100, 0)
	override.NfServices[0].Priority = 3
	profiles = append(profiles, override)
	fake := newScriptedNRF(func(url.Values) []models.NrfNfDiscoveryNfProfile { return profiles })
	tr := sbi.NewTCP()
	n := sbi.NewNRFClient(sbitest.Client(tr), sbitest.Serve(t, tr, fake), models.NrfNfManagementNfType_AMF)

	// Each failed instance is skipped: the order of failover is the ranking.
	var order []string
	for range profiles {
		base, err := n.Select(context.Background(), uecm)
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, base)
		if _, ok := n.Failover(context.Background(), base+"/nudm-uecm/v1/x"); !ok && len(order) < len(profiles) {
			t.Fatalf("no failover from %s after %v", base, order)
		}
	}
	want := []string{"http://10.0.0.4:1", "http://10.0.0.3:1", "http://10.0.0.2:1", "http://10.0.0.1:1", "http://10.0.0.5:1"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("selection order %v, want %v (priority, then capacity, then load)", order, want)
	}
}

func TestEqualInstancesTakeTurns(t *testing.T) {
	fake := newScriptedNRF(func(url.Values) []models.NrfNfDiscoveryNfProfile {
		return []models.NrfNfDiscoveryNfProfile{udm("a", "http://10.0.0.1:1", 1, 10, 5), udm("b", "http://10.0.0.2:1", 1, 10, 5),
			udm("c", "http://10.0.0.3:1", 1, 10, 5), udm("worse", "http://10.0.0.4:1", 1, 10, 6)}
	})
	tr := sbi.NewTCP()
	n := sbi.NewNRFClient(sbitest.Client(tr), sbitest.Serve(t, tr, fake), models.NrfNfManagementNfType_AMF)
	got := selectN(t, n, uecm, 30)
	want := map[string]int{"http://10.0.0.1:1": 10, "http://10.0.0.2:1": 10, "http://10.0.0.3:1": 10}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("30 selections among three equal instances and a more loaded one: %v, want %v", got, want)
	}
}

// peers are two equal UDMs, one live (it echoes the request) and one dead,
// and an NRF client (whose SBI client fails over) that discovers them.
type peers struct {
	live, dead string
	served     atomic.Int32 // requests the live one served
	n          *sbi.NRFClient
	c          *sbi.Client
}

func liveAndDead(t *testing.T, tr sbi.Transport) *peers {
	p := &peers{dead: sbitest.Unserved(t, tr)}
	p.live = sbitest.Serve(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.served.Add(1)
		body, _ := io.ReadAll(r.Body)
		sbi.WriteJSON(w, http.StatusOK, map[string]string{"echo": string(body), "path": r.URL.Path})
	}))
	fake := newScriptedNRF(func(url.Values) []models.NrfNfDiscoveryNfProfile {
		return []models.NrfNfDiscoveryNfProfile{udm("dead", p.dead, 1, 0, 0), udm("live", p.live, 1, 0, 0)}
	})
	p.c = sbitest.Client(tr)
	p.n = sbi.NewNRFClient(p.c, sbitest.Serve(t, tr, fake), models.NrfNfManagementNfType_AMF)
	p.c.FailOverWith(p.n)
	return p
}

func TestCallsFailOverToALiveInstance(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		p := liveAndDead(t, tr)
		n, c, dead, served := p.n, p.c, p.dead, &p.served

		for i := range 6 {
			base, err := n.Select(context.Background(), uecm)
			if err != nil {
				t.Fatal(err)
			}
			var out map[string]string
			if _, err := c.Do(context.Background(), http.MethodPut, base+"/nudm-uecm/v1/imsi-1", map[string]int{"n": i}, &out); err != nil {
				t.Fatalf("call %d to %s: %v", i, base, err)
			}
			if out["path"] != "/nudm-uecm/v1/imsi-1" || out["echo"] != fmt.Sprintf(`{"n":%d}`, i) {
				t.Fatalf("call %d arrived as %v", i, out)
			}
			if i > 0 && base == dead {
				t.Fatalf("call %d: the instance that did not answer was selected again", i)
			}
		}
		if served.Load() != 6 {
			t.Fatalf("the live instance served %d of 6 calls", served.Load())
		}
	})
}

// notify posts a status notification to n's handler as the NRF would.
func notify(t *testing.T, n *sbi.NRFClient, nd any) {
	t.Helper()
	b, _ := json.Marshal(nd)
	rec := httptest.NewRecorder()
	n.NotifyHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, sbi.NFStatusNotifyPath, bytes.NewReader(b)))
	if rec.Code != http.StatusNoContent {
		t.Fatalf("notification answered %d: %s", rec.Code, rec.Body)
	}
}

func instanceURI(id string) string { return "http://127.0.0.1:29510" + sbi.NFManagementPath + id }

// listingNRF is an NRF whose discovery answers with what the test lists
// (a and b at first; set changes it) and an AMF's client of it.
func listingNRF(t *testing.T) (n *sbi.NRFClient, fake *scriptedNRF, set func(...models.NrfNfDiscoveryNfProfile)) {
	var mu sync.Mutex
	registered := []models.NrfNfDiscoveryNfProfile{udm("a", "http://10.0.0.1:1", 0, 0, 0), udm("b", "http://10.0.0.2:1", 0, 0, 0)}
	fake = newScriptedNRF(func(url.Values) []models.NrfNfDiscoveryNfProfile {
		mu.Lock()
		defer mu.Unlock()
		return registered
	})
	tr := sbi.NewTCP()
	n = sbi.NewNRFClient(sbitest.Client(tr), sbitest.Serve(t, tr, fake), models.NrfNfManagementNfType_AMF)
	return n, fake, func(p ...models.NrfNfDiscoveryNfProfile) {
		mu.Lock()
		defer mu.Unlock()
		registered = p
	}
}

func TestNotificationsUpdateTheCacheAtOnce(t *testing.T) {
	n, fake, set := listingNRF(t)
	if got := selectN(t, n, uecm, 4); len(got) != 2 {
		t.Fatalf("selections %v, want both instances", got)
	}

	// Suspended (TS 29.510 5.2.2.3.2, notified as a profile change): gone
	// from the cache at once, without asking the NRF.
	notify(t, n, map[string]any{"event": "NF_PROFILE_CHANGED", "nfInstanceUri": instanceURI("a"),
		"profileChanges": []map[string]any{{"op": "REPLACE", "path": "/nfStatus", "newValue": "SUSPENDED"}}})
	if got := selectN(t, n, uecm, 4); got["http://10.0.0.1:1"] != 0 {
		t.Fatalf("after a's suspension: %v", got)
	}
	notify(t, n, map[string]any{"event": "NF_DEREGISTERED", "nfInstanceUri": instanceURI("b")})
	set(udm("c", "http://10.0.0.3:1", 0, 0, 0))
	asked := fake.total.Load()
	if got := selectN(t, n, uecm, 2); got["http://10.0.0.3:1"] != 2 {
		t.Fatalf("after every known instance left, selections %v, want the one the NRF lists now", got)
	}
	if fake.total.Load() != asked+1 {
		t.Fatalf("the NRF was asked %d times after the cache emptied, want once", fake.total.Load()-asked)
	}

	// A new instance registered: the next selection asks the NRF and finds it.
	set(udm("c", "http://10.0.0.3:1", 0, 0, 0), udm("d", "http://10.0.0.4:1", 0, 0, 0))
	p := models.NrfNfManagementNfProfile{NfInstanceId: "d", NfType: "UDM", NfStatus: "REGISTERED"}
	notify(t, n, map[string]any{"event": "NF_REGISTERED", "nfInstanceUri": instanceURI("d"), "nfProfile": p})
	if got := selectN(t, n, uecm, 4); got["http://10.0.0.4:1"] != 2 {
		t.Fatalf("after d registered: %v, want d in turn", got)
	}
}

func TestForgetsAProfileTheNRFNoLongerLists(t *testing.T) {
	n, _, set := listingNRF(t)
	now := time.Now()
	n.SetClock(func() time.Time { return now })
	selectN(t, n, uecm, 2)
	set(udm("b", "http://10.0.0.2:1", 0, 0, 0))
	now = now.Add(61 * time.Second) // past the validity period
	if got := selectN(t, n, uecm, 4); got["http://10.0.0.1:1"] != 0 {
		t.Fatalf("after the NRF dropped a: %v", got)
	}
}

func TestDiscoverySubscribesOncePerNFType(t *testing.T) {
	fake := newScriptedNRF(func(url.Values) []models.NrfNfDiscoveryNfProfile {
		return []models.NrfNfDiscoveryNfProfile{udm("a", "http://10.0.0.1:1", 0, 0, 0)}
	})
	tr := sbi.NewTCP()
	n := sbi.NewNRFClient(sbitest.Client(tr), sbitest.Serve(t, tr, fake), models.NrfNfManagementNfType_AMF)
	n.NotifyAt("http://127.0.0.1:29518" + sbi.NFStatusNotifyPath)
	other := uecm
	other.DNN = "internet"
	for _, q := range []sbi.Query{uecm, other, uecm} {
		if _, err := n.Search(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	subs := fake.subscriptions()
	if len(subs) != 1 {
		t.Fatalf("%d subscriptions for one NF type, want 1: %v", len(subs), subs)
	}
	cond, _ := subs[0]["subscrCond"].(map[string]any)
	if subs[0]["nfStatusNotificationUri"] != "http://127.0.0.1:29518"+sbi.NFStatusNotifyPath || cond["nfType"] != "UDM" ||
		len(subs[0]["reqNotifEvents"].([]any)) != 3 {
		t.Fatalf("subscription %v, want UDM status to this NF's notification URI", subs[0])
	}
}

// heartbeatNRF registers with a 7 s heartBeatTimer and forgets instances on
// demand, like a restarted NRF.
type heartbeatNRF struct {
	mu      sync.Mutex
	known   bool
	puts    int
	patches []string
}

func (f *heartbeatNRF) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		var p models.NrfNfManagementNfProfile
		_ = json.NewDecoder(r.Body).Decode(&p)
		p.HeartBeatTimer = 7
		f.known, f.puts = true, f.puts+1
		sbi.WriteJSON(w, http.StatusCreated, p)
	case http.MethodPatch:
		body, _ := io.ReadAll(r.Body)
		f.patches = append(f.patches, r.Header.Get("Content-Type")+" "+string(body))
		if !f.known {
			sbi.WriteProblem(w, http.StatusNotFound, "RESOURCE_NOT_FOUND", r.URL.Path)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func TestHeartbeatAndRegistrationAgainAfterNRFRestart(t *testing.T) {
	fake := &heartbeatNRF{}
	tr := sbi.NewTCP()
	n := sbi.NewNRFClient(sbitest.Client(tr), sbitest.Serve(t, tr, fake), models.NrfNfManagementNfType_UDM)
	p := sbi.Profile("udm-1", models.NrfNfManagementNfType_UDM, "127.0.0.1", 29503, models.PlmnId{Mcc: "208", Mnc: "93"})
	ctx := context.Background()
	if err := n.Register(ctx, p); err != nil {
		t.Fatal(err)
	}
	if n.HeartbeatPeriod() != 7*time.Second {
		t.Fatalf("heartbeat period %v, want the 7s the NRF assigned", n.HeartbeatPeriod())
	}
	if err := n.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	fake.mu.Lock()
	fake.known = false // the NRF restarted
	fake.mu.Unlock()
	if err := n.Heartbeat(ctx); err != nil {
		t.Fatalf("heartbeat to an NRF that forgot us: %v", err)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	want := `application/json-patch+json [{"op":"replace","path":"/nfStatus","value":"REGISTERED"}]`
	if len(fake.patches) != 2 || fake.patches[0] != want {
		t.Fatalf("heartbeats %q, want two of %q (TS 29.510 5.2.2.3.2)", fake.patches, want)
	}
	if fake.puts != 2 {
		t.Fatalf("%d registrations, want a second one after the 404", fake.puts)
	}
}

func TestKeepAliveSendsHeartbeatsUntilCancelled(t *testing.T) {
	fake := &heartbeatNRF{}
	tr := sbi.NewTCP()
	n := sbi.NewNRFClient(sbitest.Client(tr), sbitest.Serve(t, tr, fake), models.NrfNfManagementNfType_UDM)
	ctx, cancel := context.WithCancel(context.Background())
	// Before registration there is no period: KeepAlive returns at once.
	n.KeepAlive(ctx, nil)
	cancel()
	if err := n.Register(context.Background(), sbi.Profile("udm-1", models.NrfNfManagementNfType_UDM, "127.0.0.1", 29503,
		models.PlmnId{Mcc: "208", Mnc: "93"})); err != nil {
		t.Fatal(err)
	}
	n.KeepAlive(ctx, func(err error) { t.Errorf("heartbeat failed: %v", err) }) // cancelled: returns
}

// A live instance whose connection once broke (a transient failure) is not
// lost when the other instance is dead: calls reach it through the other's
// failure, and then go to it first.
func TestATransientFailureDoesNotLoseTheLastLiveInstance(t *testing.T) {
	p := liveAndDead(t, sbi.NewTCP())
	n, c, live, dead, served := p.n, p.c, p.live, p.dead, &p.served
	ctx := context.Background()
	for range 2 { // both instances picked once, so both can fail over
		if _, err := n.Select(ctx, uecm); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := n.Failover(ctx, dead+"/x"); !ok {
		t.Fatal("no failover from the dead instance")
	}
	if _, ok := n.Failover(ctx, live+"/x"); !ok { // the live one's connection broke once
		t.Fatal("no failover from the live instance")
	}
	for i := range 4 {
		base, err := n.Select(ctx, uecm)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do(ctx, http.MethodGet, base+"/nudm-uecm/v1/x", nil, nil); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if served.Load() != 4 {
		t.Fatalf("the live instance served %d of 4 calls", served.Load())
	}
}
