package u_test

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// labNice is the niceness of the lab's UPF-U and of the test process that
// generates and receives its traffic. On a loaded machine (a 2-core CI
// runner at load 10-17) a forwarder descheduled for longer than a bucket's
// depth (10 ms of AMBR) loses that credit, and the bunched packets after
// the stall overflow the shaper's queues: the session then passes less
// than its AMBR and the split drifts towards equal, a verdict of the
// scheduler, not the shaper. Nice -10 weighs each thread about nine times
// a normal one (CFS), so the lab keeps its timing beside busy neighbours;
// the lab tests run for seconds, and UPF-U naps when idle.
const labNice = -10

// niceThreads sets the niceness of every thread of process pid (Linux's
// nice is per thread; threads made later inherit their creator's).
func niceThreads(pid, nice int) error {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return err
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil {
			return fmt.Errorf("thread %d: %w", tid, err)
		}
	}
	return nil
}

// favourLab runs the lab's UPF-U (pid) and this test process at labNice
// until the test ends, then puts this process back.
func favourLab(t *testing.T, upf int) {
	t.Helper()
	// the raw getpriority syscall returns 20 - nice
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	t.Cleanup(func() { niceThreads(self, 20-prio) })
	for _, pid := range []int{upf, self} {
		if err := niceThreads(pid, labNice); err != nil {
			// without CAP_SYS_NICE the lab runs as it is: its verdicts are
			// shares, which only a machine far busier than the lab skews
			t.Logf("nice %d for the lab: %v", labNice, err)
		}
	}
}
