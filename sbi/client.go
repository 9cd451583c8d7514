package sbi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Client sends JSON SBI requests over a Transport's RoundTripper.
type Client struct {
	hc      *http.Client
	metrics *Metrics
}

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
	return &Client{hc: &http.Client{Transport: rt}, metrics: m}
}

// HTTP exposes the underlying client, for NF code that builds its own requests.
func (c *Client) HTTP() *http.Client { return c.hc }

// Do sends in (JSON, unless nil) to url and decodes a 2xx answer into out
// (unless nil). A non-2xx answer returns a *ProblemError. The response
// headers are returned for Location and friends.
func (c *Client) Do(ctx context.Context, method, url string, in, out any) (http.Header, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("sbi %s %s: encode: %w", method, url, err)
		}
		body = bytes.NewReader(b)
	}
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > requestTimeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, fmt.Errorf("sbi %s %s: %w", method, url, err)
	}
	if in != nil {
		req.Header["Content-Type"] = hdrJSON
	}
	req.Header["Accept"] = hdrAccept
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.observe(req, 0, start)
		return nil, fmt.Errorf("sbi %s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	c.observe(req, resp.StatusCode, start)
	data, err := readBody(resp.Body, resp.ContentLength)
	if err != nil {
		return resp.Header, fmt.Errorf("sbi %s %s: read: %w", method, url, err)
	}
	if resp.StatusCode/100 != 2 {
		pe := &ProblemError{Status: resp.StatusCode}
		_ = json.Unmarshal(data, &pe.Problem) // a bare status is still an answer
		return resp.Header, pe
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.Header, fmt.Errorf("sbi %s %s: decode answer: %w", method, url, err)
		}
	}
	return resp.Header, nil
}

func (c *Client) observe(req *http.Request, status int, start time.Time) {
	if c.metrics == nil {
		return
	}
	c.metrics.made.observe(ServiceOf(req.URL.Path), req.Method, status, time.Since(start))
}
