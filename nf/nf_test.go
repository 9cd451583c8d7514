package nf_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
)

// nodeTCP is TCP posing as a transport that tells peers on its node from
// the rest (sbi.NodeTransport, as X-IO's hybrid does).
type nodeTCP struct {
	*sbi.TCP
	mu           sync.Mutex
	peers        map[string]bool
	instrumented bool
}

func (n *nodeTCP) Locality() string { return "node-1" }

func (n *nodeTCP) PeersOnNode(p map[string]bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.peers = p
}

func (n *nodeTCP) Instrument(*sbi.Metrics) { n.instrumented = true }

// fakeNRF records registered profiles and answers discovery with a UDM on
// node-1 and one on node-2.
type fakeNRF struct {
	registered chan models.NrfNfManagementNfProfile
}

func (f *fakeNRF) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPut:
		var p models.NrfNfManagementNfProfile
		if !sbi.DecodeJSON(w, r, &p) {
			return
		}
		f.registered <- p
		sbi.WriteJSON(w, http.StatusCreated, p)
	case http.MethodGet:
		udm := func(port int32, locality string) models.NrfNfDiscoveryNfProfile {
			return models.NrfNfDiscoveryNfProfile{NfType: "UDM", Locality: locality,
				NfServices: []models.NrfNfDiscoveryNfService{{ServiceName: models.ServiceName_NUDM_SDM,
					IpEndPoints: []models.IpEndPoint{{Ipv4Address: "127.0.0.1", Port: port}}}}}
		}
		sbi.WriteJSON(w, http.StatusOK, models.SearchResult{ValidityPeriod: 60,
			NfInstances: []models.NrfNfDiscoveryNfProfile{udm(1001, "node-1"), udm(1002, "node-2")}})
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// withNRF serves nrf over TCP until the test ends and returns the default
// config pointing at it.
func withNRF(t *testing.T, nrf http.Handler) *config.Config {
	t.Helper()
	srv, err := sbi.NewTCP().Serve("127.0.0.1:0", nrf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	cfg := config.Default()
	_, port, _ := net.SplitHostPort(srv.Addr())
	cfg.NRF.SBIPort, _ = strconv.Atoi(port)
	return cfg
}

type function struct {
	profile models.NrfNfManagementNfProfile
}

func (f function) Handler() http.Handler                    { return http.NewServeMux() }
func (f function) Profile() models.NrfNfManagementNfProfile { return f.profile }
func (function) Start(context.Context) error                { return nil }
func (function) Stop(context.Context)                       {}

// An NF whose transport knows its node registers that node as its
// profile's locality (TS 29.510 6.1.6.2.2), and its discoveries tell the
// transport which peers share the node.
func TestNFOnANodeRegistersItsLocalityAndLocatesPeers(t *testing.T) {
	nrf := &fakeNRF{registered: make(chan models.NrfNfManagementNfProfile, 1)}
	cfg := withNRF(t, nrf)

	tr := &nodeTCP{TCP: sbi.NewTCP()}
	env := nf.NewEnv(cfg, logging.Discard(), tr, models.NrfNfManagementNfType_AUSF)
	if !tr.instrumented {
		t.Fatal("the transport does not count requests per path in the NF's metrics")
	}
	profile := sbi.Profile("a1", models.NrfNfManagementNfType_AUSF, "127.0.0.1", 29509, env.PLMN(), models.ServiceName_NAUSF_AUTH)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- nf.Run(ctx, env, function{profile}, "127.0.0.1:0", "") }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		env.Client.HTTP().CloseIdleConnections() // the NRF's shutdown would wait for them
	}()
	select {
	case p := <-nrf.registered:
		if p.Locality != "node-1" {
			b, _ := json.Marshal(p)
			t.Fatalf("registered %s, want locality node-1", b)
		}
	case <-time.After(10 * time.Second): // a bound on a hang
		t.Fatal("the NF did not register")
	}
	if _, err := env.NRF.Discover(context.Background(), models.NrfNfManagementNfType_UDM); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.peers) != 2 || !tr.peers["127.0.0.1:1001"] || tr.peers["127.0.0.1:1002"] {
		t.Fatalf("peers located %v, want 127.0.0.1:1001 here and 127.0.0.1:1002 elsewhere", tr.peers)
	}
}

// lifecycleNRF assigns a one-second heartbeat, answers discovery with no
// one and passes on the heartbeats and subscriptions it receives.
type lifecycleNRF struct {
	heartbeats    chan string
	subscriptions chan string
}

func (f *lifecycleNRF) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPut:
		var p models.NrfNfManagementNfProfile
		if !sbi.DecodeJSON(w, r, &p) {
			return
		}
		p.HeartBeatTimer = 1
		sbi.WriteJSON(w, http.StatusCreated, p)
	case r.Method == http.MethodPatch:
		f.heartbeats <- r.URL.Path
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && r.URL.Path == sbi.SubscriptionsPath:
		var sub struct{ NfStatusNotificationUri string }
		if !sbi.DecodeJSON(w, r, &sub) {
			return
		}
		f.subscriptions <- sub.NfStatusNotificationUri
		sbi.WriteJSON(w, http.StatusCreated, sub)
	case r.Method == http.MethodGet:
		sbi.WriteJSON(w, http.StatusOK, models.SearchResult{ValidityPeriod: 60})
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func await(t *testing.T, ch <-chan string, what string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second): // a bound on a hang
		t.Fatalf("no %s", what)
	}
	return ""
}

// Every NF sends heartbeats at the period the NRF assigned (TS 29.510
// 5.2.2.3.2), subscribes to the types it discovers and serves the NRF's
// notifications at the URI it subscribed with (5.2.2.5, 5.2.2.6).
func TestNFSendsHeartbeatsAndServesStatusNotifications(t *testing.T) {
	nrf := &lifecycleNRF{heartbeats: make(chan string, 16), subscriptions: make(chan string, 1)}
	cfg := withNRF(t, nrf)
	env := nf.NewEnv(cfg, logging.Discard(), sbi.NewTCP(), models.NrfNfManagementNfType_AUSF)
	sbiPort := freePort(t)
	profile := sbi.Profile("a1", models.NrfNfManagementNfType_AUSF, "127.0.0.1", sbiPort, env.PLMN(), models.ServiceName_NAUSF_AUTH)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- nf.Run(ctx, env, function{profile}, net.JoinHostPort("127.0.0.1", strconv.Itoa(sbiPort)), "")
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		env.Client.HTTP().CloseIdleConnections()
	}()

	if path := await(t, nrf.heartbeats, "heartbeat"); path != sbi.NFManagementPath+"a1" {
		t.Fatalf("heartbeat to %s", path)
	}
	_, _ = env.NRF.Discover(context.Background(), models.NrfNfManagementNfType_UDM)
	uri := await(t, nrf.subscriptions, "subscription")
	if uri != "http://127.0.0.1:"+strconv.Itoa(sbiPort)+sbi.NFStatusNotifyPath {
		t.Fatalf("subscribed with notification URI %s", uri)
	}
	nd := models.NrfNfManagementNotificationData{Event: models.NotificationEventType_DEREGISTERED,
		NfInstanceUri: cfg.NRFURI() + sbi.NFManagementPath + "udm-1"}
	if _, err := env.Client.Do(context.Background(), http.MethodPost, uri, nd, nil); err != nil {
		t.Fatalf("notification to the NF: %v", err)
	}
}
