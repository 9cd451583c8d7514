package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/testio"
	"github.com/l25gc/l25gc/internal/tsharkcap"
	"github.com/l25gc/l25gc/nf/smf"
	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/test/ransim"
)

// heldUE is `l25gc ransim --ues 1 --pdu --tun --hold`: one UE with PDU
// session 1 and its TUN in netns l25gc-ue1, until release ends the hold.
type heldUE struct {
	cmd    *exec.Cmd
	out    *testio.SyncBuffer
	done   chan error    // ransim's exit, for awaitUETUN
	exited chan struct{} // closed once ransim ended, err set
	err    error
	addr   string // the UE's address
	qfi    string // the QFI of the session's default QoS rule
}

// holdUE starts the simulator (with more of its flags) and waits until the
// UE's TUN is up.
func holdUE(t *testing.T, cfgPath string, more ...string) *heldUE {
	t.Helper()
	h := &heldUE{out: &testio.SyncBuffer{}, done: make(chan error, 1), exited: make(chan struct{})}
	h.cmd = exec.Command(binary, append([]string{"ransim", "--config", cfgPath, "--ues", "1", "--pdu", "--tun", "--hold", "5m"}, more...)...)
	h.cmd.Stdout, h.cmd.Stderr = h.out, h.out
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		h.err = h.cmd.Wait()
		close(h.exited)
		h.done <- h.err
	}()
	t.Cleanup(func() { h.stop(t) })
	h.addr = awaitUETUN(t, "l25gc-ue1", h.done)
	// "imsi-…: PDU session 1 on internet, 10.60.0.1, QFI 1, N3 UL …",
	// printed before the TUN opened.
	m := regexp.MustCompile(`PDU session 1 on \S+ \S+, QFI (\d+)`).FindStringSubmatch(h.out.String())
	if m == nil {
		t.Fatalf("ransim names no QFI of the session:\n%s", h.out.String())
	}
	h.qfi = m[1]
	return h
}

// stop ends a hold the test left running (it failed): Ctrl-C, so that
// ransim removes its TUN and netns, else SIGKILL and the netns removed
// here, so that the next test can make its own.
func (h *heldUE) stop(t *testing.T) {
	select {
	case <-h.exited:
	default:
		_ = h.cmd.Process.Signal(os.Interrupt)
		select {
		case <-h.exited:
		case <-time.After(30 * time.Second):
			_ = h.cmd.Process.Kill()
			<-h.exited
			_ = exec.Command("ip", "netns", "del", "l25gc-ue1").Run()
		}
	}
	if t.Failed() {
		t.Logf("l25gc ransim printed:\n%s", h.out.String())
	}
}

// release ends the hold as Ctrl-C does: ransim releases the session and
// exits with an error when the release failed.
func (h *heldUE) release(t *testing.T) {
	t.Helper()
	_ = h.cmd.Process.Signal(os.Interrupt)
	select {
	case <-h.exited:
		if h.err != nil {
			t.Errorf("ransim after Ctrl-C (the release): %v\n%s", h.err, h.out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ransim did not end 30 s after Ctrl-C")
	}
}

// awaitNoUPFSessions waits until UPF-U's tables hold no session.
func awaitNoUPFSessions(t *testing.T, cfg *config.Config) {
	t.Helper()
	for deadline := time.Now().Add(eventBound); upfSessions(t, cfg) != 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("UPF-U still holds %v sessions after the release", upfSessions(t, cfg))
		}
	}
}

