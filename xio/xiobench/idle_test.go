package xiobench

import (
	"io"
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

// TestNFSleepsAfterConversation: an NF whose poller learned that spinning
// pays (a burst of back-to-back requests) still goes to sleep once the
// burst ends: the spin is bounded by its budget and backs off to sleep.
func TestNFSleepsAfterConversation(t *testing.T) {
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
	defer c.Close()
	buf := make([]byte, 64)
	for i := 0; i < 2000; i++ {
		if _, err := c.Write(buf); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	before := cpuTicks(t, p.Cmd.Process.Pid)
	time.Sleep(time.Second)
	if used := cpuTicks(t, p.Cmd.Process.Pid) - before; used > 5 {
		t.Fatalf("NF used %d ticks of CPU in the 1s after a burst", used)
	}
}
