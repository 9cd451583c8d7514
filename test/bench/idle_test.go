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
	for t0 := time.Now(); time.Since(t0) < 100*time.Millisecond; {
		_ = strings.Repeat("x", 1024) // burn CPU for 100 ms of wall time
	}
	after, err := cpuTimes(pids)
	if err != nil {
		t.Fatal(err)
	}
	if after["self"] <= before["self"] {
		t.Fatalf("CPU time did not grow over 100 ms of work: %v -> %v", before["self"], after["self"])
	}
	if _, err := cpuTimes(map[string]int{"gone": 1 << 30}); err == nil {
		t.Fatal("a process that does not exist gave a CPU time")
	}
}
