package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
)

// withUserPlane runs UPF-U too: `l25gc up` builds the lab veths and the
// data-network namespace l25gc-dn, and UPF-U forwards between them.
func withUserPlane(c *config.Config) {
	c.NFs = append(c.NFs, "upf-u")
}

// dnAddr is the data-network host of the lab topology (netns l25gc-dn).
const dnAddr = "10.200.0.2"

// What a user does after `make run` (issue 11): a UE registers and gets a
// PDU session with a TUN in its own namespace, ping reaches the data
// network through UPF-U, iperf3 runs TCP and UDP both ways, and once the
// simulator releases the session UPF-U holds no rules any more.
func TestUETrafficCrossesTheUserPlane(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), withUserPlane)
	startCore(t, cfg, path)

	ue := holdUE(t, path)
	ueAddr := ue.addr
	if !strings.HasPrefix(ueAddr, "10.60.") {
		t.Fatalf("UE address %s is not from the DNN's pool 10.60.0.0/16", ueAddr)
	}
	if n := upfSessions(t, cfg); n != 1 {
		t.Errorf("UPF-U holds %v sessions with one PDU session up, want 1", n)
	}

	// Every echo, the first too: UPF-U holds it while it resolves the gNB
	// by ARP (upf/u/neighbour.c) instead of dropping it.
	if b, lost := pingEvery("l25gc-ue1", dnAddr, 5, "0.2"); len(lost) != 0 {
		t.Fatalf("ping %s from the UE: %d of 5 answered (lost: %v)\n%s", dnAddr, 5-len(lost), lost, b)
	}
	server := inNetns("l25gc-dn", "iperf3", "-s", "-B", dnAddr)
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	time.Sleep(300 * time.Millisecond) // the server's listen; a client that comes too soon retries below
	for _, run := range []struct {
		name string
		args []string
	}{
		{"TCP uplink", nil},
		{"TCP downlink", []string{"-R"}},
		{"UDP uplink", []string{"-u", "-b", "20M"}},
		{"UDP downlink", []string{"-u", "-b", "20M", "-R"}},
	} {
		b, err := iperf3FromUE(append([]string{"-t", "2"}, run.args...)...)
		if err != nil || !strings.Contains(string(b), "receiver") {
			t.Errorf("iperf3 %s: %v\n%s", run.name, err, b)
		}
	}

	// Stop the hold: ransim releases the session and removes the TUN.
	ue.release(t)
	awaitNoUPFSessions(t, cfg)
}

// awaitUETUN waits for the UE's namespace to carry its address; it
// returns the address.
func awaitUETUN(t *testing.T, ns string, exited chan error) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := inNetns(ns, "ip", "-4", "-o", "addr", "show", "dev", ns).Output()
		if f := strings.Fields(string(b)); len(f) >= 4 {
			addr, _, _ := strings.Cut(f[3], "/")
			return addr
		}
		select {
		case err := <-exited:
			t.Fatalf("ransim ended before the UE's TUN was up: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no address on %s in netns %s after 60 s", ns, ns)
		}
	}
}

func inNetns(ns string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_ = cancel // the command's own life bounds the context; exec kills it at the deadline
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns}, args...)...)
}

// upfSessions reads l25gc_upf_sessions from UPF-U's /metrics.
func upfSessions(t *testing.T, cfg *config.Config) float64 {
	t.Helper()
	resp, err := http.Get("http://" + cfg.Addr(cfg.UPF.U.MetricsPort) + "/metrics")
	if err != nil {
		t.Fatalf("UPF-U's /metrics: %v", err)
	}
	defer resp.Body.Close()
	return metricIn(t, resp.Body, "l25gc_upf_sessions")
}

func metricIn(t *testing.T, r io.Reader, name string) float64 {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("no %s on /metrics", name)
	return 0
}

// received is the count of answers ping reports ("5 packets transmitted,
// 5 received").
func received(pingOut string) int {
	_, after, ok := strings.Cut(pingOut, "packets transmitted, ")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(strings.Fields(after)[0])
	return n
}

// 200 UEs establish (and release) PDU sessions at once with no failure,
// over each SBI transport (issue 11): `l25gc ransim --pdu` exits non-zero
// on any failed establishment or release.
func TestTwoHundredPDUSessionsAtOnce(t *testing.T) {
	for _, mode := range sbiModes {
		t.Run(mode, func(t *testing.T) {
			cfg, path := coreConfig(t, t.TempDir(), withSBI(mode, func(c *config.Config) { c.Subscribers[0].Count = 200 }))
			startCore(t, cfg, path)
			b, err := exec.Command(binary, "ransim", "--config", path, "--ues", "200", "--concurrency", "200", "--pdu",
				"--n3", "127.0.0.1").CombinedOutput()
			if err != nil {
				t.Fatalf("l25gc ransim --ues 200 --pdu over %s: %v\n%s", mode, err, b)
			}
			if n := upfcSessions(t, cfg); n != 0 {
				t.Errorf("UPF-C still holds %v sessions after every release", n)
			}
		})
	}
}

// upfcSessions reads l25gc_upfc_sessions from UPF-C's /metrics.
func upfcSessions(t *testing.T, cfg *config.Config) float64 {
	t.Helper()
	resp, err := http.Get("http://" + cfg.Addr(cfg.UPF.C.MetricsPort) + "/metrics")
	if err != nil {
		t.Fatalf("UPF-C's /metrics: %v", err)
	}
	defer resp.Body.Close()
	return metricIn(t, resp.Body, "l25gc_upfc_sessions")
}

// iperf3FromUE runs an iperf3 client in the UE's namespace against the DN
// host's server, trying again while the server is still starting (or
// busy with the previous client).
func iperf3FromUE(args ...string) ([]byte, error) {
	args = append([]string{"iperf3", "-c", dnAddr, "--connect-timeout", "3000"}, args...)
	var b []byte
	var err error
	for try := 0; try < 3; try++ {
		if b, err = inNetns("l25gc-ue1", args...).CombinedOutput(); err == nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	return b, err
}
