// Package node starts and supervises the NF processes of one L25GC+ node:
// `l25gc up` and `l25gc bench` use it. Each NF runs as its own process
// (`l25gc nf <name>`), started in the order of the NF table (nf/registry,
// config.Catalog) once the ports it binds are found free, restarted with
// back-off if it dies (up to a bound, then given up with its last log
// lines), and stopped in reverse order. When the SBI runs over X-IO, the onvm
// manager (the shared memory's owner) starts before the NFs and stops after
// them.
package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/hosttune"
	"github.com/l25gc/l25gc/upf/shm"
	"github.com/l25gc/l25gc/xio/xioproc"
)

// Options says how to start a core.
type Options struct {
	Binary     string    // the l25gc binary; "" = this executable
	ConfigPath string    // passed to every NF; "" = built-in defaults
	SBI        string    // transport override ("" = config)
	Out        io.Writer // status lines; nil = discard
	// Restart restarts an NF that exits unexpectedly, after RestartBackoff
	// doubled per failure in a row, at most MaxRestarts times in a row.
	Restart bool
	// MaxRestarts bounds the restarts of an NF that keeps failing: one
	// that exits within a minute of its start that many times in a row
	// will fail again (a port taken, a broken config), so it is given up
	// on. 0 means 5.
	MaxRestarts int
	// RestartBackoff is the wait before the first restart (0 means 500 ms);
	// it doubles with each failure in a row, up to 30 s.
	RestartBackoff time.Duration
	// NFs are the NFs this node may run (nil means config.Builtin, the NF
	// table of nf/registry); cfg.NFs picks among them.
	NFs config.Catalog
	// Publish names this core's state in CurrentStateLink, so that
	// `l25gc status` and `down` find it from any directory (`l25gc up`
	// sets it; tests and benchmarks do not, so they never hide a user's core).
	Publish bool
	// HaltPollPath is the haltpoll knob config tuning.halt_poll_ns sets
	// ("" = sysfs; tests give a temporary file).
	HaltPollPath string
}

// CurrentStateLink is a symlink to the state of the core `l25gc up`
// started last on this host ($L25GC_STATE_LINK moves it, e.g. for tests).
var CurrentStateLink = "/run/l25gc/current.json"

func init() {
	if v := os.Getenv("L25GC_STATE_LINK"); v != "" {
		CurrentStateLink = v
	}
}

// Process is one supervised NF.
type Process struct {
	Name        string `json:"name"`
	PID         int    `json:"pid"`
	SBIAddr     string `json:"sbi_addr"`
	MetricsAddr string `json:"metrics_addr"`
	Restarts    int    `json:"restarts"`
	// GaveUp says the supervisor stopped restarting it (see Options.MaxRestarts).
	GaveUp   bool `json:"gave_up,omitempty"`
	cmd      *exec.Cmd
	starting bool          // Start has not seen it serve yet (guarded by Core.mu)
	decided  chan struct{} // closed when startNF is done with it (it served, or startNF handles its exit)
	exited   chan struct{}
	spawned  time.Time
	failures int  // exits in a row, each soon after its start (guarded by Core.mu)
	killed   bool // by the supervisor, when X-IO restarted whole (guarded by Core.mu)
}

// Core is a running node.
type Core struct {
	cfg   *config.Config
	opts  Options
	mu    sync.Mutex
	procs []*Process
	stop  chan struct{}
	wg    sync.WaitGroup

	// X-IO: the shared memory's holder and the onvm manager, started
	// before the NFs, stopped after them (xio.go).
	xioPrefix       string
	holder          *xioproc.Proc
	holderInfo      *Process
	manager         *xioproc.Proc
	managerInfo     *Process
	managerRestarts int
	xioRestarts     int           // of the holder, with every NF
	managerUp       chan struct{} // closed while X-IO serves; nil without X-IO
	xioRestartMu    sync.Mutex    // one restart of X-IO at a time

	lab *LabNet // the lab topology this node built, nil if none (labnet.go)

	tuned *hosttune.Applied // host tuning to put back on Stop, nil if none (tuning.go)

	stateMu    sync.Mutex // serialises writeState
	started    time.Time
	startingNF string // the NF startNF is spawning (guarded by mu)
}

