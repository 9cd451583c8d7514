package sbi

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// HeaderMaxRspTime carries how long the consumer still waits for the
// answer, in milliseconds (TS 29.500 5.2.3.3.x, 3gpp-Sbi-Max-Rsp-Time):
// the producer gives up work nobody waits for, and the calls it makes in
// turn inherit the bound through the request's context.
const HeaderMaxRspTime = "3gpp-Sbi-Max-Rsp-Time"

// setMaxRspTime tells the producer the request's remaining deadline.
func setMaxRspTime(req *http.Request) {
	d, ok := req.Context().Deadline()
	if !ok {
		return
	}
	ms := time.Until(d).Milliseconds()
	if ms < 1 {
		ms = 1
	}
	req.Header[HeaderMaxRspTime] = []string{strconv.FormatInt(ms, 10)}
}

// maxRspGrace is added to the consumer's bound: the consumer's own
// deadline, not an answer the producer rushes out as it gives up, is what
// ends a request the consumer waited for in vain.
const maxRspGrace = 50 * time.Millisecond

// withMaxRspTime bounds r's context by the consumer's 3gpp-Sbi-Max-Rsp-Time
// (plus maxRspGrace); a missing or malformed value (not a positive integer) leaves r as it is:
// the header is advice, and the producer's own timeouts still hold.
func withMaxRspTime(r *http.Request) (*http.Request, context.CancelFunc) {
	v := r.Header.Get(HeaderMaxRspTime)
	if v == "" {
		return r, func() {}
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return r, func() {}
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(ms)*time.Millisecond+maxRspGrace)
	return r.WithContext(ctx), cancel
}
