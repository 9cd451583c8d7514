//go:build l25gc_testhooks

package xio_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xioproc"
)

func init() { roles["pfcp"] = pfcpRole }

// pfcpRole is an N4 peer in another process: at $XIO_PFCP_ADDR it answers
// PFCP Heartbeat Requests (TS 29.244 7.4.2) and, on "drain", reads
// everything queued on its second socket $XIO_SINK_ADDR (which it otherwise
// never reads) and answers how many datagrams it found.
func pfcpRole(ctx context.Context) error {
	pc, err := xio.ListenPacket(os.Getenv("XIO_PFCP_ADDR"))
	if err != nil {
		return err
	}
	defer pc.Close()
	sink, err := xio.ListenPacket(os.Getenv("XIO_SINK_ADDR"))
	if err != nil {
		return err
	}
	defer sink.Close()
	started := time.Now()
	xioproc.Ready()
	buf := make([]byte, 9000)
	for ctx.Err() == nil {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return err
		}
		if string(buf[:n]) == "drain" {
			pc.WriteTo([]byte(fmt.Sprintf("drained %d", drain(sink))), from)
			continue
		}
		var req pfcp.Message
		if err := req.Unmarshal(buf[:n]); err != nil || req.Header.MessageType != pfcp.PFCP_HEARTBEAT_REQUEST {
			continue
		}
		rsp := pfcp.Message{
			Header: pfcp.Header{Version: pfcp.PfcpVersion, MessageType: pfcp.PFCP_HEARTBEAT_RESPONSE,
				SequenceNumber: req.Header.SequenceNumber},
			Body: pfcp.HeartbeatResponse{RecoveryTimeStamp: &pfcpType.RecoveryTimeStamp{RecoveryTimeStamp: started}},
		}
		b, err := rsp.Marshal()
		if err != nil {
			return err
		}
		if _, err := pc.WriteTo(b, from); err != nil {
			return err
		}
	}
	return nil
}

func drain(pc net.PacketConn) int {
	buf := make([]byte, 9000)
	n := 0
	for {
		pc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, _, err := pc.ReadFrom(buf); err != nil {
			return n
		}
		n++
	}
}

