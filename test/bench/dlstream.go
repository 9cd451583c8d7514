package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/l25gc/l25gc/node"
)

// DownlinkStream is a steady stream of numbered UDP datagrams from the
// data network to each UE, for counting what a handover loses or
// reorders. It sends from a socket in the data network's namespace (the
// lab's l25gc-dn), so the packets take the real path: N6, UPF-U, N3, the
// simulated gNB; the UE's side is a sink on its session's tunnel.
type DownlinkStream struct {
	conn     *net.UDPConn
	ues      []*streamUE
	interval time.Duration
	stop     chan struct{}
	stopped  chan struct{}
}

// streamPort is where the datagrams go: the discard port; the simulated
// UE's sink reads them before any IP stack would.
const streamPort = 9

// streamMagic starts each datagram's payload, so the sink counts only the
// stream's own packets.
var streamMagic = [4]byte{'L', '2', '5', 'S'}

// streamUE is one UE's end of the stream.
type streamUE struct {
	to        netip.AddrPort
	sent      atomic.Int64
	mu        sync.Mutex
	received  int64
	reordered int64
	highest   int64 // highest sequence number received, -1 before any
	// first is the sequence number of the first packet received: those
	// before it were lost while the path came up (UPF-U resolving the
	// gNB's address), not to what is measured.
	first int64
	got   []bool // by sequence number: received
}

// counts is the UE's counts; called with mu held.
func (u *streamUE) counts() StreamCounts {
	c := StreamCounts{Sent: u.sent.Load(), Received: u.received, Reordered: u.reordered}
	if u.first >= 0 {
		c.Sent -= u.first
	}
	c.Lost = max(c.Sent-c.Received, 0)
	return c
}

// StreamCounts is what a stream measured, over all UEs, from each UE's
// first packet received on (Sent counts from there too).
type StreamCounts struct {
	Sent, Received, Lost, Reordered int64
}

// StartDownlinkStream sends one datagram to each of ues every interval
// from network namespace netns ("" = this one).
func StartDownlinkStream(netns string, ues []netip.Addr, interval time.Duration) (*DownlinkStream, error) {
	if interval <= 0 {
		return nil, errors.New("downlink stream: want an interval above 0")
	}
	var conn *net.UDPConn
	err := node.InNetns(netns, func() (err error) {
		conn, err = net.ListenUDP("udp4", nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("downlink stream from netns %q: %w", netns, err)
	}
	s := &DownlinkStream{conn: conn, interval: interval, stop: make(chan struct{}), stopped: make(chan struct{})}
	for _, a := range ues {
		s.ues = append(s.ues, &streamUE{to: netip.AddrPortFrom(a, streamPort), highest: -1, first: -1})
	}
	go s.send()
	return s, nil
}

func (s *DownlinkStream) send() {
	defer close(s.stopped)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	buf := make([]byte, 16)
	copy(buf, streamMagic[:])
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		for i, u := range s.ues {
			binary.BigEndian.PutUint32(buf[4:], uint32(i))
			binary.BigEndian.PutUint64(buf[8:], uint64(u.sent.Load()))
			if _, err := s.conn.WriteToUDPAddrPort(buf, u.to); err == nil {
				u.sent.Add(1)
			}
		}
	}
}

// Sink is the i-th UE's receiving end, for its session tunnel's SetSink:
// it reads the IPv4 packet the tunnel delivers.
func (s *DownlinkStream) Sink(i int) func(pkt []byte) {
	u := s.ues[i]
	return func(pkt []byte) {
		seq, ok := streamSeq(pkt)
		if !ok {
			return
		}
		u.mu.Lock()
		if u.first < 0 {
			u.first = seq
		}
		if seq < u.first {
			// Sent before the path came up and held on the way (UPF-U
			// resolving the gNB's address): outside what is counted,
			// like the ones that died then, not a reordering of it.
			u.mu.Unlock()
			return
		}
		u.received++
		u.mark(seq)
		if seq < u.highest {
			u.reordered++
		} else {
			u.highest = seq
		}
		u.mu.Unlock()
	}
}

// mark notes seq as received; called with mu held.
func (u *streamUE) mark(seq int64) {
	if seq < 0 || seq > u.sent.Load() {
		return // not a number this stream sent
	}
	for int64(len(u.got)) <= seq {
		u.got = append(u.got, false)
	}
	u.got[seq] = true
}

// Next is the sequence number the i-th UE's next datagram gets: what a
// window of the stream starts or ends at (LostBetween).
func (s *DownlinkStream) Next(i int) int64 { return s.ues[i].sent.Load() }

// LostBetween counts the i-th UE's datagrams from sequence number from up
// to (not including) to that did not arrive, from its first received on.
// Call it after Stop.
func (s *DownlinkStream) LostBetween(i int, from, to int64) int64 {
	u := s.ues[i]
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.first < 0 {
		return max(to-from, 0)
	}
	from, to = max(from, u.first), min(to, u.sent.Load())
	var lost int64
	for seq := from; seq < to; seq++ {
		if seq >= int64(len(u.got)) || !u.got[seq] {
			lost++
		}
	}
	return lost
}

// streamSeq reads a stream datagram's sequence number from an IPv4 packet.
func streamSeq(pkt []byte) (int64, bool) {
	if len(pkt) < 20 || pkt[0]>>4 != 4 || pkt[9] != 17 {
		return 0, false
	}
	ihl := int(pkt[0]&0x0F) * 4
	if ihl < 20 {
		return 0, false // RFC 791: IHL is at least 5 words
	}
	p := pkt[min(ihl+8, len(pkt)):]
	if len(p) < 16 || [4]byte(p[:4]) != streamMagic {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(p[8:16])), true
}

// AwaitFlowing waits until every UE received a datagram: the path is up
// (UPF-U resolved the gNBs' addresses) before anything is measured.
func (s *DownlinkStream) AwaitFlowing(ctx context.Context) error {
	for {
		waiting := 0
		for _, u := range s.ues {
			u.mu.Lock()
			if u.received == 0 {
				waiting++
			}
			u.mu.Unlock()
		}
		if waiting == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("downlink stream: %d of %d UEs got no packet: %w", waiting, len(s.ues), ctx.Err())
		case <-time.After(s.interval):
		}
	}
}

// Stop ends the stream, lets what is in flight arrive (until nothing came
// for a few intervals, at most settle) and counts.
func (s *DownlinkStream) Stop(settle time.Duration) StreamCounts {
	close(s.stop)
	<-s.stopped
	quiet, deadline := 5*s.interval+100*time.Millisecond, time.Now().Add(settle)
	last := s.counts().Received
	for time.Now().Before(deadline) {
		time.Sleep(quiet)
		now := s.counts().Received
		if now == last {
			break
		}
		last = now
	}
	s.conn.Close()
	return s.counts()
}

func (s *DownlinkStream) counts() StreamCounts {
	var c StreamCounts
	for _, u := range s.ues {
		u.mu.Lock()
		one := u.counts()
		u.mu.Unlock()
		c.Sent += one.Sent
		c.Received += one.Received
		c.Lost += one.Lost
		c.Reordered += one.Reordered
	}
	return c
}

// PerUE is the i-th UE's counts.
func (s *DownlinkStream) PerUE(i int) StreamCounts {
	u := s.ues[i]
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.counts()
}
