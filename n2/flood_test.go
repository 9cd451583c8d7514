package n2

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// usage is what a flood must not leave behind.
type usage struct {
	heap       uint64
	goroutines int
}

func measure() usage {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return usage{heap: m.HeapAlloc, goroutines: runtime.NumGoroutine()}
}

// settled waits until usage is back within slack of base, and fails
// saying what stayed.
func settled(t *testing.T, base usage, heapSlack uint64, goroutineSlack int) {
	t.Helper()
	var now usage
	for i := 0; i < 200; i++ {
		now = measure()
		if now.heap <= base.heap+heapSlack && now.goroutines <= base.goroutines+goroutineSlack {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	stacks := string(buf[:runtime.Stack(buf, true)])
	t.Fatalf("heap %d -> %d bytes, goroutines %d -> %d; first stacks:\n%s", base.heap, now.heap,
		base.goroutines, now.goroutines, stacks[:min(len(stacks), 3000)])
}

func listenerOf(t *testing.T, ln Listener) *sctpListener {
	l, ok := ln.(*sctpListener)
	if !ok {
		t.Fatalf("listener is %T", ln)
	}
	return l
}

// 20,000 INITs from new SCTP ports (a SYN-flood's SCTP form) get INIT ACKs
// and leave nothing behind: RFC 4960 5.1.3 keeps the state in the cookie.
func TestUDPInitFloodKeepsNoState(t *testing.T) {
	ln := listenTest(t)
	flood := dialRaw(t, ln.Addr(), nil)
	base := measure()
	const inits = 20000
	for i := 0; i < inits; i++ {
		flood.port = uint16(10000 + i)
		flood.send(0, encodeChunk(chunkInit, 0, initValue(uint32(i+1), 2, 2, 1)))
		if vtag, _ := flood.readUntil(chunkInitAck); vtag != uint32(i+1) { // one at a time: none lost in socket buffers
			t.Fatalf("INIT ACK %d carries tag %d", i+1, vtag)
		}
	}
	// A real gNB after the flood: the AMF read everything before it.
	gnb := dialRaw(t, ln.Addr(), nil)
	gnb.associate(2, 2)
	server := acceptOne(t, ln)
	if n := listenerOf(t, ln).associations(); n != 1 {
		t.Fatalf("%d associations after %d INITs and one handshake, want 1", n, inits)
	}
	server.Close()
	settled(t, base, 1<<20, 0)
}

// A cookie echoed from another address, altered or too old sets nothing up
// (RFC 4960 5.1.5).
func TestUDPCookieIsCheckedBeforeAnythingIsSetUp(t *testing.T) {
	ln := listenTest(t)
	l := listenerOf(t, ln)
	gnb := dialRaw(t, ln.Addr(), nil)
	gnb.send(0, encodeChunk(chunkInit, 0, initValue(gnb.tag, 2, 2, 1)))
	_, ack := gnb.readUntil(chunkInitAck)
	tag, ck := binary.BigEndian.Uint32(ack.value), stateCookie(t, ack.value[16:])

	other := dialRaw(t, ln.Addr(), nil)
	other.send(tag, encodeChunk(chunkCookieEcho, 0, ck))
	altered := append([]byte(nil), ck...)
	altered[len(altered)-40] ^= 1
	gnb.send(tag, encodeChunk(chunkCookieEcho, 0, altered))
	from := netipOf(t, gnb.conn.LocalAddr())
	old := l.jar.seal(from, cookie{created: time.Now().Add(-2 * DefaultCookieLife), localPort: rawPeerPort, peerPort: gnb.port,
		local:  ck[cookieHeaderLen : cookieHeaderLen+int(binary.BigEndian.Uint16(ck[6:]))],
		remote: ck[cookieHeaderLen+int(binary.BigEndian.Uint16(ck[6:])) : len(ck)-cookieMACLen]})
	gnb.send(tag, encodeChunk(chunkCookieEcho, 0, old))

	gnb.send(tag, encodeChunk(chunkCookieEcho, 0, ck)) // the genuine one, last
	gnb.readUntil(chunkCookieAck)
	acceptOne(t, ln)
	if n := l.associations(); n != 1 {
		t.Fatalf("%d associations, want 1: a forged, altered or stale cookie was accepted", n)
	}
}

// An out-of-the-blue packet (here: DATA for an association the AMF does
// not have, e.g. from before its restart) gets an ABORT with the T bit and
// the packet's own tag (RFC 4960 8.4 (8)), so the gNB sets up anew.
func TestUDPOutOfTheBluePacketIsAborted(t *testing.T) {
	ln := listenTest(t)
	gnb := dialRaw(t, ln.Addr(), nil)
	gnb.peerTag = 0xfeedbeef
	gnb.sendData(1, []byte("uplink to an AMF that restarted"))
	vtag, abort := gnb.readUntil(chunkAbort)
	if vtag != 0xfeedbeef || abort.typ != chunkAbort {
		t.Fatalf("ABORT with tag %#x, want the packet's %#x reflected", vtag, 0xfeedbeef)
	}
	if flags := lastFlags(gnb); flags&flagT == 0 {
		t.Fatal("ABORT without the T bit (RFC 4960 8.4 (8))")
	}
}

// lastFlags re-reads the flags of the chunk readUntil returned; rawPeer
// keeps only type and value, so the test sends again and reads raw.
func lastFlags(r *rawPeer) uint8 {
	r.sendData(1, []byte("again"))
	buf := make([]byte, 1500)
	_ = r.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := r.conn.Read(buf)
	if err != nil || n < commonHeaderLen+4 {
		r.t.Fatalf("no second answer: %v", err)
	}
	return buf[commonHeaderLen+1]
}

// The cases RFC 4960 8.4 exempts: an out-of-the-blue ABORT, SHUTDOWN
// COMPLETE or COOKIE ACK is dropped silently; a SHUTDOWN ACK gets SHUTDOWN
// COMPLETE with the T bit.
func TestUDPOutOfTheBlueExceptions(t *testing.T) {
	ln := listenTest(t)
	gnb := dialRaw(t, ln.Addr(), nil)
	gnb.send(1, encodeChunk(chunkAbort, 0, nil))
	gnb.send(2, encodeChunk(chunkShutdownComplete, 0, nil))
	gnb.send(3, encodeChunk(chunkCookieAck, 0, nil))
	gnb.send(4, encodeChunk(chunkShutdownAck, 0, nil))
	vtag, chunks := gnb.read()
	if vtag != 4 || len(chunks) != 1 || chunks[0].typ != chunkShutdownComplete {
		t.Fatalf("first answer: tag %d, chunks %+v; want SHUTDOWN COMPLETE with tag 4 (the others are not answered)", vtag, chunks)
	}
}

// Past amf.ngap.max_associations a new peer's COOKIE ECHO gets an ABORT
// with Out of Resource, and the associations up keep serving.
func TestUDPAssociationCap(t *testing.T) {
	ln := listenWith(t, Options{MaxAssociations: 2})
	for i := 0; i < 2; i++ {
		dialRaw(t, ln.Addr(), nil).associate(2, 2)
		acceptOne(t, ln)
	}
	third := dialRaw(t, ln.Addr(), nil)
	third.send(0, encodeChunk(chunkInit, 0, initValue(third.tag, 2, 2, 1)))
	_, ack := third.readUntil(chunkInitAck)
	third.send(binary.BigEndian.Uint32(ack.value), encodeChunk(chunkCookieEcho, 0, stateCookie(t, ack.value[16:])))
	vtag, abort := third.readUntil(chunkAbort)
	if vtag != third.tag || len(abort.value) < 4 || binary.BigEndian.Uint16(abort.value) != causeOutOfResource {
		t.Fatalf("ABORT tag %#x (want %#x), cause % x (want Out of Resource, 4)", vtag, third.tag, abort.value)
	}
	if n := listenerOf(t, ln).associations(); n != 2 {
		t.Fatalf("%d associations, want the cap of 2", n)
	}
}

// Associations whose peers vanish are found out by heartbeats and release
// everything: goroutines and memory return to where they were.
func TestUDPVanishedPeersLeaveNothingBehind(t *testing.T) {
	ln := listenWith(t, Options{HeartbeatInterval: 20 * time.Millisecond, PathMaxRetrans: 1})
	l := listenerOf(t, ln)
	base := measure()
	const peers = 200
	ended := make(chan error, peers)
	for i := 0; i < peers; i++ {
		gnb := dialRaw(t, ln.Addr(), nil)
		gnb.associate(2, 2)
		server, err := ln.Accept() // not acceptOne: its clean-up would hold every association
		if err != nil {
			t.Fatal(err)
		}
		go func() { // the AMF's reader of this gNB
			for {
				if _, _, err := server.ReadMsg(); err != nil {
					ended <- err
					return
				}
			}
		}()
		gnb.conn.Close() // gone without a word
	}
	for i := 0; i < peers; i++ {
		<-ended
	}
	// A reader hears of the failure before the association's packet conn
	// has closed and left the table: give the last ones a moment.
	n := l.associations()
	for deadline := time.Now().Add(5 * time.Second); n != 0 && time.Now().Before(deadline); n = l.associations() {
		time.Sleep(10 * time.Millisecond)
	}
	if n != 0 {
		t.Fatalf("%d associations left after their peers vanished", n)
	}
	settled(t, base, 1<<20, 0)
}

// An NGAP PDU over 64 KiB (a large UE Radio Capability) arrives whole; one
// over the bound is dropped and counted, and the association stays.
func TestUDPLargeMessagesAreReceivedUpToTheBound(t *testing.T) {
	metrics := NewMetrics(prometheus.NewRegistry())
	ln := listenWith(t, Options{Metrics: metrics, MaxMessageSize: 256 << 10})
	accepted := make(chan Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, _, err := Options{MaxMessageSize: 1 << 20}.Dial(ctx, UDP, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	big := bytes.Repeat([]byte("radio capability "), 100<<10/17)
	huge := make([]byte, 300<<10)
	for _, pdu := range [][]byte{big, huge, []byte("after")} {
		if err := client.WriteMsg(pdu, 1); err != nil {
			t.Fatalf("send %d bytes: %v", len(pdu), err)
		}
	}
	server := <-accepted
	defer server.Close()
	for _, want := range [][]byte{big, []byte("after")} {
		pdu, _, err := server.ReadMsg()
		if err != nil || !bytes.Equal(pdu, want) {
			t.Fatalf("got %d bytes (%v), want %d", len(pdu), err, len(want))
		}
	}
	if n := discarded(t, metrics, DiscardTooBig); n != 1 {
		t.Fatalf("%v messages counted too big, want 1", n)
	}
}

func netipOf(t *testing.T, a net.Addr) netip.AddrPort {
	ua, ok := a.(*net.UDPAddr)
	if !ok {
		t.Fatalf("%T", a)
	}
	return netip.AddrPortFrom(ua.AddrPort().Addr().Unmap(), ua.AddrPort().Port())
}
