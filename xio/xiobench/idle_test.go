package xiobench

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xioproc"
)

// cpuTicks returns utime+stime of pid in clock ticks.
func cpuTicks(t *testing.T, pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s
}

// TestIdleNFSleeps: after traffic stops, an NF's poller goes to sleep on
// its doorbell: an idle NF process uses (almost) no CPU.
func TestIdleNFSleeps(t *testing.T) {
	if err := startManager(); err != nil {
		t.Fatal(err)
	}
	p, err := xioproc.Start("pong")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	c, err := xio.Dial("pong")
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("wake up"))
	c.Read(make([]byte, 16))
	c.Close()
	time.Sleep(100 * time.Millisecond)
	before := cpuTicks(t, p.Cmd.Process.Pid)
	time.Sleep(time.Second)
	// 100 ticks/s: a spinning poller would burn ~100 here.
	if used := cpuTicks(t, p.Cmd.Process.Pid) - before; used > 5 {
		t.Fatalf("idle NF used %d ticks of CPU in 1s", used)
	}
}
