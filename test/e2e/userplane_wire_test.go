package e2e

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/internal/testio"
	"github.com/l25gc/l25gc/internal/tsharkcap"
)

// PFCP message types (TS 29.244 7.3) a PDU session's life puts on N4.
var wantN4Messages = map[string]string{
	"5": "Association Setup Request", "6": "Association Setup Response",
	"50": "Session Establishment Request", "51": "Session Establishment Response",
	"52": "Session Modification Request", "53": "Session Modification Response",
	"54": "Session Deletion Request", "55": "Session Deletion Response",
}

// A UE's session set up, pinging the data network and released, on the
// wire (issue 11 "Wire"): N4 (PFCP over UDP, SBI over tcp) and N3 (GTP-U
// on the gNB's veth) are dissected by tshark with no malformed packet or
// expert error; N4 carries association setup and session establishment,
// modification (the gNB's tunnel end) and deletion; every G-PDU carries a
// PDU Session Container (TS 38.415 5.5.2) of the right direction with
// the session's QFI, uplink and downlink.
func TestUserPlaneSessionOnTheWireIsWhatTSharkExpects(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), withSBI("tcp", withUserPlane))
	n4 := startN4Capture(t, cfg) // before the core: the SMF associates at its first session or earlier
	startCore(t, cfg, path)
	n3 := startN3Capture(t, cfg)

	h := holdUE(t, path)
	b, _ := inNetns("l25gc-ue1", "ping", "-c", "5", "-i", "0.2", "-W", "2", dnAddr).CombinedOutput()
	answered := received(string(b))
	if answered < 5 { // UPF-U holds the first while it resolves the gNB, never drops it
		t.Fatalf("ping %s from the UE: %d of 5 answered\n%s", dnAddr, answered, b)
	}
	h.release(t)
	awaitNoUPFSessions(t, cfg)
	n4.Stop()
	n3.Stop()

	n4.RequireClean(t)
	n3.RequireClean(t)
	seen := strings.Fields(n4.Tshark(t, "-Y", "pfcp", "-T", "fields", "-e", "pfcp.msg_type"))
	for code, name := range wantN4Messages {
		if !slices.Contains(seen, code) {
			t.Errorf("no PFCP %s (type %s) on N4", name, code)
		}
	}
	up, down := 0, 0
	for _, p := range gpdus(t, n3) {
		fromUE := p.src == h.addr
		switch {
		case p.pduType == "" || p.qfi == "":
			t.Errorf("G-PDU in frame %d has no PDU Session Container", p.frame)
		case p.uplink() != fromUE:
			t.Errorf("G-PDU in frame %d from %s to %s has PDU type %s", p.frame, p.src, p.dst, p.pduType)
		case p.qfi != h.qfi:
			t.Errorf("G-PDU in frame %d carries QFI %s, the session's is %s", p.frame, p.qfi, h.qfi)
		case fromUE:
			up++
		default:
			down++
		}
	}
	if up < 5 || down < answered {
		t.Errorf("%d uplink and %d downlink G-PDUs of the session on N3, want the 5 pings and their %d answers", up, down, answered)
	}
	if t.Failed() {
		t.Logf("N4:\n%s\nN3:\n%s", n4.Summary(), n3.Summary())
	}
}

// Network-requested modification (issue 11, TS 23.502 4.3.3.2): the SMF's
// admin API adds a QoS flow for UDP to and from the data network's port
// 5201; afterwards that traffic carries the new QFI on N3 both ways (the
// UE's QoS rule marks it uplink, UPF-U's QER downlink), while ping and
// iperf3's TCP control connection keep the default QFI.
func TestNetworkRequestedQoSFlowCarriesItsQFIOnN3(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), withUserPlane)
	startCore(t, cfg, path)
	h := holdUE(t, path)
	n3 := startN3Capture(t, cfg)

	sessions := smfSessions(t, cfg)
	if len(sessions) != 1 {
		t.Fatalf("the SMF holds %d sessions, want 1: %+v", len(sessions), sessions)
	}
	addQoSFlow(t, cfg, sessions[0].SUPI, sessions[0].PDUSessionID, "permit out 17 from "+dnAddr+" 5201 to assigned")
	qfi := awaitFlowAdded(t, cfg, h.qfi)
	from := awaitUplinkQFI(t, n3, qfi)

	server := inNetns("l25gc-dn", "iperf3", "-s", "-B", dnAddr)
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	time.Sleep(300 * time.Millisecond) // the server's listen; a client that comes too soon retries below
	for _, reverse := range []bool{false, true} {
		args := []string{"-u", "-b", "1M", "-t", "1"}
		if reverse {
			args = append(args, "-R")
		}
		b, err := iperf3FromUE(args...)
		if err != nil {
			t.Fatalf("iperf3 UDP (reverse %v): %v\n%s", reverse, err, b)
		}
	}
	if b, _ := inNetns("l25gc-ue1", "ping", "-c", "3", "-i", "0.2", "-W", "2", dnAddr).CombinedOutput(); received(string(b)) < 2 {
		t.Fatalf("ping after the modification:\n%s", b)
	}
	n3.Stop()
	n3.RequireClean(t)

	var count [2][2]int // [matches the SDF filter][uplink]
	bad := 0
	for _, p := range gpdus(t, n3) {
		if p.frame <= from {
			continue
		}
		sdf := p.proto == "17" && (p.uplink() && p.dst == dnAddr && p.dport == "5201" || !p.uplink() && p.src == dnAddr && p.sport == "5201")
		want := h.qfi
		if sdf {
			want = qfi
		}
		if p.qfi != want && bad < 10 {
			bad++
			t.Errorf("G-PDU in frame %d (%s %s:%s → %s:%s, uplink %v) carries QFI %s, want %s", p.frame, p.proto, p.src, p.sport, p.dst, p.dport, p.uplink(), p.qfi, want)
		}
		count[b2i(sdf)][b2i(p.uplink())]++
	}
	for _, c := range []struct {
		sdf, uplink bool
		what        string
	}{{true, true, "uplink UDP to port 5201"}, {true, false, "downlink UDP from port 5201"}, {false, true, "other uplink"}, {false, false, "other downlink"}} {
		if count[b2i(c.sdf)][b2i(c.uplink)] == 0 {
			t.Errorf("no %s G-PDU on N3 after the modification", c.what)
		}
	}
	t.Logf("G-PDUs after the modification: SDF uplink %d, downlink %d with QFI %s; others uplink %d, downlink %d with QFI %s",
		count[1][1], count[1][0], qfi, count[0][1], count[0][0], h.qfi)
	h.release(t)
	awaitNoUPFSessions(t, cfg)
	if t.Failed() {
		t.Logf("N3 after frame %d:\n%s", from, n3.Tshark(t, "-Y", fmt.Sprintf("frame.number > %d", from)))
	}
}

