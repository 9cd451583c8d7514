package sbi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// DoRelated is Do for the SBI operations whose bodies carry N1/N2 binary
// parts beside the JSON (TS 29.500 6.1.2.2; Nsmf_PDUSession, TS 29.502
// 6.1.2.4; Namf_Communication N1N2MessageTransfer, TS 29.518 6.1.2.4): in
// goes as multipart/related with parts (plain JSON without any), and the
// answer, JSON or multipart, is decoded into out with its parts returned.
//
// The answer's headers (Location of a created SM context) and binary
// parts come back in RelatedAnswer. A non-2xx answer is a *ProblemError whose Body is the answer's JSON part:
// the error types of these APIs wrap a ProblemDetails with binary parts
// (SmContextCreateError: {"error": …, "n1SmMsg": …}), so Problem is taken
// from "error" when the root has one; the parts are returned with it (the
// N1 message a rejection carries for the UE).
//
// The request is sent once: these operations create or change an SM
// context, which a repeat could do twice (sbi/retry.go).
func (c *Client) DoRelated(ctx context.Context, method, url string, in any, parts []Part, out any) (RelatedAnswer, error) {
	body, ctype, err := EncodeRelated(in, parts...)
	if err != nil {
		return RelatedAnswer{}, fmt.Errorf("sbi %s %s: encode: %w", method, url, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return RelatedAnswer{}, fmt.Errorf("sbi %s %s: %w", method, url, err)
	}
	req.Header["Content-Type"] = []string{ctype}
	req.Header["Accept"] = hdrAcceptRelated
	if c.auth != nil {
		if err := c.auth.Authorize(ctx, req); err != nil {
			return RelatedAnswer{}, fmt.Errorf("sbi %s %s: %w", method, url, err)
		}
	}
	return c.sendRelated(req, out)
}

// RelatedAnswer is what DoRelated returns besides the decoded JSON.
type RelatedAnswer struct {
	Header http.Header
	Parts  map[string]Part // by Content-ID
}

var hdrAcceptRelated = []string{"application/json, multipart/related, application/problem+json"}

func (c *Client) sendRelated(req *http.Request, out any) (RelatedAnswer, error) {
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.observe(req, 0, start)
		return RelatedAnswer{}, fmt.Errorf("sbi %s %s: %w", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	c.observe(req, resp.StatusCode, start)
	a := RelatedAnswer{Header: resp.Header}
	data, err := readBody(resp.Body, resp.ContentLength)
	if err != nil {
		return a, fmt.Errorf("sbi %s %s: read: %w", req.Method, req.URL, err)
	}
	if len(data) == 0 {
		if resp.StatusCode/100 != 2 {
			return a, &ProblemError{Status: resp.StatusCode}
		}
		return a, nil
	}
	var root json.RawMessage
	a.Parts, err = DecodeRelated(resp.Header.Get("Content-Type"), data, &root)
	if err != nil && resp.StatusCode/100 == 2 {
		return a, fmt.Errorf("sbi %s %s: decode answer: %w", req.Method, req.URL, err)
	}
	if resp.StatusCode/100 != 2 {
		return a, problemOf(resp.StatusCode, root)
	}
	if out != nil && len(root) > 0 {
		if err := UnmarshalJSON(root, out); err != nil {
			return a, fmt.Errorf("sbi %s %s: decode answer: %w", req.Method, req.URL, err)
		}
	}
	return a, nil
}

// problemOf reads the ProblemDetails of an error answer: the root itself,
// or its "error" member (TS 29.502 6.1.6.2.7 SmContextCreateError, TS
// 29.518 6.1.6.2.33 N1N2MessageTransferError).
func problemOf(status int, root json.RawMessage) *ProblemError {
	pe := &ProblemError{Status: status, Body: root}
	var wrapped struct {
		Error *json.RawMessage `json:"error"`
	}
	if UnmarshalJSON(root, &wrapped) == nil && wrapped.Error != nil {
		_ = UnmarshalJSON(*wrapped.Error, &pe.Problem)
	} else {
		_ = UnmarshalJSON(root, &pe.Problem)
	}
	return pe
}
