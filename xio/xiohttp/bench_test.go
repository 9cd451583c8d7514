package xiohttp_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/xio/xiohttp"
)

// BenchmarkMessageRoundTrip: one process, both ends; for profiling the
// message level (the cross-process numbers come from xiobench).
func BenchmarkMessageRoundTrip(b *testing.B) {
	benchRoundTrip(b, xiohttp.NewMessageTransport())
}

// BenchmarkHybridRoundTrip: the message level as NFs use it, behind the
// hybrid's choice of path (the peer is on this node).
func BenchmarkHybridRoundTrip(b *testing.B) {
	benchRoundTrip(b, xiohttp.NewHybrid(xiohttp.NewMessageTransport(), sbi.NewTCP()))
}

// BenchmarkHybridToPeerElsewhere: the hybrid to a peer served only over
// TCP (on another node): X-IO is not tried once the peer is known elsewhere.
func BenchmarkHybridToPeerElsewhere(b *testing.B) {
	benchRoundTripTo(b, sbi.NewTCP(), xiohttp.NewHybrid(xiohttp.NewMessageTransport(), sbi.NewTCP()))
}

func benchRoundTrip(b *testing.B, tr transport) { benchRoundTripTo(b, tr, tr) }

func benchRoundTripTo(b *testing.B, tr, client transport) {
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
	c := &http.Client{Transport: client.RoundTripper()}
	defer c.CloseIdleConnections()
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
	b.StopTimer() // not the shutdown
}
