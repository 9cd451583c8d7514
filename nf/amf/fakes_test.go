package amf

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/security"
)

// ---- fake N2 association ----

type msg struct {
	b      []byte
	stream uint16
}

type fakeConn struct {
	in     chan msg
	out    chan msg
	once   sync.Once
	closed chan struct{}
}

func newFakeConn() *fakeConn {
	return &fakeConn{in: make(chan msg, 64), out: make(chan msg, 256), closed: make(chan struct{})}
}

func (c *fakeConn) ReadMsg() ([]byte, uint16, error) {
	select {
	case m := <-c.in:
		return m.b, m.stream, nil
	case <-c.closed:
		return nil, 0, io.EOF
	}
}

func (c *fakeConn) WriteMsg(b []byte, stream uint16) error {
	select {
	case <-c.closed:
		return net.ErrClosed
	default:
	}
	c.out <- msg{append([]byte(nil), b...), stream}
	return nil
}

func (c *fakeConn) Close() error { c.once.Do(func() { close(c.closed) }); return nil }
func (c *fakeConn) RemoteAddr() net.Addr {
	return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 38412}
}
func (c *fakeConn) Streams() uint16 { return 4 }

// ---- fake SBI peers ----

type subscriber struct {
	k, opc []byte
	sqn    []byte
	nssai  []models.Snssai
}

// fakePeers plays AUSF (with real 5G-AKA from package security), UDM and PCF.
type fakePeers struct {
	mu         sync.Mutex
	subs       map[string]*subscriber // by SUPI
	pending    map[string]*pendingAuth
	resyncs    int
	uecm       []string
	purge      []string
	policies   map[string]string
	nextPolicy int
	nextAuth   int
}

type pendingAuth struct {
	supi string
	av   *security.AuthVector
	sn   string
}

func newFakePeers() *fakePeers {
	return &fakePeers{subs: map[string]*subscriber{}, pending: map[string]*pendingAuth{}, policies: map[string]string{}}
}

func supiOf(id string) string {
	if s, ok := nasx.NullSchemeSUPI(id); ok {
		return s
	}
	return id
}

func (p *fakePeers) Authenticate(_ context.Context, id, sn string, resync *models.ResynchronizationInfo) (AuthVector, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	supi := supiOf(id)
	sub, ok := p.subs[supi]
	if !ok {
		return AuthVector{}, &sbi.ProblemError{Status: 404, Problem: models.ProblemDetails{Cause: "USER_NOT_FOUND"}}
	}
	if resync != nil {
		rnd, _ := hex.DecodeString(resync.Rand)
		auts, _ := hex.DecodeString(resync.Auts)
		sqnMS, err := security.SQNFromAUTS(sub.k, sub.opc, rnd, auts)
		if err != nil {
			return AuthVector{}, &sbi.ProblemError{Status: 403, Problem: models.ProblemDetails{Cause: "AUTHENTICATION_REJECTED"}}
		}
		p.resyncs++
		sub.sqn = sqnMS
	}
	sub.sqn = incSQN(sub.sqn)
	p.nextAuth++
	rnd := make([]byte, 16)
	binary.BigEndian.PutUint64(rnd[8:], uint64(p.nextAuth))
	av, err := security.GenerateAuthVector(sub.k, sub.opc, sub.sqn, []byte{0x80, 0x00}, rnd, sn)
	if err != nil {
		return AuthVector{}, err
	}
	uri := fmt.Sprintf("http://ausf/nausf-auth/v1/ue-authentications/%d/5g-aka-confirmation", p.nextAuth)
	p.pending[uri] = &pendingAuth{supi: supi, av: av, sn: sn}
	return AuthVector{RAND: hex.EncodeToString(av.RAND), AUTN: hex.EncodeToString(av.AUTN),
		HXRESStar: hex.EncodeToString(security.HResStar(av.RAND, av.XRESStar)), ConfirmURI: uri}, nil
}

