package sbi_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// scriptRT answers the i-th request with steps[i] (the last one repeats)
// and records where each went.
type scriptRT struct {
	mu    sync.Mutex
	steps []func(*http.Request) (*http.Response, error)
	sent  []string // method host
}

func (s *scriptRT) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	s.mu.Lock()
	i := min(len(s.sent), len(s.steps)-1)
	s.sent = append(s.sent, req.Method+" "+req.URL.Host)
	s.mu.Unlock()
	return s.steps[i](req)
}

func (s *scriptRT) attempts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sent...)
}

func refusedStep(*http.Request) (*http.Response, error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

func resetStep(*http.Request) (*http.Response, error) {
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

func okStep(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"ok":"yes"}`)), ContentLength: 12, Request: req}, nil
}

// cutStep sends the headers and part of the body, then the connection ends.
func cutStep(req *http.Request) (*http.Response, error) {
	body := io.MultiReader(strings.NewReader(`{"ok":`), errReader{io.ErrUnexpectedEOF})
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(body), ContentLength: 12, Request: req}, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

const ueauURL = "http://127.0.0.1:29503/nudm-ueau/v1/imsi-1/auth-events"

func newScripted(steps ...func(*http.Request) (*http.Response, error)) (*scriptRT, *sbi.Client, *prometheus.Registry) {
	rt := &scriptRT{steps: steps}
	reg := prometheus.NewRegistry()
	return rt, sbi.NewClient(rt, sbi.NewMetrics(reg)), reg
}

func retries(t *testing.T, reg *prometheus.Registry, target, reason string) float64 {
	t.Helper()
	return sample(t, reg, "l25gc_sbi_client_retries_total", map[string]string{"target": target, "reason": reason}).GetCounter().GetValue()
}

// A connection that broke after the request went out (the producer died
// while serving it): an idempotent request is sent again and succeeds; a
// POST (it may have created something) and a PATCH that adds are not.
func TestOnlyIdempotentRequestsAreSentAgainAfterTheConnectionBroke(t *testing.T) {
	replace := []models.PatchItem{{Op: models.PatchOperation_REPLACE, Path: "/sqn", Value: "21"}}
	add := []models.PatchItem{{Op: models.PatchOperation_ADD, Path: "/a/-", Value: "x"}}
	for _, c := range []struct {
		method string
		in     any
		again  bool
	}{
		{"GET", nil, true}, {"PUT", map[string]int{"a": 1}, true}, {"DELETE", nil, true},
		{"PATCH", replace, true}, {"PATCH", add, false}, {"POST", map[string]int{"a": 1}, false},
	} {
		rt, cl, reg := newScripted(resetStep, okStep)
		var out map[string]string
		_, err := cl.Do(context.Background(), c.method, ueauURL, c.in, &out)
		n := len(rt.attempts())
		if c.again && (err != nil || n != 2 || out["ok"] != "yes") {
			t.Errorf("%s %v: %d attempts, %v; want a second attempt that succeeds", c.method, c.in, n, err)
		}
		if !c.again && (err == nil || n != 1 || !errors.Is(err, syscall.ECONNRESET)) {
			t.Errorf("%s %v: %d attempts, %v; want the reset, not sent again", c.method, c.in, n, err)
		}
		if got, want := retries(t, reg, "UDM", "reset"), float64(n-1); got != want {
			t.Errorf("%s: retries{UDM,reset} = %v, want %v", c.method, got, want)
		}
	}
}

// A refused connection carried no request: even a POST is sent again.
func TestARefusedPOSTIsSentAgain(t *testing.T) {
	rt, cl, reg := newScripted(refusedStep, refusedStep, okStep)
	if _, err := cl.Do(context.Background(), "POST", ueauURL, map[string]int{"a": 1}, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(rt.attempts()); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
	if got := retries(t, reg, "UDM", "refused"); got != 2 {
		t.Fatalf("retries{UDM,refused} = %v, want 2", got)
	}
}

// An answer whose body was cut by the producer's death is asked again for
// a GET, and returned as the error it is for a POST.
func TestACutAnswerIsAskedAgainOnlyWhenIdempotent(t *testing.T) {
	rt, cl, reg := newScripted(cutStep, okStep)
	var out map[string]string
	if _, err := cl.Do(context.Background(), "GET", ueauURL, nil, &out); err != nil || out["ok"] != "yes" {
		t.Fatalf("GET: %v %v", err, out)
	}
	if n := len(rt.attempts()); n != 2 || retries(t, reg, "UDM", "cut") != 1 {
		t.Fatalf("GET: %d attempts, want 2 and one retry counted", n)
	}
	rt, cl, _ = newScripted(cutStep, okStep)
	if _, err := cl.Do(context.Background(), "POST", ueauURL, map[string]int{}, &out); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("POST: %v, want the cut answer's error", err)
	}
	if n := len(rt.attempts()); n != 1 {
		t.Fatalf("POST: %d attempts, want 1", n)
	}
}

// Answers (any status) and timeouts are never sent again.
func TestAnAnswerIsNotRetried(t *testing.T) {
	unavailable := func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 503, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
	}
	rt, cl, _ := newScripted(unavailable, okStep)
	var pe *sbi.ProblemError
	if _, err := cl.Do(context.Background(), "GET", ueauURL, nil, nil); !errors.As(err, &pe) || pe.Status != 503 {
		t.Fatalf("got %v, want the 503", err)
	}
	if n := len(rt.attempts()); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
}

// A producer that stays away: the attempts stop before the caller's
// deadline, with the refusal as the error.
func TestRetriesStopWithinTheDeadline(t *testing.T) {
	rt, cl, _ := newScripted(refusedStep)
	// 2 s (its reserve 500 ms): a 400 ms deadline with a 200 ms bound on
	// lateness failed when a loaded CI machine stalled the test that long.
	// A client that retries past the deadline still fails the bound on
	// lateness, and one that never retries still makes one attempt.
	deadline := time.Now().Add(2 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	_, err := cl.Do(ctx, "GET", ueauURL, nil, nil)
	if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the refusal", err)
	}
	if n := len(rt.attempts()); n < 2 {
		t.Fatalf("%d attempts within 2 s, want the first and at least one after 50 ms", n)
	}
	if late := time.Since(deadline); late > time.Second {
		t.Fatalf("returned %v after the deadline", late)
	}
}

// reselector stands in for the NRF client: no other instance to fail over
// to, and the restarted one found (at a new address) by re-resolution.
type reselector struct {
	mu               sync.Mutex
	failovers, asked int
	restartedAt      string
}

func (r *reselector) Failover(context.Context, string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failovers++
	return "", false
}

func (r *reselector) Reselect(_ context.Context, raw string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked++
	u, _ := url.Parse(raw)
	u.Host = r.restartedAt
	return u.String(), true
}

// With no other instance, the request waits and goes where the NRF says
// the restarted producer is.
func TestARetryGoesWhereTheNRFNowNamesTheProducer(t *testing.T) {
	rt, cl, _ := newScripted(refusedStep, okStep)
	r := &reselector{restartedAt: "127.0.0.1:39503"}
	cl.FailOverWith(r)
	if _, err := cl.Do(context.Background(), "POST", ueauURL, map[string]int{}, nil); err != nil {
		t.Fatal(err)
	}
	got := rt.attempts()
	if len(got) != 2 || got[0] != "POST 127.0.0.1:29503" || got[1] != "POST 127.0.0.1:39503" {
		t.Fatalf("attempts %v, want the old address then the re-resolved one", got)
	}
	if r.failovers != 1 || r.asked != 1 {
		t.Fatalf("failovers %d, re-resolutions %d; want another instance sought first, then one re-resolution", r.failovers, r.asked)
	}
}

// The NRF client's re-resolution includes the instance that failed: when
// it is the only one, that is where the restarted NF is.
func TestReselectFindsTheOnlyInstanceAgain(t *testing.T) {
	tr := sbi.NewTCP()
	only := "http://127.0.0.1:29503"
	fake := newScriptedNRF(func(url.Values) []models.NrfNfDiscoveryNfProfile {
		return []models.NrfNfDiscoveryNfProfile{udm("udm-1", only, 1, 0, 0)}
	})
	c := sbitest.Client(tr)
	n := sbi.NewNRFClient(c, sbitest.Serve(t, tr, fake), models.NrfNfManagementNfType_AMF)
	ctx := context.Background()
	if _, err := n.Select(ctx, uecm); err != nil {
		t.Fatal(err)
	}
	if next, ok := n.Failover(ctx, only+"/nudm-uecm/v1/x"); ok {
		t.Fatalf("failed over to %s with one instance", next)
	}

	next, ok := n.Reselect(ctx, only+"/nudm-uecm/v1/x")
	if !ok || next != only+"/nudm-uecm/v1/x" {
		t.Fatalf("re-resolved to %q %v, want the only instance", next, ok)
	}
	if _, ok := n.Reselect(ctx, "http://127.0.0.1:1/namf-callback/v1/x"); ok {
		t.Fatal("re-resolved a URL no discovery gave")
	}

}

// restarter is the NRF client of a producer that died: no other instance,
// and, asked again, the producer is back at its address (it restarted).
type restarter struct {
	t       *testing.T
	tr      sbi.Transport
	addr    string
	h       http.Handler
	started bool
}

func (r *restarter) Failover(context.Context, string) (string, bool) { return "", false }

func (r *restarter) Reselect(_ context.Context, raw string) (string, bool) {
	if !r.started {
		r.started = true
		srv, err := r.tr.Serve(r.addr, sbi.Handler(r.h, nil, logging.Discard()))
		if err != nil {
			r.t.Fatalf("restart at %s: %v", r.addr, err)
		}
		r.t.Cleanup(func() {
			// Clients first, as sbitest.Serve does: an HTTP/2 server's
			// graceful shutdown waits for them.
			if c, ok := r.tr.RoundTripper().(interface{ CloseIdleConnections() }); ok {
				c.CloseIdleConnections()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
		})
	}
	return raw, true
}

// Over every transport, a POST to a producer that is down (refused: X-IO's
// dial to an address nobody serves, TCP's connection refused) is not lost:
// it goes to the producer once it is back, and is served exactly once.
func TestARefusedRequestReachesTheRestartedProducer(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		var served atomic.Int32
		base := sbitest.Unserved(t, tr)
		r := &restarter{t: t, tr: tr, addr: strings.TrimPrefix(base, "http://"),
			h: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				served.Add(1)
				sbi.WriteJSON(w, http.StatusCreated, map[string]string{"ok": "yes"})
			})}
		reg := prometheus.NewRegistry()
		c := sbi.NewClient(tr.RoundTripper(), sbi.NewMetrics(reg))
		c.FailOverWith(r)
		var out map[string]string
		if _, err := c.Do(context.Background(), http.MethodPost, base+authPath, map[string]string{"supiOrSuci": "imsi-1"}, &out); err != nil || out["ok"] != "yes" {
			t.Fatalf("POST to a restarting producer: %v %v", err, out)
		}
		if n := served.Load(); n != 1 {
			t.Fatalf("served %d times, want once", n)
		}
		if got := retries(t, reg, "AUSF", "refused"); got != 1 {
			t.Fatalf("retries{AUSF,refused} = %v, want 1", got)
		}
	})
}
