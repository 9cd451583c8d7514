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

// The idle table says how much the vCPUs polled in the idle loop, which
// the processes' CPU times (and TOTAL) cannot show, and says nothing of it
// where the CPUs have no POLL state.
func TestIdleTableNamesTheVCPUsPolling(t *testing.T) {
	poll := 21.9
	rs := []IdleResult{
		{SBI: "xio", UEs: 10, Seconds: 30, CPUPercent: 6.5, PerProcess: map[string]float64{"upf-u": 1950}, PollPercent: &poll},
		{SBI: "tcp", UEs: 10, Seconds: 30, CPUPercent: 0.1, PerProcess: map[string]float64{"amf": 30}},
	}
	var b strings.Builder
	PrintIdleTable(&b, rs)
	out := b.String()
	if !strings.Contains(out, "xio: vCPUs polling in the idle loop (counted idle by the guest, not in TOTAL): 21.90 % of one core") {
		t.Fatalf("no poll line for xio in\n%s", out)
	}
	if strings.Contains(out, "tcp: vCPUs polling") {
		t.Fatalf("a poll line without a POLL state in\n%s", out)
	}
}
