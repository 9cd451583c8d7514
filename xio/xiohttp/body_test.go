package xiohttp_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/xio/xiohttp"
)

// TestResponseBodyKeptUntilClosed: received frames are recycled, but a
// response body left open while more requests run still reads its own
// bytes, and reads after Close fail instead of seeing another response.
func TestResponseBodyKeptUntilClosed(t *testing.T) {
	tr := xiohttp.NewMessageTransport()
	srv, err := tr.Serve(nextAddr(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(t.Context())
	c := &http.Client{Transport: tr.RoundTripper()}
	post := func(s string) *http.Response {
		resp, err := c.Post("http://"+srv.Addr()+"/", "text/plain", strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := strings.Repeat("first ", 200)
	kept := post(first)
	for i := 0; i < 20; i++ {
		resp := post(strings.Repeat("other ", 200+i))
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if got, err := io.ReadAll(kept.Body); err != nil || string(got) != first {
		t.Fatalf("open body read %d bytes (%v) after other exchanges, want its own %d", len(got), err, len(first))
	}
	kept.Body.Close()
	if n, err := kept.Body.Read(make([]byte, 8)); n != 0 || err == nil {
		t.Fatalf("read after Close: %d bytes, err %v; want an error", n, err)
	}
}

// TestRequestBodyEndsWithHandler: a request body a handler leaves to be
// read after it returned fails to read (as net/http's does) instead of
// reading the next request's bytes from the recycled frame.
func TestRequestBodyEndsWithHandler(t *testing.T) {
	tr := xiohttp.NewMessageTransport()
	left := make(chan io.Reader, 1)
	srv, err := tr.Serve(nextAddr(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case left <- r.Body: // the first request's body, unread
		default:
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(t.Context())
	c := &http.Client{Transport: tr.RoundTripper()}
	for _, s := range []string{"mine", "the next request's"} {
		resp, err := c.Post("http://"+srv.Addr()+"/", "text/plain", bytes.NewReader([]byte(s)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got, err := io.ReadAll(<-left); err == nil || len(got) != 0 {
		t.Fatalf("body read after its handler returned: %q, err %v; want an error", got, err)
	}
}
