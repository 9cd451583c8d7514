package node

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/l25gc/l25gc/xio/xioproc"
)

// hugepagesForManager is what one onvm manager needs free (2 MiB pages): its
// 160 MiB pool and rings with headroom.
const hugepagesForManager = 128

// managerSeq numbers the managers this process starts, so that cores started
// side by side (tests, benchmarks) each get their own shared memory.
var managerSeq atomic.Int64

// usesXIO reports whether the transport runs over the onvm manager.
func usesXIO(transport string) bool { return transport == "xio" || transport == "xio-socket" }

// prepareSBI decides the node's SBI transport and, for X-IO, sets up
// hugepages and starts the onvm manager before any NF. A transport that
// comes from the config falls back to tcp when X-IO cannot be set up (no
// root, no memory for hugepages); one asked for explicitly (Options.SBI) is
// an error, so that a benchmark never measures tcp under an X-IO label.
func (c *Core) prepareSBI() error {
	transport, explicit := c.opts.SBI, c.opts.SBI != ""
	if !explicit {
		transport = c.cfg.SBI.Transport
	}
	if !usesXIO(transport) {
		return nil
	}
	err := c.setUpXIO()
	switch {
	case err == nil:
		return nil
	case explicit:
		return fmt.Errorf("node: SBI %s: %w (deploy/hugepages.sh as root sets up hugepages; or use --sbi tcp)", transport, err)
	}
	fmt.Fprintf(c.opts.Out, "X-IO cannot run here (%v);\nthe SBI falls back to tcp. As root, deploy/hugepages.sh sets up the hugepages X-IO needs.\n", err)
	c.opts.SBI = "tcp"
	return nil
}

func (c *Core) setUpXIO() error {
	if err := xioproc.EnsureHugepages(hugepagesForManager); err != nil {
		return fmt.Errorf("%d free 2 MiB hugepages needed: %w", hugepagesForManager, err)
	}
	xioproc.RemoveStale()
	c.xioPrefix = xioproc.PrefixForNth(os.Getpid(), int(managerSeq.Add(1)))
	if err := c.startXIO(); err != nil {
		c.xioPrefix = ""
		return err
	}
	return nil
}

// X-IO runs as two processes (package onvm): "onvm-shm", the DPDK primary
// that creates the shared memory and only holds it, and "onvm", the
// manager, a secondary that adopts it. The manager can then die and be
// started again under the running NFs, which keep their PIDs, connections
// and in-memory state (the AMF its UE contexts); the NFs never wait for it.
// Only a wedged ring (onvm.ErrWedged) or the holder's death restarts all of
// X-IO with its NFs: a new primary cannot start while they map the old
// memory.

// startXIO starts the holder, then the manager.
func (c *Core) startXIO() error {
	if err := c.startHolder(); err != nil {
		return err
	}
	if err := c.startManager(); err != nil {
		c.stopXIOProc(c.takeHolder())
		return err
	}
	c.mu.Lock()
	if c.managerUp == nil {
		c.managerUp = make(chan struct{})
	}
	close(c.managerUp)
	c.mu.Unlock()
	return nil
}

// startXIOProc starts one of X-IO's two processes in role, logging to
// name.log, and waits until it serves. It exits with the supervisor: its
// stdin is ours.
func (c *Core) startXIOProc(name, role string) (*xioproc.Proc, *os.File, error) {
	logPath := filepath.Join(c.cfg.LogDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("node: %w", err)
	}
	cmd := exec.Command(c.opts.Binary)
	cmd.Env = append(os.Environ(), xioproc.EnvPrefix+"="+c.xioPrefix)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	p, err := xioproc.StartCmd(cmd, role)
	if err != nil {
		logFile.Close()
		return nil, nil, fmt.Errorf("node: start %s: %w; see %s", name, err, logPath)
	}
	return p, logFile, nil
}

