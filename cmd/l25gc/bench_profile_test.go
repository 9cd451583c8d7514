package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/l25gc/l25gc/internal/profile"
	"github.com/l25gc/l25gc/test/bench"
)

// The window's label names the run's measured procedures; the count is
// the first one's successes.
func TestWindowProcedures(t *testing.T) {
	label, n := windowProcedures([]bench.Result{{Procedure: "registration", Succeeded: 1998, Failed: 2}})
	if label != "registration" || n != 1998 {
		t.Errorf("registration: %q %d", label, n)
	}
	label, n = windowProcedures([]bench.Result{{Procedure: "pdu_session", Succeeded: 64}, {Procedure: "pdu_session_release", Succeeded: 64}})
	if label != "pdu_session+pdu_session_release" || n != 64 {
		t.Errorf("pdu: %q %d", label, n)
	}
	if _, n := windowProcedures(nil); n != 0 {
		t.Errorf("a failed run counted %d procedures", n)
	}
}

// --profile hands the directory to the core's processes through the
// environment and opens a window per run; without it nothing changes.
func TestProfileFlagsApply(t *testing.T) {
	var o bench.RegistrationOptions
	if err := (&profileFlags{}).apply(&o, io.Discard); err != nil || o.Window != nil {
		t.Fatalf("no --profile: %v, window set %v", err, o.Window != nil)
	}
	if err := (&profileFlags{dir: t.TempDir(), syscalls: "dtrace"}).apply(&o, io.Discard); err == nil {
		t.Fatal("unknown --profile-syscalls accepted")
	}
	dir := filepath.Join(t.TempDir(), "p")
	t.Setenv(profile.EnvDir, "")
	o = bench.RegistrationOptions{SBIModes: []string{"xio"}, UECounts: []int{10}}
	if err := (&profileFlags{dir: dir, syscalls: "proc"}).apply(&o, io.Discard); err != nil {
		t.Fatal(err)
	}
	if os.Getenv(profile.EnvDir) != dir || o.Window == nil {
		t.Fatalf("%s=%q, window set %v: want %s and a window", profile.EnvDir, os.Getenv(profile.EnvDir), o.Window != nil, dir)
	}
	closeWindow := o.Window(nil, "xio", 10) // the simulator alone, as against --amf
	closeWindow([]bench.Result{{Procedure: "registration", Succeeded: 10}})
	for _, f := range []string{"ransim.pprof", "report.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}
