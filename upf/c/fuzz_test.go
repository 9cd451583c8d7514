package upfc

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/upf/rules"
)

// FuzzN4 feeds bytes from the network to UPF-C's N4 path (decode,
// checks, rule changes, answer) with one session established: it must
// never panic, every answer it sends must decode, and UPF-C and the table
// must agree on the sessions afterwards.
func FuzzN4(f *testing.F) {
	for _, m := range seedMessages(f) {
		f.Add(m)
	}
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add([]byte{0x21, 52, 0, 12, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 9, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		srv, node, conn := fuzzUPFC(t)
		node.Receive(b, fuzzPeer)
		for _, out := range conn.sent[1:] { // [0]: the setup's answers
			if _, err := pfcpx.Decode(out); err != nil {
				t.Fatalf("UPF-C sent an answer that does not decode: %v\n% x", err, out)
			}
		}
		list, err := srv.cfg.Table.Sessions()
		if err != nil || len(list) != srv.Sessions() {
			t.Fatalf("the table holds %d sessions, UPF-C %d (%v)", len(list), srv.Sessions(), err)
		}
	})
}

var fuzzPeer = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8805}

// fuzzUPFC is UPF-C with an association and one session (UP SEID 1).
func fuzzUPFC(t *testing.T) (*Server, *pfcpx.Node, *sentConn) {
	srv, err := NewServer(ServerConfig{Table: rules.NewMemTable(), N3: n3Addr, NodeID: netip.MustParseAddr("127.0.0.1"), MaxSessions: 4})
	if err != nil {
		t.Fatal(err)
	}
	conn := &sentConn{}
	node := pfcpx.NewNode(conn, pfcpx.NodeConfig{Handler: srv, NodeID: netip.MustParseAddr("127.0.0.1")})
	for _, m := range seedMessages(t)[:2] {
		node.Receive(m, fuzzPeer)
	}
	if srv.Sessions() != 1 {
		t.Fatalf("setup: %d sessions", srv.Sessions())
	}
	conn.sent = [][]byte{nil}
	return srv, node, conn
}

// seedMessages are an association, an establishment (SEID 1 results), a
// modification and a deletion of it, and a heartbeat, as the SMF sends
// them.
func seedMessages(tb testing.TB) [][]byte {
	tb.Helper()
	s := pduSession("10.60.0.1")
	s.CPSEID = 9
	est, err := pfcpx.EstablishmentRequestOf(netip.MustParseAddr("127.0.0.1"), s)
	if err != nil {
		tb.Fatal(err)
	}
	mod, err := pfcpx.ModificationRequestOf(&rules.Modification{Create: qosFlow(), Update: rules.Rules{FARs: s.FARs[1:]}, Remove: rules.RuleIDs{URRs: []uint32{1}}})
	if err != nil {
		tb.Fatal(err)
	}
	msgs := []*pfcpx.Message{
		{Header: pfcp.Header{MessageType: pfcp.PFCP_ASSOCIATION_SETUP_REQUEST, SequenceNumber: 1},
			Body: &pfcp.PFCPAssociationSetupRequest{NodeID: pfcpx.NodeIDOf(netip.MustParseAddr("127.0.0.1")), RecoveryTimeStamp: &pfcpType.RecoveryTimeStamp{RecoveryTimeStamp: time.Unix(1.7e9, 0)}}},
		{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_ESTABLISHMENT_REQUEST, SequenceNumber: 2}, Body: est},
		{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_MODIFICATION_REQUEST, SequenceNumber: 3, SEID: 1}, Body: mod},
		{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_DELETION_REQUEST, SequenceNumber: 4, SEID: 1}, Body: &pfcpx.SessionDeletionRequest{}},
		{Header: pfcp.Header{MessageType: pfcp.PFCP_HEARTBEAT_REQUEST, SequenceNumber: 5}, Body: &pfcp.HeartbeatRequest{RecoveryTimeStamp: &pfcpType.RecoveryTimeStamp{RecoveryTimeStamp: time.Unix(1.7e9, 0)}}},
		{Header: pfcp.Header{MessageType: pfcp.PFCP_ASSOCIATION_RELEASE_REQUEST, SequenceNumber: 6}, Body: &pfcp.PFCPAssociationReleaseRequest{NodeID: pfcpx.NodeIDOf(netip.MustParseAddr("127.0.0.1"))}},
	}
	var out [][]byte
	for _, m := range msgs {
		b, err := pfcpx.Encode(m)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// sentConn is a PacketConn that keeps what is written to it.
type sentConn struct {
	net.PacketConn
	sent [][]byte
}

func (c *sentConn) WriteTo(b []byte, _ net.Addr) (int, error) {
	c.sent = append(c.sent, append([]byte(nil), b...))
	return len(b), nil
}
func (c *sentConn) LocalAddr() net.Addr { return fuzzPeer }
func (c *sentConn) Close() error        { return nil }
