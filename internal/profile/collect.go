package profile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Options say what a Session collects.
type Options struct {
	Dir string // where the profiles and report.json go
	// Incoming is the directory the processes were started with (EnvDir),
	// where they write their profiles before these move to Dir; "" = Dir.
	Incoming string
	// Syscalls picks the system call source: auto (perf, else strace, else
	// /proc), perf, strace or proc.
	Syscalls string
	// Self names this process in the report (the simulator driving the
	// benchmark); "" leaves it out.
	Self string
	// Top is how many functions each list keeps (default 10).
	Top int
}

// ParseSyscalls checks a --profile-syscalls value.
func ParseSyscalls(s string) error {
	switch s {
	case "auto", "perf", "strace", "proc":
		return nil
	}
	return fmt.Errorf("syscall source %q: want auto, perf, strace or proc", s)
}

// Session is one measured window over a set of processes.
type Session struct {
	o       Options
	targets []*target
	started time.Time
	self    *os.File // this process's own CPU profile
}

type target struct {
	name   string
	pid    int
	before ProcSample
	trace  syscallTrace
	// calls and traceErr are what trace counted, once finished.
	calls    map[string]int64
	traceErr error
	notes    []string
	remote   bool // profiled by signal (the others: this process)
}

// Start opens the window. In order: the system call counters start
// (perf opens its events disabled, which takes it a few seconds), every
// CPU profile starts, then the counters are enabled and /proc sampled, so
// the profiles' own setup (reading /proc/self/maps and ELF build IDs) is
// not counted. pids names the processes; each must have been started with
// EnvDir set to o.Incoming (or o.Dir).
func Start(o Options, pids map[string]int) (*Session, error) {
	if o.Top == 0 {
		o.Top = 10
	}
	if o.Syscalls == "" {
		o.Syscalls = "auto"
	}
	if o.Incoming == "" {
		o.Incoming = o.Dir
	}
	if err := ParseSyscalls(o.Syscalls); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	s := &Session{o: o}
	for _, name := range sortedNames(pids) {
		s.targets = append(s.targets, &target{name: name, pid: pids[name], remote: true})
	}
	if o.Self != "" {
		s.targets = append(s.targets, &target{name: o.Self, pid: os.Getpid()})
	}
	s.startTracers()
	for _, t := range s.targets {
		s.startProfile(t)
	}
	s.awaitProfilesStarted()
	s.eachTracer(func(t *target) error { return t.trace.Enable() })
	for _, t := range s.targets {
		var err error
		if t.before, err = ReadProc(t.pid); err != nil {
			t.notes = append(t.notes, "proc: "+err.Error())
		}
	}
	s.started = time.Now()
	return s, nil
}

func sortedNames(pids map[string]int) []string {
	names := make([]string, 0, len(pids))
	for n := range pids {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// startTracers starts one counter per process at once: perf needs a
// while to open its events on each.
func (s *Session) startTracers() {
	if s.o.Syscalls == "proc" {
		return
	}
	var wg sync.WaitGroup
	for _, t := range s.targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var notes []string
			t.trace, notes = tracerFor(s.o.Syscalls, t.pid, s.o.Dir)
			t.notes = append(t.notes, notes...)
		}()
	}
	wg.Wait()
}

// startProfile starts t's CPU profile.
func (s *Session) startProfile(t *target) {
	if !t.remote {
		s.startSelf(t)
		return
	}
	_ = os.Remove(filepath.Join(s.o.Incoming, DoneName(t.pid)))
	if err := syscall.Kill(t.pid, StartSignal); err != nil {
		t.notes = append(t.notes, "start CPU profile: "+err.Error())
	}
}

// awaitProfilesStarted waits (a bounded while) until each signalled
// process has opened its profile file.
func (s *Session) awaitProfilesStarted() {
	for _, t := range s.targets {
		if t.remote {
			_ = awaitFile(filepath.Join(s.o.Incoming, PartName(t.pid)), 5*time.Second)
		}
	}
}

