package xiobench

import (
	"bytes"
	"context"
	"io"
	"net"
	"sort"
	"testing"
	"time"

	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xioproc"
)

func init() { extraRoles["pong"] = pongRole }

func pongRole(ctx context.Context) error {
	ln, err := xio.Listen("pong")
	if err != nil {
		return err
	}
	go xioproc.ServeEach(ln, func(c net.Conn) { io.Copy(c, c) })
	xioproc.Ready()
	<-ctx.Done()
	return ln.Close() // unbind now: the next test's pong binds the same name
}

// TestPingPong echoes 1 KB over a raw xio conn to another process, pausing
// now and then so the peer's poller falls asleep and must be rung awake. It
// logs the latency floor under HTTP; it asserts only the bytes.
func TestPingPong(t *testing.T) {
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
	out, in := make([]byte, 1024), make([]byte, 1024)
	var lat []time.Duration
	for i := 0; i < 3000; i++ {
		if i%10 == 0 {
			time.Sleep(time.Millisecond)
		}
		out[i%1024] = byte(i)
		t0 := time.Now()
		if _, err := c.Write(out); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, in); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		if !bytes.Equal(in, out) {
			t.Fatalf("ping %d came back different", i)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("raw 1 KB ping-pong between processes: p50 %v p90 %v p99 %v",
		lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)*99/100])
}
