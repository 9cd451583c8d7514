package amf

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/sbi"
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

// ---- fake NAS crypto (test only: an HMAC stands in for NIA2, no ciphering) ----

type fakeCrypto struct{}

func kdf(key []byte, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, key)
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

func (fakeCrypto) KAMF(kseaf []byte, supi string, abba []byte) ([]byte, error) {
	return kdf(kseaf, []byte(supi), abba), nil
}

func (fakeCrypto) KgNB(kamf []byte, ul uint32) ([]byte, error) {
	return kdf(kamf, binary.BigEndian.AppendUint32(nil, ul)), nil
}

func (fakeCrypto) NewNASContext(kamf []byte, ea, ia uint8) (NASContext, error) {
	return &fakeNAS{key: kdf(kamf, []byte{ea, ia}), out: 1, inDir: 0}, nil
}

// fakeNAS: out/inDir are the directions it protects / verifies (1 = downlink).
type fakeNAS struct {
	key        []byte
	out, inDir byte
	outCount   uint32
	inCount    int64
	haveIn     bool
}

func (f *fakeNAS) mac(count uint32, dir byte, body []byte) []byte {
	return kdf(f.key, binary.BigEndian.AppendUint32(nil, count), []byte{dir}, body)[:4]
}

func (f *fakeNAS) Protect(plain []byte, sht uint8) ([]byte, error) {
	sqn := byte(f.outCount)
	body := append([]byte{sqn}, plain...)
	out := append([]byte{0x7e, sht}, f.mac(f.outCount, f.out, body)...)
	f.outCount++
	return append(out, body...), nil
}

func (f *fakeNAS) Unprotect(pdu []byte) ([]byte, error) {
	if len(pdu) < 8 {
		return nil, errors.New("short")
	}
	count := uint32(pdu[6]) // the fake never wraps SQN in these tests
	if f.haveIn && int64(count) <= f.inCount {
		return nil, errors.New("replay")
	}
	if !hmac.Equal(pdu[2:6], f.mac(count, f.inDir, pdu[6:])) {
		return nil, errors.New("bad MAC")
	}
	f.inCount, f.haveIn = int64(count), true
	return pdu[7:], nil
}

func (f *fakeNAS) ULCount() uint32 { return uint32(f.inCount) }

// ueSide turns a network-side fake context into the UE's mirror image.
func ueSide(c NASContext) *fakeNAS {
	f := c.(*fakeNAS)
	return &fakeNAS{key: f.key, out: 0, inDir: 1}
}

// ---- fake SBI peers ----

type subscriber struct {
	k     []byte
	nssai []models.Snssai
}

type fakePeers struct {
	mu          sync.Mutex
	subs        map[string]subscriber // by SUPI
	pending     map[string]string     // confirm URI -> SUPI
	rands       map[string][]byte     // confirm URI -> RAND
	resyncs     int
	uecm, purge []string
	policies    map[string]string
	nextPolicy  int
}

func newFakePeers() *fakePeers {
	return &fakePeers{subs: map[string]subscriber{}, pending: map[string]string{}, rands: map[string][]byte{},
		policies: map[string]string{}}
}

// resStar and kseaf are test stand-ins of TS 33.501 A.4 / A.6 shared with the test UE.
func resStar(k, rand []byte) []byte { return kdf(k, []byte("res*"), rand)[:16] }
func kseafOf(k, rand []byte) []byte { return kdf(k, []byte("kseaf"), rand) }

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
	if _, ok := p.subs[supi]; !ok {
		return AuthVector{}, &sbi.ProblemError{Status: 404, Problem: models.ProblemDetails{Cause: "USER_NOT_FOUND"}}
	}
	if resync != nil {
		p.resyncs++
	}
	rand := kdf([]byte(supi), binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano())))[:16]
	uri := "http://ausf/confirm/" + hex.EncodeToString(rand[:4])
	p.pending[uri], p.rands[uri] = supi, rand
	return AuthVector{RAND: hex.EncodeToString(rand), AUTN: hex.EncodeToString(rand), ConfirmURI: uri}, nil
}

func (p *fakePeers) ConfirmAuth(_ context.Context, uri, res string) (AuthConfirmation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	supi, rand := p.pending[uri], p.rands[uri]
	sub := p.subs[supi]
	if hex.EncodeToString(resStar(sub.k, rand)) != res {
		return AuthConfirmation{Success: false}, nil
	}
	return AuthConfirmation{Success: true, SUPI: supi, KSEAF: hex.EncodeToString(kseafOf(sub.k, rand))}, nil
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
	if edit != nil {
		edit(cfg)
	}
	reg := prometheus.NewRegistry()
	env := &nf.Env{Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Registry: reg}
	peers := newFakePeers()
	a, err := NewWithOptions(env, Options{Consumer: peers, Crypto: fakeCrypto{}, Limit: 8})
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

var _ = nas.MsgTypeRegistrationRequest

// waitIdle waits until n UEs are parked in CM-IDLE: the release completes
// run on the UE's key, which the test cannot otherwise observe. The bound
// only stops a failing test; nothing asserts on time.
func (h *harness) waitIdle(n int) {
	h.t.Helper()
	for i := 0; i < 10000; i++ {
		h.amf.ues.mu.Lock()
		k := len(h.amf.ues.idle)
		h.amf.ues.mu.Unlock()
		if k == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	h.t.Fatalf("UEs in CM-IDLE never reached %d", n)
}
