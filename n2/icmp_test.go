package n2

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// freeUDPAddr is a loopback UDP address nobody listens on: the host
// answers packets to it with ICMP Port Unreachable, as for a killed AMF.
func freeUDPAddr(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	return addr
}

// A gNB dialing an AMF that is not up yet is refused by ICMP and tries
// again on its own, and associates once the AMF listens (RFC 6951 5.5):
// it does not wait out T1-init's doubling timer.
func TestUDPDialRetriesARefusedAMFUntilItListens(t *testing.T) {
	addr := freeUDPAddr(t)
	var refusals atomic.Int32
	thirdRefusal := make(chan struct{})
	o := Options{onRefused: func() {
		if refusals.Add(1) == 3 {
			close(thirdRefusal)
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type dialed struct {
		c   Conn
		err error
	}
	done := make(chan dialed, 1)
	go func() {
		c, _, err := o.Dial(ctx, UDP, addr)
		done <- dialed{c, err}
	}()
	select {
	case <-thirdRefusal:
	case d := <-done:
		t.Fatalf("dial ended before the AMF was up: %v", d.err)
	case <-time.After(10 * time.Second):
		t.Fatalf("%d dial attempts refused by ICMP, want 3: ICMP Port Unreachable is not seen", refusals.Load())
	}
	ln, _, err := Listen(UDP, addr)
	if err != nil {
		t.Fatalf("AMF back on %s: %v", addr, err)
	}
	defer ln.Close()
	d := <-done
	if d.err != nil {
		t.Fatalf("dial after the AMF came back: %v", d.err)
	}
	defer d.c.Close()
	if err := d.c.WriteMsg([]byte("ng setup"), 0); err != nil {
		t.Fatal(err)
	}
	server := acceptOne(t, ln)
	if pdu, _, err := server.ReadMsg(); err != nil || string(pdu) != "ng setup" {
		t.Fatalf("AMF read %q, %v", pdu, err)
	}
}

// killAMF closes the AMF's listener, which drops its associations
// without a word, as SIGKILL would: no SHUTDOWN or ABORT reaches the gNB,
// and its UDP port is closed.
func killAMF(t *testing.T, ln Listener) {
	t.Helper()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
}

// gnbOf dials ln with o and has the AMF take the association.
func gnbOf(t *testing.T, ln Listener, o Options) Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := o.Dial(ctx, UDP, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.WriteMsg([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	server := acceptOne(t, ln)
	if _, _, err := server.ReadMsg(); err != nil {
		t.Fatal(err)
	}
	return c
}

// The first message a gNB sends after its AMF died draws ICMP Port
// Unreachable, which ends the association at once, as an ABORT would
// (RFC 9260 appendix C), rather than after retransmissions and heartbeats.
func TestUDPAssociationEndsWhenItsDataIsRefused(t *testing.T) {
	ln := listenWith(t, Options{})
	gnb := gnbOf(t, ln, Options{HeartbeatInterval: -1})
	killAMF(t, ln)
	if err := gnb.WriteMsg([]byte("uplink nas"), 1); err != nil {
		t.Fatal(err)
	}
	err := readEnd(t, gnb)
	if !errors.Is(err, errPortUnreachable) || !errors.Is(err, io.EOF) {
		t.Fatalf("association ended with %v, want the ICMP refusal", err)
	}
}

// A gNB with nothing to send finds its dead AMF by the next heartbeat,
// which is refused: the association ends on that, not after
// PathMaxRetrans unanswered heartbeats.
func TestUDPAssociationEndsWhenItsHeartbeatIsRefused(t *testing.T) {
	ln := listenWith(t, Options{})
	gnb := gnbOf(t, ln, Options{HeartbeatInterval: 50 * time.Millisecond, PathMaxRetrans: 100})
	killAMF(t, ln)
	err := readEnd(t, gnb)
	if !errors.Is(err, errPortUnreachable) {
		t.Fatalf("association ended with %v, want the ICMP refusal", err)
	}
}

func TestRTOMaxReachesPion(t *testing.T) {
	if got := sctpConfig(nil, "gnb", Options{RTOMax: 1500 * time.Millisecond}).RTOMax; got != 1500 {
		t.Fatalf("RTO.Max %v ms, want 1500", got)
	}
	if got := sctpConfig(nil, "gnb", Options{}).RTOMax; got != 0 {
		t.Fatalf("RTO.Max %v ms by default, want 0 (pion's 60 s, RFC 9260 16)", got)
	}
}

// sctpHeader is a common header with the given Verification Tag and one
// chunk of type typ whose first value word is word.
func sctpHeader(vtag uint32, typ uint8, word uint32) []byte {
	b := make([]byte, commonHeaderLen+8)
	binary.BigEndian.PutUint32(b[4:], vtag)
	b[commonHeaderLen] = typ
	binary.BigEndian.PutUint16(b[commonHeaderLen+2:], 8)
	binary.BigEndian.PutUint32(b[commonHeaderLen+4:], word)
	return b
}

// Only a Port Unreachable quoting one of our own packets counts (RFC 9260
// appendix C ICMP5, ICMP6): anyone can send ICMP.
func TestICMPCountsOnlyWhenItQuotesOurPacket(t *testing.T) {
	const local, peer = 0x1111, 0x2222
	for _, c := range []struct {
		name string
		r    icmpReport
		want bool
	}{
		{"DATA with the peer's tag", icmpReport{true, sctpHeader(peer, 0, 0)}, true},
		{"another association's tag", icmpReport{true, sctpHeader(0x3333, 0, 0)}, false},
		{"our INIT", icmpReport{true, sctpHeader(0, chunkInit, local)}, true},
		{"someone else's INIT", icmpReport{true, sctpHeader(0, chunkInit, 0x4444)}, false},
		{"tag 0 on no INIT", icmpReport{true, sctpHeader(0, chunkCookieEcho, local)}, false},
		{"INIT cut short", icmpReport{true, sctpHeader(0, chunkInit, local)[:commonHeaderLen+4]}, false},
		{"header cut short", icmpReport{true, sctpHeader(peer, 0, 0)[:8]}, false},
		{"not Port Unreachable", icmpReport{false, sctpHeader(peer, 0, 0)}, false},
	} {
		if got := c.r.answersUs(local, peer); got != c.want {
			t.Errorf("%s: counted %v, want %v", c.name, got, c.want)
		}
	}
	if (icmpReport{true, sctpHeader(0, 0, 0)}).answersUs(local, 0) {
		t.Error("tag 0 counted as the peer's before the peer's tag is known")
	}
}

// extendedErr is the control message Linux puts on an error queue entry.
func extendedErr(level, typ int32, origin, icmpType, code uint8) []byte {
	b := make([]byte, syscall.CmsgSpace(sockExtendedErrSz))
	binary.NativeEndian.PutUint64(b[0:], uint64(syscall.CmsgLen(sockExtendedErrSz)))
	binary.NativeEndian.PutUint32(b[8:], uint32(level))
	binary.NativeEndian.PutUint32(b[12:], uint32(typ))
	data := b[syscall.CmsgLen(0):]
	binary.NativeEndian.PutUint32(data[0:], uint32(syscall.ECONNREFUSED))
	data[4], data[5], data[6] = origin, icmpType, code
	return b
}

func TestICMPReportReadsPortUnreachableOnly(t *testing.T) {
	quoted := sctpHeader(7, 0, 0)
	for _, c := range []struct {
		name string
		oob  []byte
		want bool
	}{
		{"ICMPv4 port unreachable", extendedErr(syscall.IPPROTO_IP, syscall.IP_RECVERR, eeOriginICMP, 3, 3), true},
		{"ICMPv6 port unreachable", extendedErr(syscall.IPPROTO_IPV6, syscall.IPV6_RECVERR, eeOriginICMP6, 1, 4), true},
		{"ICMPv4 host unreachable", extendedErr(syscall.IPPROTO_IP, syscall.IP_RECVERR, eeOriginICMP, 3, 1), false},
		{"local error", extendedErr(syscall.IPPROTO_IP, syscall.IP_RECVERR, 1, 3, 3), false},
		{"no control message", nil, false},
	} {
		r := parseICMPReport(quoted, c.oob)
		if r.portUnreachable != c.want || !r.answersUs(0, 7) == c.want {
			t.Errorf("%s: port unreachable %v, want %v", c.name, r.portUnreachable, c.want)
		}
	}
}

// The error queue holds what a remote host chose to send: reading it must
// never fail on any shape.
func FuzzICMPReport(f *testing.F) {
	f.Add(sctpHeader(7, chunkInit, 7), extendedErr(syscall.IPPROTO_IP, syscall.IP_RECVERR, eeOriginICMP, 3, 3))
	f.Add([]byte{}, []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data, oob []byte) {
		r := parseICMPReport(data, oob)
		_ = r.answersUs(7, 7)
	})
}

// scriptedConn answers Read from a script and records read deadlines.
type scriptedConn struct {
	net.Conn
	reads     []error // one per Read; nil gives one byte
	writeErr  error
	deadlines []time.Time
}

func (s *scriptedConn) Read(b []byte) (int, error) {
	if len(s.reads) == 0 {
		return 0, io.EOF
	}
	err := s.reads[0]
	s.reads = s.reads[1:]
	if err != nil {
		return 0, err
	}
	return 1, nil
}

func (s *scriptedConn) Write(b []byte) (int, error) { return 0, s.writeErr }

func (s *scriptedConn) SetReadDeadline(t time.Time) error {
	s.deadlines = append(s.deadlines, t)
	return nil
}

// noQueue is a socket whose error queue is always empty.
type noQueue struct{ syscall.RawConn }

func (noQueue) Read(f func(uintptr) bool) error { f(^uintptr(0)); return nil }

// An ICMP error reported to a write loses that packet only (SCTP
// retransmits it) and wakes the reader, which looks at the error queue and,
// finding no refusal of ours, clears the wake-up and reads on.
func TestRefusalSeenByWriteWakesTheReader(t *testing.T) {
	sc := &scriptedConn{writeErr: &net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.ECONNREFUSED)},
		reads: []error{os.ErrDeadlineExceeded, nil}}
	rc := &refusalConn{Conn: sc, icmp: &errorQueue{rc: noQueue{}}, neg: &negotiation{}}
	if n, err := rc.Write([]byte("data")); n != 4 || err != nil {
		t.Fatalf("write: %d, %v; want the packet taken as lost", n, err)
	}
	if len(sc.deadlines) != 1 || sc.deadlines[0].IsZero() {
		t.Fatalf("read deadlines %v: the reader was not woken", sc.deadlines)
	}
	if n, err := rc.Read(make([]byte, 8)); n != 1 || err != nil {
		t.Fatalf("read: %d, %v; want the next packet", n, err)
	}
	if len(sc.deadlines) != 2 || !sc.deadlines[1].IsZero() {
		t.Fatalf("read deadlines %v: the wake-up was not cleared", sc.deadlines)
	}
}
