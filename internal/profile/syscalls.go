package profile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sources of system call counts, best first.
const (
	// SourcePerf: perf stat on the raw_syscalls:sys_enter tracepoint (every
	// call) and the syscalls:sys_enter_<name> tracepoints of the calls an
	// NF makes (watchedSyscalls; the rest are "other"). The kernel counts
	// each call in place, so the traced process runs at almost its own
	// speed (perf trace and strace stop it per call: 5-50× fewer calls per
	// second on this machine).
	SourcePerf = "perf stat syscalls tracepoints"
	// SourceStrace: strace -c -f, which stops the process at every call:
	// its counts are exact but the run is slower while it traces.
	SourceStrace = "strace -c -f"
	// SourceProc: /proc/PID/io syscr and syscw, read-like and write-like
	// calls only, when neither tool is present.
	SourceProc = "/proc/PID/io syscr,syscw"
)

// syscallTrace counts one process's system calls in a window.
type syscallTrace interface {
	Source() string
	// Enable opens the window and Disable closes it, where the tool can
	// (perf); strace counts from its start until Finish.
	Enable() error
	Disable() error
	// Finish ends the tool and returns the calls by name.
	Finish() (map[string]int64, error)
}

// tracerFor starts counting pid's system calls with the best source that
// works here ("auto"), or with the one named; /proc needs no tracer (nil).
func tracerFor(want string, pid int, dir string) (syscallTrace, []string) {
	var notes []string
	if want == "auto" || want == "perf" {
		t, err := startPerf(pid, dir)
		if err == nil {
			return t, notes
		}
		notes = append(notes, "perf: "+err.Error())
	}
	if want == "auto" || want == "strace" {
		t, err := startStrace(pid, dir)
		if err == nil {
			return t, notes
		}
		notes = append(notes, "strace: "+err.Error())
	}
	return nil, notes
}

// perfTrace runs perf stat started disabled, enabled and disabled over its
// control FIFOs so that it counts exactly the measured window.
type perfTrace struct {
	cmd      *exec.Cmd
	ctl, ack *os.File
	out      string
	exited   chan struct{} // closed when perf has ended
	waitErr  error         // perf's exit, once exited is closed
}

func (*perfTrace) Source() string { return SourcePerf }

func startPerf(pid int, dir string) (*perfTrace, error) {
	bin, err := exec.LookPath("perf")
	if err != nil {
		return nil, err
	}
	if !syscallTracepoints() {
		return nil, errors.New("no syscalls tracepoints in tracefs")
	}
	base := filepath.Join(dir, fmt.Sprintf(".perf-%d", pid))
	t := &perfTrace{out: base + ".csv"}
	if t.ctl, t.ack, err = controlFIFOs(base); err != nil {
		return nil, err
	}
	t.cmd = exec.Command(bin, "stat", "-x", ",", "-e", perfEvents(), "-p", strconv.Itoa(pid),
		"-D", "-1", "--control", "fifo:"+base+".ctl,"+base+".ack", "-o", t.out)
	t.cmd.Stderr = io.Discard
	if err := t.cmd.Start(); err != nil {
		t.closeFIFOs()
		return nil, err
	}
	// perf refused (not root, no CAP_PERFMON, paranoid setting) ends at
	// once: a command then fails at its exit, not after its wait.
	t.exited = make(chan struct{})
	go func() {
		t.waitErr = t.cmd.Wait()
		close(t.exited)
	}()
	return t, nil
}

// Enable starts the count. Opening its tracepoints takes perf a while
// (the first ~45 ms each); it acknowledges once counting.
func (t *perfTrace) Enable() error {
	if err := t.command("enable", 30*time.Second); err != nil {
		t.kill()
		return fmt.Errorf("perf enable: %w", err)
	}
	return nil
}

func (t *perfTrace) Disable() error {
	if err := t.command("disable", 10*time.Second); err != nil {
		return fmt.Errorf("perf disable: %w", err)
	}
	return nil
}

