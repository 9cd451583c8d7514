// Package e2e runs the whole core as separate processes (the way `l25gc up`
// does) and drives it over N2 with the simulator, as a user would.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/node"
)

// binary is the l25gc executable under test: $L25GC_BIN (make e2e sets it),
// else built once into a temp dir.
var binary string

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	binary = os.Getenv("L25GC_BIN")
	if binary == "" {
		dir, err := os.MkdirTemp("", "l25gc-e2e-bin")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		binary = filepath.Join(dir, "l25gc")
		_, file, _, _ := runtime.Caller(0)
		build := exec.Command("go", "build", "-o", binary, "./cmd/l25gc")
		build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	flag.Parse() // the -timeout exitBeforeTimeout reads
	failures := newFailureLog()
	restore, stdout, err := teeStdout(failures)
	if err != nil {
		return 0, err
	}
	disarm := exitBeforeTimeout(stdout, restore, failures)
	code := m.Run()
	disarm()
	restore()
	fmt.Fprint(os.Stdout, failures.summary())
	return code, nil
}

// testCore is a core started for one test, with its own data and logs.
type testCore struct {
	cfg     *config.Config
	cfgPath string
	core    *node.Core
}

// coreConfig is the default node with N2 over SCTP-in-UDP (this kernel has no
// SCTP) and fresh directories; edit applies test-specific changes.
func coreConfig(t *testing.T, dir string, edit func(*config.Config)) (*config.Config, string) {
	t.Helper()
	t.Cleanup(running.add(t.Name()))
	cfg := config.Default()
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.LogDir = filepath.Join(dir, "log")
	cfg.AMF.NGAP.Transport = "udp"
	cfg.LogLevel = "info"
	// UPF-U (DPDK, the lab veths and netns) only where a test sends user
	// traffic (withUserPlane): the control plane's tests need UPF-C alone.
	cfg.NFs = slices.DeleteFunc(cfg.NFs, func(n string) bool { return n == "upf-u" })
	cfg.UPF.MaxSessions = e2eMaxSessions
	// The host's haltpoll window is left to whoever runs the suite (the
	// default sets it on a guest at 0): a killed test must not leave it.
	leave := int64(config.HaltPollLeave)
	cfg.Tuning.HaltPollNs = &leave
	usePortsNobodyUses(t, cfg)
	if edit != nil {
		edit(cfg)
	}
	path := filepath.Join(dir, "l25gc.yaml")
	if err := cfg.Save(path); err != nil {
		t.Fatal(err)
	}
	return cfg, path
}

// e2eMaxSessions sizes each test core's UPF rule tables. The default
// (65536) maps 105 hugepages (210 MiB) per core for tables no test fills:
// the most sessions a test opens is 256 (nfKillUEs). On a CI machine whose
// hugepages are few, or shared with an onvm manager starting beside them,
// the default's reservation is what makes a DPDK start fail; 1024 maps 2
// pages and still leaves each test four times the sessions it opens.
const e2eMaxSessions = 1024

// startCore starts every NF and stops them when the test ends; on failure it
// prints the NF logs, which is what a user would read.
func startCore(t *testing.T, cfg *config.Config, cfgPath string) *testCore {
	t.Helper()
	requirePortsFree(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := node.Options{Binary: binary, ConfigPath: cfgPath}
	if cfg.SBI.Transport != "tcp" {
		opts.SBI = cfg.SBI.Transport // explicit: fail rather than fall back to tcp
	}
	core, err := node.Start(ctx, cfg, opts)
	if err != nil {
		dumpLogs(t, cfg)
		t.Fatalf("core did not start: %v", err)
	}
	tc := &testCore{cfg: cfg, cfgPath: cfgPath, core: core}
	t.Cleanup(func() {
		core.Stop()
		if t.Failed() {
			dumpLogs(t, cfg)
		}
	})
	return tc
}

// eventBound bounds a wait for something the core does at once on a
// quiet machine (a session gone, a route added, a UE counted): only a
// failing test reaches it, so it is generous for a loaded 2-core CI
// machine, where such steps have taken seconds.
const eventBound = 30 * time.Second

// sbiModes are the SBI transports the core's end-to-end tests run over.
var sbiModes = []string{"tcp", "xio"}

// forEachSBI runs test once per SBI transport, each with its own core.
func forEachSBI(t *testing.T, test func(t *testing.T, mode string)) {
	for _, mode := range sbiModes {
		t.Run(mode, func(t *testing.T) { test(t, mode) })
	}
}

// withSBI is an edit of coreConfig that selects the SBI transport.
func withSBI(mode string, more ...func(*config.Config)) func(*config.Config) {
	return func(c *config.Config) {
		c.SBI.Transport = mode
		for _, m := range more {
			m(c)
		}
	}
}

// usePortsNobodyUses moves every NF to free ports, so that a test core does
// not meet a core a developer runs on the default ports. All sockets stay
// open until every port is chosen, so no two NFs get the same one.
func usePortsNobodyUses(t *testing.T, cfg *config.Config) {
	t.Helper()
	var held []io.Closer
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	var ports []*int
	for _, spec := range config.Builtin {
		nf := spec.PortsIn(cfg)
		if spec.HasSBI() {
			ports = append(ports, &nf.SBIPort)
		}
		ports = append(ports, &nf.MetricsPort)
	}
	for _, port := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, ln)
		*port = ln.Addr().(*net.TCPAddr).Port
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held = append(held, pc)
	cfg.AMF.NGAP.Addr = pc.LocalAddr().String()
	n4, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held = append(held, n4)
	cfg.UPF.C.PFCPAddr = n4.LocalAddr().String()
}

func requirePortsFree(t *testing.T, cfg *config.Config) {
	t.Helper()
	if err := node.CheckPorts(cfg, config.Builtin); err != nil {
		t.Fatal(err)
	}
}

// dumpLogs prints the tail of every NF log of a failed test and keeps the
// whole logs in a directory that outlives the test (its TempDir does not):
// a CI log that keeps only part of the output still has them to upload.
func dumpLogs(t *testing.T, cfg *config.Config) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(cfg.LogDir, "*"))
	kept := keptLogDir(t)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || len(data) == 0 {
			continue
		}
		if kept != "" {
			_ = os.WriteFile(filepath.Join(kept, filepath.Base(f)), data, 0o644)
		}
		if len(data) > logTailBytes {
			data = data[len(data)-logTailBytes:]
		}
		t.Logf("==== %s (tail)\n%s", f, data)
	}
	if kept != "" {
		t.Logf("==== the whole logs: %s", kept)
	}
}

// logTailBytes of each NF log are printed: enough for the last few
// hundred lines' story without burying the test's own message.
const logTailBytes = 6000

// keptLogDir is where a failed test's logs are kept: $L25GC_E2E_LOGS (for
// a CI job to upload), else the system's temp dir; "" when it cannot be
// made.
func keptLogDir(t *testing.T) string {
	root := os.Getenv("L25GC_E2E_LOGS")
	if root == "" {
		root = filepath.Join(os.TempDir(), "l25gc-e2e-logs")
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	dir := filepath.Join(root, name+"-"+time.Now().Format("20060102T150405.000"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	return dir
}