// State is what `l25gc status` and `l25gc down` read back.
type State struct {
	SupervisorPID int        `json:"supervisor_pid"`
	ConfigPath    string     `json:"config_path"`
	SBI           string     `json:"sbi"`
	LogDir        string     `json:"log_dir"`
	N2            string     `json:"n2"`
	Started       time.Time  `json:"started"`
	NFs           []*Process `json:"nfs"`
	// Manager is the onvm manager when the SBI runs over X-IO, and
	// ShmHolder the process holding its shared memory (package onvm).
	Manager   *Process `json:"onvm,omitempty"`
	ShmHolder *Process `json:"onvm_shm,omitempty"`
	// Path is the file this state was read from.
	Path string `json:"-"`

	// DataDir is the core's data directory, absolute: what names its UPF
	// rule tables (shm.ConfigFor) when `down` cleans up after a dead
	// supervisor.
	DataDir string `json:"data_dir,omitempty"`

	// Tuning is the host latency tuning this core applied and puts back
	// when it stops (config tuning.*); nil when it changed nothing.
	Tuning *hosttune.Applied `json:"tuning,omitempty"`
}

// StatePath is where a node with cfg keeps its State.
func StatePath(cfg *config.Config) string { return filepath.Join(cfg.DataDir, "node.json") }

// Start launches every NF in order and waits until each is healthy.
func Start(ctx context.Context, cfg *config.Config, opts Options) (*Core, error) {
	if opts.Binary == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("node: own executable: %w", err)
		}
		opts.Binary = self
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	for _, dir := range []string{cfg.DataDir, cfg.LogDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("node: %w", err)
		}
	}
	if opts.NFs == nil {
		opts.NFs = config.Builtin
	}
	if err := CheckPorts(cfg, opts.NFs); err != nil {
		return nil, err
	}
	if err := PrepareSecurity(cfg, opts.NFs); err != nil {
		return nil, err
	}
	c := &Core{cfg: cfg, opts: opts, stop: make(chan struct{}), started: time.Now()}
	if err := c.applyTuning(); err != nil {
		return nil, err
	}
	if err := c.prepareLabNet(); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.prepareSBI(); err != nil {
		c.Stop()
		return nil, err
	}
	for _, spec := range c.nfsHere() {
		p, err := c.startNF(ctx, spec.Name)
		if err != nil {
			c.Stop()
			return nil, err
		}
		fmt.Fprintf(opts.Out, "  %-5s up   pid %-7d sbi %-21s metrics %s\n", spec.Name, p.PID, p.SBIAddr, p.MetricsAddr)
	}
	if err := c.writeState(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// nfsHere are the NFs this node runs, in start order.
func (c *Core) nfsHere() []config.NFSpec {
	return runHere(c.cfg, c.opts.NFs)
}

func runHere(cfg *config.Config, cat config.Catalog) []config.NFSpec {
	var here []config.NFSpec
	for _, spec := range cat.StartOrder() {
		if cfg.Runs(spec.Name) { // else another node of the core runs it
			here = append(here, spec)
		}
	}
	return here
}

func (c *Core) addrs(name string) (sbiAddr, metricsAddr string) {
	spec, _ := c.opts.NFs.Lookup(name)
	n := spec.PortsIn(c.cfg)
	if !spec.HasSBI() {
		return "-", c.cfg.Addr(n.MetricsPort) // UPF-C: N4 only
	}
	return c.cfg.Addr(n.SBIPort), c.cfg.Addr(n.MetricsPort)
}

// startAttempts bounds how often Start runs an NF that exits before it
// serves: a start can fail for reasons that pass (a DPDK secondary finding
// the shared memory's address taken in its fresh address space, a port
// still held by a process that just ended).
const startAttempts = 3

// startNF starts NF name and waits until it serves, starting it again when
// it exits first. Its watcher leaves those restarts to startNF.
func (c *Core) startNF(ctx context.Context, name string) (*Process, error) {
	p, err := c.spawnStarting(name, nil)
	for attempt := 1; ; attempt++ {
		if err != nil {
			return nil, err
		}
		err = c.waitHealthy(ctx, p)
		if err == nil {
			c.mu.Lock()
			p.starting = false
			c.mu.Unlock()
		}
		close(p.decided)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, errExitedDuringStart) {
			return nil, err
		}
		if attempt == startAttempts {
			return nil, fmt.Errorf("%w%s", err, c.logTail(name))
		}
		fmt.Fprintf(c.opts.Out, "  %-5s %v; starting it again\n", name, err)
		p, err = c.spawnStarting(name, p)
	}
}

