package xiohttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/nf/nrf"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/xio/xiohttp"
	"github.com/l25gc/l25gc/xio/xioproc"
)

func hybrids() []*xiohttp.Hybrid {
	return []*xiohttp.Hybrid{
		xiohttp.NewHybrid(xiohttp.NewMessageTransport(), sbi.NewTCP()),
		xiohttp.NewHybrid(xiohttp.NewSocketTransport(), sbi.NewTCP()),
	}
}

// A hybrid endpoint answers on this node's shared memory and on TCP at the
// same address, so tools and remote peers reach it too.
func TestHybridServesBothWays(t *testing.T) {
	for _, h := range hybrids() {
		t.Run(h.Name(), func(t *testing.T) {
			addr, _ := serve(t, h)
			for _, via := range []sbi.Transport{h, sbi.NewTCP()} {
				checkEcho(t, clientOf(t, via), addr)
			}
		})
	}
}

// A peer that only speaks TCP (another node) is reached over TCP, with the
// request body intact even when the caller's request cannot replay it.
func TestHybridFallsBackToTCPForPeersElsewhere(t *testing.T) {
	addr, _ := serve(t, sbi.NewTCP())
	for _, h := range hybrids() {
		t.Run(h.Name(), func(t *testing.T) {
			c := clientOf(t, h)
			checkEcho(t, c, addr)
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/nudm-sdm/v2/imsi-1/am-data",
				io.NopCloser(strings.NewReader(`{"no":"GetBody"}`)))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated || !strings.Contains(string(got), `{\"no\":\"GetBody\"}`) {
				t.Fatalf("status %d, body %s", resp.StatusCode, got)
			}
		})
	}
}

// Nobody at the address on either path: the caller gets the TCP refusal.
func TestHybridNobodyThere(t *testing.T) {
	addr := nextAddr()
	for _, h := range hybrids() {
		if _, err := (&http.Client{Transport: h.RoundTripper()}).Get("http://" + addr + "/x"); err == nil {
			t.Fatalf("%s: request to nobody succeeded", h.Name())
		}
	}
}

// fakeLocal stands for X-IO on this node in tests of the hybrid's choice
// of path: it serves the handlers bound to it in memory, refuses other
// addresses as X-IO does (ECONNREFUSED), and records every authority a
// request was tried at.
type fakeLocal struct {
	mu    sync.Mutex
	bound map[string]http.Handler
	tried []string
}

func newFakeLocal() *fakeLocal { return &fakeLocal{bound: map[string]http.Handler{}} }

func (f *fakeLocal) Name() string                    { return "xio" }
func (f *fakeLocal) RoundTripper() http.RoundTripper { return f }

func (f *fakeLocal) Serve(addr string, h http.Handler) (sbi.Server, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bound[addr] = h
	return fakeServer(addr), nil
}

func (f *fakeLocal) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.tried = append(f.tried, req.URL.Host)
	h := f.bound[req.URL.Host]
	f.mu.Unlock()
	if h == nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &net.OpError{Op: "dial", Net: "xio", Err: syscall.ECONNREFUSED}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

func (f *fakeLocal) triedAt(authority string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, a := range f.tried {
		if a == authority {
			n++
		}
	}
	return n
}

type fakeServer string

func (s fakeServer) Addr() string                 { return string(s) }
func (fakeServer) Shutdown(context.Context) error { return nil }

// answer says who answered and over which conn the request came.
func answer(who string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, who+" "+r.RemoteAddr)
	})
}

// get fetches url and returns the answer's body.
func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// discoveryOf answers any discovery with profiles, as an NRF would.
func discoveryOf(profiles ...models.NrfNfManagementNfProfile) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := models.SearchResult{ValidityPeriod: 60}
		for _, p := range profiles {
			var d models.NrfNfDiscoveryNfProfile
			b, _ := json.Marshal(p)
			json.Unmarshal(b, &d)
			res.NfInstances = append(res.NfInstances, d)
		}
		sbi.WriteJSON(w, http.StatusOK, res)
	})
}

// profileAt is the profile of an NF serving at base ("http://host:port")
// on the node named locality ("" for an NF without X-IO).
func profileAt(t *testing.T, nfType models.NrfNfManagementNfType, base, locality string) models.NrfNfManagementNfProfile {
	t.Helper()
	u, _ := url.Parse(base)
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	p := sbi.Profile(sbi.InstanceID(nfType, u.Host), nfType, u.Hostname(), port, models.PlmnId{Mcc: "208", Mnc: "93"},
		models.ServiceName_NUDM_SDM)
	p.Locality = locality
	return p
}

