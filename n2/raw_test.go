package n2

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

// rawTestPort keeps parallel test runs on one host apart: a raw socket
// sees every SCTP packet, so listeners differ by SCTP port.
func rawTestPort() int { return 40000 + os.Getpid()%20000 }

// listenRawTest listens on raw IP, or, where the kernel has SCTP, checks
// that raw refuses (and returns nil).
func listenRawTest(t *testing.T, o Options) Listener {
	t.Helper()
	ln, _, err := o.Listen(Raw, fmt.Sprintf("127.0.0.1:%d", rawTestPort()))
	if kernelHasSCTP() {
		if !errors.Is(err, errKernelHasSCTP) {
			t.Fatalf("raw on a host whose kernel has SCTP: %v, want a refusal", err)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// Our gNB side and our AMF side speak SCTP on raw IP to each other.
func TestRawCarriesNGAPBetweenUserSpaceEndpoints(t *testing.T) {
	ln := listenRawTest(t, Options{})
	if ln == nil {
		return // refused where the kernel has SCTP: checked above
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, picked, err := Dial(ctx, Raw, ln.Addr().String())
	if err != nil || picked != Raw {
		t.Fatalf("dial: %v (%s)", err, picked)
	}
	defer client.Close()
	if err := client.WriteMsg([]byte("ng setup"), 0); err != nil {
		t.Fatal(err)
	}
	server := acceptOne(t, ln)
	if pdu, stream, err := server.ReadMsg(); err != nil || string(pdu) != "ng setup" || stream != 0 {
		t.Fatalf("%q on %d, %v", pdu, stream, err)
	}
	if err := server.WriteMsg([]byte("ng setup response"), 1); err != nil {
		t.Fatal(err)
	}
	if pdu, stream, err := client.ReadMsg(); err != nil || string(pdu) != "ng setup response" || stream != 1 {
		t.Fatalf("%q on %d, %v", pdu, stream, err)
	}
}

// Raw sockets bind no port, so the listener claims its SCTP port itself: a
// second listener on it fails like a second bind, and the port is free
// again once the first is closed.
func TestRawListenerClaimsItsPort(t *testing.T) {
	ln := listenRawTest(t, Options{})
	if ln == nil {
		return
	}
	if second, _, err := Listen(Raw, ln.Addr().String()); err == nil {
		second.Close()
		t.Fatal("a second raw listener on the same SCTP port started")
	}
	ln.Close()
	again, _, err := Listen(Raw, ln.Addr().String())
	if err != nil {
		t.Fatalf("the port stayed claimed after Close: %v", err)
	}
	again.Close()
}

// ipPeer is a hand-driven SCTP endpoint on raw IP, sending what a kernel
// gNB sends.
type ipPeer struct {
	t       *testing.T
	c       *net.IPConn
	port    uint16
	amf     *net.IPAddr
	amfPort uint16
}

func newIPPeer(t *testing.T, ln Listener) *ipPeer {
	c, err := net.ListenIP("ip4:132", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	a := ln.Addr().(*net.TCPAddr)
	return &ipPeer{t: t, c: c, port: 30000 + uint16(os.Getpid()%1000), amf: &net.IPAddr{IP: a.IP}, amfPort: uint16(a.Port)}
}

func (p *ipPeer) send(vtag uint32, chunks ...[]byte) {
	if _, err := p.c.WriteToIP(buildPacket(p.port, p.amfPort, vtag, chunks...), p.amf); err != nil {
		p.t.Fatal(err)
	}
}

// readUntil returns the tag and chunk of the first packet to our port
// that carries a chunk of type typ.
func (p *ipPeer) readUntil(typ uint8) (uint32, chunkRef, []byte) {
	p.t.Helper()
	buf := make([]byte, maxDatagram)
	_ = p.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		n, _, err := p.c.ReadFromIP(buf)
		if err != nil {
			p.t.Fatalf("no chunk of type %d from the AMF: %v", typ, err)
		}
		pkt, err := parseSCTP(append([]byte(nil), buf[:n]...))
		if err != nil || pkt.dstPort != p.port {
			continue
		}
		for _, c := range pkt.chunks {
			if c.typ == typ {
				return pkt.vtag, c, pkt.raw
			}
		}
	}
}

// A kernel gNB bound to several addresses lists them in its INIT (RFC 4960
// 3.3.2.1); the AMF on raw IP answers, sets up the association on a valid
// cookie, takes DATA, and ABORTs (T bit) a packet for no association.
func TestRawServesAKernelGNBsINITWithSeveralAddresses(t *testing.T) {
	ln := listenRawTest(t, Options{})
	if ln == nil {
		return
	}
	gnb := newIPPeer(t, ln)
	init := initValue(0x1234, 2, 2, 100)
	init = append(init, encodeParam(5, []byte{127, 0, 0, 1})...)
	init = append(init, encodeParam(5, []byte{127, 0, 0, 2})...)
	init = append(init, encodeParam(12, []byte{0, 5})...)
	init = append(init, encodeParam(0xc000, nil)...)
	gnb.send(0, encodeChunk(chunkInit, 0, init))
	vtag, ack, raw := gnb.readUntil(chunkInitAck)
	if vtag != 0x1234 {
		t.Fatalf("INIT ACK tag %#x, want the gNB's 0x1234", vtag)
	}
	v := ack.value(raw)
	amfTag := binary.BigEndian.Uint32(v)
	gnb.send(amfTag, encodeChunk(chunkCookieEcho, 0, stateCookie(t, v[16:])))
	gnb.readUntil(chunkCookieAck)
	server := acceptOne(t, ln)
	data := make([]byte, 12)
	binary.BigEndian.PutUint32(data[0:], 100)
	binary.BigEndian.PutUint16(data[4:], 1)
	binary.BigEndian.PutUint32(data[8:], PPIDNGAP)
	gnb.send(amfTag, encodeChunk(chunkData, 0x03, append(data, "ng setup"...)))
	if pdu, stream, err := server.ReadMsg(); err != nil || string(pdu) != "ng setup" || stream != 1 {
		t.Fatalf("%q on %d, %v", pdu, stream, err)
	}
	if server.Streams() != 2 {
		t.Fatalf("Streams() = %d, want the 2 the gNB offered", server.Streams())
	}

	gnb.port++ // another SCTP port: no association there
	gnb.send(0xabcd, encodeChunk(chunkData, 0x03, append(data, "stale"...)))
	vtag, abort, _ := gnb.readUntil(chunkAbort)
	if vtag != 0xabcd || abort.flags&flagT == 0 {
		t.Fatalf("out-of-the-blue ABORT: tag %#x flags %#x, want 0xabcd with the T bit", vtag, abort.flags)
	}
}

// associate runs a kernel gNB's handshake on raw IP and returns the AMF's
// tag and the accepted association.
func (p *ipPeer) associate(ln Listener, tag uint32) (uint32, Conn) {
	p.t.Helper()
	p.send(0, encodeChunk(chunkInit, 0, initValue(tag, 2, 2, 100)))
	_, ack, raw := p.readUntil(chunkInitAck)
	v := ack.value(raw)
	amfTag := binary.BigEndian.Uint32(v)
	p.send(amfTag, encodeChunk(chunkCookieEcho, 0, stateCookie(p.t, v[16:])))
	p.readUntil(chunkCookieAck)
	return amfTag, acceptOne(p.t, ln)
}

// On raw IP too: a gNB that restarts on its address and port gets a new
// association and the old one ends (RFC 4960 5.2.4); a repeated COOKIE
// ECHO is answered without a second association (5.2.4 D); the gNB's
// ABORT ends its association; a silent gNB is found out by heartbeats.
func TestRawRestartAbortAndHeartbeats(t *testing.T) {
	ln := listenRawTest(t, Options{HeartbeatInterval: -1}) // heartbeats come last
	if ln == nil {
		return
	}
	gnb := newIPPeer(t, ln)
	_, old := gnb.associate(ln, 0x1111)

	gnb.send(0, encodeChunk(chunkInit, 0, initValue(0x2222, 2, 2, 500)))
	_, ack, raw := gnb.readUntil(chunkInitAck)
	v := ack.value(raw)
	amfTag, echo := binary.BigEndian.Uint32(v), encodeChunk(chunkCookieEcho, 0, stateCookie(t, v[16:]))
	gnb.send(amfTag, echo)
	gnb.readUntil(chunkCookieAck)
	fresh := acceptOne(t, ln)
	if err := readEnd(t, old); !errors.Is(err, errPeerRestarted) {
		t.Fatalf("old association ended with %v, want a restart", err)
	}
	gnb.send(amfTag, echo) // our COOKIE ACK lost, as the gNB sees it
	gnb.readUntil(chunkCookieAck)
	if n := ln.(*sctpListener).associations(); n != 1 {
		t.Fatalf("%d associations after a repeated COOKIE ECHO, want 1", n)
	}

	gnb.send(amfTag, encodeChunk(chunkAbort, 0, nil))
	if err := readEnd(t, fresh); err == nil {
		t.Fatal("the association outlived the gNB's ABORT")
	}

	ln.Close() // one raw listener per port at a time: both would see every packet
	ln = listenRawTest(t, Options{HeartbeatInterval: 20 * time.Millisecond, PathMaxRetrans: 1})
	gnb.port++
	_, silent := gnb.associate(ln, 0x3333)
	if err := readEnd(t, silent); !errors.Is(err, errPeerUnreachable) {
		t.Fatalf("silent gNB: %v, want the heartbeat failure", err)
	}
}
