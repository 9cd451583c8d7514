package xiohttp

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// seedRequests are SBI requests as NFs send them (TS 29.509, 29.503,
// 29.510), encoded the way the client encodes them: the fuzzers start from
// real frames.
func seedRequests(tb testing.TB) [][]byte {
	tb.Helper()
	var frames [][]byte
	for _, r := range []struct{ method, url, body string }{
		{"POST", "http://127.0.0.1:29509/nausf-auth/v1/ue-authentications",
			`{"supiOrSuci":"suci-0-208-93-0000-0-0-0000000001","servingNetworkName":"5G:mnc093.mcc208.3gppnetwork.org"}`},
		{"GET", "http://127.0.0.1:29503/nudm-sdm/v2/imsi-208930000000001/am-data?plmn-id=%7B%22mcc%22%3A%22208%22%2C%22mnc%22%3A%2293%22%7D", ""},
		{"PUT", "http://127.0.0.1:29510/nnrf-nfm/v1/nf-instances/5b7f1e4c-0000-5000-8000-000000000001",
			`{"nfInstanceId":"5b7f1e4c-0000-5000-8000-000000000001","nfType":"UDM","nfStatus":"REGISTERED"}`},
		{"DELETE", "http://127.0.0.1:29510/nnrf-nfm/v1/nf-instances/x", ""},
	} {
		var body io.Reader = http.NoBody
		if r.body != "" {
			body = strings.NewReader(r.body)
		}
		req, err := http.NewRequest(r.method, r.url, body)
		if err != nil {
			tb.Fatal(err)
		}
		req.Header.Set("Accept", "application/json, application/problem+json")
		if r.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		f, err := requestFrame(req)
		if err != nil {
			tb.Fatal(err)
		}
		frames = append(frames, f[4:])
	}
	return frames
}

func seedResponses() [][]byte {
	var frames [][]byte
	for _, r := range []*wireResponse{
		{status: 201, header: http.Header{"Content-Type": {"application/3gppHal+json"},
			"Location": {"http://127.0.0.1:29509/nausf-auth/v1/ue-authentications/1"}},
			body: []byte(`{"authType":"5G_AKA","_links":{"5g-aka":{"href":"http://127.0.0.1:29509/x"}}}`)},
		{status: 404, header: http.Header{"Content-Type": {"application/problem+json"}},
			body: []byte(`{"title":"Not Found","status":404,"cause":"USER_NOT_FOUND"}`)},
		{status: 204, header: http.Header{}},
	} {
		frames = append(frames, encodeResponse(r)[4:])
	}
	return frames
}

// hostileHeaderCount is a 17-byte request frame body that claims 65,535
// headers: version, three empty strings, then the count.
var hostileHeaderCount = []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0}

// A frame's header count is bounded by the bytes that follow it (each
// header needs two 4-byte lengths), so a tiny malformed frame costs the
// server a tiny allocation, not a map sized for 65,535 headers.
func TestHostileHeaderCountAllocatesLittle(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < 10; i++ {
		if _, err := decodeRequest(hostileHeaderCount); err == nil {
			t.Fatal("a frame claiming 65535 headers in 4 bytes decoded")
		}
		resp := append([]byte{1, 200, 0}, hostileHeaderCount[13:]...)
		if _, err := decodeResponse(resp); err == nil {
			t.Fatal("a response claiming 65535 headers in 4 bytes decoded")
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Fatalf("20 hostile frames of at most 17 bytes allocated %d KiB", got>>10)
	}
}

// Headers arrive as handlers see them over HTTP/2: names canonical, invalid
// names and values refused as Go's servers and clients refuse them.
func TestDecodedHeadersAreCanonicalAndValid(t *testing.T) {
	frame := encodeResponse(&wireResponse{status: 200, header: http.Header{"content-type": {"application/json"}}})
	r, err := decodeResponse(frame[4:])
	if err != nil || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("lower-case name: %v, header %v", err, r.header)
	}
	for _, h := range []http.Header{{"X-Bad": {"a\r\nSet-Cookie: x"}}, {"Bad Name": {"v"}}, {"": {"v"}}} {
		frame := encodeResponse(&wireResponse{status: 200, header: h})
		if _, err := decodeResponse(frame[4:]); err == nil {
			t.Errorf("header %q decoded", h)
		}
		req := encodeRequest(&wireRequest{method: "GET", uri: "/", host: "h", header: h})
		if _, err := decodeRequest(req[4:]); err == nil {
			t.Errorf("request header %q decoded", h)
		}
	}
	for _, r := range []*wireRequest{{method: "G ET", uri: "/", host: "h"}, {method: "GET", uri: "/", host: "h\r\nX: y"}} {
		if _, err := decodeRequest(encodeRequest(r)[4:]); err == nil {
			t.Errorf("request %+v decoded", r)
		}
	}
}

// FuzzDecodeRequest: no request frame panics the server or allocates
// beyond its size; what decodes re-encodes to the same request, and the
// server builds an *http.Request from it or refuses it.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range seedRequests(f) {
		f.Add(s)
	}
	f.Add(hostileHeaderCount)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRequest(b)
		if err != nil {
			return
		}
		again, err := decodeRequest(encodeRequest(r)[4:])
		if err != nil {
			t.Fatalf("re-encoded request does not decode: %v", err)
		}
		if !sameRequest(r, again) {
			t.Fatalf("round trip changed the request: %+v then %+v", r, again)
		}
		if req, err := buildRequest(context.Background(), r, "xio-conn-1", &inFrame{b: append([]byte(nil), b...)}); err == nil && req.URL == nil {
			t.Fatal("request without a URL")
		}
	})
}

// FuzzDecodeResponse: no response frame panics the client; what decodes
// re-encodes to the same response.
func FuzzDecodeResponse(f *testing.F) {
	for _, s := range seedResponses() {
		f.Add(s)
	}
	f.Add(append([]byte{1, 200, 0}, hostileHeaderCount[13:]...))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeResponse(b)
		if err != nil {
			return
		}
		again, err := decodeResponse(encodeResponse(r)[4:])
		if err != nil {
			t.Fatalf("re-encoded response does not decode: %v", err)
		}
		if r.status != again.status || !sameHeader(r.header, again.header) || !bytes.Equal(r.body, again.body) {
			t.Fatalf("round trip changed the response: %+v then %+v", r, again)
		}
	})
}

func sameRequest(a, b *wireRequest) bool {
	return a.method == b.method && a.uri == b.uri && a.host == b.host &&
		sameHeader(a.header, b.header) && bytes.Equal(a.body, b.body)
}

func sameHeader(a, b http.Header) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// TestReceivedFramesRecycled: reading a frame into a recycled buffer and
// handing it back allocates nothing once the pool holds one.
func TestReceivedFramesRecycled(t *testing.T) {
	frame := encodeResponse(&wireResponse{status: 200, body: bytes.Repeat([]byte("x"), 1024)})
	r := bytes.NewReader(frame)
	br := bufio.NewReader(r)
	read := func() {
		r.Reset(frame)
		br.Reset(r)
		f, err := readPooledFrame(br)
		if err != nil || len(f.b) != len(frame)-4 {
			t.Fatalf("read %v: %v", f, err)
		}
		f.release()
	}
	read()
	if a := testing.AllocsPerRun(100, read); a != 0 {
		t.Fatalf("%v allocations per received frame, want 0", a)
	}
}