// watchedSyscalls are the calls counted by name. Enabling a tracepoint
// takes the kernel ~45 ms (an RCU grace period), so all ~360 of them
// would hold the window's start for 15-20 s; these are what Go NFs, DPDK
// pollers and the simulator make.
var watchedSyscalls = []string{
	"futex", "epoll_pwait", "epoll_wait", "epoll_ctl", "nanosleep", "clock_nanosleep", "sched_yield",
	"read", "write", "readv", "writev", "pread64", "pwrite64", "sendto", "recvfrom", "sendmsg",
	"recvmsg", "sendmmsg", "recvmmsg", "getpid", "gettid", "tgkill", "rt_sigreturn", "rt_sigprocmask",
	"sigaltstack", "madvise", "mmap", "munmap", "openat", "close", "fsync", "fdatasync", "accept4",
	"connect", "ioctl", "ppoll", "pselect6", "getrandom", "timer_settime", "setitimer", "clock_gettime",
	"newfstatat", "fstat", "lseek", "getsockopt", "setsockopt", "io_uring_enter",
}

// otherSyscalls names the calls outside watchedSyscalls in the counts.
const otherSyscalls = "other"

// tracefsEvents is where tracefs lists the syscall tracepoints, or "".
func tracefsEvents() string {
	for _, d := range []string{"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events"} {
		if _, err := os.Stat(filepath.Join(d, "raw_syscalls", "sys_enter")); err == nil {
			return d
		}
	}
	return ""
}

// syscallTracepoints says whether perf can count system calls by name,
// mounting tracefs at its usual place first when it is not mounted (a
// fresh Debian machine boots without it; perf needs it for tracepoints).
func syscallTracepoints() bool {
	if tracefsEvents() != "" {
		return true
	}
	if os.Geteuid() == 0 {
		// Failure (no tracefs in this kernel, a container without the
		// right) leaves the check below to say no.
		_ = syscall.Mount("nodev", "/sys/kernel/tracing", "tracefs", 0, "")
	}
	return tracefsEvents() != ""
}

// perfEvents is perf's -e list: every call, and each watched call this
// kernel has a tracepoint for.
func perfEvents() string {
	events := []string{"raw_syscalls:sys_enter"}
	base := tracefsEvents()
	for _, name := range watchedSyscalls {
		if _, err := os.Stat(filepath.Join(base, "syscalls", "sys_enter_"+name)); err == nil {
			events = append(events, "syscalls:sys_enter_"+name)
		}
	}
	return strings.Join(events, ",")
}

// controlFIFOs makes perf's control and acknowledgement FIFOs and opens
// them read-write, which never blocks on a FIFO (and lets deadlines apply).
func controlFIFOs(base string) (ctl, ack *os.File, err error) {
	for _, p := range []string{base + ".ctl", base + ".ack"} {
		_ = os.Remove(p)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			return nil, nil, fmt.Errorf("mkfifo %s: %w", p, err)
		}
	}
	if ctl, err = os.OpenFile(base+".ctl", os.O_RDWR, 0); err != nil {
		return nil, nil, err
	}
	if ack, err = os.OpenFile(base+".ack", os.O_RDWR, 0); err != nil {
		ctl.Close()
		return nil, nil, err
	}
	return ctl, ack, nil
}

// command sends perf a control command and waits for its "ack".
func (t *perfTrace) command(c string, wait time.Duration) error {
	if _, err := t.ctl.WriteString(c + "\n"); err != nil {
		return err
	}
	answer := make(chan error, 1)
	go func() {
		_ = t.ack.SetReadDeadline(time.Now().Add(wait))
		buf := make([]byte, 16)
		n, err := t.ack.Read(buf)
		if err == nil && !strings.HasPrefix(string(buf[:n]), "ack") {
			err = fmt.Errorf("perf answered %q", buf[:n])
		}
		answer <- err
	}()
	select {
	case err := <-answer:
		return err
	case <-t.exited:
		return fmt.Errorf("perf ended (%v): is this root, or perf_event_paranoid low enough?", t.waitErr)
	}
}

