package sbi

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// A producer sees the consumer's remaining deadline as its request's
// deadline: work the consumer no longer waits for is cancelled.
func TestMaxRspTimeCarriesTheCallersDeadline(t *testing.T) {
	seen := make(chan time.Duration, 1)
	header := make(chan string, 1)
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header <- r.Header.Get(HeaderMaxRspTime)
		d, ok := r.Context().Deadline()
		if !ok {
			seen <- -1
		} else {
			seen <- time.Until(d)
		}
		w.WriteHeader(http.StatusNoContent)
	}), nil, slog.Default())
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := NewClient(http.DefaultTransport, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := c.Do(ctx, http.MethodGet, srv.URL+"/nudm-sdm/v2/x", nil, nil); err != nil {
		t.Fatal(err)
	}
	ms, err := strconv.Atoi(<-header)
	if err != nil || ms <= 0 || ms > 2000 {
		t.Fatalf("3gpp-Sbi-Max-Rsp-Time = %d (%v), want 1..2000", ms, err)
	}
	if d := <-seen; d <= 0 || d > 2*time.Second+maxRspGrace {
		t.Fatalf("producer's deadline %v, want within the caller's 2 s (+ grace)", d)
	}
}

func TestMaxRspTimeIgnoresMalformedValues(t *testing.T) {
	for _, v := range []string{"", "abc", "-5", "0"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if v != "" {
			r.Header.Set(HeaderMaxRspTime, v)
		}
		got, cancel := withMaxRspTime(r)
		if _, ok := got.Context().Deadline(); ok {
			t.Errorf("%q set a deadline", v)
		}
		cancel()
	}
}
