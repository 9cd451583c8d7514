package n2

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"
)

// BenchmarkN2PingPong compares one NGAP-sized round trip (gNB -> AMF ->
// gNB) over a plain connected UDP socket pair, the floor any SCTP-in-UDP
// transport sits on, with the user-space transports. "b2b" sends the next
// message at once; "idle" pauses 1 ms first, as a lone procedure does
// between its steps, so every goroutine on the path has parked. Each
// reports the p50 and p99 of the round trips in µs besides ns/op.
//
//	go test -run XXX -bench N2PingPong -benchtime 2000x ./n2
func BenchmarkN2PingPong(b *testing.B) {
	pairs := []struct {
		name string
		pair func(testing.TB) (Conn, Conn)
	}{
		{"plainUDP", plainUDPPair},
		{"udp-pion", func(tb testing.TB) (Conn, Conn) { return udpPair(tb, Options{SCTPImpl: ImplPion}) }},
		{"udp-own", func(tb testing.TB) (Conn, Conn) { return udpPair(tb, Options{SCTPImpl: ImplOwn}) }},
		{"raw-pion", func(tb testing.TB) (Conn, Conn) { return rawBenchPair(tb, Options{SCTPImpl: ImplPion}) }},
		{"raw-own", func(tb testing.TB) (Conn, Conn) { return rawBenchPair(tb, Options{SCTPImpl: ImplOwn}) }},
	}
	for _, p := range pairs {
		for _, gap := range []time.Duration{0, time.Millisecond} {
			name := p.name + "/b2b"
			if gap > 0 {
				name = p.name + "/idle"
			}
			b.Run(name, func(b *testing.B) { pingPong(b, p.pair, gap) })
		}
	}
}

// pingPong times b.N round trips of a 120-byte message, pausing gap
// (untimed) before each.
func pingPong(b *testing.B, pair func(testing.TB) (Conn, Conn), gap time.Duration) {
	client, server := pair(b)
	pdu := make([]byte, 120) // about an Uplink NAS Transport
	rtts := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if gap > 0 {
			b.StopTimer()
			time.Sleep(gap)
			b.StartTimer()
		}
		start := time.Now()
		roundTrip(b, client, server, pdu)
		rtts = append(rtts, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(rtts)
	b.ReportMetric(float64(rtts[len(rtts)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(rtts[len(rtts)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// rawBenchPair is one association over raw IP on loopback, skipped where
// raw SCTP is refused (no CAP_NET_RAW, or a kernel with SCTP).
func rawBenchPair(tb testing.TB, o Options) (Conn, Conn) {
	if !RawSCTPPermitted() || kernelHasSCTP() {
		tb.Skip("raw SCTP not usable here")
	}
	ln, _, err := o.Listen(Raw, fmt.Sprintf("127.0.0.1:%d", rawTestPort()))
	if err != nil {
		tb.Skip("raw listen: ", err)
	}
	tb.Cleanup(func() { ln.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, _, err := o.Dial(ctx, Raw, ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	if err := client.WriteMsg([]byte("hello"), 0); err != nil {
		tb.Fatal(err)
	}
	server, err := ln.Accept()
	if err != nil {
		tb.Fatal(err)
	}
	if _, _, err := server.ReadMsg(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// plainUDPPair is two connected UDP sockets behind Conn: no SCTP at all.
func plainUDPPair(tb testing.TB) (Conn, Conn) {
	a, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	bc, err := net.DialUDP("udp", nil, a.LocalAddr().(*net.UDPAddr))
	if err != nil {
		tb.Fatal(err)
	}
	a.Close() // its port is now ac's, connected to bc
	ac, err := net.DialUDP("udp", a.LocalAddr().(*net.UDPAddr), bc.LocalAddr().(*net.UDPAddr))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ac.Close(); bc.Close() })
	return PlainUDPConn{bc}, PlainUDPConn{ac}
}
