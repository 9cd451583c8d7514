package xiobench

import (
	"os"
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

// TestCostOfCountsThisProcess: a busy loop shows up as CPU time in the
// cost read from /proc, and a sleep as a context switch.
func TestCostOfCountsThisProcess(t *testing.T) {
	before := costOf(os.Getpid())
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
	}
	time.Sleep(time.Millisecond)
	d := costOf(os.Getpid()).sub(before)
	if d.cpuNS < int64(10*time.Millisecond) || d.switches < 1 {
		t.Fatalf("cost of 20 ms busy and a sleep: %d ns CPU, %d switches", d.cpuNS, d.switches)
	}
}
