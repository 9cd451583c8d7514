package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/l25gc/l25gc/internal/profile"
	"github.com/l25gc/l25gc/test/bench"
)

// profileFlags are `--profile DIR` and `--profile-syscalls` of the
// benchmarks that drive the simulator against a core (issue 15 item 2).
type profileFlags struct {
	dir, syscalls string
}

func (p *profileFlags) add(f *pflag.FlagSet) {
	f.StringVar(&p.dir, "profile", "", "write each process's CPU profile (DIR/<process>.pprof) and a cost report (stdout, DIR/report.json) for the measured runs; one subdirectory <sbi>-<ues> per run when there are several")
	f.StringVar(&p.syscalls, "profile-syscalls", "auto", "system call counts for --profile: auto (perf, else strace, else /proc), perf, strace (stops each process per call: slows the run), proc (read/write counts only)")
}

// apply has o profile each measured run when --profile is set. The
// processes of fresh cores inherit DIR through the environment
// (nf.ProfileOnSignal), so it must run before the cores start.
func (p *profileFlags) apply(o *bench.RegistrationOptions, out io.Writer) error {
	if p.dir == "" {
		return nil
	}
	if err := profile.ParseSyscalls(p.syscalls); err != nil {
		return fmt.Errorf("--profile-syscalls: %w", err)
	}
	dir, err := filepath.Abs(p.dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	if err := os.Setenv(profile.EnvDir, dir); err != nil {
		return err
	}
	several := len(o.SBIModes)*len(o.UECounts) > 1 && o.AMF == ""
	o.Window = func(pids map[string]int, mode string, ues int) func([]bench.Result) {
		runDir := dir
		if several {
			runDir = filepath.Join(dir, fmt.Sprintf("%s-%d", mode, ues))
		}
		s, err := profile.Start(profile.Options{Dir: runDir, Incoming: dir, Syscalls: p.syscalls, Self: "ransim"}, pids)
		if err != nil {
			fmt.Fprintf(out, "profile: %v\n", err)
			return func([]bench.Result) {}
		}
		return func(rs []bench.Result) { closeProfile(s, rs, runDir, out) }
	}
	return nil
}

// closeProfile ends the window and prints its report.
func closeProfile(s *profile.Session, rs []bench.Result, dir string, out io.Writer) {
	procedure, done := windowProcedures(rs)
	r, err := s.Stop(procedure, done)
	if r != nil {
		r.Print(out)
	}
	if err != nil {
		fmt.Fprintf(out, "profile: %v\n", err)
		return
	}
	fmt.Fprintf(out, "profiles and report.json in %s (go tool pprof -top %s)\n",
		dir, filepath.Join(dir, "amf.pprof"))
}

// windowProcedures names what the window measured and how many: the first
// result's successes. The window holds a run's measured procedures only
// (a pdu or paging run opens it after its UEs' unmeasured setup), so the
// label names every procedure of the run.
func windowProcedures(rs []bench.Result) (string, int) {
	if len(rs) == 0 {
		return "procedures (run failed)", 0
	}
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Procedure
	}
	return strings.Join(names, "+"), rs[0].Succeeded
}