func heartbeatRequest(t *testing.T, seq uint32) []byte {
	t.Helper()
	m := pfcp.Message{
		Header: pfcp.Header{Version: pfcp.PfcpVersion, MessageType: pfcp.PFCP_HEARTBEAT_REQUEST, SequenceNumber: seq},
		Body:   pfcp.HeartbeatRequest{RecoveryTimeStamp: &pfcpType.RecoveryTimeStamp{RecoveryTimeStamp: time.Now()}},
	}
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readHeartbeatResponse(t *testing.T, pc net.PacketConn, seq uint32) {
	t.Helper()
	buf := make([]byte, 9000)
	pc.SetReadDeadline(time.Now().Add(2 * time.Second))
	defer pc.SetReadDeadline(time.Time{})
	n, _, err := pc.ReadFrom(buf)
	if err != nil {
		t.Fatalf("heartbeat response: %v", err)
	}
	var rsp pfcp.Message
	if err := rsp.Unmarshal(buf[:n]); err != nil {
		t.Fatalf("heartbeat response does not decode: %v", err)
	}
	body, ok := rsp.Body.(pfcp.HeartbeatResponse)
	if rsp.Header.MessageType != pfcp.PFCP_HEARTBEAT_RESPONSE || rsp.Header.SequenceNumber != seq ||
		!ok || body.RecoveryTimeStamp == nil {
		t.Fatalf("got %+v, want a Heartbeat Response with sequence number %d and a Recovery Time Stamp", rsp, seq)
	}
}

// PFCP between two NF processes over X-IO datagrams: heartbeats, a sender
// held back (not dropping) by a receiver that does not read, write
// deadlines, and the peer's death.
func TestPFCPAcrossProcesses(t *testing.T) {
	base := settledPool(t)
	n4, sinkAddr := "upf-n4-"+uniqueAddr(t), "upf-sink-"+uniqueAddr(t)
	peer, err := xioproc.Start("pfcp", "XIO_PFCP_ADDR="+n4, "XIO_SINK_ADDR="+sinkAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Kill()
	pc, err := xio.ListenPacket("smf-n4-" + uniqueAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()

	for seq := uint32(1); seq <= 3; seq++ {
		if _, err := pc.WriteTo(heartbeatRequest(t, seq), xio.Addr(n4)); err != nil {
			t.Fatal(err)
		}
		readHeartbeatResponse(t, pc, seq)
	}

	// The sink is not read: writes go on until its window is full, then
	// block until the write deadline, and nothing is lost.
	sent := 0
	dgram := make([]byte, 500)
	for {
		pc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := pc.WriteTo(dgram, xio.Addr(sinkAddr)); err != nil {
			if !isTimeout(err) {
				t.Fatalf("write to a full socket: %v, want a timeout", err)
			}
			break
		}
		if sent++; sent > 10000 {
			t.Fatal("10000 datagrams went to a socket nobody reads: no back-pressure")
		}
	}
	pc.SetWriteDeadline(time.Time{})
	if charge := sent * (len(dgram) + len(pc.LocalAddr().String()) + 64); charge < 1<<20-2000 || charge > 1<<20 {
		t.Fatalf("%d datagrams (%d bytes charged) queued before the writer blocked; want the 1 MiB window", sent, charge)
	}
	if _, err := pc.WriteTo([]byte("drain"), xio.Addr(n4)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err := pc.ReadFrom(buf)
	if want := fmt.Sprintf("drained %d", sent); err != nil || string(buf[:n]) != want {
		t.Fatalf("peer says %q (%v), want %q: datagrams lost", buf[:n], err, want)
	}
	pc.SetReadDeadline(time.Time{})

	// Fill the window again; a writer blocked on it fails once the peer
	// dies, and so do later writes.
	for {
		pc.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := pc.WriteTo(dgram, xio.Addr(sinkAddr)); err != nil {
			break
		}
	}
	pc.SetWriteDeadline(time.Time{})
	blocked := make(chan error, 1)
	go func() { _, err := pc.WriteTo(dgram, xio.Addr(sinkAddr)); blocked <- err }()
	time.Sleep(20 * time.Millisecond)
	peer.Kill()
	select {
	case err := <-blocked:
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("blocked write to a peer that died: %v, want ECONNREFUSED", err)
		}
	case <-time.After(20 * time.Second): // bounds a failing test only: a stalled CI machine's reaper may be late
		t.Fatal("a write blocked on a dead peer's window is still blocked after 20 s")
	}
	if _, err := pc.WriteTo(heartbeatRequest(t, 4), xio.Addr(n4)); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("heartbeat to a dead peer: %v, want ECONNREFUSED", err)
	}
	waitFor(t, func() bool { n, _, _ := xio.PoolInUse(); return n == base })
}

// Close wakes a ReadFrom waiting for an answer that never comes.
func TestPacketCloseUnblocksReadFrom(t *testing.T) {
	pc, err := xio.ListenPacket("close-me-" + uniqueAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() { _, _, err := pc.ReadFrom(make([]byte, 64)); read <- err }()
	time.Sleep(20 * time.Millisecond)
	pc.Close()
	select {
	case err := <-read:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("ReadFrom after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(20 * time.Second): // bounds a failing test only
		t.Fatal("ReadFrom still blocked 20 s after Close")
	}
}

// WriteTo without an address is an error, as on a UDP socket, not a panic.
func TestPacketWriteToNilAddr(t *testing.T) {
	pc, err := xio.ListenPacket("nil-dst-" + uniqueAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if _, err := pc.WriteTo([]byte("x"), nil); err == nil {
		t.Fatal("WriteTo(b, nil) succeeded")
	}
}

// A slow reader gets every datagram, in order, however many are sent: the
// old queue dropped everything past 4096 unread.
func TestPacketSlowReaderLosesNothing(t *testing.T) {
	a, err := xio.ListenPacket("fast-" + uniqueAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	bAddr := "slow-" + uniqueAddr(t)
	b, err := xio.ListenPacket(bAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const total = 12000
	done := make(chan error, 1)
	go func() {
		for i := 0; i < total; i++ {
			if _, err := a.WriteTo([]byte(fmt.Sprintf("dgram %d", i)), xio.Addr(bAddr)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	time.Sleep(100 * time.Millisecond) // the writer runs ahead of the reader
	buf := make([]byte, 64)
	for i := 0; i < total; i++ {
		b.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, _, err := b.ReadFrom(buf)
		if err != nil || string(buf[:n]) != fmt.Sprintf("dgram %d", i) {
			t.Fatalf("datagram %d: %q, %v", i, buf[:n], err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
