package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// capture records the N2 traffic on loopback with tshark's dumpcap while a
// test runs, so the test can prove that what went on the wire is 3GPP's.
type capture struct {
	cmd  *exec.Cmd
	file string
	port int
}

func startCapture(t *testing.T, port int) *capture {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatalf("tshark is needed for wire-compliance tests (make deps installs it): %v", err)
	}
	file := filepath.Join(t.TempDir(), "n2.pcapng")
	probe, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	probePort := probe.LocalAddr().(*net.UDPAddr).Port
	cmd := exec.Command("tshark", "-i", "lo", "-f", fmt.Sprintf("udp port %d or udp port %d", port, probePort), "-w", file, "-q")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("tshark: %v", err)
	}
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
		_ = cmd.Process.Kill()
		t.Fatal("tshark did not start capturing within 20 s")
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// "Capturing on" comes before packets are really captured: wait until
	// a probe datagram shows up in the file.
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

// stop ends the capture and waits until the file is complete.
func (c *capture) stop(t *testing.T) {
	t.Helper()
	time.Sleep(300 * time.Millisecond) // let the last packets reach the capture
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	_ = c.cmd.Wait()
}

// dissected is one NGAP-carrying packet as tshark reads it.
type dissected struct {
	frame      string
	procedures []string // NGAP procedure codes
	nasTypes   []string // 5GMM message types, hex
}

// dissect reads the capture back with SCTP decoded on the N2 UDP port (the
// RFC 6951 encapsulation) and NEA0 payloads dissected, and fails the test on
// any packet tshark flags malformed.
func (c *capture) dissect(t *testing.T) []dissected {
	t.Helper()
	args := []string{"-r", c.file, "-d", fmt.Sprintf("udp.port==%d,sctp", c.port), "-o", "nas-5gs.null_decipher:TRUE"}
	out, err := exec.Command("tshark", append(args, "-Y", "_ws.malformed || _ws.expert.severity == error")...).Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderrOf(err))
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		verbose, _ := exec.Command("tshark", append(args, "-V", "-Y", "_ws.malformed || _ws.expert.severity == error")...).CombinedOutput()
		t.Fatalf("tshark flags malformed packets:\n%s\n%s", s, tail(verbose, 6000))
	}
	out, err = exec.Command("tshark", append(args, "-Y", "ngap", "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,",
		"-e", "frame.number", "-e", "ngap.procedureCode", "-e", "nas_5gs.mm.message_type")...).Output()
	if err != nil {
		t.Fatalf("tshark fields: %v\n%s", err, stderrOf(err))
	}
	var pkts []dissected
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		for len(f) < 3 {
			f = append(f, "")
		}
		pkts = append(pkts, dissected{frame: f[0], procedures: splitNonEmpty(f[1]), nasTypes: splitNonEmpty(f[2])})
	}
	return pkts
}

func splitNonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func tail(b []byte, n int) []byte {
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

// summary is tshark's one line per packet, for a failing test's log.
func (c *capture) summary() string {
	out, _ := exec.Command("tshark", "-r", c.file, "-d", fmt.Sprintf("udp.port==%d,sctp", c.port), "-o", "nas-5gs.null_decipher:TRUE").Output()
	return string(out)
}
