package smf

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"
	"github.com/free5gc/pfcp"

	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/sbi"
	upfc "github.com/l25gc/l25gc/upf/c"
	"github.com/l25gc/l25gc/upf/rules"
)

// wireUPF is UPF-C's N4 server over a rule table on a UDP socket of its
// own, which also sends Session Reports to the SMF's client (UPF-U's part
// in a real core).
type wireUPF struct {
	node  *pfcpx.Node
	table *rules.MemTable
	mu    sync.Mutex
	smf   net.Addr
}

// wireN1 bounds every N4 request of these tests at T1 x (N1+1) = 4 s:
// each must be answered, and 800 ms (N1 3) is a stall a loaded CI machine
// can reach. A peer that never answers still fails them.
const wireN1 = 19

func startWireUPF(t *testing.T) *wireUPF {
	t.Helper()
	u := &wireUPF{table: rules.NewMemTable()}
	srv, err := upfc.NewServer(upfc.ServerConfig{Table: u.table, N3: netip.MustParseAddr(upfN3), NodeID: netip.MustParseAddr("127.0.0.1"), MaxSessions: 8})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.node = pfcpx.NewNode(pc, pfcpx.NodeConfig{T1: 200 * time.Millisecond, N1: wireN1, NodeID: netip.MustParseAddr("127.0.0.1"),
		Handler: pfcpx.HandlerFunc(func(peer net.Addr, req *pfcpx.Message) *pfcpx.Message {
			u.mu.Lock()
			u.smf = peer
			u.mu.Unlock()
			return srv.ServePFCP(peer, req)
		})})
	go func() { _ = u.node.Serve() }()
	t.Cleanup(func() { _ = u.node.Close() })
	return u
}

// smfOverN4 is an SMF whose N4 is pfcpx's client talking to a wireUPF.
func smfOverN4(t *testing.T) (*wireUPF, *testSMF) {
	t.Helper()
	upf := startWireUPF(t)
	client := pfcpx.NewClient(pfcpx.ClientConfig{NodeID: netip.MustParseAddr("127.0.0.1"), UDPAddr: "127.0.0.1:0", T1: 200 * time.Millisecond, N1: wireN1})
	s := newTestSMF(t, sbi.NewTCP(), setup{n4: client})
	s.nf.upf, s.wire = upf.addr(), upf
	return upf, s
}

func (u *wireUPF) addr() string { return "udp:" + u.node.LocalAddr().String() }

// report sends a Downlink Data Report for the session with CP SEID seid
// and returns the SMF's cause.
func (u *wireUPF) report(t *testing.T, seid uint64) uint8 {
	t.Helper()
	body, err := pfcpx.ReportRequestOf(downlinkData(seid))
	if err != nil {
		t.Fatal(err)
	}
	u.mu.Lock()
	smf := u.smf
	u.mu.Unlock()
	rsp, err := u.node.Request(context.Background(), smf, &pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_REPORT_REQUEST, SEID: seid}, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return pfcpx.CauseOf(rsp)
}

// downlinkFAR is the downlink FAR UPF-C wrote into the table.
func (u *wireUPF) downlinkFAR(t *testing.T) rules.FAR {
	t.Helper()
	sessions, err := u.table.Sessions()
	if err != nil || len(sessions) != 1 {
		t.Fatalf("%d sessions in the table (%v), want 1", len(sessions), err)
	}
	for _, f := range sessions[0].FARs {
		if f.ID == farDownlink {
			return f
		}
	}
	t.Fatal("no downlink FAR in the table")
	return rules.FAR{}
}

