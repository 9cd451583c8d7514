package node

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/internal/testio"

	"github.com/l25gc/l25gc/config"
)

// The supervisor's tests run this test binary as their NFs: `nf NAME
// --config F` serves /healthz on NAME's metrics port and notes its start
// and stop (or, as the flaky NF, fails the way a broken NF does).
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "nf" {
		os.Exit(runFakeNF(os.Args[2], os.Args[3:]))
	}
	os.Exit(m.Run())
}

// Environment the tests hand their fake NF processes.
const (
	envFakePorts  = "L25GC_TEST_FAKE_PORTS" // "sbi,metrics,sbi,metrics" of the fake and the flaky NF
	envEvents     = "L25GC_TEST_EVENTS"     // file the NFs note "start NAME" / "stop NAME" in
	envFlakyMark  = "L25GC_TEST_FLAKY_MARK" // the flaky NF's first run leaves this file
	fakeName      = "fake"
	flakyName     = "flaky"
	flakyLastWord = "bind: address already in use (flaky's last word)"
)

// fakePorts and flakyPorts are the test NFs' config sections: they have no
// typed ones, which is the point (NFs added through the table alone).
var fakePorts, flakyPorts config.NF

// withFake is the built-in table with two test NFs in front: the fake needs
// the NRF (the start order must still put the NRF first); the flaky NF
// needs nothing.
func withFake() config.Catalog {
	var ports [4]int
	for i, p := range strings.Split(os.Getenv(envFakePorts), ",") {
		if i < len(ports) {
			ports[i], _ = strconv.Atoi(p)
		}
	}
	fake := config.NFSpec{Name: fakeName, Type: "FAKE", After: []string{"nrf"},
		Ports:   config.NF{SBIPort: ports[0], MetricsPort: ports[1]},
		Section: func(*config.Config) *config.NF { return &fakePorts }}
	flaky := config.NFSpec{Name: flakyName, Type: "FLAKY",
		Ports:   config.NF{SBIPort: ports[2], MetricsPort: ports[3]},
		Section: func(*config.Config) *config.NF { return &flakyPorts }}
	return append(config.Catalog{fake, flaky}, config.Builtin...)
}

func runFakeNF(name string, args []string) int {
	var path string
	for i, a := range args {
		if a == "--config" && i+1 < len(args) {
			path = args[i+1]
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg, err := config.ParseFor(withFake(), path, data)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	spec, _ := withFake().Lookup(name)
	if name == flakyName {
		return runFlaky(cfg, spec)
	}
	ln, err := net.Listen("tcp", cfg.Addr(spec.PortsIn(cfg).MetricsPort))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() { _ = http.Serve(ln, healthz(nil)) }()
	note("start " + name)
	<-term
	note("stop " + name)
	return 0
}

// runFlaky serves until its first health check is answered and then dies;
// every later run dies at once: an NF whose failure repeats.
func runFlaky(cfg *config.Config, spec config.NFSpec) int {
	mark := os.Getenv(envFlakyMark)
	if _, err := os.Stat(mark); err == nil {
		fmt.Fprintln(os.Stderr, flakyLastWord)
		return 1
	}
	ln, err := net.Listen("tcp", cfg.Addr(spec.PortsIn(cfg).MetricsPort))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	answered := make(chan struct{}, 1)
	go func() { _ = http.Serve(ln, healthz(answered)) }()
	<-answered
	_ = os.WriteFile(mark, nil, 0o644)
	ln.Close()
	fmt.Fprintln(os.Stderr, "flaky: first run ends")
	return 1
}

func healthz(answered chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		if answered != nil {
			w.(http.Flusher).Flush()
			select {
			case answered <- struct{}{}:
			default:
			}
		}
	})
}

