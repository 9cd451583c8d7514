// Package profile measures what each process of a benchmark costs during
// the measured part of a run (issue 15, item 2): its CPU time and context
// switches from /proc, its system calls by name (perf's in-kernel syscall
// counters, else strace -c, else /proc's read/write counts), and a pprof CPU
// profile that the process writes itself when signalled (nf.ProfileOnSignal).
// The report gives each process's cost per procedure and its top functions.
//
// The handshake with a profiled process: it is started with EnvDir set to a
// directory; SIGUSR1 starts its CPU profile into PartName(pid) there, and
// SIGUSR2 ends it and renames the file to DoneName(pid), so a reader never
// sees a half-written profile.
package profile

import (
	"fmt"
	"syscall"
)

// EnvDir names the directory a profiled process writes its CPU profile to;
// a process started without it never listens for the signals.
const EnvDir = "L25GC_PROFILE_DIR"

// The signals that start and stop a process's CPU profile.
const (
	StartSignal = syscall.SIGUSR1
	StopSignal  = syscall.SIGUSR2
)

// PartName is the file a process with pid writes its profile to.
func PartName(pid int) string { return fmt.Sprintf(".cpu-%d.pprof.part", pid) }

// DoneName is that file once complete.
func DoneName(pid int) string { return fmt.Sprintf(".cpu-%d.pprof", pid) }
