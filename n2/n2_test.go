package n2

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/pion/sctp"
	"github.com/prometheus/client_golang/prometheus"
)

func listenTest(t *testing.T) Listener {
	t.Helper()
	ln, picked, err := Listen(UDP, "127.0.0.1:0")
	if err != nil || picked != UDP {
		t.Fatalf("listen: %v (picked %q)", err, picked)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func dialTest(t *testing.T, ln Listener) (client, server Conn) {
	t.Helper()
	return dialTestWith(t, ln, Options{})
}

// dialTestWith is dialTest with the dialing side's options.
func dialTestWith(t *testing.T, ln Listener, o Options) (client, server Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	accepted := make(chan Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	client, _, err := o.Dial(ctx, UDP, ln.Addr().String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	// The server learns of the association once the client speaks.
	if err := client.WriteMsg([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	select {
	case server = <-accepted:
	case <-ctx.Done():
		t.Fatal("no association accepted")
	}
	if pdu, stream, err := server.ReadMsg(); err != nil || string(pdu) != "hello" || stream != 0 {
		t.Fatalf("first message: %q on %d, %v", pdu, stream, err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestMessagesKeepBoundariesAndStreams(t *testing.T) {
	ln := listenTest(t)
	client, server := dialTest(t, ln)
	sizes := []int{1, 1024, 60 * 1024}
	for i, size := range sizes {
		pdu := bytes.Repeat([]byte{byte(i + 1)}, size)
		stream := uint16(i)
		if err := client.WriteMsg(pdu, stream); err != nil {
			t.Fatal(err)
		}
		got, gotStream, err := server.ReadMsg()
		if err != nil || !bytes.Equal(got, pdu) || gotStream != stream {
			t.Fatalf("uplink %d B on stream %d: got %d B on %d, %v", size, stream, len(got), gotStream, err)
		}
		if err := server.WriteMsg(pdu, stream); err != nil {
			t.Fatal(err)
		}
		got, gotStream, err = client.ReadMsg()
		if err != nil || !bytes.Equal(got, pdu) || gotStream != stream {
			t.Fatalf("downlink %d B on stream %d: got %d B on %d, %v", size, stream, len(got), gotStream, err)
		}
	}
}

func TestConcurrentWritersLoseNothingAndKeepOrderPerStream(t *testing.T) {
	ln := listenTest(t)
	client, server := dialTest(t, ln)
	const writers, each = 8, 125
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := client.WriteMsg([]byte(fmt.Sprintf("%d/%d", w, i)), uint16(1+w)); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	next := make([]int, writers)
	for n := 0; n < writers*each; n++ {
		pdu, stream, err := server.ReadMsg()
		if err != nil {
			t.Fatalf("after %d messages: %v", n, err)
		}
		var w, i int
		if _, err := fmt.Sscanf(string(pdu), "%d/%d", &w, &i); err != nil || stream != uint16(1+w) {
			t.Fatalf("message %q on stream %d", pdu, stream)
		}
		if i != next[w] {
			t.Fatalf("writer %d: got message %d, want %d (order per stream)", w, i, next[w])
		}
		next[w]++
	}
	wg.Wait()
}

func TestClosingOneAssociationLeavesOthersServing(t *testing.T) {
	ln := listenTest(t)
	c1, s1 := dialTest(t, ln)
	c2, s2 := dialTest(t, ln)
	c1.Close()
	done := make(chan error, 1)
	go func() {
		_, _, err := s1.ReadMsg()
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("server side of a closed association: %v, want io.EOF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server side never saw the association end")
	}
	if err := c2.WriteMsg([]byte("still here"), 3); err != nil {
		t.Fatal(err)
	}
	if pdu, _, err := s2.ReadMsg(); err != nil || string(pdu) != "still here" {
		t.Fatalf("other association: %q %v", pdu, err)
	}
}

func TestGarbageDatagramsDoNotHurt(t *testing.T) {
	ln := listenTest(t)
	client, server := dialTest(t, ln)
	junk, err := net.Dial("udp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer junk.Close()
	for i := 0; i < 10; i++ {
		_, _ = junk.Write([]byte("not sctp at all"))
	}
	if err := client.WriteMsg([]byte("ngap"), 1); err != nil {
		t.Fatal(err)
	}
	if pdu, _, err := server.ReadMsg(); err != nil || string(pdu) != "ngap" {
		t.Fatalf("after garbage: %q %v", pdu, err)
	}
}

func TestAutoPicksWhatTheHostHas(t *testing.T) {
	want := UDP
	switch {
	case KernelSCTPAvailable():
		want = Kernel
	case RawSCTPPermitted():
		want = Raw
	}
	if got, err := pick(Auto); err != nil || got != want {
		t.Fatalf("auto picked %q, %v; want %q", got, err, want)
	}
	if _, err := pick("sctp"); err == nil {
		t.Fatal("unknown transport accepted")
	}
	if !KernelSCTPAvailable() {
		if _, _, err := Listen(Kernel, "127.0.0.1:0"); err == nil {
			t.Fatal("kernel listen succeeded on a host without SCTP")
		}
	}
}

func TestUDPDropsAndCountsDataThatIsNotNGAP(t *testing.T) {
	for _, impl := range []string{ImplPion, ImplOwn} {
		t.Run(impl, func(t *testing.T) { dropsDataThatIsNotNGAP(t, impl) })
	}
}

func dropsDataThatIsNotNGAP(t *testing.T, impl string) {
	m := NewMetrics(prometheus.NewRegistry())
	o := Options{Metrics: m, SCTPImpl: impl}
	ln, _, err := o.Listen(UDP, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	client, server := dialTestWith(t, ln, o)
	notNGAP := []byte("not ngap")
	if own, ok := client.(*ownAssoc); ok {
		err = own.writeMessage(notNGAP, 1, uint32(sctp.PayloadTypeWebRTCBinary))
	} else {
		var s *sctp.Stream
		if s, err = client.(*assocConn).a.OpenStream(1, sctp.PayloadTypeWebRTCBinary); err == nil {
			_, err = s.WriteSCTP(notNGAP, sctp.PayloadTypeWebRTCBinary)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := client.WriteMsg([]byte("ngap"), 1); err != nil {
		t.Fatal(err)
	}
	if pdu, _, err := server.ReadMsg(); err != nil || string(pdu) != "ngap" {
		t.Fatalf("got %q, %v; want the NGAP message only", pdu, err)
	}
	if got := discarded(t, m, DiscardPPID); got != 1 {
		t.Fatalf("l25gc_n2_discarded_total{reason=ppid} = %v, want 1", got)
	}
}

// acceptOne returns the next association the listener accepts.
func acceptOne(t *testing.T, ln Listener) Conn {
	t.Helper()
	got := make(chan Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			got <- c
		}
	}()
	select {
	case c := <-got:
		t.Cleanup(func() { c.Close() })
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no association accepted")
		return nil
	}
}

// A kernel gNB asking for 2 outbound and 2 inbound streams gets downlink on
// streams 0 and 1 only: it discards DATA on any other (RFC 4960 6.5).
func TestUDPSendsOnlyOnGrantedStreams(t *testing.T) {
	ln := listenTest(t)
	gnb := dialRaw(t, ln.Addr(), nil)
	gnb.associate(2, 2)
	server := acceptOne(t, ln)
	if got := server.Streams(); got != 2 {
		t.Fatalf("Streams() = %d on an association granting 2", got)
	}
	if err := server.WriteMsg([]byte("ngap"), 2); err == nil {
		t.Fatal("WriteMsg on stream 2 of 2 succeeded")
	}
	if err := server.WriteMsg([]byte("ngap"), 1); err != nil {
		t.Fatal(err)
	}
	_, data := gnb.readUntil(0)
	if stream := binary.BigEndian.Uint16(data.value[4:]); stream != 1 {
		t.Fatalf("DATA on stream %d, want 1", stream)
	}
}

// readEnd waits for the association's reader to see it end.
func readEnd(t *testing.T, c Conn) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		for {
			if _, _, err := c.ReadMsg(); err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the association never ended")
		return nil
	}
}

// A gNB that restarts on the same address and port gets a new association
// (RFC 4960 5.2.2, 5.2.4), and the old one ends so its UEs are released.
func TestUDPPeerRestartingOnTheSamePortGetsANewAssociation(t *testing.T) {
	ln := listenTest(t)
	before := dialRaw(t, ln.Addr(), nil)
	before.associate(2, 2)
	old := acceptOne(t, ln)

	local := before.conn.LocalAddr().(*net.UDPAddr)
	before.conn.Close() // the gNB dies without SHUTDOWN and comes back
	after := dialRaw(t, ln.Addr(), local)
	after.tag = before.tag + 1
	after.associate(2, 2)
	fresh := acceptOne(t, ln)

	if err := readEnd(t, old); !errors.Is(err, io.EOF) {
		t.Fatalf("old association ended with %v, want io.EOF", err)
	}
	after.sendData(1, []byte("ng setup again"))
	if pdu, stream, err := fresh.ReadMsg(); err != nil || string(pdu) != "ng setup again" || stream != 1 {
		t.Fatalf("new association: %q on %d, %v", pdu, stream, err)
	}
}

// An INIT forged with a live peer's address gets an INIT ACK the real peer
// ignores; the live association keeps serving (RFC 4960 5.2.2).
func TestUDPStrayInitLeavesTheAssociationServing(t *testing.T) {
	ln := listenTest(t)
	gnb := dialRaw(t, ln.Addr(), nil)
	gnb.associate(2, 2)
	server := acceptOne(t, ln)
	gnb.send(0, encodeChunk(chunkInit, 0, initValue(gnb.tag+7, 2, 2, 1)))
	_, ack := gnb.readUntil(chunkInitAck)
	if tag := binary.BigEndian.Uint32(ack.value); tag == gnb.peerTag {
		t.Fatal("the INIT ACK to an unexpected INIT reuses the association's tag (RFC 4960 5.2.2 wants a new one)")
	}
	gnb.sendData(1, []byte("still here"))
	if pdu, _, err := server.ReadMsg(); err != nil || string(pdu) != "still here" {
		t.Fatalf("after a stray INIT: %q, %v", pdu, err)
	}
}

func listenWith(t *testing.T, o Options) Listener {
	t.Helper()
	ln, _, err := o.Listen(UDP, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// A gNB that dies without a word is found out by heartbeats (RFC 4960 8.3)
// and its association ends, so the AMF removes the gNB and its UEs.
func TestUDPSilentPeerIsDeclaredFailed(t *testing.T) {
	ln := listenWith(t, Options{HeartbeatInterval: 20 * time.Millisecond, PathMaxRetrans: 2})
	gnb := dialRaw(t, ln.Addr(), nil)
	gnb.associate(2, 2)
	server := acceptOne(t, ln)
	gnb.conn.Close() // from now on nothing answers
	if err := readEnd(t, server); !errors.Is(err, errPeerUnreachable) {
		t.Fatalf("association ended with %v, want %v", err, errPeerUnreachable)
	}
}

// A peer that answers heartbeats keeps its association however often it is
// probed, and every HEARTBEAT carries its Heartbeat Info.
func TestUDPAnsweredHeartbeatsKeepTheAssociation(t *testing.T) {
	// PathMaxRetrans 20: see TestUDPClientAnswersHeartbeats.
	ln := listenWith(t, Options{HeartbeatInterval: 10 * time.Millisecond, PathMaxRetrans: 20})
	gnb := dialRaw(t, ln.Addr(), nil)
	gnb.associate(2, 2)
	server := acceptOne(t, ln)
	gnb.answerHeartbeats(6)
	gnb.sendData(1, []byte("alive"))
	if pdu, _, err := server.ReadMsg(); err != nil || string(pdu) != "alive" {
		t.Fatalf("after heartbeats: %q, %v", pdu, err)
	}
}

// Our own client answers the AMF's heartbeats too.
func TestUDPClientAnswersHeartbeats(t *testing.T) {
	// 20 unanswered probes in a row (~200 ms) end the association: a
	// client that does not answer still fails within the deadline below,
	// while a CI machine that stalls this process for a few time slices
	// (PathMaxRetrans 1 failed there after ~15 ms without an answer) does not.
	ln := listenWith(t, Options{HeartbeatInterval: 10 * time.Millisecond, PathMaxRetrans: 20})
	client, server := dialTest(t, ln)
	neg := negotiationOf(server)
	for deadline := time.Now().Add(10 * time.Second); neg.heartbeatAcks.Load() < 5; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d HEARTBEAT ACKs seen", neg.heartbeatAcks.Load())
		}
	}
	if err := client.WriteMsg([]byte("alive"), 1); err != nil {
		t.Fatal(err)
	}
	if pdu, _, err := server.ReadMsg(); err != nil || string(pdu) != "alive" {
		t.Fatalf("after heartbeats: %q, %v", pdu, err)
	}
}

// pion's bare RTT-probe HEARTBEAT never reaches the wire.
func TestBareHeartbeatIsNotSent(t *testing.T) {
	var n negotiation
	bare := append(make([]byte, commonHeaderLen), encodeChunk(chunkHeartbeat, 0, nil)...)
	if n.sent(bare) {
		t.Fatal("a HEARTBEAT without Heartbeat Info would be sent")
	}
	if !n.sent(n.heartbeatPacketFor(t)) {
		t.Fatal("our own HEARTBEAT would not be sent")
	}
}

// A Linux gNB's INIT carries parameters pion rejects whole INITs for
// (Supported Address Types, its addresses); the AMF still answers it.
func TestUDPAcceptsTheINITOfALinuxGNB(t *testing.T) {
	ln := listenTest(t)
	gnb := dialRaw(t, ln.Addr(), nil)
	gnb.associate(10, 65535, linuxInitParams()...)
	server := acceptOne(t, ln)
	gnb.sendData(1, []byte("ng setup"))
	if pdu, _, err := server.ReadMsg(); err != nil || string(pdu) != "ng setup" {
		t.Fatalf("%q, %v", pdu, err)
	}
	if got := server.Streams(); got != 10 {
		t.Fatalf("Streams() = %d; the gNB offered 10 outbound, 65535 inbound", got)
	}
}

// Linux sends every encapsulated association from its one tunnelling port
// (RFC 6951 5.1, net.sctp.udp_port): two gNB associations from one host
// share a UDP address and differ in SCTP ports, and both must be served.
func TestUDPAssociationsSharingAUDPAddressAreKeptApart(t *testing.T) {
	ln := listenTest(t)
	first := dialRaw(t, ln.Addr(), nil)
	first.associate(2, 2)
	s1 := acceptOne(t, ln)
	second := *first // same UDP socket, another SCTP port and tag
	second.port, second.tag, second.tsn = rawPeerPort+1, first.tag+1, 5000
	second.associate(2, 2)
	s2 := acceptOne(t, ln)
	second.sendData(1, []byte("second"))
	first.sendData(1, []byte("first"))
	for _, c := range []struct {
		conn Conn
		want string
	}{{s1, "first"}, {s2, "second"}} {
		if pdu, _, err := c.conn.ReadMsg(); err != nil || string(pdu) != c.want {
			t.Fatalf("got %q, %v; want %q", pdu, err, c.want)
		}
	}
}
