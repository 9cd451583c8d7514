// Package xioproc starts the processes X-IO tests and benchmarks need: the
// onvm manager and peer NFs, each a re-execution of the current binary in a
// "role" named by an environment variable. A binary that uses it calls
// RunRole first thing in main (or TestMain) so a child becomes its role.
//
// Children exit when their stdin closes, so they never outlive the parent.
package xioproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/l25gc/l25gc/onvm"
)

const (
	// EnvRole names the role a re-executed binary takes.
	EnvRole = "L25GC_XIO_ROLE"
	// EnvPrefix is the EAL file prefix shared by a manager and its NFs
	// (xio reads it too).
	EnvPrefix = "L25GC_XIO_PREFIX"
	// RoleManager runs the onvm manager in one process that creates the
	// shared memory and manages it (onvm.CreateAndManage).
	RoleManager = "onvm-manager"
	// RoleHolder creates the shared memory and holds it (onvm.Hold), for
	// a manager in RoleAdopter: the pair a node runs, so that the manager
	// can die and come back under running NFs.
	RoleHolder = "onvm-holder"
	// RoleAdopter manages shared memory a RoleHolder holds (onvm.Adopt).
	RoleAdopter = "onvm-adopter"
	readyLine   = "xioproc-ready"
)

// ExitWedged is the exit code of a manager role that stopped because a
// shared ring is wedged (onvm.ErrWedged): X-IO must restart with its NFs.
const ExitWedged = 3

// RunRole runs this process's role if it was started as a child and returns
// true and the exit code; otherwise false. roles adds roles beyond the
// manager; each gets ctx cancelled when the parent goes away and must call
// Ready once it can serve.
func RunRole(roles map[string]func(ctx context.Context) error) (bool, int) {
	role := os.Getenv(EnvRole)
	if role == "" {
		return false, 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // the parent holds our stdin: EOF means it is gone
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	done := make(chan error, 1)
	go func() { done <- runOne(ctx, role, roles[role]) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		select { // the role gets a moment to clean up, not forever
		case err = <-done:
		case <-time.After(5 * time.Second):
			err = errors.New("did not stop within 5s of its parent going away")
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "xioproc %s: %v\n", role, err)
		if errors.Is(err, onvm.ErrWedged) {
			return true, ExitWedged
		}
		return true, 1
	}
	return true, 0
}

func runOne(ctx context.Context, role string, fn func(context.Context) error) error {
	switch {
	case role == RoleManager:
		return onvm.Run(ctx, onvm.Config{FilePrefix: os.Getenv(EnvPrefix), Ready: Ready})
	case role == RoleHolder:
		return onvm.Run(ctx, onvm.Config{Mode: onvm.Hold, FilePrefix: os.Getenv(EnvPrefix), Ready: Ready})
	case role == RoleAdopter:
		return onvm.Run(ctx, onvm.Config{Mode: onvm.Adopt, FilePrefix: os.Getenv(EnvPrefix), Ready: Ready})
	case fn != nil:
		return fn(ctx)
	}
	return fmt.Errorf("unknown role %q", role)
}

// Ready tells the parent this child serves.
func Ready() { fmt.Println(readyLine) }

// Proc is a started child.
type Proc struct {
	Cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{} // closed once the child is reaped
	err    error         // its exit status, set before exited closes
}

// Start re-executes this binary in role with extra environment entries and
// waits until it says Ready (or fails, or 20 s pass).
func Start(role string, env ...string) (*Proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return StartCmd(cmd, role)
}

// StartCmd starts cmd (a binary that calls RunRole first) in role and waits
// until it says Ready. The caller sets Path, Env and Stderr; what the child
// prints after Ready goes to cmd.Stdout if set, else to this process's
// stdout.
//
// A child that exits before Ready because EAL found too few free hugepages
// (another DPDK process, or a hugetlbfs file's reservation, took them
// between the check and the start) is started again, up to three times,
// after asking the kernel for more; any other early exit is reported at
// once with the last lines the child wrote to stderr.
func StartCmd(cmd *exec.Cmd, role string) (*Proc, error) {
	for attempt := 1; ; attempt++ {
		p, err := startOnce(cmd, role)
		var early *EarlyExitError
		if err == nil || attempt == startAttempts || !errors.As(err, &early) || !early.lacksHugepages() {
			return p, err
		}
		time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
		if err := EnsureHugepages(retryHugepages); err != nil {
			return nil, fmt.Errorf("%w (then: %v)", early, err)
		}
		cmd = rebuild(cmd)
	}
}

const (
	startAttempts = 3
	// retryHugepages is what a retried start asks to have free: a
	// manager's default reservation (onvm.Config.MemMB 160 MiB) and room.
	retryHugepages = 128
)

// EarlyExitError is a child that exited before it said Ready.
type EarlyExitError struct {
	Role   string
	Status error  // its exit status
	Stderr string // the last lines it wrote to stderr
}

func (e *EarlyExitError) Error() string {
	msg := fmt.Sprintf("xioproc: %s exited before it was ready (%v)", e.Role, e.Status)
	if e.Stderr != "" {
		msg += "; its last words:\n" + e.Stderr
	}
	return msg
}

// lacksHugepages tells EAL's "not enough memory" (rte_eal_init ENOMEM,
// which onvm reports as "Cannot allocate memory") from other failures.
func (e *EarlyExitError) lacksHugepages() bool {
	return strings.Contains(e.Stderr, "Cannot init memory") || strings.Contains(e.Stderr, "Cannot allocate memory")
}

// rebuild is a fresh, unstarted copy of cmd (an exec.Cmd runs once). Env
// already carries the role from the first start.
func rebuild(cmd *exec.Cmd) *exec.Cmd {
	next := exec.Command(cmd.Path, cmd.Args[1:]...)
	next.Env, next.Dir = cmd.Env, cmd.Dir
	next.Stdout, next.Stderr = cmd.Stdout, cmd.Stderr
	return next
}

func startOnce(cmd *exec.Cmd, role string) (*Proc, error) {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	if !hasEnv(cmd.Env, EnvRole+"="+role) {
		cmd.Env = append(cmd.Env, EnvRole+"="+role)
	}
	after := cmd.Stdout
	if after == nil {
		after = os.Stdout
	}
	cmd.Stdout = nil
	tail := &stderrTail{}
	if cmd.Stderr == nil {
		cmd.Stderr = tail
	} else {
		cmd.Stderr = io.MultiWriter(cmd.Stderr, tail)
	}
	// Safety net besides stdin EOF: a child never outlives this process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{Cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	if err := p.awaitReady(role, stdout, after, tail); err != nil {
		p.Kill()
		return nil, err
	}
	tail.stop()
	return p, nil
}

