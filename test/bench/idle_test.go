package bench

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestCPUTimesOfThisProcessGrowWithWork(t *testing.T) {
	pids := map[string]int{"self": os.Getpid()}
	before, err := cpuTimes(pids)
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the reading grows: 100 ms of wall time could be a few
	// ms of CPU (under a tick) for a process a loaded CI machine hardly
	// ran. A reading that never grows still fails, after 30 s of work.
	after := before
	for t0 := time.Now(); after["self"] <= before["self"] && time.Since(t0) < 30*time.Second; {
		for t1 := time.Now(); time.Since(t1) < 10*time.Millisecond; {
			_ = strings.Repeat("x", 1024)
		}
		if after, err = cpuTimes(pids); err != nil {
			t.Fatal(err)
		}
	}
	if after["self"] <= before["self"] {
		t.Fatalf("CPU time did not grow over 30 s of work: %v -> %v", before["self"], after["self"])
	}
	if _, err := cpuTimes(map[string]int{"gone": 1 << 30}); err == nil {
		t.Fatal("a process that does not exist gave a CPU time")
	}
}
