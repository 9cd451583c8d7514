package xiohttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/sbi"
)

// Hybrid is how an NF uses X-IO in a core that may span nodes: every
// endpoint is served on X-IO (for peers on this node) and on TCP at the same
// address (for peers on other nodes and for tools such as `l25gc subscriber`
// that do not attach to shared memory). Each request goes over X-IO or TCP
// as its peer's authority (host:port) decides (see peerTable): peers the NRF
// places on this node over X-IO, peers it places elsewhere straight over
// TCP, others over X-IO first and TCP when nobody serves them here.
type Hybrid struct {
	local, remote sbi.Transport
	locality      string
	rt            *hybridRoundTripper
}

// NewHybrid combines a shared-memory transport (local) with a kernel one
// (remote); it is named after local.
func NewHybrid(local, remote sbi.Transport) *Hybrid {
	return &Hybrid{local: local, remote: remote, locality: nodeLocality(local.Name()),
		rt: &hybridRoundTripper{local: local.RoundTripper(), remote: remote.RoundTripper(), peers: newPeerTable()}}
}

func (h *Hybrid) Name() string                    { return h.local.Name() }
func (h *Hybrid) RoundTripper() http.RoundTripper { return h.rt }

// Locality names this node for NRF profiles (sbi.NodeTransport): the X-IO
// level and the onvm manager's shared memory (its EAL file prefix on this
// host, named by the kernel's boot id). NFs with the same locality reach
// each other over X-IO; a peer on another level of the same memory speaks
// another protocol there, so it counts as elsewhere.
func (h *Hybrid) Locality() string { return h.locality }

// PeersOnNode learns from NRF profiles where peers serve (sbi.NodeTransport).
func (h *Hybrid) PeersOnNode(peers map[string]bool) { h.rt.peers.fromNRF(peers) }

// Instrument counts requests per path in m (sbi.NodeTransport); call it
// before the first request.
func (h *Hybrid) Instrument(m *sbi.Metrics) {
	h.rt.xioSent, h.rt.tcpSent = m.PathCounter("xio"), m.PathCounter("tcp")
}

// nodeLocality is the locality of an NF on X-IO level: xio attaches to the
// manager named by $L25GC_XIO_PREFIX, "l25gc" by default (xio.Config).
func nodeLocality(level string) string {
	prefix := os.Getenv("L25GC_XIO_PREFIX")
	if prefix == "" {
		prefix = "l25gc"
	}
	host, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		h, _ := os.Hostname()
		host = []byte(h)
	}
	return fmt.Sprintf("l25gc-xio:%s:%s/%s", level, strings.TrimSpace(string(host)), prefix)
}

// Serve serves hd on TCP first, so that a ":0" port is resolved, then on
// X-IO at the address peers dial: the host as given (a wildcard bind
// stays "0.0.0.0", as NF profiles advertise it; TCP's listener names it
// "[::]") and the port TCP got.
func (h *Hybrid) Serve(addr string, hd http.Handler) (sbi.Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("xiohttp: serve %s: %w", addr, err)
	}
	rs, err := h.remote.Serve(addr, hd)
	if err != nil {
		return nil, err
	}
	_, port, err := net.SplitHostPort(rs.Addr())
	if err != nil {
		rs.Shutdown(context.Background())
		return nil, err
	}
	ls, err := h.local.Serve(net.JoinHostPort(host, port), hd)
	if err != nil {
		rs.Shutdown(context.Background())
		return nil, err
	}
	return &bothServers{local: ls, remote: rs}, nil
}

type bothServers struct{ local, remote sbi.Server }

func (b *bothServers) Addr() string { return b.local.Addr() }

// Shutdown drains both at once: a peer may be mid-request on either.
func (b *bothServers) Shutdown(ctx context.Context) error {
	var wg sync.WaitGroup
	var errRemote error
	wg.Add(1)
	go func() {
		defer wg.Done()
		errRemote = b.remote.Shutdown(ctx)
	}()
	errLocal := b.local.Shutdown(ctx)
	wg.Wait()
	return errors.Join(errLocal, errRemote)
}

type hybridRoundTripper struct {
	local, remote    http.RoundTripper
	peers            *peerTable
	xioSent, tcpSent prometheus.Counter // nil until Instrument
}

// RoundTrip sends req over the path its peer's entry says. A peer not known
// to be elsewhere is tried over X-IO; an address nobody bound on this node
// (ECONNREFUSED, before any byte of the request was served) means the peer
// is elsewhere, so the request goes over TCP instead. A body is replayed
// through GetBody or, when the caller gave none, from a copy taken up
// front. What a probe finds is remembered (peerTable).
func (t *hybridRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	authority := req.URL.Host
	p := t.peers.lookup(authority)
	if p.path == pathTCP {
		return t.overTCP(req)
	}
	first, body, err := replayable(req)
	if err != nil {
		return nil, err
	}
	resp, err := t.local.RoundTrip(first)
	if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		count(t.xioSent)
		if err == nil && p.path == pathProbe {
			t.peers.learn(authority, pathXIO)
		}
		return resp, err
	}
	again, err := replay(req, body)
	if err != nil {
		return nil, err
	}
	resp, err = t.overTCP(again)
	// Not here but there: remember, unless the NRF says otherwise (the
	// peer may be restarting) or nobody answered at all.
	if err == nil && !p.byNRF {
		t.peers.learn(authority, pathTCP)
	}
	return resp, err
}

func (t *hybridRoundTripper) overTCP(req *http.Request) (*http.Response, error) {
	count(t.tcpSent)
	return t.remote.RoundTrip(req)
}

func count(c prometheus.Counter) {
	if c != nil {
		c.Inc()
	}
}

// CloseIdleConnections closes both paths' idle conns (http.Client calls it).
func (t *hybridRoundTripper) CloseIdleConnections() {
	for _, rt := range []http.RoundTripper{t.local, t.remote} {
		if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}

// replayable returns the request to send first and, when the caller's
// request has a body it cannot replay (no GetBody), a copy of that body;
// the caller's request is not modified (http.RoundTripper's contract).
func replayable(req *http.Request) (*http.Request, []byte, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return req, nil, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	first, err := withBody(req, b)
	return first, b, err
}

// replay returns a fresh copy of req for a second attempt.
func replay(req *http.Request, body []byte) (*http.Request, error) {
	switch {
	case req.Body == nil || req.Body == http.NoBody:
		return req, nil
	case body != nil:
		return withBody(req, body)
	}
	b, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	c := req.Clone(req.Context())
	c.Body = b
	return c, nil
}

func withBody(req *http.Request, b []byte) (*http.Request, error) {
	c := req.Clone(req.Context())
	c.Body = io.NopCloser(bytes.NewReader(b))
	c.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return c, nil
}

var _ sbi.NodeTransport = (*Hybrid)(nil)
