package prov

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// NewClient reaches the UDR at base ("http://127.0.0.1:29504") over rt,
// sending the admin token (ReadToken) with every request; a nil rt is the
// kernel SBI transport (h2c).
func NewClient(base string, rt http.RoundTripper, token string) *Client {
	if rt == nil {
		rt = sbi.NewTCP().RoundTripper()
	}
	rt = bearer{rt: rt, value: []string{"Bearer " + token}}
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

// AddRange adds the subscribers of r that are not stored yet, in one
// request (the UDR caps its size: udr.max_bulk). On failure the result
// says how many the UDR added before it stopped, when the UDR said so.
func (c *Client) AddRange(ctx context.Context, r Range) (BulkResult, error) {
	var out BulkResult
	_, err := c.c.Do(ctx, http.MethodPost, c.base+"/subscribers:bulk", r, &out)
	var pe *sbi.ProblemError
	if errors.As(err, &pe) {
		_ = json.Unmarshal(pe.Body, &out) // the extension members of a bulk failure
	}
	return out, err
}

// AddRangeInBatches adds r in requests of at most batch subscribers, one
// after the other, calling progress (if not nil) with the running total
// after each. On failure the total says exactly what was added: the
// batches before, and what the failed one reported.
func (c *Client) AddRangeInBatches(ctx context.Context, r Range, batch int, progress func(BulkResult)) (BulkResult, error) {
	parts, err := r.Split(batch)
	if err != nil {
		return BulkResult{}, err
	}
	total := BulkResult{Requested: r.Count}
	for _, part := range parts {
		res, err := c.AddRange(ctx, part)
		total.Added += res.Added
		total.Existing += res.Existing
		if err != nil {
			return total, fmt.Errorf("after adding %d of %d subscribers (%d existed): %w", total.Added, r.Count, total.Existing, err)
		}
		if progress != nil {
			progress(total)
		}
	}
	return total, nil
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
