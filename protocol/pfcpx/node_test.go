package pfcpx

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"
)

func udpSocket(t *testing.T) net.PacketConn {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc
}

// serveNode runs a Node with handler h on a fresh UDP socket.
func serveNode(t *testing.T, cfg NodeConfig) *Node {
	t.Helper()
	n := NewNode(udpSocket(t), cfg)
	go n.Serve()
	t.Cleanup(func() { n.Close() })
	return n
}

func associationRequest() *Message {
	return &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_ASSOCIATION_SETUP_REQUEST},
		Body: &pfcp.PFCPAssociationSetupRequest{NodeID: NodeIDOf(smfAddr), RecoveryTimeStamp: &pfcpType.RecoveryTimeStamp{RecoveryTimeStamp: time.Now()}}}
}

// countingHandler accepts association setups and counts them.
func countingHandler(calls *atomic.Int32) Handler {
	return HandlerFunc(func(_ net.Addr, req *Message) *Message {
		calls.Add(1)
		return &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_ASSOCIATION_SETUP_RESPONSE},
			Body: &pfcp.PFCPAssociationSetupResponse{NodeID: NodeIDOf(gnbAddr), Cause: &pfcpType.Cause{CauseValue: CauseAccepted}}}
	})
}

// A request gets its response, matched by sequence number, and a
// heartbeat the peer's Recovery Time Stamp.
func TestNodeRequestResponseAndHeartbeat(t *testing.T) {
	var calls atomic.Int32
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	server := serveNode(t, NodeConfig{Handler: countingHandler(&calls), Recovery: started})
	client := serveNode(t, NodeConfig{})
	ctx := context.Background()
	for range 3 {
		rsp, err := client.Request(ctx, server.LocalAddr(), associationRequest())
		if err != nil {
			t.Fatal(err)
		}
		if CauseOf(rsp) != CauseAccepted {
			t.Fatalf("response %+v", rsp)
		}
	}
	if calls.Load() != 3 {
		t.Fatalf("handler called %d times for 3 requests", calls.Load())
	}
	got, err := client.Heartbeat(ctx, server.LocalAddr())
	if err != nil || !got.Equal(started) {
		t.Fatalf("heartbeat: %v %v, want recovery %v", got, err, started)
	}
}

// A request whose answer is lost is sent again after T1 with the same
// sequence number; the server answers the copy from what it answered
// before and handles the request once (TS 29.244 6.4).
func TestNodeRetransmitsAndServerAnswersDuplicatesOnce(t *testing.T) {
	var calls atomic.Int32
	server := serveNode(t, NodeConfig{Handler: countingHandler(&calls)})
	// The client's socket loses the first answer it reads.
	lossy := &dropFirstReads{PacketConn: udpSocket(t), drop: 1}
	// A short T1 makes the retransmission come soon; N1 100 (5 s in all)
	// keeps a CI machine that stalls this process past 3 x T1 from
	// failing the request. A node that never retransmits still fails:
	// the only answer it reads is lost.
	client := NewNode(lossy, NodeConfig{T1: 50 * time.Millisecond, N1: 100})
	go client.Serve()
	defer client.Close()
	rsp, err := client.Request(context.Background(), server.LocalAddr(), associationRequest())
	if err != nil {
		t.Fatalf("request with its first answer lost: %v", err)
	}
	if CauseOf(rsp) != CauseAccepted {
		t.Fatalf("response %+v", rsp)
	}
	if lossy.dropped.Load() != 1 {
		t.Fatalf("%d answers lost, want 1: the retransmission was not exercised", lossy.dropped.Load())
	}
	if calls.Load() != 1 {
		t.Fatalf("the handler ran %d times for one request sent twice", calls.Load())
	}

	// The same bytes again from a raw socket: the same answer, no handling.
	raw := udpSocket(t)
	req := associationRequest()
	req.Header.SequenceNumber = 99
	b, _ := Encode(req)
	answers := make([][]byte, 2)
	for i := range answers {
		if _, err := raw.WriteTo(b, server.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		answers[i] = readDatagram(t, raw)
	}
	if string(answers[0]) != string(answers[1]) || calls.Load() != 2 {
		t.Fatalf("a duplicate got another answer or was handled again (handler ran %d times)", calls.Load())
	}
	// Other bytes under the same sequence number are a new request.
	req.Body.(*pfcp.PFCPAssociationSetupRequest).RecoveryTimeStamp.RecoveryTimeStamp = time.Unix(1e9, 0)
	b2, _ := Encode(req)
	raw.WriteTo(b2, server.LocalAddr())
	readDatagram(t, raw)
	if calls.Load() != 3 {
		t.Fatalf("a new request under a reused sequence number was not handled (%d calls)", calls.Load())
	}
}

// A peer that never answers: the request is sent N1+1 times and fails
// with a TimeoutError.
func TestNodeGivesUpAfterN1(t *testing.T) {
	silent := udpSocket(t)
	client := serveNode(t, NodeConfig{T1: 20 * time.Millisecond, N1: 2})
	_, err := client.Request(context.Background(), silent.LocalAddr(), associationRequest())
	var te *TimeoutError
	if !errors.As(err, &te) || te.Sent != 3 {
		t.Fatalf("got %v, want a TimeoutError after 3 sends", err)
	}
	seqs := map[uint32]int{}
	for range 3 {
		m, err := Decode(readDatagram(t, silent))
		if err != nil {
			t.Fatal(err)
		}
		seqs[m.Header.SequenceNumber]++
	}
	if len(seqs) != 1 {
		t.Fatalf("retransmissions carried sequence numbers %v, want one", seqs)
	}
}

// Requests the node cannot read get the cause that says why; another
// PFCP version gets Version Not Supported (TS 29.244 7.2.2.2).
func TestNodeAnswersMalformedRequests(t *testing.T) {
	server := serveNode(t, NodeConfig{NodeID: gnbAddr, Handler: countingHandler(new(atomic.Int32))})
	raw := udpSocket(t)
	b := establishmentWith(t, func(*SessionEstablishmentRequest) {})
	long := append(append([]byte(nil), b...), 0, 0) // two octets the length does not count
	raw.WriteTo(long, server.LocalAddr())
	m, err := Decode(readDatagram(t, raw))
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.MessageType != pfcp.PFCP_SESSION_ESTABLISHMENT_RESPONSE || CauseOf(m) != CauseInvalidLength {
		t.Fatalf("answer %+v cause %d, want an establishment response with cause 68", m.Header, CauseOf(m))
	}
	v2 := append([]byte(nil), b...)
	v2[0] = 2<<5 | 1
	raw.WriteTo(v2, server.LocalAddr())
	if got := readDatagram(t, raw); got[1] != byte(pfcp.PFCP_VERSION_NOT_SUPPORTED_RESPONSE) || got[0]>>5 != 1 {
		t.Fatalf("answer to version 2: % x", got)
	}
}

func readDatagram(t *testing.T, pc net.PacketConn) []byte {
	t.Helper()
	buf := make([]byte, maxDatagram)
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer pc.SetReadDeadline(time.Time{})
	n, _, err := pc.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

// dropFirstReads loses the first drop datagrams it reads.
type dropFirstReads struct {
	net.PacketConn
	drop    int32
	dropped atomic.Int32
}

func (d *dropFirstReads) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, from, err := d.PacketConn.ReadFrom(b)
		if err != nil || d.dropped.Load() >= d.drop {
			return n, from, err
		}
		d.dropped.Add(1)
	}
}
