package xiohttp_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/l25gc/l25gc/xio/xiohttp"
)

// BenchmarkMessageRoundTrip: one process, both ends; for profiling the
// message level (the cross-process numbers come from xiobench).
func BenchmarkMessageRoundTrip(b *testing.B) {
	tr := xiohttp.NewMessageTransport()
	addr := nextAddr()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	srv, err := tr.Serve(addr, mux)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown(b.Context())
	c := &http.Client{Transport: tr.RoundTripper()}
	body := bytes.Repeat([]byte("x"), 1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := c.Post("http://"+addr+"/echo", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
}
