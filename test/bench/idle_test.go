package bench

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseStatCPUCountsAfterTheCommandName(t *testing.T) {
	// A command name with spaces and ')' must not shift the fields.
	stat := "4242 (l25gc (nf) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 137 42 0 0 20 0 9 0 123 456 789"
	d, err := parseStatCPU(stat)
	if err != nil || d != (137+42)*clockTick {
		t.Fatalf("parseStatCPU = %v, %v; want %v", d, err, (137+42)*clockTick)
	}
	for _, bad := range []string{"", "4242 (x) S 1 2", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 ten 12"} {
		if _, err := parseStatCPU(bad); err == nil {
			t.Errorf("parseStatCPU(%q) accepted", bad)
		}
	}
}

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
