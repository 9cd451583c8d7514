package xiobench

import (
	"math"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if ok, code := RunChildRole(); ok {
		os.Exit(code)
	}
	code := m.Run()
	Close()
	os.Exit(code)
}

// TestRunSmall checks the benchmark machinery end to end with few requests;
// the numbers come from the command (l25gc bench sbi), not from tests.
func TestRunSmall(t *testing.T) {
	rs, err := Run(Options{Concurrency: []int{1, 4}, Requests: 50, Warmup: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 6 {
		t.Fatalf("%d results, want 3 transports x 2 concurrencies", len(rs))
	}
	for _, r := range rs {
		if r.Procedure != "sbi" || r.Succeeded != 50 || r.Failed != 0 || r.LatencyMS.P50 <= 0 ||
			r.CPUMicrosPerReq <= 0 {
			t.Fatalf("result %+v", r)
		}
		// The split by side adds up to the total.
		if r.ClientSwitchesPerReq < 0 || r.ServerSwitchesPerReq < 0 ||
			math.Abs(r.ClientSwitchesPerReq+r.ServerSwitchesPerReq-r.SwitchesPerReq) > 1e-9 {
			t.Fatalf("%s conc %d: switches client %.2f + server %.2f, total %.2f", r.SBI, r.Concurrency,
				r.ClientSwitchesPerReq, r.ServerSwitchesPerReq, r.SwitchesPerReq)
		}
	}
	t.Log("\n" + Table(rs))
}

// BenchmarkReport prints the full table: go test -run X -bench Report ./xio/xiobench
func BenchmarkReport(b *testing.B) {
	rs, err := Run(Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Log("\n" + Table(rs))
}

// TestCostOfCountsThisProcess: CPU this process burns (20 ms by its own
// getrusage, however long that takes on a loaded machine) shows up in the
// cost read from /proc, and a sleep as a context switch.
func TestCostOfCountsThisProcess(t *testing.T) {
	before := costOf(os.Getpid())
	start := rusageCPU(t)
	for rusageCPU(t)-start < 20*time.Millisecond {
	}
	time.Sleep(time.Millisecond)
	d := costOf(os.Getpid()).sub(before)
	if d.cpuNS < int64(15*time.Millisecond) || d.switches < 1 {
		t.Fatalf("cost of 20 ms of CPU and a sleep: %d ns CPU, %d switches", d.cpuNS, d.switches)
	}
}

func rusageCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