// eachTracer runs f on every target's counter at once, dropping a
// counter that fails (its process then falls back to /proc).
func (s *Session) eachTracer(f func(*target) error) {
	var wg sync.WaitGroup
	for _, t := range s.targets {
		if t.trace == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(t); err != nil {
				t.notes = append(t.notes, err.Error())
				t.trace = nil
			}
		}()
	}
	wg.Wait()
}

func (s *Session) startSelf(t *target) {
	f, err := os.Create(filepath.Join(s.o.Dir, t.name+".pprof"))
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		t.notes = append(t.notes, "CPU profile: "+err.Error())
		return
	}
	s.self = f
}

// Stop closes the window, in which procedures procedures completed, and
// writes the report (Dir/report.json) and each process's profile
// (Dir/<name>.pprof). /proc is sampled and the counters disabled before
// the profiles end, so writing them is not counted.
func (s *Session) Stop(procedure string, procedures int) (*Report, error) {
	wall := time.Since(s.started)
	after := map[*target]ProcSample{}
	for _, t := range s.targets {
		a, err := ReadProc(t.pid)
		if err != nil {
			t.notes = append(t.notes, "proc after: "+err.Error())
		}
		after[t] = a
	}
	s.eachTracer(func(t *target) error { return t.trace.Disable() })
	for _, t := range s.targets {
		if t.remote {
			_ = syscall.Kill(t.pid, StopSignal)
		}
	}
	if s.self != nil {
		pprof.StopCPUProfile()
		s.self.Close()
	}
	r := &Report{Procedure: procedure, Procedures: procedures, WallSeconds: wall.Seconds(),
		CPUSource: CPUSource, Switches: SwitchesSource}
	s.eachTracer(func(t *target) error {
		t.calls, t.traceErr = t.trace.Finish()
		return nil // keep the source: process reports the error
	})
	for _, t := range s.targets {
		r.Processes = append(r.Processes, s.process(t, after[t]))
	}
	r.finish()
	return r, r.WriteJSON(filepath.Join(s.o.Dir, "report.json"))
}

// process is t's row of the report.
func (s *Session) process(t *target, after ProcSample) Process {
	d := after.Sub(t.before)
	p := Process{Name: t.name, PID: t.pid, CPUSeconds: d.CPUSeconds(),
		VoluntarySwitches: d.Voluntary, InvoluntarySwitches: d.Involuntary}
	switch {
	case t.trace != nil && t.traceErr == nil:
		p.SyscallSource = t.trace.Source()
		p.TopSyscalls, p.Syscalls = topCounts(t.calls, 5)
	default:
		if t.traceErr != nil {
			t.notes = append(t.notes, "syscalls: "+t.traceErr.Error())
		}
		p.SyscallSource = SourceProc
		if d.SysCR >= 0 {
			p.TopSyscalls, p.Syscalls = topCounts(map[string]int64{"read-like (syscr)": d.SysCR, "write-like (syscw)": d.SysCW}, 5)
		}
	}
	s.attachProfile(t, &p)
	p.Notes = t.notes
	return p
}

// attachProfile renames t's finished profile to <name>.pprof and reads
// its top functions.
func (s *Session) attachProfile(t *target, p *Process) {
	path := filepath.Join(s.o.Dir, t.name+".pprof")
	if t.remote {
		done := filepath.Join(s.o.Incoming, DoneName(t.pid))
		if err := awaitFile(done, 10*time.Second); err != nil {
			t.notes = append(t.notes, "no CPU profile (is it a Go process started with "+EnvDir+"?): "+err.Error())
			return
		}
		if err := os.Rename(done, path); err != nil {
			t.notes = append(t.notes, err.Error())
			return
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.notes = append(t.notes, "CPU profile: "+err.Error())
		return
	}
	defer f.Close()
	cp, err := ReadCPUProfile(f, s.o.Top)
	if err != nil {
		t.notes = append(t.notes, "CPU profile "+path+": "+err.Error())
		return
	}
	p.Profile, p.ProfileSeconds, p.TopFlat, p.TopCum = filepath.Base(path), cp.Seconds, cp.Flat, cp.Cum
}

// awaitFile waits until path exists: a profiled process renames its
// profile there once written.
func awaitFile(path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		_, err := os.Stat(path)
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not written within %v", filepath.Base(path), limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
