package bench

// UDP flows at a fixed offered rate for `bench qos` and the e2e QoS tests:
// a paced sender in one network namespace, a receiver in another counting
// what arrives per second. No control connection shares the shaped path
// (iperf3's TCP control channel starves in a flow shaped to half of what
// it offers), and the counts are the inner IP bytes UPF-U's shapers meter.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/l25gc/l25gc/node"
)

// UDPFlow is one flow: From sends to To at Rate (bit/s of IP packets).
type UDPFlow struct {
	FromNetns, ToNetns string
	From, To           netip.AddrPort // From's port 0: any
	Rate               uint64
}

const (
	udpPayload  = 1200
	ipUDPHeader = 28 // what the receiver adds back: the shapers meter IP length
	pacingTick  = time.Millisecond
)

// RunUDPFlows runs flows at once for secs seconds and returns, per flow,
// the bit/s received in each second (the last packets in flight are
// waited for for one more pacing tick than the queues hold).
func RunUDPFlows(ctx context.Context, flows []UDPFlow, secs int) ([][]uint64, error) {
	if secs <= 0 {
		return nil, errors.New("udp flows: want at least one second")
	}
	recv := make([]*net.UDPConn, len(flows))
	send := make([]*net.UDPConn, len(flows))
	defer closeAll(recv)
	defer closeAll(send)
	for i, f := range flows {
		var err error
		if err = node.InNetns(f.ToNetns, func() (err error) { recv[i], err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(f.To)); return }); err == nil {
			err = node.InNetns(f.FromNetns, func() (err error) {
				send[i], err = net.DialUDP("udp4", net.UDPAddrFromAddrPort(f.From), net.UDPAddrFromAddrPort(f.To))
				return
			})
		}
		if err != nil {
			return nil, fmt.Errorf("udp flow %d (%v -> %v): %w", i, f.From, f.To, err)
		}
		growBuffers(recv[i])
		growBuffers(send[i])
	}
	counts := make([][]atomic.Uint64, len(flows))
	for i := range counts {
		counts[i] = make([]atomic.Uint64, secs)
	}
	start := time.Now()
	end := start.Add(time.Duration(secs) * time.Second)
	var wg sync.WaitGroup
	for i := range flows {
		wg.Add(2)
		go func() { defer wg.Done(); receive(recv[i], start, counts[i]) }()
		go func() { defer wg.Done(); pace(ctx, send[i], flows[i].Rate, end) }()
	}
	time.Sleep(time.Until(end) + 200*time.Millisecond)
	closeAll(recv)
	wg.Wait()
	out := make([][]uint64, len(flows))
	for i := range counts {
		for s := range counts[i] {
			out[i] = append(out[i], counts[i][s].Load()*8)
		}
	}
	return out, ctx.Err()
}

// pace sends until end, keeping what it sent at rate (bit/s of IP
// packets) by the clock, not by sleeps' accuracy.
func pace(ctx context.Context, c *net.UDPConn, rate uint64, end time.Time) {
	buf := make([]byte, udpPayload)
	start := time.Now()
	var sent uint64
	for now := start; now.Before(end) && ctx.Err() == nil; now = time.Now() {
		due := uint64(now.Sub(start).Seconds() * float64(rate) / 8)
		for ; sent+udpPayload+ipUDPHeader <= due; sent += udpPayload + ipUDPHeader {
			_, _ = c.Write(buf) // a full socket buffer drops, as a line would
		}
		time.Sleep(pacingTick)
	}
}

// receive counts IP bytes per second since start until c closes.
func receive(c *net.UDPConn, start time.Time, perSecond []atomic.Uint64) {
	buf := make([]byte, 65536)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if s := int(time.Since(start) / time.Second); s < len(perSecond) {
			perSecond[s].Add(uint64(n + ipUDPHeader))
		}
	}
}

func closeAll(cs []*net.UDPConn) {
	for _, c := range cs {
		if c != nil {
			c.Close()
		}
	}
}
