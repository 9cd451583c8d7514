package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/internal/testio"

	"github.com/l25gc/l25gc/node"
)

// A user's session with the commands of the README: `l25gc up` in one
// terminal; `status`, `ransim` and `down` in another, from any directory.
func TestUpStatusRansimDown(t *testing.T) {
	dir := t.TempDir()
	cfg, cfgPath := coreConfig(t, dir, nil) // the default SBI: X-IO where it can run
	link := filepath.Join(dir, "current.json")
	env := append(os.Environ(), "L25GC_STATE_LINK="+link)
	elsewhere := t.TempDir() // a directory without run/data of its own

	up := exec.Command(binary, "up", "--config", cfgPath)
	up.Env, up.Dir = env, dir
	stdout, err := up.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	up.Stderr = up.Stdout
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	upExited := make(chan error, 1)
	var upOut testio.SyncBuffer
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			upOut.Write([]byte(sc.Text() + "\n"))
			if strings.HasPrefix(sc.Text(), "L25GC+ is up") {
				close(ready)
			}
		}
		upExited <- up.Wait()
	}()
	t.Cleanup(func() {
		if up.ProcessState == nil {
			_ = up.Process.Signal(syscall.SIGTERM)
			<-upExited
		}
		if t.Failed() {
			t.Logf("l25gc up printed:\n%s", upOut.String())
		}
	})
	select {
	case <-ready:
	case err := <-upExited:
		t.Fatalf("l25gc up exited before the core was up: %v", err)
	case <-time.After(90 * time.Second): // a bound on a hang, not a measurement
		t.Fatal("l25gc up: the core is not up after 90 s")
	}

	cli := func(args ...string) (string, error) {
		c := exec.Command(binary, args...)
		c.Env, c.Dir = env, elsewhere
		out, err := c.CombinedOutput()
		return string(out), err
	}

	status, err := cli("status")
	if err != nil {
		t.Fatalf("l25gc status from another directory: %v\n%s", err, status)
	}
	for _, nf := range append([]string{"onvm"}, cfg.NFs...) {
		if !rowSays(status, nf, "ok") {
			t.Errorf("l25gc status: no healthy %s row:\n%s", nf, status)
		}
	}
	if !strings.Contains(status, "SBI xio") {
		t.Errorf("l25gc status does not say the SBI runs over X-IO by default:\n%s", status)
	}

	if out, err := cli("ransim", "--config", cfgPath, "--ues", "3", "--concurrency", "3"); err != nil ||
		!strings.Contains(out, "NG Setup done") {
		t.Fatalf("l25gc ransim against the running core: %v\n%s", err, out)
	}

	if out, err := cli("down"); err != nil || !strings.Contains(out, "L25GC+ stopped") {
		t.Fatalf("l25gc down from another directory: %v\n%s", err, out)
	}
	select {
	case err := <-upExited:
		if err != nil {
			t.Fatalf("l25gc up after down: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("l25gc up still runs 30 s after l25gc down")
	}
	if !strings.Contains(upOut.String(), "onvm  stopped") {
		t.Errorf("l25gc up did not stop the onvm manager:\n%s", upOut.String())
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("the state link survived the core: %v", err)
	}
	if out, err := cli("status"); err == nil || !strings.Contains(out, "no core is running") {
		t.Errorf("l25gc status with no core: %v\n%s", err, out)
	}
}

// rowSays reports whether a table row starting with name ends with want.
func rowSays(table, name, want string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[0] == name && f[len(f)-1] == want {
			return true
		}
	}
	return false
}