// The path per peer comes from the NRF: a peer whose profile has this
// node's locality is reached over X-IO; one elsewhere, or without a
// locality (an NF without X-IO), straight over TCP, X-IO untouched; a peer
// nobody described (the NRF itself, a callback URI) is tried over X-IO
// once and, served only elsewhere, reached over TCP for a while. Each
// request is counted under the path that carried it.
func TestHybridPathPerPeerFromNRFProfiles(t *testing.T) {
	local := newFakeLocal()
	h := xiohttp.NewHybrid(local, sbi.NewTCP())
	reg := prometheus.NewRegistry()
	m := sbi.NewMetrics(reg)
	h.Instrument(m)
	node := xiohttp.NewHybrid(local, sbi.NewTCP()) // NFs on this node serve on both
	here := "http://" + serveOn(t, node, answer("here"))
	elsewhere := "http://" + serveOn(t, sbi.NewTCP(), answer("elsewhere"))
	noXIO := "http://" + serveOn(t, sbi.NewTCP(), answer("tcp-only"))
	unknown := "http://" + serveOn(t, sbi.NewTCP(), answer("unknown"))
	nrf := serveOn(t, sbi.NewTCP(), discoveryOf(
		profileAt(t, models.NrfNfManagementNfType_UDM, here, h.Locality()),
		profileAt(t, models.NrfNfManagementNfType_UDM, elsewhere, "l25gc-xio:xio:another-host/l25gc"),
		profileAt(t, models.NrfNfManagementNfType_UDM, noXIO, "")))

	n := sbi.NewNRFClient(sbi.NewClient(h.RoundTripper(), m), "http://"+nrf, models.NrfNfManagementNfType_AMF)
	n.Locate(h)
	if _, err := n.Discover(context.Background(), models.NrfNfManagementNfType_UDM); err != nil {
		t.Fatal(err)
	}
	c := clientOf(t, h)
	for _, tc := range []struct{ base, want string }{
		{here, "here"}, {elsewhere, "elsewhere"}, {noXIO, "tcp-only"}, {unknown, "unknown"}, {unknown, "unknown"},
	} {
		if got := get(t, c, tc.base+"/x"); !strings.HasPrefix(got, tc.want+" ") {
			t.Fatalf("GET %s: %q, want %s's answer", tc.base, got, tc.want)
		}
	}
	for _, tc := range []struct {
		base  string
		tries int
	}{{"http://" + nrf, 1}, {here, 1}, {elsewhere, 0}, {noXIO, 0}, {unknown, 1}} {
		if n := local.triedAt(strings.TrimPrefix(tc.base, "http://")); n != tc.tries {
			t.Errorf("X-IO tried %d times at %s, want %d", n, tc.base, tc.tries)
		}
	}
	if xio, tcp := pathCount(t, reg, "xio"), pathCount(t, reg, "tcp"); xio != 1 || tcp != 5 {
		t.Errorf("requests counted: xio %v, tcp %v; want 1 and 5 (NRF, elsewhere, tcp-only, unknown twice)", xio, tcp)
	}
}

// clientOf is a client over tr whose idle conns close before the test's
// servers shut down (an h2c server otherwise waits for them).
func clientOf(t *testing.T, tr sbi.Transport) *http.Client {
	c := &http.Client{Transport: tr.RoundTripper()}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func serveOn(t *testing.T, tr sbi.Transport, h http.Handler) string {
	t.Helper()
	srv, err := tr.Serve("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv.Addr()
}

// pathCount reads l25gc_sbi_client_requests_total{path}.
func pathCount(t *testing.T, reg *prometheus.Registry, path string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "l25gc_sbi_client_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "path" && l.GetValue() == path {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no l25gc_sbi_client_requests_total{path=%q}", path)
	return 0
}

// An NF bound to the wildcard address is reached over X-IO at the address
// its profile advertises ("0.0.0.0:port"), not only over TCP.
func TestHybridWildcardBindIsServedOverXIO(t *testing.T) {
	srv, err := xiohttp.NewHybrid(xiohttp.NewMessageTransport(), sbi.NewTCP()).Serve("0.0.0.0:0", answer("nf"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	if !strings.HasPrefix(srv.Addr(), "0.0.0.0:") {
		t.Fatalf("served at %s, want 0.0.0.0:port", srv.Addr())
	}
	h := xiohttp.NewHybrid(xiohttp.NewMessageTransport(), sbi.NewTCP())
	if got := get(t, clientOf(t, h), "http://"+srv.Addr()+"/x"); !strings.HasPrefix(got, "nf xio-conn-") {
		t.Fatalf("answer %q, want one over X-IO", got)
	}
}

// node2Role is an NF on a second node: attached to another onvm manager
// ($L25GC_XIO_PREFIX), it serves at $XIOHTTP_ADDR over X-IO there and TCP,
// registers with the NRF at $XIOHTTP_NRF (on node 1: reached over TCP), and
// checks that its own request to an NF on node 1 goes over TCP.
func node2Role(ctx context.Context) error {
	h := xiohttp.NewHybrid(xiohttp.NewMessageTransport(), sbi.NewTCP())
	srv, err := h.Serve(os.Getenv("XIOHTTP_ADDR"), answer("node2"))
	if err != nil {
		return err
	}
	defer srv.Shutdown(context.Background())
	n := sbi.NewNRFClient(sbi.NewClient(h.RoundTripper(), nil), os.Getenv("XIOHTTP_NRF"), models.NrfNfManagementNfType_UDM)
	n.Locate(h)
	host, port, _ := net.SplitHostPort(srv.Addr())
	p, _ := strconv.Atoi(port)
	profile := sbi.Profile(sbi.InstanceID(models.NrfNfManagementNfType_UDM, srv.Addr()), models.NrfNfManagementNfType_UDM,
		host, p, models.PlmnId{Mcc: "208", Mnc: "93"}, models.ServiceName_NUDM_SDM)
	profile.Locality = h.Locality()
	if err := n.Register(ctx, profile); err != nil {
		return err
	}
	ausf, err := n.ServiceURI(ctx, models.NrfNfManagementNfType_AUSF, models.ServiceName_NAUSF_AUTH)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: h.RoundTripper()}).Get(ausf + "/x")
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(b), "node1 127.0.0.1:") {
		return fmt.Errorf("node 2's request to node 1: answer %q, want one over TCP", b)
	}
	xioproc.Ready()
	<-ctx.Done()
	return nil
}

