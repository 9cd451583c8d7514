package profile_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/internal/profile"
	"github.com/l25gc/l25gc/nf"
)

// The test binary doubles as a profiled process: with this variable set it
// listens for the profile signals like an NF, says so, and burns CPU until
// its stdin closes.
const childEnv = "L25GC_PROFILE_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		nf.ProfileOnSignal()
		os.Stdout.WriteString("ready\n")
		go func() {
			x := 0
			for {
				x++
			}
		}()
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startChild starts a profiled process writing to dir.
func startChild(t *testing.T, dir string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", profile.EnvDir+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("child said %q, %v", line, err)
	}
	return cmd.Process.Pid
}

// awaitProfiledCPU waits until the child, its profile running, has burned
// 200 ms of CPU (20 samples at 100 Hz). A 300 ms sleep instead could leave
// a child that a loaded CI machine barely ran with no sample: its row then
// has no CPU and no top functions. A profile that never starts or a
// /proc reading that never grows still fails, at the bound.
func awaitProfiledCPU(t *testing.T, dir string, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // bounds a failing test only
	for _, err := os.Stat(filepath.Join(dir, profile.PartName(pid))); err != nil; _, err = os.Stat(filepath.Join(dir, profile.PartName(pid))) {
		if time.Now().After(deadline) {
			t.Fatalf("the child's profile never started: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	base, err := profile.ReadProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	for {
		now, err := profile.ReadProc(pid)
		if err != nil {
			t.Fatal(err)
		}
		if now.Sub(base).CPU() >= 200*time.Millisecond {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child burned %v of CPU in 30 s", now.Sub(base).CPU())
		}
		time.Sleep(100 * time.Millisecond) // seldom: this process's own CPU must stay below the child's
	}
}

// A window over a signalled process and this one gives a row per
// process with its profile, /proc costs per procedure and report.json.
func TestSessionProfilesEachProcess(t *testing.T) {
	for _, source := range []string{"proc", "perf"} {
		t.Run(source, func(t *testing.T) {
			if source == "perf" {
				if _, err := exec.LookPath("perf"); err != nil || os.Geteuid() != 0 {
					t.Skip("perf stat on another process needs perf and root")
				}
			}
			dir := t.TempDir()
			pid := startChild(t, dir)
			s, err := profile.Start(profile.Options{Dir: dir, Syscalls: source, Self: "sim"}, map[string]int{"udm": pid})
			if err != nil {
				t.Fatal(err)
			}
			awaitProfiledCPU(t, dir, pid)
			r, err := s.Stop("registration", 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Processes) != 2 {
				t.Fatalf("%d processes, want udm and sim", len(r.Processes))
			}
			// Rows go by CPU, most first. Which of the two burned more is
			// up to the scheduler (a child starved on a loaded CI machine
			// burned less than this process): the order is checked, and
			// the udm row found by name.
			if a, b := r.Processes[0], r.Processes[1]; a.CPUSeconds < b.CPUSeconds {
				t.Fatalf("rows %s (%.3f s) before %s (%.3f s): want the most CPU first", a.Name, a.CPUSeconds, b.Name, b.CPUSeconds)
			}
			udm := r.Processes[0]
			if udm.Name != "udm" {
				udm = r.Processes[1]
			}
			if udm.Name != "udm" || udm.CPUSeconds <= 0 || udm.Profile != "udm.pprof" || len(udm.TopFlat) == 0 {
				t.Fatalf("udm row %+v: want its CPU, udm.pprof and top functions", udm)
			}
			if udm.MicrosPerProcedure != udm.CPUSeconds*1e6/10 {
				t.Errorf("%.1f µs/procedure for %.3f s over 10", udm.MicrosPerProcedure, udm.CPUSeconds)
			}
			wantSource := map[string]string{"proc": profile.SourceProc, "perf": profile.SourcePerf}[source]
			if udm.SyscallSource != wantSource {
				t.Errorf("syscall source %q, want %q (notes %v)", udm.SyscallSource, wantSource, udm.Notes)
			}
			for _, f := range []string{"udm.pprof", "sim.pprof", "report.json"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestSessionRefusesUnknownSyscallSource(t *testing.T) {
	if _, err := profile.Start(profile.Options{Dir: t.TempDir(), Syscalls: "dtrace"}, nil); err == nil {
		t.Fatal("unknown source accepted")
	}
}

// A perf that refuses to count (not root, a paranoid kernel setting) ends
// at once: the process's syscalls fall back to /proc with a note saying
// why.
func TestSessionFallsBackWhenPerfRefuses(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "perf"), []byte("#!/bin/sh\necho 'no permission' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if _, err := os.Stat("/sys/kernel/tracing/events/raw_syscalls"); err != nil {
		if _, err := os.Stat("/sys/kernel/debug/tracing/events/raw_syscalls"); err != nil {
			t.Skip("no syscall tracepoints here: perf is not tried at all")
		}
	}
	dir := t.TempDir()
	s, err := profile.Start(profile.Options{Dir: dir, Syscalls: "perf", Self: "sim"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Stop("registration", 1)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Processes[0]
	if p.SyscallSource != profile.SourceProc || len(p.Notes) == 0 || !strings.Contains(strings.Join(p.Notes, " "), "perf ended") {
		t.Fatalf("source %q notes %v: want /proc with a note that perf ended", p.SyscallSource, p.Notes)
	}
}