// unanswered are the icmp_seq numbers up to sent that ping printed no
// answer for.
func unanswered(pingOut string, sent int) []int {
	var out []int
	for seq := 1; seq <= sent; seq++ {
		if !strings.Contains(pingOut, fmt.Sprintf("icmp_seq=%d ", seq)) {
			out = append(out, seq)
		}
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// awaitUplinkQFI sends datagrams from the UE to the SDF filter's port
// until one goes out on N3 with qfi: the UE applies the new QoS rule when
// its Modification Command arrives, which the gNB hands it after answering
// the AMF. It returns that frame's number.
func awaitUplinkQFI(t *testing.T, c *tsharkcap.Capture, qfi string) int {
	t.Helper()
	filter := fmt.Sprintf("gtp.ext_hdr.pdu_ses_con.pdu_type == 1 && gtp.ext_hdr.pdu_ses_con.qos_flow_id == %s && udp.dstport == 5201", qfi)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_ = inNetns("l25gc-ue1", "bash", "-c", "echo probe > /dev/udp/"+dnAddr+"/5201").Run()
		out := c.Tshark(t, "-Y", filter, "-T", "fields", "-e", "frame.number")
		if f := strings.Fields(out); len(f) > 0 {
			var n int
			fmt.Sscan(f[len(f)-1], &n)
			return n
		}
	}
	t.Fatalf("no uplink UDP to port 5201 with QFI %s on N3 within 20 s of the modification:\n%s", qfi, c.Summary())
	return 0
}

// UPF-C killed (SIGKILL) while the UE pings the data network (issue 11
// "Bad input and faults"): UPF-U keeps forwarding, so ping loses at most a
// few packets; the supervisor restarts UPF-C, which recovers the session
// from UPF-U's shared tables, so a modification and the release that
// follow reach it, and the release leaves no rules.
func TestKilledUPFCKeepsTrafficFlowingAndRecoversTheSession(t *testing.T) {
	forEachSBI(t, killedUPFCUnderTraffic)
}

// killedUPFCUnderTraffic runs the kill with N4 over UDP (sbi tcp) or
// X-IO (sbi xio).
func killedUPFCUnderTraffic(t *testing.T, mode string) {
	cfg, path := coreConfig(t, t.TempDir(), withSBI(mode, withUserPlane))
	startSupervisedCore(t, cfg, path)
	h := holdUE(t, path)

	const pings = 60 // 12 s at 0.2 s
	var out testio.SyncBuffer
	ping := inNetns("l25gc-ue1", "ping", "-c", fmt.Sprint(pings), "-i", "0.2", "-W", "1", dnAddr)
	ping.Stdout, ping.Stderr = &out, &out
	if err := ping.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(eventBound); !strings.Contains(out.String(), "icmp_seq=5 "); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("ping got no fifth answer within %v:\n%s", eventBound, out.String())
		}
	}
	old := nfProcess(t, cfg, "upf-c")
	killedAt := time.Now()
	if err := syscall.Kill(old.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t.Logf("UPF-C back %v after its kill", awaitRestarted(t, cfg, "upf-c", old.PID, killedAt).Round(time.Millisecond))
	_ = ping.Wait()
	n := received(out.String())
	t.Logf("ping across UPF-C's kill: %d of %d answered (unanswered icmp_seq %v; the kill came after icmp_seq 5)", n, pings, unanswered(out.String(), pings))
	if n < pings-3 {
		t.Errorf("ping across UPF-C's kill: %d of %d answered, want at most 3 lost\n%s", n, pings, out.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("icmp_seq=%d ", pings)) {
		t.Errorf("the last ping got no answer: traffic did not resume\n%s", out.String())
	}

	if n := upfcSessions(t, cfg); n != 1 {
		t.Errorf("the restarted UPF-C holds %v sessions, want the 1 recovered from the shared tables", n)
	}
	if n := upfSessions(t, cfg); n != 1 {
		t.Errorf("UPF-U holds %v sessions after UPF-C's restart, want 1", n)
	}
	sessions := smfSessions(t, cfg)
	if len(sessions) != 1 {
		t.Fatalf("after UPF-C's restart the SMF holds %d sessions, want 1: %+v", len(sessions), sessions)
	}
	addQoSFlow(t, cfg, sessions[0].SUPI, sessions[0].PDUSessionID, "permit out 17 from "+dnAddr+" 5201 to assigned")
	awaitFlowAdded(t, cfg, h.qfi)
	h.release(t)
	awaitNoUPFSessions(t, cfg)
	if n := upfcSessions(t, cfg); n != 0 {
		t.Errorf("UPF-C still holds %v sessions after the release", n)
	}
}
