package xiohttp_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

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

// BenchmarkSBIExchange: one SBI exchange as NFs make it over the message
// level: sbi.Client.Do with a JSON body to an sbi.Handler that decodes it
// and answers JSON, metrics on both sides.
func BenchmarkSBIExchange(b *testing.B) {
	type doc struct {
		Supi, ServingNetworkName string
		Guami                    struct{ PlmnID, AmfID string }
		Flags                    []bool
	}
	addr := nextAddr()
	reg := prometheus.NewRegistry()
	m := sbi.NewMetrics(reg)
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /nudm-uecm/v1/{ue}/registrations/amf-3gpp-access", func(w http.ResponseWriter, r *http.Request) {
		var in doc
		if !sbi.DecodeJSON(w, r, &in) {
			return
		}
		sbi.WriteJSON(w, http.StatusCreated, &in)
	})
	tr := xiohttp.NewHybrid(xiohttp.NewMessageTransport(), sbi.NewTCP())
	srv, err := tr.Serve(addr, sbi.Handler(mux, m, slog.Default()))
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown(b.Context())
	c := sbi.NewClient(tr.RoundTripper(), m)
	in := doc{Supi: "imsi-208930000000001", ServingNetworkName: "5G:mnc093.mcc208.3gppnetwork.org", Flags: []bool{true, false}}
	in.Guami.PlmnID, in.Guami.AmfID = "20893", "cafe00"
	url := "http://" + addr + "/nudm-uecm/v1/imsi-208930000000001/registrations/amf-3gpp-access"
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out doc
		if _, err := c.Do(b.Context(), http.MethodPut, url, &in, &out); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
}
