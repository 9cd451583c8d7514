// Package tsharkcap records UDP on loopback (or on another interface, e.g.
// the lab's N3 veth) with tshark while a test runs and reads it back: the
// wire checks of N2 (test/e2e, SCTP over UDP), N4 (upf/c and test/e2e,
// PFCP) and N3 (test/e2e, GTP-U) prove that what went on the wire is what
// Wireshark expects (DESIGN.md "Correctness bar").
package tsharkcap

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Capture is one tshark recording into File.
type Capture struct {
	cmd  *exec.Cmd
	File string
	// Read are the options every read of the file passes (decode-as,
	// preferences), set by the caller.
	Read []string
}

// Start records UDP on loopback to or from port, and returns once tshark
// really captures.
func Start(t testing.TB, port int) *Capture {
	t.Helper()
	lo := netip.MustParseAddr("127.0.0.1")
	return StartOn(t, "lo", fmt.Sprintf("udp port %d", port), lo, lo)
}

// StartOn records what the capture filter catches on iface, and returns
// once tshark really captures: a probe datagram from probeFrom (an address
// of this host) to probeTo, which leaves through iface, shows up in the
// file. (N3 on the lab's veth: from the gNB's address to UPF-U's, which
// counts and drops it.)
func StartOn(t testing.TB, iface, filter string, probeFrom, probeTo netip.Addr) *Capture {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatalf("tshark is needed for wire-compliance tests (make deps installs it): %v", err)
	}
	file := filepath.Join(t.TempDir(), "capture.pcapng")
	probe, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(probeFrom, 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	probePort := probe.LocalAddr().(*net.UDPAddr).Port
	to := netip.AddrPortFrom(probeTo, uint16(probePort))
	cmd := exec.Command("tshark", "-i", iface, "-f", fmt.Sprintf("(%s) or udp port %d", filter, probePort), "-w", file, "-q")
	// Its own process group, so that ending tshark also ends the dumpcap it
	// starts: a dumpcap left behind kept capturing, and kept open whatever
	// descriptors the test inherited (a lock file held for 37 minutes).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("tshark: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	if !capturing(stderr) {
		t.Fatalf("tshark did not start capturing on %s within 20 s", iface)
	}
	// "Capturing on" comes before packets are really captured: wait until
	// a probe datagram shows up in the file.
	for i := 0; ; i++ {
		_, _ = probe.WriteToUDPAddrPort([]byte("probe"), to)
		out, _ := exec.Command("tshark", "-r", file, "-Y", fmt.Sprintf("udp.port==%d", probePort)).Output()
		if len(bytes.TrimSpace(out)) > 0 {
			break
		}
		if i == 100 {
			t.Fatalf("tshark captured nothing on %s within 20 s", iface)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return &Capture{cmd: cmd, File: file}
}

// capturing waits for tshark's "Capturing on" line, then drains stderr.
func capturing(stderr interface{ Read([]byte) (int, error) }) bool {
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
		return true
	case <-time.After(20 * time.Second):
		return false
	}
}

// Stop ends the capture and waits until the file is complete.
func (c *Capture) Stop() {
	time.Sleep(300 * time.Millisecond)                   // let the last packets reach the capture
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGINT) // tshark and its dumpcap
	_ = c.cmd.Wait()
}

// RequireClean fails the test on any packet tshark flags malformed or as
// an error, with tshark's full dissection of those packets.
func (c *Capture) RequireClean(t testing.TB) {
	t.Helper()
	const bad = "_ws.malformed || _ws.expert.severity == error"
	out := c.Tshark(t, "-Y", bad)
	if s := strings.TrimSpace(out); s != "" {
		verbose, _ := exec.Command("tshark", append(c.args(), "-V", "-Y", bad)...).CombinedOutput()
		t.Fatalf("tshark flags malformed packets:\n%s\n%s", s, Tail(verbose, 6000))
	}
}

// Tshark reads the capture with the Read options and args.
func (c *Capture) Tshark(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command("tshark", append(c.args(), args...)...).Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderrOf(err))
	}
	return string(out)
}

// Summary is tshark's one line per packet, for a failing test's log.
func (c *Capture) Summary() string {
	out, _ := exec.Command("tshark", c.args()...).Output()
	return string(out)
}

func (c *Capture) args() []string { return append([]string{"-r", c.File}, c.Read...) }

// Tail is the last n bytes of b.
func Tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return bytes.Clone(b)
}

func stderrOf(err error) []byte {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return nil
}
