package u_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/upf/shm"
	"github.com/l25gc/l25gc/upf/u"
	"github.com/l25gc/l25gc/xio/xioproc"
)

const roleBench = "upfu-bench"

// runBench is the isolated-path child: UPF-U on net_null ports, 10,000
// packets each way for 100 sessions, the forwarded counts on stdout.
func runBench(context.Context) error {
	tables := shm.Config{MaxSessions: 128, Prefix: fmt.Sprintf("upfubench%d", os.Getpid())}
	defer shm.RemoveFile(tables)
	p, err := u.Start(u.Config{Tables: tables, MaxSessions: 128,
		N3: u.Port{Dev: "net_null0", IP: upfN3}, N6: u.Port{Dev: "net_null1", IP: upfN6},
		QoS: config.UPFQoS{MaxShapedSessions: 128, Queue: 50 * time.Millisecond}})
	if err != nil {
		return err
	}
	xioproc.Ready()
	for _, dl := range []bool{false, true} {
		r, err := p.Bench(u.BenchPlan{Downlink: dl, Sessions: 100, PacketBytes: 64, Packets: 10_000})
		if err != nil {
			return err
		}
		fmt.Printf("downlink=%v forwarded=%d\n", dl, r.Forwarded)
	}
	// --qos: every packet goes through its session's shaper and out.
	for _, dl := range []bool{false, true} {
		before := u.ReadQoSStats()
		r, err := p.Bench(u.BenchPlan{Downlink: dl, Sessions: 100, PacketBytes: 64, Packets: 10_000, QoS: true})
		if err != nil {
			return err
		}
		after := u.ReadQoSStats()
		fmt.Printf("qos downlink=%v forwarded=%d shaped=%d\n", dl, r.Forwarded,
			after.SentGreen+after.SentYellow-before.SentGreen-before.SentYellow)
	}
	return nil
}

// The isolated path forwards every packet through the full rule set (no
// MBR, gate or ARP drop) in both directions.
func TestIsolatedBenchForwardsEveryPacket(t *testing.T) {
	needRoot(t)
	if err := xioproc.EnsureHugepages(64); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	var out bytes.Buffer
	cmd := exec.Command(exe)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	p, err := xioproc.StartCmd(cmd, roleBench)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	want := "downlink=false forwarded=10016\ndownlink=true forwarded=10016\n" +
		"qos downlink=false forwarded=10016 shaped=10144\nqos downlink=true forwarded=10016 shaped=10144\n"
	if out.String() != want {
		t.Errorf("bench printed %q, want %q (bursts of 32: 10,016 packets measured; the shapers also "+
			"passed the warm-up's 128, one per session)", out.String(), want)
	}
}
