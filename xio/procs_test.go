//go:build l25gc_testhooks

package xio_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/internal/testio"

	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xioproc"
)

// startCaptured starts role with env added, its stdout after Ready and its
// stderr copied into out (and stderr also to ours).
func startCaptured(t *testing.T, role string, out *testio.SyncBuffer, env ...string) *xioproc.Proc {
	t.Helper()
	return startInto(t, role, out, &teeWriter{out, os.Stderr}, env...)
}

func startInto(t *testing.T, role string, stdout, stderr io.Writer, env ...string) *xioproc.Proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	p, err := xioproc.StartCmd(cmd, role)
	if err != nil {
		t.Fatalf("start %s: %v", role, err)
	}
	return p
}

type teeWriter struct {
	a, b interface{ Write([]byte) (int, error) }
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.a.Write(p)
	return w.b.Write(p)
}

var privateManagers atomic.Int64

// privateManager is an onvm manager of its own, for tests that may make a
// manager exit: the test process stays attached to testManager.
type privateManager struct {
	*xioproc.Proc
	prefix string
	out    *testio.SyncBuffer
}

// env is what a child needs to attach to this manager.
func (m *privateManager) env() string { return xioproc.EnvPrefix + "=" + m.prefix }

func startPrivateManager(t *testing.T) *privateManager {
	t.Helper()
	if err := xioproc.EnsureHugepages(128); err != nil {
		t.Fatal(err)
	}
	prefix := xioproc.PrefixForNth(os.Getpid(), int(privateManagers.Add(1)))
	out := &testio.SyncBuffer{}
	m := &privateManager{prefix: prefix, out: out}
	// Its last words are the test's to check (and shown if it fails).
	m.Proc = startInto(t, xioproc.RoleManager, out, out, m.env())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("private onvm manager said:\n%s", out.String())
		}
		select {
		case <-m.Exited():
		default:
			m.Stop()
		}
		xioproc.RemoveLeftovers(prefix)
	})
	return m
}

func (m *privateManager) exited() bool {
	select {
	case <-m.Exited():
		return true
	default:
		return false
	}
}

// waitOutput waits until out contains want; within bounds a failing test
// only (20 s at every call: a stalled CI machine makes output late).
func waitOutput(t *testing.T, out *testio.SyncBuffer, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %v; output:\n%s", want, within, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stopProc SIGSTOPs p and waits until it is stopped.
func stopProc(t *testing.T, p *xioproc.Proc) {
	t.Helper()
	p.Cmd.Process.Signal(syscall.SIGSTOP)
	waitFor(t, func() bool { return processStopped(p.Cmd.Process.Pid) })
}

func threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var n int
		if _, err := fmt.Sscanf(line, "Threads: %d", &n); err == nil {
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// settledPool is the number of buffers in use once in-flight messages of
// earlier tests (a FIN, an RST) are consumed: two equal readings in a row.
// It first waits for the manager to reap the processes earlier tests
// killed: it scans only a few times a second, so a dead child's buffers
// (a message left in its ring, one it held) may stay counted for longer
// than two readings and then be reclaimed under the caller, whose pool
// then never gets back to its base.
func settledPool(t *testing.T) uint64 {
	t.Helper()
	waitFor(t, func() bool { return xio.ReapsPendingForTest() == 0 })
	prev, _, err := xio.PoolInUse()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		time.Sleep(20 * time.Millisecond)
		n, _, _ := xio.PoolInUse()
		if n == prev {
			return n
		}
		prev = n
	}
	return prev
}
