package upfc

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/upf/rules"
)

// What UPF-C and the SMF's client put on the wire is PFCP as Wireshark
// reads it (DESIGN.md "Correctness bar"): every message of a session's
// life, and rejections with their Offending IE, dissect without a
// malformed packet or an error.
func TestWireDissectsWithoutMalformedPackets(t *testing.T) {
	table := rules.NewMemTable()
	cfg := testConfig(t)
	cfg.UPF.C.PFCPAddr = freeUDPAddr(t)
	u := startUPFC(t, cfg, table)
	_, port, _ := net.SplitHostPort(cfg.UPF.C.PFCPAddr)
	capt := startCapture(t, port)

	upf := u.N4Addrs()[0]
	c := newClient(t)
	ctx := context.Background()
	if _, err := c.Heartbeat(ctx, upf); err != nil {
		t.Fatal(err)
	}
	s := pduSession("10.60.0.1")
	s.URRs[0].VolumeThreshold = 1 << 20
	est, err := c.Establish(ctx, upf, s)
	if err != nil {
		t.Fatal(err)
	}
	table.Count(est.UPSEID, rules.Usage{URRID: 2, UplinkBytes: 10, DownlinkBytes: 20, UplinkPackets: 1, DownlinkPackets: 2})
	if _, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Create: qosFlow()}); err != nil {
		t.Fatal(err)
	}
	buffer := s.FARs[1]
	buffer.Action = rules.ActionBuffer | rules.ActionNotify
	if _, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{buffer}, QERs: qosFlow().QERs},
		Remove: rules.RuleIDs{PDRs: []uint16{3, 4}, URRs: []uint32{2}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Remove: rules.RuleIDs{FARs: []uint32{1}}}); causeOf(err) == 0 {
		t.Fatal("a FAR a PDR names was removed")
	}
	p := newRawPeer(t, upf)
	p.send(establishment(t, pduSession("10.60.0.2"), nil)) // no association: 72
	p.associate()
	p.send(establishment(t, pduSession("10.60.0.2"), func(r *pfcpx.SessionEstablishmentRequest) { r.CreatePDR[0].PDI = nil }))
	if _, err := c.Delete(ctx, upf, est.UPSEID); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, upf); err != nil {
		t.Fatal(err)
	}

	types := capt.dissect(t)
	t.Logf("PFCP message types on the wire: %v", types)
	for _, want := range []string{"1", "2", "5", "6", "9", "10", "50", "51", "52", "53", "54", "55"} {
		if !slices.Contains(types, want) {
			t.Errorf("no PFCP message of type %s captured (got %v)", want, types)
		}
	}
}

// capture records UDP on loopback with tshark while a test runs (as
// test/e2e does for N2).
type capture struct {
	cmd  *exec.Cmd
	file string
	port string
}

func startCapture(t *testing.T, port string) *capture {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatalf("tshark is needed for the wire test (make deps installs it): %v", err)
	}
	file := filepath.Join(t.TempDir(), "n4.pcapng")
	probe, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	probePort := probe.LocalAddr().(*net.UDPAddr).Port
	cmd := exec.Command("tshark", "-i", "lo", "-f", fmt.Sprintf("udp port %s or udp port %d", port, probePort), "-w", file, "-q")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("tshark: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Capturing on") {
				close(ready)
				break
			}
		}
		for sc.Scan() {
		}
	}()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		t.Fatal("tshark did not start capturing within 20 s")
	}
	// "Capturing on" comes before packets are captured: wait for a probe.
	for i := 0; ; i++ {
		_, _ = probe.WriteTo([]byte("probe"), probe.LocalAddr())
		out, _ := exec.Command("tshark", "-r", file, "-Y", fmt.Sprintf("udp.port==%d", probePort)).Output()
		if len(bytes.TrimSpace(out)) > 0 {
			break
		}
		if i == 100 {
			t.Fatal("tshark captured nothing within 20 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	return &capture{cmd: cmd, file: file, port: port}
}

// dissect stops the capture, fails the test on any packet tshark flags
// malformed or in error, and returns the PFCP message types it read.
func (c *capture) dissect(t *testing.T) []string {
	t.Helper()
	time.Sleep(300 * time.Millisecond) // let the last packets reach the capture
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	_ = c.cmd.Wait()
	args := []string{"-r", c.file, "-d", "udp.port==" + c.port + ",pfcp"}
	bad, err := exec.Command("tshark", append(args, "-Y", "_ws.malformed || _ws.expert.severity == error")...).Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if s := strings.TrimSpace(string(bad)); s != "" {
		verbose, _ := exec.Command("tshark", append(args, "-V", "-Y", "_ws.malformed || _ws.expert.severity == error")...).CombinedOutput()
		t.Fatalf("tshark flags packets:\n%s\n%s", s, tail(verbose, 6000))
	}
	out, err := exec.Command("tshark", append(args, "-Y", "pfcp", "-T", "fields", "-e", "pfcp.msg_type")...).Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if testing.Verbose() {
		full, _ := exec.Command("tshark", append(args, "-V", "-Y", "pfcp.msg_type==50")...).Output()
		t.Logf("a Session Establishment Request as tshark reads it:\n%s", tail(full, 5000))
	}
	return strings.Fields(string(out))
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