func incSQN(sqn []byte) []byte {
	v := binary.BigEndian.Uint64(append([]byte{0, 0}, sqn...)) + 1
	return binary.BigEndian.AppendUint64(nil, v)[2:]
}

func (p *fakePeers) ConfirmAuth(_ context.Context, uri, res string) (AuthConfirmation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.pending[uri]
	if a == nil {
		return AuthConfirmation{}, &sbi.ProblemError{Status: 404}
	}
	if hex.EncodeToString(a.av.XRESStar) != res {
		return AuthConfirmation{Success: false}, nil
	}
	return AuthConfirmation{Success: true, SUPI: a.supi, KSEAF: hex.EncodeToString(security.KSEAF(a.av.KAUSF, a.sn))}, nil
}

func (p *fakePeers) RegisterUECM(_ context.Context, supi string, _ models.Amf3GppAccessRegistration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.uecm = append(p.uecm, supi)
	return nil
}

func (p *fakePeers) DeregisterUECM(_ context.Context, supi string, _ models.Guami) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.purge = append(p.purge, supi)
	return nil
}

func (p *fakePeers) AMData(_ context.Context, supi string, _ models.PlmnId) (models.AccessAndMobilitySubscriptionData, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.subs[supi]
	return models.AccessAndMobilitySubscriptionData{Nssai: &models.Nssai{DefaultSingleNssais: s.nssai},
		SubscribedUeAmbr: &models.AmbrRm{Uplink: "1 Gbps", Downlink: "2 Gbps"}}, nil
}

func (p *fakePeers) SubscribeSDM(context.Context, string, models.SdmSubscription) error { return nil }

func (p *fakePeers) CreateAMPolicy(_ context.Context, r models.PcfAmPolicyControlPolicyAssociationRequest) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextPolicy++
	id := hex.EncodeToString([]byte{byte(p.nextPolicy)})
	p.policies[id] = r.Supi
	return id, nil
}

func (p *fakePeers) DeleteAMPolicy(_ context.Context, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.policies, id)
	return nil
}

// ---- AMF under test ----

type harness struct {
	t     *testing.T
	amf   *NF
	peers *fakePeers
	reg   *prometheus.Registry
	cfg   *config.Config
}

func newHarness(t *testing.T, edit func(*config.Config)) *harness {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir() // the UE store (persist.go) lives there
	if edit != nil {
		edit(cfg)
	}
	reg := prometheus.NewRegistry()
	env := &nf.Env{Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Registry: reg}
	peers := newFakePeers()
	a, err := NewWithOptions(env, Options{Consumer: peers, Limit: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	return &harness{t: t, amf: a, peers: peers, reg: reg, cfg: cfg}
}

// counter reads one sample of a metric family with the given labels.
func (h *harness) metric(name string, labels map[string]string) float64 {
	h.t.Helper()
	fams, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				return value(m)
			}
		}
	}
	return 0
}

// wantMetric fails the test unless the metric with labels has value want;
// what says what the number counts.
func (h *harness) wantMetric(name string, labels map[string]string, want float64, what string) {
	h.t.Helper()
	if v := h.metric(name, labels); v != want {
		h.t.Fatalf("%s: %s%v = %v, want %v", what, name, labels, v, want)
	}
}

func matches(m *dto.Metric, labels map[string]string) bool {
	for k, v := range labels {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// waitIdle waits until n UEs are parked in CM-IDLE: the release completes
// run on the UE's key, which the test cannot otherwise observe.
func (h *harness) waitIdle(n int) {
	h.t.Helper()
	h.eventually(fmt.Sprintf("UEs in CM-IDLE reach %d", n), func() bool {
		h.amf.ues.mu.Lock()
		defer h.amf.ues.mu.Unlock()
		return len(h.amf.ues.idle) == n
	})
}

// eventually waits for what runs on a UE's own key (the bound only stops a
// failing test; nothing asserts on time).
func (h *harness) eventually(what string, ok func() bool) {
	h.t.Helper()
	for i := 0; i < 10000; i++ {
		if ok() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	h.t.Fatalf("never: %s", what)
}
