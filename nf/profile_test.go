package nf

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/internal/profile"
)

// SIGUSR1 starts a CPU profile and SIGUSR2 ends it; the profile appears
// under its final name only when complete, and it is a CPU profile pprof
// reads.
func TestProfileOnSignalStartsAndStops(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(profile.EnvDir, dir)
	ProfileOnSignal()
	pid := os.Getpid()
	if err := syscall.Kill(pid, profile.StartSignal); err != nil {
		t.Fatal(err)
	}
	awaitPath(t, filepath.Join(dir, profile.PartName(pid)))
	burnCPU(50 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(dir, profile.DoneName(pid))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("profile named done while running: %v", err)
	}
	if err := syscall.Kill(pid, profile.StopSignal); err != nil {
		t.Fatal(err)
	}
	done := filepath.Join(dir, profile.DoneName(pid))
	awaitPath(t, done)
	f, err := os.Open(done)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := profile.ReadCPUProfile(f, 10); err != nil {
		t.Fatalf("profile written on SIGUSR2 does not parse: %v", err)
	}
}

// A stop without a start, and a second start, are refused, not a crash
// nor a second profile over the first.
func TestCPUProfilerRefusesOutOfOrderSignals(t *testing.T) {
	p := &cpuProfiler{dir: t.TempDir(), pid: 1}
	if err := p.stop(); err == nil {
		t.Fatal("stop without a profile running succeeded")
	}
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	if err := p.start(); err == nil {
		t.Fatal("a second start succeeded while one runs")
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(p.dir, profile.DoneName(1))); err != nil {
		t.Fatalf("stopped profile not renamed: %v", err)
	}
}

func awaitPath(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared", path)
}

func burnCPU(d time.Duration) {
	x := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 1000; i++ {
			x += i * i
		}
	}
	_ = x
}