func note(event string) {
	f, err := os.OpenFile(os.Getenv(envEvents), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err == nil {
		fmt.Fprintln(f, event)
		f.Close()
	}
}

// freePorts returns n TCP ports the kernel just handed out.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// nodeConfig is the default config for cat on free ports, over tcp, in
// fresh directories, written to a file as `l25gc up` would read it.
func nodeConfig(t *testing.T, nfs ...string) (*config.Config, string) {
	t.Helper()
	ports := freePorts(t, 2*len(withFake())+1)
	t.Setenv(envFakePorts, fmt.Sprintf("%d,%d,%d,%d", ports[0], ports[1], ports[2], ports[3]))
	cat := withFake() // the test NFs' ports as their processes will see them
	cfg := config.DefaultFor(cat)
	// A unit test leaves the host's haltpoll window alone (the default
	// sets it on a guest at 0; tuning_test.go tests that on a file).
	leave := int64(config.HaltPollLeave)
	cfg.Tuning.HaltPollNs = &leave
	for i, spec := range cat[2:] {
		*spec.PortsIn(cfg) = config.NF{SBIPort: ports[4+2*i], MetricsPort: ports[5+2*i]}
		if !spec.HasSBI() { // UPF-C: its N4 UDP port takes the SBI port's slot
			cfg.UPF.C.PFCPAddr = "127.0.0.1:" + strconv.Itoa(ports[4+2*i])
			spec.PortsIn(cfg).SBIPort = 0
		}
	}
	dir := t.TempDir()
	cfg.NFs, cfg.SBI.Transport = nfs, "tcp"
	if !cfg.Runs("nrf") {
		cfg.SBI.NRFURI = "http://127.0.0.1:1" // elsewhere; the test NFs never call it
		cfg.SBI.OAuth2 = "off"                // so no core secret to copy from it
	}
	cfg.DataDir, cfg.LogDir = filepath.Join(dir, "data"), filepath.Join(dir, "log")
	cfg.AMF.NGAP.Addr, cfg.AMF.NGAP.Transport = "127.0.0.1:"+strconv.Itoa(ports[len(ports)-1]), "udp"
	path := filepath.Join(dir, "node.yaml")
	if err := cfg.Save(path); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envEvents, filepath.Join(dir, "events"))
	t.Setenv(envFlakyMark, filepath.Join(dir, "flaky-ran"))
	return cfg, path
}

// An NF added through the table alone is configured with its default
// ports, validated with the others (a clash names its field), and started
// after what it needs and stopped before it.
func TestNFAddedThroughTheTableIsConfiguredValidatedStartedAndStopped(t *testing.T) {
	cfg, path := nodeConfig(t, "amf", fakeName, "nrf")
	cat := withFake()
	if err := cat.Check(); err != nil {
		t.Fatal(err)
	}
	if d := config.DefaultFor(cat); strings.Join(d.NFs, " ") != "flaky nrf fake udr udm ausf pcf nssf upf-c upf-u smf amf" || fakePorts != cat[0].Ports {
		t.Fatalf("defaults: nfs %v, fake ports %+v, want the fake right after the NRF, on %+v", d.NFs, fakePorts, cat[0].Ports)
	}
	clash := fmt.Sprintf("nrf:\n  metrics_port: %d\n", cat[0].Ports.SBIPort)
	want := fmt.Sprintf("node.yaml:2: nrf.metrics_port: port %d is already used by fake.sbi_port", cat[0].Ports.SBIPort)
	if _, err := config.ParseFor(cat, "node.yaml", []byte(clash)); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("clash with the fake's port: %v, want %q", err, want)
	}
	if _, err := config.ParseFor(cat, "node.yaml", []byte("nfs: [nrf, fake]\n")); err != nil {
		t.Fatalf("a node running the fake: %v", err)
	}

	var out testio.SyncBuffer
	core, err := Start(t.Context(), cfg, Options{Binary: os.Args[0], ConfigPath: path, Out: &out, NFs: cat})
	if err != nil {
		t.Fatalf("start: %v\n%s", err, out.String())
	}
	var names []string
	for _, p := range core.Processes() {
		names = append(names, p.Name)
	}
	core.Stop()
	if got := strings.Join(names, " "); got != "nrf fake amf" {
		t.Errorf("supervised %q, want nrf fake amf", got)
	}
	events, _ := os.ReadFile(os.Getenv(envEvents))
	want = "start nrf\nstart fake\nstart amf\nstop amf\nstop fake\nstop nrf\n"
	if string(events) != want {
		t.Errorf("NF events:\n%s\nwant:\n%s", events, want)
	}
}