// startN4Capture records PFCP between the SMF and UPF-C (UDP on loopback,
// at upf.c.pfcp_addr).
func startN4Capture(t *testing.T, cfg *config.Config) *tsharkcap.Capture {
	t.Helper()
	_, port, err := net.SplitHostPort(cfg.UPF.C.PFCPAddr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	c := tsharkcap.Start(t, p)
	c.Read = []string{"-d", "udp.port==" + port + ",pfcp"}
	return c
}

// startN3Capture records GTP-U on the gNB's end of the lab's N3 veth.
func startN3Capture(t *testing.T, cfg *config.Config) *tsharkcap.Capture {
	t.Helper()
	upf, err := netip.ParsePrefix(cfg.UPF.N3.IP)
	if err != nil {
		t.Fatalf("upf.n3.ip %q: %v", cfg.UPF.N3.IP, err)
	}
	c := tsharkcap.StartOn(t, node.LabN3Peer, "udp port 2152", ransim.DefaultN3, upf.Addr())
	c.Read = []string{"-d", "udp.port==2152,gtp"}
	return c
}

// gpdu is one G-PDU on N3 as tshark dissects it: the PDU Session
// Container (TS 38.415 5.5.2) and the inner IPv4 packet.
type gpdu struct {
	frame        int
	pduType      string // "0" DL PDU SESSION INFORMATION, "1" UL
	qfi          string
	proto        string // inner IP protocol
	src, dst     string // inner addresses
	sport, dport string // inner UDP or TCP ports
}

func (p gpdu) uplink() bool { return p.pduType == "1" }

// gpdus are the capture's G-PDUs (GTP-U message type 255, TS 29.281 6.1).
func gpdus(t *testing.T, c *tsharkcap.Capture) []gpdu {
	t.Helper()
	// occurrence=l: the inner IP header and ports, not the outer ones.
	out := c.Tshark(t, "-Y", "gtp.message == 0xff", "-T", "fields", "-E", "occurrence=l",
		"-e", "frame.number", "-e", "gtp.ext_hdr.pdu_ses_con.pdu_type", "-e", "gtp.ext_hdr.pdu_ses_con.qos_flow_id",
		"-e", "ip.proto", "-e", "ip.src", "-e", "ip.dst", "-e", "udp.srcport", "-e", "udp.dstport", "-e", "tcp.srcport", "-e", "tcp.dstport")
	var pkts []gpdu
	// Not TrimSpace: a line ends in tabs when its last fields are empty.
	for _, line := range strings.Split(strings.Trim(out, "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 10 {
			continue
		}
		n, _ := strconv.Atoi(f[0])
		p := gpdu{frame: n, pduType: f[1], qfi: f[2], proto: f[3], src: f[4], dst: f[5]}
		switch p.proto {
		case "17":
			p.sport, p.dport = f[6], f[7]
		case "6":
			p.sport, p.dport = f[8], f[9]
		}
		pkts = append(pkts, p)
	}
	return pkts
}

// smfSessions lists the SMF's PDU sessions through its admin API.
func smfSessions(t *testing.T, cfg *config.Config) []smf.SessionView {
	t.Helper()
	resp := smfAdmin(t, cfg, http.MethodGet, "", nil)
	defer resp.Body.Close()
	var out []smf.SessionView
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("SMF admin API's session list: %v", err)
	}
	return out
}

// addQoSFlow asks the SMF for a network-requested modification (README
// "PDU sessions (SMF)"): a PCC rule whose SDF filter flowDescription
// (TS 29.212 5.4.2) gets its own QoS flow; 204 once the UPF has its rules.
func addQoSFlow(t *testing.T, cfg *config.Config, supi string, psi uint8, flowDescription string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"pccRules": map[string]any{"e2e": map[string]any{"pccRuleId": "e2e", "precedence": 10, "refQosData": []string{"q"},
			"flowInfos": []any{map[string]string{"flowDescription": flowDescription}}}},
		"qosDecs": map[string]any{"q": map[string]any{"qosId": "q", "5qi": 7}},
	})
	resp := smfAdmin(t, cfg, http.MethodPost, "/"+supi+"/"+strconv.Itoa(int(psi))+"/policy", body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("SMF admin API: adding a QoS flow to %s/%d: %s\n%s", supi, psi, resp.Status, b)
	}
}

func smfAdmin(t *testing.T, cfg *config.Config, method, path string, body []byte) *http.Response {
	t.Helper()
	token, err := prov.ReadToken(cfg.AdminTokenPath())
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, "http://"+cfg.Addr(cfg.SMF.SBIPort)+"/smf-admin/v1/pdu-sessions"+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: sbi.NewTCP().RoundTripper(), Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("SMF admin API %s %s: %v", method, path, err)
	}
	return resp
}

// awaitFlowAdded waits until the SMF's only session holds a QoS flow
// besides the default one (the gNB confirmed it) and returns its QFI.
func awaitFlowAdded(t *testing.T, cfg *config.Config, defaultQFI string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		s := smfSessions(t, cfg)
		if len(s) != 1 {
			t.Fatalf("the SMF holds %d sessions, want 1: %+v", len(s), s)
		}
		for _, q := range s[0].QFIs {
			if qs := strconv.Itoa(int(q)); qs != defaultQFI {
				return qs
			}
		}
	}
	t.Fatalf("the SMF's session has no QoS flow besides QFI %s 20 s after the policy update: %+v", defaultQFI, smfSessions(t, cfg))
	return ""
}

// pingEvery pings addr from netns ns count times, interval (seconds)
// apart, and returns ping's output and which of the echoes 1..count were
// never answered. Once one answer came, ping -c waits only two round
// trips after its last request (iputils), which a loaded machine
// outlasts: answers on their way were counted lost. With -w it waits
// until count answers came, for at most eventBound, meanwhile sending
// further requests, numbered after count and not judged.
func pingEvery(ns, addr string, count int, interval string) (string, []int) {
	b, _ := inNetns(ns, "ping", "-c", strconv.Itoa(count), "-i", interval,
		"-w", strconv.Itoa(int(eventBound/time.Second)), addr).CombinedOutput()
	return string(b), unanswered(string(b), count)
}