func hasEnv(env []string, kv string) bool {
	for _, e := range env {
		if e == kv {
			return true
		}
	}
	return false
}

// stderrTail keeps the last stderrTailBytes a child writes to stderr
// until it is ready, for EarlyExitError; after that it only passes
// writes by.
type stderrTail struct {
	mu      sync.Mutex
	buf     []byte
	stopped bool
}

const stderrTailBytes = 2048

func (t *stderrTail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.stopped {
		t.buf = append(t.buf, b...)
		if over := len(t.buf) - stderrTailBytes; over > 0 {
			t.buf = append(t.buf[:0], t.buf[over:]...)
		}
	}
	return len(b), nil
}

func (t *stderrTail) stop() {
	t.mu.Lock()
	t.stopped, t.buf = true, nil
	t.mu.Unlock()
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

func (p *Proc) awaitReady(role string, stdout io.Reader, after io.Writer, tail *stderrTail) error {
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ok := false
		for sc.Scan() {
			if !ok && sc.Text() == readyLine {
				ok = true
				ready <- true
				continue
			}
			if ok {
				fmt.Fprintln(after, sc.Text())
			}
		}
		if !ok {
			ready <- false
		}
		p.err = p.Cmd.Wait()
		close(p.exited)
	}()
	select {
	case ok := <-ready:
		if !ok {
			<-p.exited // its stderr is copied in full by then
			return &EarlyExitError{Role: role, Status: p.err, Stderr: tail.String()}
		}
		return nil
	case <-time.After(20 * time.Second):
		return fmt.Errorf("xioproc: %s not ready after 20s", role)
	}
}

// Exited is closed once the child has exited and been reaped; Err then
// gives its exit status.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Err is the child's exit status once Exited is closed.
func (p *Proc) Err() error {
	<-p.exited
	return p.err
}

// Stop asks the child to exit (stdin EOF, then SIGTERM) and waits for it.
func (p *Proc) Stop() error {
	p.stdin.Close()
	select {
	case <-p.exited:
		return p.err
	case <-time.After(5 * time.Second):
	}
	p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(5 * time.Second):
		p.Cmd.Process.Kill()
		return p.Err()
	}
}

// Kill sends SIGKILL and waits until the child is reaped.
func (p *Proc) Kill() {
	p.Cmd.Process.Kill()
	p.stdin.Close()
	<-p.exited
}

// Manager is a running onvm manager child with its own file prefix.
type Manager struct {
	*Proc
	Prefix string
}

// StartManager sets up hugepages (root) and starts a manager with a fresh
// file prefix; it also exports that prefix (EnvPrefix) to this process and
// later children, so xio attaches to it.
func StartManager() (*Manager, error) {
	if err := EnsureHugepages(128); err != nil {
		return nil, err
	}
	RemoveStale()
	prefix := PrefixFor(os.Getpid())
	os.Setenv(EnvPrefix, prefix)
	p, err := Start(RoleManager)
	if err != nil {
		return nil, err
	}
	return &Manager{Proc: p, Prefix: prefix}, nil
}

