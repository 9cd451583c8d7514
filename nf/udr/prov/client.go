package prov

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/l25gc/l25gc/sbi"
)

// Client calls the provisioning API of a UDR. Errors from the UDR are
// *sbi.ProblemError (sbi.StatusOf gives the HTTP status).
type Client struct {
	base string
	c    *sbi.Client
}

// NewClient reaches the UDR at base ("http://127.0.0.1:29504") over rt; a
// nil rt is the kernel SBI transport (h2c).
func NewClient(base string, rt http.RoundTripper) *Client {
	if rt == nil {
		rt = sbi.NewTCP().RoundTripper()
	}
	return &Client{base: strings.TrimSuffix(base, "/") + BasePath, c: sbi.NewClient(rt, nil)}
}

// Add creates one subscriber and returns it as stored (defaults filled in).
func (c *Client) Add(ctx context.Context, s Subscriber) (Subscriber, error) {
	var out Subscriber
	_, err := c.c.Do(ctx, http.MethodPost, c.base+"/subscribers", s, &out)
	return out, err
}

// Put creates or replaces one subscriber.
func (c *Client) Put(ctx context.Context, s Subscriber) (Subscriber, error) {
	var out Subscriber
	_, err := c.c.Do(ctx, http.MethodPut, c.base+"/subscribers/"+url.PathEscape(s.IMSI), s, &out)
	return out, err
}

// AddRange adds the subscribers of r that are not stored yet.
func (c *Client) AddRange(ctx context.Context, r Range) (BulkResult, error) {
	var out BulkResult
	_, err := c.c.Do(ctx, http.MethodPost, c.base+"/subscribers:bulk", r, &out)
	return out, err
}

// Get returns one subscriber.
func (c *Client) Get(ctx context.Context, imsi string) (Subscriber, error) {
	var out Subscriber
	_, err := c.c.Do(ctx, http.MethodGet, c.base+"/subscribers/"+url.PathEscape(imsi), nil, &out)
	return out, err
}

// Delete removes one subscriber.
func (c *Client) Delete(ctx context.Context, imsi string) error {
	_, err := c.c.Do(ctx, http.MethodDelete, c.base+"/subscribers/"+url.PathEscape(imsi), nil, nil)
	return err
}

// List returns up to limit subscribers from offset, in IMSI order.
func (c *Client) List(ctx context.Context, offset, limit int) (Page, error) {
	var out Page
	q := url.Values{"offset": {strconv.Itoa(offset)}, "limit": {strconv.Itoa(limit)}}
	_, err := c.c.Do(ctx, http.MethodGet, c.base+"/subscribers?"+q.Encode(), nil, &out)
	return out, err
}