// The SMF over real N4 (pfcpx's client, UPF-C's server): AN release puts
// BUFF|NOCP into UPF-C's table, the UPF's Downlink Data Report reaches the
// SMF through the client (cause 1; 65 for an unknown session) and pages
// through the AMF, the gNB's answer forwards again, and a path switch
// moves the downlink with the End Marker request UPF-C accepts.
func TestPagingAndPathSwitchOverN4(t *testing.T) {
	upf, s := smfOverN4(t)
	ref, seid := s.idleSession(t, subscribed, 1)
	// An Update FAR without Update Forwarding Parameters keeps the old
	// ones (TS 29.244 7.5.4.3): UPF-C still holds the gNB's tunnel, which
	// BUFF does not use.
	if far := upf.downlinkFAR(t); far.Action != rules.ActionBuffer|rules.ActionNotify {
		t.Fatalf("UPF-C's downlink FAR after AN release: %+v", far)
	}
	s.core.setTransferStatus(202)
	if cause := upf.report(t, seid); cause != pfcpCauseAccepted {
		t.Fatalf("report: cause %d", cause)
	}
	if tr := s.core.waitTransfer(t); tr.req.N2InfoContainer == nil || tr.req.N1n2FailureTxfNotifURI == "" {
		t.Fatalf("paging transfer %+v", tr.req)
	}
	if cause := upf.report(t, seid+1000); cause != pfcpCauseSessionNotFound {
		t.Fatalf("report for no session: cause %d, want 65", cause)
	}
	s.activate(t, ref)
	if far := upf.downlinkFAR(t); far.Action != rules.ActionForward || far.OuterHeader == nil || far.OuterHeader.PeerIPv4.String() != gnbN3 {
		t.Fatalf("UPF-C's downlink FAR after activation: %+v", far)
	}
	req, _ := ngapx.BuildPathSwitchRequestTransfer(ngapx.PathSwitchRequest{DL: targetTunnel, QFIs: []uint8{1}})
	if a, up := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{N2SmInfoType: models.N2SmInfoType_PATH_SWITCH_REQ}, req); up.N2SmInfoType != models.N2SmInfoType_PATH_SWITCH_REQ_ACK {
		t.Fatalf("path switch over N4: %d %s", a.status, a.json)
	}
	if far := upf.downlinkFAR(t); far.OuterHeader == nil || far.OuterHeader.TEID != targetTunnel.TEID || far.SendEndMarker {
		t.Fatalf("UPF-C's downlink FAR after the path switch: %+v (End Marker is a one-off, never stored)", far)
	}
}

// N2 handover with indirect forwarding over real N4: UPF-C chooses the
// forwarding F-TEID the Handover Command Transfer names and installs the
// access-to-access forwarding rules; COMPLETED moves the downlink to the
// target, and the rules go when forwardingHold expired.
func TestN2HandoverIndirectForwardingOverN4(t *testing.T) {
	upf, s := smfOverN4(t)
	s.nf.forwardingHold = time.Millisecond
	ref := s.activeSession(t)
	cmd := s.prepare(t, ref, false, ngapx.HandoverRequestAck{DL: targetTunnel, DLForwarding: &targetForward, QFIs: []uint8{1}})
	sessions, _ := upf.table.Sessions()
	var pdr *rules.PDR
	for _, p := range sessions[0].PDRs {
		if p.ID == pdrForwarding {
			pdr = &p
		}
	}
	if cmd.DLForwarding == nil || pdr == nil || pdr.LocalFTEID == nil || pdr.LocalFTEID.TEID != cmd.DLForwarding.TEID ||
		cmd.DLForwarding.IPv4.String() != upfN3 {
		t.Fatalf("forwarding through the UPF: command %+v, PDR %+v", cmd, pdr)
	}
	s.complete(t, ref)
	if far := upf.downlinkFAR(t); far.OuterHeader == nil || far.OuterHeader.TEID != targetTunnel.TEID {
		t.Fatalf("UPF-C's downlink FAR after the handover: %+v", far)
	}
	waitFor(t, "the forwarding PDR removed after the hold", func() bool {
		sessions, _ := upf.table.Sessions()
		for _, p := range sessions[0].PDRs {
			if p.ID == pdrForwarding {
				return false
			}
		}
		return true
	})
}

// TS 29.244 7.5.8, TS 23.502 4.2.3.3 steps 2b-3a over real N4: the UPF
// has the Session Report Response while the AMF has not yet answered the
// N1N2MessageTransfer the report started (the SMF pages after answering,
// on the N4 client's goroutine), so a slow AMF never makes the UPF send
// its report again; another session's report is answered meanwhile too.
func TestReportIsAnsweredBeforeTheAMFIsAsked(t *testing.T) {
	upf, s := smfOverN4(t)
	_, seid := s.idleSession(t, subscribed, 1)
	gate := make(chan struct{})
	s.core.mu.Lock()
	s.core.transferStatus, s.core.transferGate = []int{202}, gate
	s.core.mu.Unlock()
	defer close(gate)
	if cause := upf.report(t, seid); cause != pfcpCauseAccepted {
		t.Fatalf("report: cause %d, want 1", cause)
	}
	if tr := s.core.waitTransfer(t); tr.supi != subscribed || tr.req.PduSessionId != 1 {
		t.Fatalf("paging transfer for %s session %d", tr.supi, tr.req.PduSessionId)
	}
	// The first transfer still waits for the AMF: N4 is served.
	if cause := upf.report(t, seid+1000); cause != pfcpCauseSessionNotFound {
		t.Fatalf("report for no session while a transfer waits: cause %d, want 65", cause)
	}
	if r := s.reports(t, "reported"); r != 1 {
		t.Fatalf("%v reports paged, want 1", r)
	}
}