func (t *perfTrace) Finish() (map[string]int64, error) {
	_ = t.cmd.Process.Signal(os.Interrupt)
	<-t.exited
	waitErr := t.waitErr
	t.closeFIFOs()
	f, openErr := os.Open(t.out)
	if openErr != nil {
		return nil, fmt.Errorf("perf: %v (exit: %v)", openErr, waitErr)
	}
	defer f.Close()
	defer os.Remove(t.out)
	return ParsePerfStat(f)
}

func (t *perfTrace) kill() {
	_ = t.cmd.Process.Kill()
	<-t.exited
	t.closeFIFOs()
}

func (t *perfTrace) closeFIFOs() {
	for _, f := range []*os.File{t.ctl, t.ack} {
		if f != nil {
			os.Remove(f.Name())
			f.Close()
		}
	}
}

// ParsePerfStat reads perf stat -x, output of raw_syscalls:sys_enter and
// syscalls:sys_enter_<name> events ("count,unit,event,run time,percent,..."
// per line); the calls not counted by name are "other".
func ParsePerfStat(r io.Reader) (map[string]int64, error) {
	out := map[string]int64{}
	sc := bufio.NewScanner(r)
	seen := false
	var all int64 = -1
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 3 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			n = 0 // "<not counted>" or "<not supported>": no calls
		}
		if f[2] == "raw_syscalls:sys_enter" {
			all, seen = n, true
			continue
		}
		name, ok := strings.CutPrefix(f[2], "syscalls:sys_enter_")
		if !ok {
			continue
		}
		seen = true
		if n > 0 {
			out[name] += n
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !seen {
		return nil, errors.New("perf stat output has no syscall counts")
	}
	var named int64
	for _, n := range out {
		named += n
	}
	if all > named {
		out[otherSyscalls] = all - named
	}
	return out, nil
}

// straceTrace runs strace -c -f on the process until Stop.
type straceTrace struct {
	cmd *exec.Cmd
	out string
}

func (*straceTrace) Source() string { return SourceStrace }

func startStrace(pid int, dir string) (*straceTrace, error) {
	bin, err := exec.LookPath("strace")
	if err != nil {
		return nil, err
	}
	t := &straceTrace{out: filepath.Join(dir, fmt.Sprintf(".strace-%d.txt", pid))}
	t.cmd = exec.Command(bin, "-c", "-f", "-p", strconv.Itoa(pid), "-o", t.out)
	stderr, err := t.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	// strace says "Process N attached" once it traces; only then is the
	// window open.
	attached := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "attached") {
				attached <- nil
				_, _ = io.Copy(io.Discard, stderr)
				return
			}
		}
		attached <- errors.New("strace ended before attaching (ptrace not allowed?)")
	}()
	select {
	case err = <-attached:
	case <-time.After(10 * time.Second):
		err = errors.New("strace did not attach within 10 s")
	}
	if err != nil {
		_ = t.cmd.Process.Kill()
		_ = t.cmd.Wait()
		return nil, err
	}
	return t, nil
}

// strace cannot pause: it counts from attaching to Finish.
func (*straceTrace) Enable() error  { return nil }
func (*straceTrace) Disable() error { return nil }

func (t *straceTrace) Finish() (map[string]int64, error) {
	_ = t.cmd.Process.Signal(os.Interrupt)
	_ = t.cmd.Wait()
	f, err := os.Open(t.out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	defer os.Remove(t.out)
	return ParseStrace(f)
}

// ParseStrace reads the table strace -c prints:
//
//	% time     seconds  usecs/call     calls    errors syscall
//	------ ----------- ----------- --------- --------- ----------------
//	 50.20    0.028382           2     12027           read
//
// The errors column is blank when a call never failed.
func ParseStrace(r io.Reader) (map[string]int64, error) {
	out := map[string]int64{}
	sc := bufio.NewScanner(r)
	header := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "%" && f[1] == "time" {
			header = true
			continue
		}
		if !header || len(f) < 5 || strings.HasPrefix(f[0], "-") {
			continue
		}
		name := f[len(f)-1]
		if name == "total" {
			continue
		}
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("strace -c line %q: calls %q", sc.Text(), f[3])
		}
		out[name] += n
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !header {
		return nil, errors.New("no strace -c table")
	}
	return out, nil
}