// An NF that dies at every start is restarted a bounded number of times,
// with back-off, and then given up on with its last words on the console.
func TestNFThatKeepsFailingIsGivenUp(t *testing.T) {
	cfg, path := nodeConfig(t, flakyName)
	var out testio.SyncBuffer
	core, err := Start(t.Context(), cfg, Options{Binary: os.Args[0], ConfigPath: path, Out: &out, NFs: withFake(),
		Restart: true, MaxRestarts: 3, RestartBackoff: time.Millisecond})
	if err != nil {
		t.Fatalf("start: %v\n%s", err, out.String())
	}
	defer core.Stop()
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(out.String(), "gave up"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) { // a bound on a hang, not a measurement
			t.Fatalf("the supervisor did not give up on the flaky NF:\n%s", out.String())
		}
	}
	core.Stop() // waits for every watcher: nothing restarts after this
	p := core.Processes()[0]
	if p.Restarts != 3 || !p.GaveUp {
		t.Errorf("flaky: %d restarts, gave up %v; want 3 and true", p.Restarts, p.GaveUp)
	}
	s := out.String()
	if n := strings.Count(s, "flaky restarted pid"); n != 3 {
		t.Errorf("%d restarts on the console, want 3:\n%s", n, s)
	}
	if !strings.Contains(s, "flaky gave up: restarted 3 times in a row") || !strings.Contains(s, flakyLastWord) {
		t.Errorf("the give-up does not say why:\n%s", s)
	}
	st, err := ReadState(cfg)
	if err == nil {
		t.Errorf("state left after stop: %+v", st)
	}
}

// Restarts wait twice as long after each failure in a row, up to the cap,
// and stop at the bound.
func TestRestartBackoffDoublesUpToTheBound(t *testing.T) {
	c := &Core{opts: Options{MaxRestarts: 4, RestartBackoff: 10 * time.Second}}
	p := &Process{spawned: time.Now()}
	var got []time.Duration
	for {
		d, ok := c.nextRestart(p)
		if !ok {
			break
		}
		got = append(got, d)
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("back-offs %v, want %v", got, want)
	}
	p = &Process{spawned: time.Now().Add(-2 * stableAfter), failures: 4}
	if d, ok := c.nextRestart(p); !ok || d != 10*time.Second {
		t.Errorf("an NF that ran %v before dying: %v, %v; want a first restart", 2*stableAfter, d, ok)
	}
}

// `l25gc up` refuses at once a port another program holds, naming the port
// and its field, and says how to stop the core that holds it when it is one
// of ours.
func TestCheckPortsNamesTheTakenPortAndItsHolder(t *testing.T) {
	cfg, _ := nodeConfig(t, "nrf", "udm", "amf")
	cat := withFake()
	held, err := net.Listen("tcp", cfg.Addr(cfg.UDM.SBIPort))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	err = CheckPorts(cfg, cat)
	want := fmt.Sprintf("port %d (udm.sbi_port, tcp %s) is in use by another program", cfg.UDM.SBIPort, cfg.Addr(cfg.UDM.SBIPort))
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v, want one line with %q", err, want)
	}

	// Our own core: its state names the port.
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	st := fmt.Sprintf(`{"supervisor_pid": %d, "nfs": [{"name": "udm", "sbi_addr": %q}]}`, os.Getpid(), cfg.Addr(cfg.UDM.SBIPort))
	if err := os.WriteFile(StatePath(cfg), []byte(st), 0o644); err != nil {
		t.Fatal(err)
	}
	err = CheckPorts(cfg, cat)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("in use by the L25GC+ core of supervisor pid %d", os.Getpid())) ||
		!strings.Contains(err.Error(), "`l25gc down`") {
		t.Errorf("port of our own core: %v", err)
	}
	held.Close()
	os.Remove(StatePath(cfg))

	// N2 over SCTP-over-UDP binds a UDP port.
	udp, err := net.ListenPacket("udp", cfg.AMF.NGAP.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	if err := CheckPorts(cfg, cat); err == nil || !strings.Contains(err.Error(), "(amf.ngap.addr, n2 "+cfg.AMF.NGAP.Addr+")") {
		t.Errorf("N2 port taken: %v", err)
	}
}
