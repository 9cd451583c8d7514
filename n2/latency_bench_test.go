package n2

import (
	"context"
	"testing"
	"time"
)

// udpPair is one association over the udp transport: the simulator's side
// (client) and the AMF's (server), past the first message.
func udpPair(tb testing.TB, o Options) (client, server Conn) {
	tb.Helper()
	ln, _, err := o.Listen(UDP, "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, _, err = o.Dial(ctx, UDP, ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	if err := client.WriteMsg([]byte("hello"), 0); err != nil {
		tb.Fatal(err)
	}
	if server, err = ln.Accept(); err != nil {
		tb.Fatal(err)
	}
	if _, _, err := server.ReadMsg(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// BenchmarkUDPPingPong is one NGAP-sized message each way over the
// user-space SCTP-in-UDP transport on loopback, back to back: the N2 round
// trip of a procedure step (gNB uplink, AMF downlink answer) with every
// goroutine on the path awake. ns/op is one round trip.
func BenchmarkUDPPingPong(b *testing.B) {
	client, server := udpPair(b, Options{})
	pdu := make([]byte, 120) // about an Uplink NAS Transport
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		roundTrip(b, client, server, pdu)
	}
}

// BenchmarkUDPPingPongIdle pauses between round trips, as a lone
// procedure does between its steps, so that every goroutine on the path
// (pion's writer, the socket reader, pion's reader, the stream reader)
// has parked and each hop pays a wake-up; the pauses are not timed.
func BenchmarkUDPPingPongIdle(b *testing.B) {
	client, server := udpPair(b, Options{})
	pdu := make([]byte, 120)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		time.Sleep(time.Millisecond)
		b.StartTimer()
		roundTrip(b, client, server, pdu)
	}
}

// roundTrip sends pdu from client to server and back on stream 1.
func roundTrip(b *testing.B, client, server Conn, pdu []byte) {
	if err := client.WriteMsg(pdu, 1); err != nil {
		b.Fatal(err)
	}
	got, stream, err := server.ReadMsg()
	if err != nil {
		b.Fatal(err)
	}
	if err := server.WriteMsg(got, stream); err != nil {
		b.Fatal(err)
	}
	if _, _, err := client.ReadMsg(); err != nil {
		b.Fatal(err)
	}
}