func (c *Core) startHolder() error {
	p, logFile, err := c.startXIOProc("onvm-shm", xioproc.RoleHolder)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.holder = p
	c.holderInfo = &Process{Name: "onvm-shm", PID: p.Cmd.Process.Pid, Restarts: c.xioRestarts}
	c.mu.Unlock()
	fmt.Fprintf(c.opts.Out, "  %-5s up   pid %-7d shared memory %s\n", "onvm-shm", p.Cmd.Process.Pid, c.xioPrefix)
	c.wg.Add(1)
	go c.watchHolder(p, logFile)
	return nil
}

// startManager starts the onvm manager, which adopts the shared memory
// the holder holds (and whatever a manager before it left undone).
func (c *Core) startManager() error {
	p, logFile, err := c.startXIOProc("onvm", xioproc.RoleAdopter)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.manager = p
	c.managerInfo = &Process{Name: "onvm", PID: p.Cmd.Process.Pid, Restarts: c.managerRestarts}
	c.mu.Unlock()
	fmt.Fprintf(c.opts.Out, "  %-5s up   pid %-7d manager of %s\n", "onvm", p.Cmd.Process.Pid, c.xioPrefix)
	c.wg.Add(1)
	go c.watchManager(p, logFile)
	return nil
}

// watchManager notices a manager that died. When supervising, a new one
// adopts the shared memory and the NFs go on; a ring wedged by a process
// killed mid-enqueue, or a holder gone too, needs X-IO restarted whole.
func (c *Core) watchManager(p *xioproc.Proc, logFile *os.File) {
	defer c.wg.Done()
	<-p.Exited()
	logFile.Close()
	xioproc.RemoveProcessLeftovers(c.xioPrefix, p.Cmd.Process.Pid)
	if c.stopping() || !c.isCurrent(p) {
		return // stopped by the node, or by a restart of all of X-IO
	}
	fmt.Fprintf(c.opts.Out, "  %-5s exited unexpectedly (%v); the NFs go on; see %s\n", "onvm", p.Err(),
		filepath.Join(c.cfg.LogDir, "onvm.log"))
	if !c.opts.Restart {
		return
	}
	if exitCode(p) == xioproc.ExitWedged || !running(c.currentHolder()) {
		c.restartXIO("a shared ring is wedged or the shared memory's holder is gone")
		return
	}
	c.mu.Lock()
	c.managerRestarts++
	c.mu.Unlock()
	if err := c.adoptAgain(); err != nil {
		c.restartXIO(fmt.Sprintf("a new manager could not adopt the shared memory: %v", err))
		return
	}
	_ = c.writeState()
}

// managerRestartDelay: the NFs do not wait for the manager, so it comes
// back at once; only reaps of NFs that die meanwhile wait for it.
const managerRestartDelay = 50 * time.Millisecond

// adoptAgain starts a new manager, trying startAttempts times: a DPDK
// secondary can fail to start when its fresh address space has the shared
// memory's addresses taken, which the next try does not meet.
func (c *Core) adoptAgain() error {
	var err error
	for attempt := 0; attempt < startAttempts; attempt++ {
		select {
		case <-c.stop:
			return nil
		case <-time.After(managerRestartDelay):
		}
		if err = c.startManager(); err == nil {
			return nil
		}
		fmt.Fprintf(c.opts.Out, "  %-5s %v; starting it again\n", "onvm", err)
	}
	return err
}

// watchHolder notices the shared memory's holder died: NFs keep what they
// mapped, but no new primary can start while they run, so X-IO restarts
// whole.
func (c *Core) watchHolder(p *xioproc.Proc, logFile *os.File) {
	defer c.wg.Done()
	<-p.Exited()
	logFile.Close()
	if c.stopping() || !c.isCurrent(p) {
		return
	}
	fmt.Fprintf(c.opts.Out, "  %-5s exited unexpectedly (%v); see %s\n", "onvm-shm", p.Err(),
		filepath.Join(c.cfg.LogDir, "onvm-shm.log"))
	if c.opts.Restart {
		c.restartXIO("the shared memory's holder died")
	}
}