// A core spanning two nodes: two onvm managers (two shared memories), the
// NRF and an AUSF on node 1 (this process), a UDM on node 2 (a child
// process on the second manager). Each NF registers its node as its
// locality; NFs reach peers on their node over X-IO and the others over
// TCP, found through the NRF. Node 1's X-IO also has a decoy bound at the
// UDM's address: a request to the UDM that touched X-IO would get it.
func TestCoreSpanningTwoNodes(t *testing.T) {
	if err := xioproc.EnsureHugepages(128); err != nil {
		t.Fatal(err)
	}
	prefix2 := xioproc.PrefixForNth(os.Getpid(), 2)
	mgr2, err := xioproc.Start(xioproc.RoleManager, xioproc.EnvPrefix+"="+prefix2)
	if err != nil {
		t.Fatalf("second onvm manager: %v", err)
	}
	t.Cleanup(func() {
		mgr2.Stop()
		xioproc.RemoveLeftovers(prefix2)
	})

	h := xiohttp.NewHybrid(xiohttp.NewMessageTransport(), sbi.NewTCP())
	reg := prometheus.NewRegistry()
	m := sbi.NewMetrics(reg)
	h.Instrument(m)
	nrfAddr := serveOn(t, h, realNRF(t))
	ausf := serveOn(t, h, answer("node1"))
	n := sbi.NewNRFClient(sbi.NewClient(h.RoundTripper(), m), "http://"+nrfAddr, models.NrfNfManagementNfType_AUSF)
	n.Locate(h)
	ausfProfile := profileAt(t, models.NrfNfManagementNfType_AUSF, "http://"+ausf, h.Locality())
	ausfProfile.NfServices[0].ServiceName = models.ServiceName_NAUSF_AUTH
	if err := n.Register(context.Background(), ausfProfile); err != nil {
		t.Fatal(err)
	}

	udm := freeTCPAddr(t)
	decoy, err := xiohttp.NewMessageTransport().Serve(udm, answer("decoy"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { decoy.Shutdown(context.Background()) })
	p2, err := xioproc.Start("node2", xioproc.EnvPrefix+"="+prefix2, "XIOHTTP_ADDR="+udm, "XIOHTTP_NRF=http://"+nrfAddr)
	if err != nil {
		t.Fatalf("NF on node 2: %v", err)
	}
	t.Cleanup(func() { p2.Stop() })

	base, err := n.ServiceURI(context.Background(), models.NrfNfManagementNfType_UDM, models.ServiceName_NUDM_SDM)
	if err != nil {
		t.Fatal(err)
	}
	c := clientOf(t, h)
	if got := get(t, c, base+"/x"); !strings.HasPrefix(got, "node2 127.0.0.1:") {
		t.Fatalf("node 1's request to the UDM on node 2: %q, want node 2's answer over TCP", got)
	}
	if got := get(t, c, "http://"+ausf+"/x"); !strings.HasPrefix(got, "node1 xio-conn-") {
		t.Fatalf("request to the AUSF on node 1: %q, want an answer over X-IO", got)
	}
	if tcp := pathCount(t, reg, "tcp"); tcp != 1 {
		t.Fatalf("%v requests over TCP, want 1 (to node 2)", tcp)
	}
}

// realNRF is the NRF of package nrf.
func realNRF(t *testing.T) http.Handler {
	t.Helper()
	n, err := nrf.New(&nf.Env{Config: config.Default(), Log: logging.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	return n.Handler()
}

// freeTCPAddr is a loopback address whose port the kernel just handed out.
func freeTCPAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
