package xiohttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"syscall"

	"github.com/l25gc/l25gc/sbi"
)

// Hybrid is how an NF uses X-IO in a core that may span nodes: every
// endpoint is served on X-IO (for peers on this node) and on TCP at the same
// address (for peers on other nodes and for tools such as `l25gc subscriber`
// that do not attach to shared memory). Requests go over X-IO when the
// peer's address is bound in this node's service table, over TCP otherwise.
type Hybrid struct {
	local, remote sbi.Transport
	rt            *hybridRoundTripper
}

// NewHybrid combines a shared-memory transport (local) with a kernel one
// (remote); it is named after local.
func NewHybrid(local, remote sbi.Transport) *Hybrid {
	return &Hybrid{local: local, remote: remote,
		rt: &hybridRoundTripper{local: local.RoundTripper(), remote: remote.RoundTripper()}}
}

func (h *Hybrid) Name() string                    { return h.local.Name() }
func (h *Hybrid) RoundTripper() http.RoundTripper { return h.rt }

// Serve serves hd on TCP first, so that a ":0" port is resolved, then on
// X-IO under the address TCP got: peers use one address for both.
func (h *Hybrid) Serve(addr string, hd http.Handler) (sbi.Server, error) {
	rs, err := h.remote.Serve(addr, hd)
	if err != nil {
		return nil, err
	}
	ls, err := h.local.Serve(rs.Addr(), hd)
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
	local, remote http.RoundTripper
}

// RoundTrip tries X-IO; an address nobody bound on this node (ECONNREFUSED
// at dial, before any byte is sent) means the peer is elsewhere, so the
// request goes over TCP instead. A body is replayed through GetBody or, when
// the caller gave none, from a copy taken up front.
func (t *hybridRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	first, retry, err := replayable(req)
	if err != nil {
		return nil, err
	}
	resp, err := t.local.RoundTrip(first)
	if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		return resp, err
	}
	again, err := retry()
	if err != nil {
		return nil, err
	}
	return t.remote.RoundTrip(again)
}

// replayable returns the request to send first and a way to get a fresh
// copy of it for a second attempt; the caller's request is not modified
// (http.RoundTripper's contract).
func replayable(req *http.Request) (*http.Request, func() (*http.Request, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, func() (*http.Request, error) { return req, nil }, nil
	}
	if req.GetBody != nil {
		return req, func() (*http.Request, error) { return withBody(req, req.GetBody) }, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	fromCopy := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	first, _ := withBody(req, fromCopy)
	return first, func() (*http.Request, error) { return withBody(req, fromCopy) }, nil
}

func withBody(req *http.Request, getBody func() (io.ReadCloser, error)) (*http.Request, error) {
	body, err := getBody()
	if err != nil {
		return nil, err
	}
	c := req.Clone(req.Context())
	c.Body, c.GetBody = body, getBody
	return c, nil
}
