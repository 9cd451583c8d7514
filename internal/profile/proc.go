package profile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat's CPU times: 100 on
// every Linux architecture Go supports (the kernel exports it fixed).
const clockTicks = 100

// ProcSample is what /proc says about one process at one moment.
type ProcSample struct {
	CPUTicks int64 // utime + stime of every thread, living and dead (/proc/PID/stat)
	// Context switches summed over the living threads (/proc/PID/task/*/status):
	// voluntary ones are waits (futex, epoll, nanosleep), involuntary ones preemptions.
	Voluntary, Involuntary int64
	// Read- and write-like system calls (/proc/PID/io syscr, syscw), the
	// only syscall counts /proc has; -1 when /proc/PID/io is not readable.
	SysCR, SysCW int64
}

// ReadProc samples process pid from /proc.
func ReadProc(pid int) (ProcSample, error) {
	return readProcAt("/proc", pid)
}

func readProcAt(root string, pid int) (ProcSample, error) {
	base := filepath.Join(root, strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(base, "stat"))
	if err != nil {
		return ProcSample{}, err
	}
	var s ProcSample
	if s.CPUTicks, err = parseStatTicks(stat); err != nil {
		return ProcSample{}, fmt.Errorf("%s/stat: %w", base, err)
	}
	s.Voluntary, s.Involuntary = taskSwitches(base)
	s.SysCR, s.SysCW = -1, -1
	if io, err := os.ReadFile(filepath.Join(base, "io")); err == nil {
		f := keyValues(io)
		s.SysCR, s.SysCW = f["syscr"], f["syscw"]
	}
	return s, nil
}

// parseStatTicks reads utime (field 14) and stime (15) of /proc/PID/stat.
// The command name (field 2) may hold spaces and parentheses, so fields
// are counted from the last ')'.
func parseStatTicks(stat []byte) (int64, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("no command name")
	}
	f := strings.Fields(string(stat[end+1:]))
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the name, want at least 13", len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("utime %q stime %q", f[11], f[12])
	}
	return utime + stime, nil
}

// taskSwitches sums the context switches of pid's threads; the process's
// own status file counts its main thread only.
func taskSwitches(base string) (vol, invol int64) {
	tasks, _ := filepath.Glob(filepath.Join(base, "task", "*", "status"))
	if len(tasks) == 0 {
		tasks = []string{filepath.Join(base, "status")}
	}
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := keyValues(data)
		vol += f["voluntary_ctxt_switches"]
		invol += f["nonvoluntary_ctxt_switches"]
	}
	return vol, invol
}

// keyValues reads the integer "key: value" lines of a /proc file.
func keyValues(data []byte) map[string]int64 {
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.Fields(v + " x")[0], 10, 64); err == nil {
			out[strings.TrimSpace(k)] = n
		}
	}
	return out
}

// Sub is the cost between an earlier sample and s.
func (s ProcSample) Sub(earlier ProcSample) ProcSample {
	d := ProcSample{CPUTicks: s.CPUTicks - earlier.CPUTicks, Voluntary: s.Voluntary - earlier.Voluntary,
		Involuntary: s.Involuntary - earlier.Involuntary, SysCR: -1, SysCW: -1}
	if s.SysCR >= 0 && earlier.SysCR >= 0 {
		d.SysCR, d.SysCW = s.SysCR-earlier.SysCR, s.SysCW-earlier.SysCW
	}
	return d
}

// CPU is the sample's CPU time.
func (s ProcSample) CPU() time.Duration {
	return time.Duration(s.CPUTicks) * (time.Second / clockTicks)
}

// CPUSeconds is the sample's CPU time in seconds.
func (s ProcSample) CPUSeconds() float64 { return float64(s.CPUTicks) / clockTicks }