func (c *Core) spawnStarting(name string, prev *Process) (*Process, error) {
	c.mu.Lock()
	c.startingNF = name
	c.mu.Unlock()
	return c.spawnAs(name, prev)
}

// spawn starts NF name for the first time and watches it.
func (c *Core) spawn(name string) (*Process, error) {
	return c.spawnAs(name, nil)
}

// spawnAs starts NF name; with prev set it is prev's restart and takes its
// place in the start order before anyone can watch it die (a restart that
// dies at once is then itself replaced, never left behind).
func (c *Core) spawnAs(name string, prev *Process) (*Process, error) {
	args := []string{"nf", name}
	if c.opts.ConfigPath != "" {
		args = append(args, "--config", c.opts.ConfigPath)
	}
	if c.opts.SBI != "" {
		args = append(args, "--sbi", c.opts.SBI)
	}
	cmd := exec.Command(c.opts.Binary, args...)
	cmd.Env = c.nfEnv()
	// An NF writes its structured log to its own file; stderr catches what
	// happens before the logger exists (bad config, panics in init).
	errLog, err := os.OpenFile(filepath.Join(c.cfg.LogDir, name+".stderr"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	cmd.Stdout, cmd.Stderr = errLog, errLog
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		errLog.Close()
		return nil, fmt.Errorf("node: start %s: %w", name, err)
	}
	sbiAddr, metricsAddr := c.addrs(name)
	p := &Process{Name: name, PID: cmd.Process.Pid, SBIAddr: sbiAddr, MetricsAddr: metricsAddr, cmd: cmd,
		exited: make(chan struct{}), decided: make(chan struct{}), spawned: time.Now()}
	c.mu.Lock()
	p.starting = c.startingNF == name
	c.startingNF = ""
	if prev == nil {
		c.procs = append(c.procs, p)
	} else {
		p.Restarts = prev.Restarts + 1
		p.failures = prev.failures
		c.replace(prev, p)
	}
	// Stop snapshots the NFs under mu after closing stop: a restart that
	// lost that race is not in its snapshot, so it ends here.
	stopping := c.stopping()
	c.mu.Unlock()
	c.wg.Add(1)
	go c.watch(p, errLog)
	if stopping {
		_ = cmd.Process.Kill()
	}
	return p, nil
}

func (c *Core) stopping() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// watch reaps p and, when supervising, restarts it after an unexpected exit.
func (c *Core) watch(p *Process, errLog *os.File) {
	defer c.wg.Done()
	err := p.cmd.Wait()
	errLog.Close()
	if c.xioPrefix != "" { // an X-IO secondary, maybe killed
		xioproc.RemoveProcessLeftovers(c.xioPrefix, p.PID)
	}
	close(p.exited)
	select {
	case <-c.stop:
		return
	default:
	}
	if c.startHandles(p) {
		return
	}
	fmt.Fprintf(c.opts.Out, "  %-5s exited unexpectedly (%v); see %s\n", p.Name, err, filepath.Join(c.cfg.LogDir, p.Name+".log"))
	if !c.opts.Restart {
		return
	}
	backoff, ok := c.nextRestart(p)
	if !ok {
		c.giveUp(p, err)
		return
	}
	fmt.Fprintf(c.opts.Out, "  %-5s restarting in %v\n", p.Name, backoff)
	select {
	case <-c.stop:
		return
	case <-time.After(backoff):
	}
	if !c.awaitManager() || !c.awaitPredecessors(p) {
		return
	}
	np, err := c.spawnAs(p.Name, p)
	if err != nil {
		fmt.Fprintf(c.opts.Out, "  %-5s restart failed: %v\n", p.Name, err)
		return
	}
	fmt.Fprintf(c.opts.Out, "  %-5s restarted pid %d\n", np.Name, np.PID)
	_ = c.writeState()
}

// startHandles reports whether startNF deals with p's exit: p exited before
// startNF saw it serve. One that died just after its first health check is
// an unexpected exit like any other, once startNF has seen it healthy.
func (c *Core) startHandles(p *Process) bool {
	c.mu.Lock()
	starting := p.starting
	c.mu.Unlock()
	if !starting {
		return false
	}
	select {
	case <-p.decided:
	case <-c.stop:
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return p.starting
}

// awaitPredecessors waits until the NFs started before p serve again, so
// that NFs restarted together (after the onvm manager died) come back in
// start order: the NRF first, the AMF last. It returns false when the node
// stops first.
func (c *Core) awaitPredecessors(p *Process) bool {
	client := &http.Client{Timeout: time.Second}
	for {
		if c.predecessorsHealthy(client, p) {
			return true
		}
		select {
		case <-c.stop:
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Core) predecessorsHealthy(client *http.Client, p *Process) bool {
	c.mu.Lock()
	var before []Process
	for _, q := range c.procs {
		if q == p {
			break
		}
		before = append(before, *q)
	}
	c.mu.Unlock()
	for _, q := range before {
		if !Healthy(client, q.MetricsAddr) {
			return false
		}
	}
	return true
}

// replace puts np where p was, keeping the start order (caller holds mu).
func (c *Core) replace(p, np *Process) {
	for i, q := range c.procs {
		if q == p {
			c.procs[i] = np
			return
		}
	}
}

var errExitedDuringStart = errors.New("exited during start")

// waitHealthy polls the NF's /healthz until it answers or the NF exits.
func (c *Core) waitHealthy(ctx context.Context, p *Process) error {
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		if Healthy(client, p.MetricsAddr) {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("node: %s %w (%v); see %s and %s", p.Name, errExitedDuringStart, p.cmd.ProcessState,
				filepath.Join(c.cfg.LogDir, p.Name+".log"), filepath.Join(c.cfg.LogDir, p.Name+".stderr"))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("node: %s not healthy after 30 s; see %s", p.Name, filepath.Join(c.cfg.LogDir, p.Name+".log"))
}

// Healthy asks an NF's metrics endpoint whether it is serving.
func Healthy(client *http.Client, metricsAddr string) bool {
	resp, err := client.Get("http://" + metricsAddr + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Processes returns a snapshot of the supervised NFs.
func (c *Core) Processes() []Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Process, len(c.procs))
	for i, p := range c.procs {
		out[i] = *p
	}
	return out
}

// SBI is the transport the NFs run with (after any fallback to tcp).
func (c *Core) SBI() string {
	if c.opts.SBI != "" {
		return c.opts.SBI
	}
	return c.cfg.SBI.Transport
}

// PIDs maps each process of the core to its current PID: the NFs by name
// and, over X-IO, the onvm manager as "onvm" and its shared memory's
// holder as "onvm-shm".
func (c *Core) PIDs() map[string]int {
	m := map[string]int{}
	for _, p := range c.Processes() {
		m[p.Name] = p.PID
	}
	c.mu.Lock()
	for _, x := range []*Process{c.managerInfo, c.holderInfo} {
		if x != nil {
			m[x.Name] = x.PID
		}
	}
	c.mu.Unlock()
	return m
}

// Stop terminates the NFs in reverse start order: SIGTERM, then SIGKILL
// after a grace period.
func (c *Core) Stop() {
	select {
	case <-c.stop:
		return
	default:
		close(c.stop)
	}
	c.mu.Lock()
	procs := append([]*Process(nil), c.procs...)
	c.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		fmt.Fprintf(c.opts.Out, "  %-5s stopped\n", p.Name)
	}
	c.stopManager()
	c.removeLabNet()
	c.removeUPFTables()
	c.wg.Wait()
	c.restoreTuning() // after the watchers, which write c.tuned into the state
	if c.opts.Publish {
		c.unpublish()
	}
	_ = os.Remove(StatePath(c.cfg))
}

func (c *Core) writeState() error {
	// Watchers restarting NFs at once write concurrently: one at a time
	// through the temp file, or it interleaves.
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	c.mu.Lock()
	dataDir, _ := filepath.Abs(c.cfg.DataDir)
	st := State{SupervisorPID: os.Getpid(), ConfigPath: c.opts.ConfigPath, DataDir: dataDir, SBI: c.SBI(),
		LogDir: c.cfg.LogDir, N2: c.n2Addr(), Started: c.started, NFs: c.procs, Manager: c.managerInfo,
		ShmHolder: c.holderInfo, Tuning: c.tuned}
	data, err := json.MarshalIndent(st, "", "  ")
	c.mu.Unlock()
	if err != nil {
		return err
	}
	tmp := StatePath(c.cfg) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("node: state: %w", err)
	}
	if err := os.Rename(tmp, StatePath(c.cfg)); err != nil {
		return err
	}
	if c.opts.Publish {
		c.publish()
	}
	return nil
}

// n2Addr is where this node's NF with an N2 socket (the AMF) serves gNBs.
func (c *Core) n2Addr() string {
	for _, s := range sockets(c.cfg, c.opts.NFs) {
		if s.network == "n2" {
			return s.addr
		}
	}
	return ""
}

// publish points CurrentStateLink at this core's state (best effort: a
// host without a writable /run only loses the convenience).
func (c *Core) publish() {
	abs, err := filepath.Abs(StatePath(c.cfg))
	if err != nil {
		return
	}
	_ = os.MkdirAll(filepath.Dir(CurrentStateLink), 0o755)
	tmp := CurrentStateLink + ".tmp"
	_ = os.Remove(tmp)
	if os.Symlink(abs, tmp) == nil {
		_ = os.Rename(tmp, CurrentStateLink)
	}
}

// unpublish removes CurrentStateLink if it still names this core.
func (c *Core) unpublish() {
	abs, err := filepath.Abs(StatePath(c.cfg))
	if target, lerr := os.Readlink(CurrentStateLink); err == nil && lerr == nil && target == abs {
		_ = os.Remove(CurrentStateLink)
	}
}

// ReadState loads the state of the node whose config is cfg.
func ReadState(cfg *config.Config) (*State, error) {
	return readStateFile(StatePath(cfg))
}

// ReadCurrentState loads the state of the core `l25gc up` started last on
// this host, wherever its data directory is.
func ReadCurrentState() (*State, error) {
	return readStateFile(CurrentStateLink)
}

// ErrNoCore says no state file names a running core.
var ErrNoCore = errors.New("no core is running")

func readStateFile(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w (no %s)", ErrNoCore, path)
	}
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.Path, err = filepath.EvalSymlinks(path); err != nil {
		st.Path = path
	}
	return &st, nil
}

// Alive reports whether pid is a running process.
func Alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// removeUPFTables deletes the user plane's shared rule tables (hugepages)
// once UPF-C and UPF-U are gone: a stopped core keeps no sessions, and a
// core started after it begins with empty tables.
func (c *Core) removeUPFTables() {
	if !c.cfg.Runs("upf-c") && !c.cfg.Runs("upf-u") {
		return
	}
	if err := shm.RemoveFile(shm.ConfigFor(c.cfg)); err != nil {
		fmt.Fprintf(c.opts.Out, "  upf tables: %v\n", err)
	}
}
