package sbi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/free5gc/openapi/models"
)

// Client sends JSON SBI requests over a Transport's RoundTripper.
type Client struct {
	hc       *http.Client
	metrics  *Metrics
	failover Failoverer // moves a request whose peer did not answer; may be nil
	auth     Authorizer // adds credentials or tokens; may be nil
	retry    retryPolicy
}

// Authorizer adds what a request needs to be let in (Security.Authorize).
type Authorizer interface {
	Authorize(ctx context.Context, req *http.Request) error
}

// AuthorizeWith has every request authorized by a before it leaves. Call
// it before the first request.
func (c *Client) AuthorizeWith(a Authorizer) { c.auth = a }

// Failoverer moves a request that failed at the transport level to
// another instance of the same NF service (NRFClient.Failover).
type Failoverer interface {
	Failover(ctx context.Context, rawURL string) (string, bool)
}

// maxFailovers bounds how many other instances one request tries.
const maxFailovers = 3

// RequestTimeout bounds one SBI request whose context allows longer.
const RequestTimeout = 10 * time.Second

// requestTimeout is RequestTimeout, shortened by tests.
var requestTimeout = RequestTimeout

// NewClient returns a client over rt; m may be nil. The timeout is the
// request's context deadline, not http.Client.Timeout: the latter runs a
// timer goroutine per request (net/http setRequestCancel), 6 % of a UDM's
// CPU under load, while every transport already ends a request with its
// context.
func NewClient(rt http.RoundTripper, m *Metrics) *Client {
	return &Client{hc: &http.Client{Transport: rt}, metrics: m, retry: defaultRetry}
}

// FailOverWith has requests that get no answer from a discovered peer
// retried at the next instance f names. Call it before the first request.
func (c *Client) FailOverWith(f Failoverer) { c.failover = f }

// HTTP exposes the underlying client, for NF code that builds its own requests.
func (c *Client) HTTP() *http.Client { return c.hc }

// Do sends in (JSON, unless nil) to url and decodes a 2xx answer into out
// (unless nil). A non-2xx answer returns a *ProblemError. The response
// headers are returned for Location and friends. A request whose producer
// failed is sent again when that cannot act twice (retry.go): at the next
// instance of the peer's service when the client fails over, else at the
// restarted one, within ctx's deadline (RequestTimeout without one) less
// what its callers need to act on a failure (retryPolicy.reserve).
func (c *Client) Do(ctx context.Context, method, url string, in, out any) (http.Header, error) {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("sbi %s %s: encode: %w", method, url, err)
		}
		body = b
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		defer cancel()
	}
	idempotent := idempotentRequest(ctx, method, in)
	var firstFailure time.Time
	for failovers, waits := 0, 0; ; {
		h, answered, err := c.once(ctx, method, url, body, contentType(in), out)
		reason := retryReason(err, answered, idempotent)
		if reason == "" || ctx.Err() != nil {
			return h, err
		}
		if firstFailure.IsZero() {
			firstFailure = time.Now()
		}
		if next, ok := c.failOver(ctx, url, failovers); ok {
			failovers++
			url = next
		} else {
			if !c.retry.wait(ctx, waits, firstFailure) {
				return h, err
			}
			waits++
			url = c.reselect(ctx, url)
		}
		c.countRetry(url, reason)
	}
}

// failOver moves url to another instance, if the client fails over and
// has not tried maxFailovers already.
func (c *Client) failOver(ctx context.Context, url string, done int) (string, bool) {
	if c.failover == nil || done >= maxFailovers {
		return "", false
	}
	return c.failover.Failover(ctx, url)
}

// reselect re-resolves url's instance through the NRF; url itself when
// the NRF names none (the restarted NF usually listens where it did).
func (c *Client) reselect(ctx context.Context, url string) string {
	if r, ok := c.failover.(Reselecter); ok {
		if next, ok := r.Reselect(ctx, url); ok {
			return next
		}
	}
	return url
}

// contentType of a request body: JSON Patch documents have their own
// (RFC 6902 6).
func contentType(in any) []string {
	if _, ok := in.([]models.PatchItem); ok {
		return hdrJSONPatch
	}
	return hdrJSON
}

var hdrJSONPatch = []string{"application/json-patch+json"}

// once sends one request; answered says the peer sent a response (so the
// error, if any, is its answer, not the transport's).
func (c *Client) once(ctx context.Context, method, url string, body []byte, ctype []string, out any) (http.Header, bool, error) {
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > requestTimeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, true, fmt.Errorf("sbi %s %s: %w", method, url, err)
	}
	if body != nil {
		req.Header["Content-Type"] = ctype
	}
	req.Header["Accept"] = hdrAccept
	setMaxRspTime(req)
	if c.auth != nil {
		if err := c.auth.Authorize(ctx, req); err != nil {
			return nil, true, fmt.Errorf("sbi %s %s: %w", method, url, err)
		}
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.observe(req, 0, start)
		return nil, false, fmt.Errorf("sbi %s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	c.observe(req, resp.StatusCode, start)
	data, err := readBody(resp.Body, resp.ContentLength)
	if err != nil {
		return resp.Header, true, &bodyCutError{fmt.Errorf("sbi %s %s: read: %w", method, url, err)}
	}
	if resp.StatusCode/100 != 2 {
		pe := &ProblemError{Status: resp.StatusCode, Body: data}
		_ = UnmarshalJSON(data, &pe.Problem) // a bare status is still an answer
		return resp.Header, true, pe
	}
	if out != nil && len(data) > 0 {
		if err := UnmarshalJSON(data, out); err != nil {
			return resp.Header, true, fmt.Errorf("sbi %s %s: decode answer: %w", method, url, err)
		}
	}
	return resp.Header, true, nil
}

func (c *Client) observe(req *http.Request, status int, start time.Time) {
	if c.metrics == nil {
		return
	}
	c.metrics.made.observe(ServiceOf(req.URL.Path), req.Method, status, time.Since(start))
}