// restartXIO restarts X-IO with its NFs: the manager, every NF and the
// holder are killed (the NFs' watchers start them again once X-IO is
// back), EAL's leftovers removed, and a new holder and manager started.
func (c *Core) restartXIO(why string) {
	c.xioRestartMu.Lock()
	defer c.xioRestartMu.Unlock()
	if c.stopping() {
		return
	}
	fmt.Fprintf(c.opts.Out, "  X-IO restarts with its NFs: %s\n", why)
	c.mu.Lock()
	c.managerUp = make(chan struct{}) // NF restarts wait for the new X-IO
	mgr := c.manager
	c.manager = nil
	c.mu.Unlock()
	c.stopXIOProc(mgr)
	c.killNFs()
	c.stopXIOProc(c.takeHolder())
	xioproc.RemoveLeftovers(c.xioPrefix)
	select {
	case <-c.stop:
		return
	case <-time.After(500 * time.Millisecond):
	}
	c.mu.Lock()
	c.xioRestarts++
	c.managerRestarts++
	c.mu.Unlock()
	if err := c.startXIO(); err != nil {
		fmt.Fprintf(c.opts.Out, "  %-5s restart failed: %v\n", "onvm", err)
		return
	}
	_ = c.writeState()
}

func (c *Core) isCurrent(p *xioproc.Proc) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.manager == p || c.holder == p
}

func (c *Core) currentHolder() *xioproc.Proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.holder
}

// takeHolder forgets the holder, so that its watcher knows its end was
// the node's doing.
func (c *Core) takeHolder() *xioproc.Proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.holder
	c.holder = nil
	return p
}

func (c *Core) stopXIOProc(p *xioproc.Proc) {
	if p != nil && running(p) {
		p.Kill()
	}
}

func running(p *xioproc.Proc) bool {
	if p == nil {
		return false
	}
	select {
	case <-p.Exited():
		return false
	default:
		return true
	}
}

// exitCode is p's exit status once it exited; -1 when a signal ended it.
func exitCode(p *xioproc.Proc) int {
	if p.Cmd.ProcessState == nil {
		return -1
	}
	return p.Cmd.ProcessState.ExitCode()
}

// killNFs kills every NF and waits until each is reaped; their watchers
// restart them.
func (c *Core) killNFs() {
	c.mu.Lock()
	procs := append([]*Process(nil), c.procs...)
	for _, p := range procs {
		p.killed = true // not the NF's failure: its restart starts a new streak
	}
	c.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	}
}

// stopManager stops the manager, then the holder, after the NFs, and
// removes what EAL leaves.
func (c *Core) stopManager() {
	c.xioRestartMu.Lock() // a restart of X-IO in progress finishes first
	defer c.xioRestartMu.Unlock()
	c.mu.Lock()
	p := c.manager
	c.mu.Unlock()
	h := c.takeHolder()
	if p == nil && h == nil {
		return
	}
	if p != nil {
		_ = p.Stop()
	}
	if h != nil {
		_ = h.Stop()
	}
	xioproc.RemoveLeftovers(c.xioPrefix)
	fmt.Fprintf(c.opts.Out, "  %-5s stopped\n", "onvm")
}

// nfEnv is the environment of an NF process: X-IO attaches to this core's
// manager.
func (c *Core) nfEnv() []string {
	if c.xioPrefix == "" {
		return nil
	}
	return append(os.Environ(), xioproc.EnvPrefix+"="+c.xioPrefix)
}

// awaitManager returns once the onvm manager serves (at once without X-IO),
// or false when the node stops first: an NF restarted while the manager is
// down would only fail to attach.
func (c *Core) awaitManager() bool {
	c.mu.Lock()
	up := c.managerUp
	c.mu.Unlock()
	if up == nil {
		return true
	}
	select {
	case <-up:
		return true
	case <-c.stop:
		return false
	}
}
