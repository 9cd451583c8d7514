package nf

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"

	"github.com/l25gc/l25gc/internal/profile"
)

// ProfileOnSignal lets `l25gc bench --profile` take this process's CPU
// profile over the measured part of a run only: with $L25GC_PROFILE_DIR
// set, SIGUSR1 starts a profile into that directory and SIGUSR2 ends it
// (package internal/profile has the handshake). A signal rather than an
// HTTP endpoint, because the onvm manager and UPF-U serve none and must be
// profiled too. Without the variable it does nothing, so these signals
// keep their default meaning. Every l25gc process calls it first.
func ProfileOnSignal() {
	dir := os.Getenv(profile.EnvDir)
	if dir == "" {
		return
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, profile.StartSignal, profile.StopSignal)
	go (&cpuProfiler{dir: dir, pid: os.Getpid()}).serve(sigs)
}

// cpuProfiler runs one CPU profile at a time into dir.
type cpuProfiler struct {
	dir  string
	pid  int
	file *os.File // the profile being written; nil when none runs
}

func (p *cpuProfiler) serve(sigs <-chan os.Signal) {
	for s := range sigs {
		var err error
		if s == profile.StartSignal {
			err = p.start()
		} else {
			err = p.stop()
		}
		if err != nil {
			// stderr is the NF's .stderr log under the supervisor; the
			// benchmark notes the missing profile itself.
			fmt.Fprintf(os.Stderr, "CPU profile (%v): %v\n", s, err)
		}
	}
}

func (p *cpuProfiler) start() error {
	if p.file != nil {
		return fmt.Errorf("a profile is already running")
	}
	f, err := os.Create(filepath.Join(p.dir, profile.PartName(p.pid)))
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	p.file = f
	return nil
}

// stop ends the profile and gives it its final name only once complete.
func (p *cpuProfiler) stop() error {
	if p.file == nil {
		return fmt.Errorf("no profile is running")
	}
	pprof.StopCPUProfile()
	f := p.file
	p.file = nil
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(p.dir, profile.DoneName(p.pid)))
}