// Where X-IO cannot run (here: not root, so DPDK cannot map hugepages),
// `l25gc up` says so and runs the SBI over tcp; the core still serves UEs.
func TestUpWithoutXIOFallsBackToTCP(t *testing.T) {
	if os.Getuid() != 0 {
		t.Fatal("this test drops root to show the fallback; run the suite as root (make test)")
	}
	dir := t.TempDir()
	_, cfgPath := coreConfig(t, dir, nil)
	// The unprivileged user must reach its config, data and log dirs.
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "L25GC_STATE_LINK="+filepath.Join(dir, "current.json"))
	up := exec.Command("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", binary, "up", "--config", cfgPath)
	up.Env, up.Dir = env, dir
	var out testio.SyncBuffer
	up.Stdout, up.Stderr = &out, &out
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- up.Wait() }()
	t.Cleanup(func() {
		_ = up.Process.Signal(syscall.SIGTERM)
		<-exited
		if t.Failed() {
			t.Logf("l25gc up printed:\n%s", out.String())
		}
	})
	for deadline := time.Now().Add(90 * time.Second); !strings.Contains(out.String(), "L25GC+ is up"); {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("l25gc up exited: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the core is not up after 90 s")
		}
	}
	if s := out.String(); !strings.Contains(s, "the SBI falls back to tcp") || !strings.Contains(s, "L25GC+ is up (SBI tcp)") {
		t.Fatalf("l25gc up did not say it fell back to tcp:\n%s", s)
	}
	ransim := exec.Command(binary, "ransim", "--config", cfgPath, "--ues", "2", "--concurrency", "2")
	if b, err := ransim.CombinedOutput(); err != nil {
		t.Fatalf("registration on the tcp fallback: %v\n%s", err, b)
	}
}

// An NF that exits before it serves (here: the AUSF's first start fails,
// as a DPDK secondary does when its fresh address space has the shared
// memory's address taken) is started again; the core comes up and serves.
func TestNFFailingItsFirstStartIsStartedAgain(t *testing.T) {
	dir := t.TempDir()
	cfg, cfgPath := coreConfig(t, dir, withSBI("tcp"))
	mark := filepath.Join(dir, "ausf-failed-once")
	wrapper := filepath.Join(dir, "l25gc-flaky")
	script := "#!/bin/sh\n" +
		"if [ \"$2\" = ausf ] && [ ! -e " + mark + " ]; then touch " + mark + "; echo 'flaky start' >&2; exit 1; fi\n" +
		"exec " + binary + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var out testio.SyncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	core, err := node.Start(ctx, cfg, node.Options{Binary: wrapper, ConfigPath: cfgPath, Out: &out})
	if err != nil {
		t.Fatalf("core with an AUSF failing its first start: %v\n%s", err, out.String())
	}
	defer core.Stop()
	if _, err := os.Stat(mark); err != nil || !strings.Contains(out.String(), "ausf  node: ausf exited during start") {
		t.Fatalf("the AUSF did not fail its first start as arranged:\n%s", out.String())
	}
	g := connectGNB(t, cfg)
	if _, err := newUE(t, cfg, g, 0, "null").Register(procCtx(t)); err != nil {
		t.Fatalf("registration after the AUSF's second start: %v", err)
	}
}

// `l25gc up` while another program holds one of the node's ports refuses at
// once with one line naming the port and its config field; no NF is
// started, so none is restarted in a loop.
func TestUpRefusesAPortInUse(t *testing.T) {
	dir := t.TempDir()
	cfg, cfgPath := coreConfig(t, dir, withSBI("tcp"))
	held, err := net.Listen("tcp", cfg.Addr(cfg.UDM.MetricsPort))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound on a hang
	defer cancel()
	up := exec.CommandContext(ctx, binary, "up", "--config", cfgPath)
	up.Env, up.Dir = append(os.Environ(), "L25GC_STATE_LINK="+filepath.Join(dir, "current.json")), dir
	out, err := up.CombinedOutput()
	if err == nil {
		t.Fatalf("l25gc up started with a port taken:\n%s", out)
	}
	want := fmt.Sprintf("port %d (udm.metrics_port, tcp %s) is in use by another program", cfg.UDM.MetricsPort, cfg.Addr(cfg.UDM.MetricsPort))
	if !strings.Contains(string(out), want) {
		t.Errorf("l25gc up does not name the taken port and its field (%q):\n%s", want, out)
	}
	if started, _ := filepath.Glob(filepath.Join(cfg.LogDir, "*.stderr")); len(started) > 0 || strings.Contains(string(out), "exited") {
		t.Errorf("l25gc up started NFs on a taken port (%v):\n%s", started, out)
	}
}