// Close stops the manager and removes what EAL leaves on disk.
func (m *Manager) Close() error {
	err := m.Stop()
	RemoveLeftovers(m.Prefix)
	return err
}

// PrefixFor is the EAL file prefix of the manager owned by process pid;
// RemoveStale recognises it once pid is gone.
func PrefixFor(pid int) string { return "xio" + strconv.Itoa(pid) }

// PrefixForNth is PrefixFor for the nth of several managers one process owns.
func PrefixForNth(pid, n int) string { return PrefixFor(pid) + "_" + strconv.Itoa(n) }

// RemoveStale removes hugepage files and runtime dirs that managers of
// earlier runs left when they were killed (prefix "xio<pid>" or
// "xio<pid>_<n>", pid gone):
// otherwise their hugepages stay taken.
func RemoveStale() {
	dirs, _ := filepath.Glob("/var/run/dpdk/xio*")
	files, _ := filepath.Glob("/dev/hugepages/xio*map_*")
	seen := map[string]bool{}
	for _, p := range append(dirs, files...) {
		prefix := strings.SplitN(filepath.Base(p), "map_", 2)[0]
		if seen[prefix] {
			continue
		}
		seen[prefix] = true
		owner, _, _ := strings.Cut(strings.TrimPrefix(prefix, "xio"), "_")
		pid, err := strconv.Atoi(owner)
		if err == nil && pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH {
			RemoveLeftovers(prefix)
		}
	}
}

// RemoveLeftovers removes the hugepage files and runtime dir EAL leaves for
// prefix (a killed primary cannot remove them itself).
func RemoveLeftovers(prefix string) {
	files, _ := filepath.Glob(filepath.Join("/dev/hugepages", prefix+"map_*"))
	for _, f := range files {
		os.Remove(f)
	}
	os.RemoveAll(filepath.Join("/var/run/dpdk", prefix))
}

// RemoveProcessLeftovers removes what EAL keeps for one secondary process
// of prefix (its copies of the memory maps, its IPC socket) once pid is
// gone: a secondary killed cannot remove them, and a node whose NFs or
// manager restart often would collect them in /var/run.
func RemoveProcessLeftovers(prefix string, pid int) {
	if pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
		return
	}
	dir := filepath.Join("/var/run/dpdk", prefix)
	for _, pattern := range []string{"fbarray_*_" + strconv.Itoa(pid), "mp_socket_" + strconv.Itoa(pid) + "_*"} {
		files, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, f := range files {
			os.Remove(f)
		}
	}
}

// EnsureHugepages makes sure hugetlbfs is mounted on /dev/hugepages and at
// least free 2 MiB pages are free and unreserved, raising nr_hugepages if
// needed (root).
func EnsureHugepages(free int) error {
	if err := mountHugetlbfs(); err != nil {
		return err
	}
	total, avail, err := hugepageCounts()
	if err != nil {
		return err
	}
	if avail >= free {
		return nil
	}
	want := total + free - avail
	if err := os.WriteFile("/proc/sys/vm/nr_hugepages", []byte(strconv.Itoa(want)), 0o644); err != nil {
		return fmt.Errorf("xioproc: reserve %d hugepages (need root): %w", want, err)
	}
	if _, avail, _ = hugepageCounts(); avail < free {
		return fmt.Errorf("xioproc: only %d free hugepages after asking for %d", avail, want)
	}
	return nil
}

func mountHugetlbfs() error {
	mounts, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[1] == "/dev/hugepages" && f[2] == "hugetlbfs" {
			return nil
		}
	}
	if err := os.MkdirAll("/dev/hugepages", 0o755); err != nil {
		return err
	}
	if err := syscall.Mount("nodev", "/dev/hugepages", "hugetlbfs", 0, ""); err != nil {
		return fmt.Errorf("xioproc: mount hugetlbfs on /dev/hugepages (need root): %w", err)
	}
	return nil
}

// hugepageCounts reads the 2 MiB hugepages the kernel has and how many a
// new process can still take: free ones minus those reserved. A shared
// hugetlbfs mapping (a DPDK process's, UPF tables a process mapped) reserves
// all its pages when mapped and keeps them reserved, untouched yet still
// counted free, for as long as its file exists.
func hugepageCounts() (total, available int, err error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, 0, err
	}
	var free, reserved int
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "HugePages_Total:":
			total, _ = strconv.Atoi(f[1])
		case "HugePages_Free:":
			free, _ = strconv.Atoi(f[1])
		case "HugePages_Rsvd:":
			reserved, _ = strconv.Atoi(f[1])
		}
	}
	return total, free - reserved, nil
}

// ServeEach runs serve on each connection ln accepts, each in its own
// goroutine, and returns when ln fails or is closed: the accept loop every
// role that answers its peers needs.
func ServeEach(ln net.Listener, serve func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go serve(c)
	}
}
