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
	if err := c.startManager(); err != nil {
		c.xioPrefix = ""
		return err
	}
	return nil
}

// startManager runs the onvm manager (`l25gc` in the manager role) and
// waits until its shared memory exists. It exits with the supervisor: its
// stdin is ours.
func (c *Core) startManager() error {
	logPath := filepath.Join(c.cfg.LogDir, "onvm.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	cmd := exec.Command(c.opts.Binary)
	cmd.Env = append(os.Environ(), xioproc.EnvPrefix+"="+c.xioPrefix)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	p, err := xioproc.StartCmd(cmd, xioproc.RoleManager)
	if err != nil {
		logFile.Close()
		return fmt.Errorf("node: start the onvm manager: %w; see %s", err, logPath)
	}
	c.mu.Lock()
	c.manager = p
	c.managerInfo = &Process{Name: "onvm", PID: p.Cmd.Process.Pid, Restarts: c.managerRestarts}
	if c.managerUp == nil {
		c.managerUp = make(chan struct{})
	}
	close(c.managerUp)
	c.mu.Unlock()
	fmt.Fprintf(c.opts.Out, "  %-5s up   pid %-7d shared memory %s\n", "onvm", p.Cmd.Process.Pid, c.xioPrefix)
	c.wg.Add(1)
	go c.watchManager(p, logFile)
	return nil
}

// watchManager notices a manager that died. Its shared memory is gone with
// it, so when supervising, the NFs are killed (their watchers start them
// again) and a new manager is started under the same name.
func (c *Core) watchManager(p *xioproc.Proc, logFile *os.File) {
	defer c.wg.Done()
	<-p.Exited()
	logFile.Close()
	select {
	case <-c.stop:
		return
	default:
	}
	fmt.Fprintf(c.opts.Out, "  %-5s exited unexpectedly (%v); X-IO is down; see %s\n", "onvm", p.Err(),
		filepath.Join(c.cfg.LogDir, "onvm.log"))
	if !c.opts.Restart {
		return
	}
	c.mu.Lock()
	c.managerUp = make(chan struct{}) // NF restarts wait for the new manager
	c.mu.Unlock()
	c.killNFs()
	xioproc.RemoveLeftovers(c.xioPrefix)
	select {
	case <-c.stop:
		return
	case <-time.After(500 * time.Millisecond):
	}
	c.mu.Lock()
	c.managerRestarts++
	c.mu.Unlock()
	if err := c.startManager(); err != nil {
		fmt.Fprintf(c.opts.Out, "  %-5s restart failed: %v\n", "onvm", err)
		return
	}
	_ = c.writeState()
}

// killNFs kills every NF and waits until each is reaped; their watchers
// restart them.
func (c *Core) killNFs() {
	c.mu.Lock()
	procs := append([]*Process(nil), c.procs...)
	c.mu.Unlock()
	c.mu.Lock()
	for _, p := range procs {
		p.killed = true // not the NF's failure: its restart starts a new streak
	}
	c.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	}
}

// stopManager stops the manager after the NFs and removes what EAL leaves.
func (c *Core) stopManager() {
	c.mu.Lock()
	p := c.manager
	c.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.Stop()
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
