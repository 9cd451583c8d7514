package n2

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// RFC 4960 7.2.1: the first window is min(4*MTU, max(2*MTU, 4380)), and
// ssthresh starts at the peer's receive window.
func TestCwndStartsAtFourMTUsAndSsthreshAtThePeersWindow(t *testing.T) {
	var c congestion
	c.startWindow(65536)
	if want := min(4*ownMTU, max(2*ownMTU, 4380)); c.cwnd != want || c.ssthresh != 65536 {
		t.Fatalf("cwnd %d ssthresh %d, want %d and 65536", c.cwnd, c.ssthresh, want)
	}
}

// 7.2.1: in slow start each SACK that acknowledges new data while the
// window is in use grows cwnd by what it acknowledged, at most one MTU;
// a window not in use does not grow.
func TestSlowStartGrowsCwndPerSackByAtMostOneMTU(t *testing.T) {
	c := congestion{cwnd: 4 * ownMTU, ssthresh: 1 << 20}
	c.onAck(500, 4*ownMTU, 3*ownMTU)
	if c.cwnd != 4*ownMTU+500 {
		t.Fatalf("after 500 bytes acked: cwnd %d, want %d", c.cwnd, 4*ownMTU+500)
	}
	c.onAck(3*ownMTU, c.cwnd, 0)
	if c.cwnd != 5*ownMTU+500 {
		t.Fatalf("after 3 MTUs acked by one SACK: cwnd %d, want one MTU more (%d)", c.cwnd, 5*ownMTU+500)
	}
	before := c.cwnd
	c.onAck(ownMTU, 100, 0) // a lone small message: the window was not in use
	if c.cwnd != before {
		t.Fatalf("cwnd grew to %d on a window not in use", c.cwnd)
	}
}

// 7.2.2: above ssthresh cwnd grows by one MTU per window's worth of
// acknowledged data, i.e. once per round trip.
func TestCongestionAvoidanceGrowsCwndOneMTUPerRoundTrip(t *testing.T) {
	c := congestion{cwnd: 8 * ownMTU, ssthresh: 4 * ownMTU}
	for range 7 { // seven SACKs of one MTU each: less than a window
		c.onAck(ownMTU, c.cwnd, c.cwnd-ownMTU)
	}
	if c.cwnd != 8*ownMTU {
		t.Fatalf("cwnd %d before a whole window was acknowledged, want %d", c.cwnd, 8*ownMTU)
	}
	c.onAck(ownMTU, c.cwnd, c.cwnd-ownMTU) // the eighth completes the round trip
	if c.cwnd != 9*ownMTU || c.partialAcked != 0 {
		t.Fatalf("after a window acknowledged: cwnd %d partial %d, want %d and 0", c.cwnd, c.partialAcked, 9*ownMTU)
	}
}

// 7.2.4: a fast retransmit halves cwnd (not below 4 MTUs), once per loss
// event: a second one before the recovery point is acknowledged does not
// halve again, and SACKs meanwhile do not grow the window.
func TestFastRetransmitHalvesCwndOncePerLossEvent(t *testing.T) {
	c := congestion{cwnd: 20 * ownMTU, ssthresh: 1 << 20}
	c.onFastRetransmit(100)
	if c.cwnd != 10*ownMTU || c.ssthresh != 10*ownMTU || !c.fastRecovery {
		t.Fatalf("cwnd %d ssthresh %d recovery %v, want %d, %d, true", c.cwnd, c.ssthresh, c.fastRecovery, 10*ownMTU, 10*ownMTU)
	}
	c.onFastRetransmit(100)
	c.onAck(ownMTU, c.cwnd, c.cwnd-ownMTU)
	if c.cwnd != 10*ownMTU {
		t.Fatalf("cwnd %d in the same recovery, want it left at %d", c.cwnd, 10*ownMTU)
	}
	c.onCumAck(100)
	if c.fastRecovery {
		t.Fatal("still in fast recovery with its exit point acknowledged")
	}
	small := congestion{cwnd: 5 * ownMTU}
	if small.onFastRetransmit(1); small.cwnd != 4*ownMTU {
		t.Fatalf("cwnd %d after halving 5 MTUs, want the 4-MTU floor", small.cwnd)
	}
}

// 7.2.3: a T3-rtx expiry leaves one MTU of window and half the old one as
// ssthresh.
func TestT3ExpiryLeavesOneMTUOfCwnd(t *testing.T) {
	c := congestion{cwnd: 16 * ownMTU, ssthresh: 1 << 20, fastRecovery: true}
	c.onT3Expiry()
	if c.cwnd != ownMTU || c.ssthresh != 8*ownMTU || c.fastRecovery {
		t.Fatalf("cwnd %d ssthresh %d recovery %v, want %d, %d, false", c.cwnd, c.ssthresh, c.fastRecovery, ownMTU, 8*ownMTU)
	}
}

// sentAssoc is an established association whose sent packets are kept.
func sentAssoc(t *testing.T) (*ownAssoc, *[][]byte) {
	t.Helper()
	var sent [][]byte
	a := fuzzAssoc()
	a.send = func(p []byte) error { sent = append(sent, append([]byte(nil), p...)); return nil }
	t.Cleanup(func() { a.drop(errAborted) })
	return a, &sent
}

func dataTSNs(t *testing.T, pkts [][]byte) []uint32 {
	t.Helper()
	var tsns []uint32
	for _, raw := range pkts {
		p, err := parseSCTP(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.chunks {
			if c.typ == chunkData {
				d, err := parseData(p.raw[c.off : c.off+c.length])
				if err != nil {
					t.Fatal(err)
				}
				tsns = append(tsns, d.tsn)
			}
		}
	}
	return tsns
}

// A burst beyond cwnd waits in the queue; the SACKs release it, and the
// chunk the SACKs report missing three times goes again at once.
func TestQueueDrainsOnSacksAndThreeMissesRetransmitAtOnce(t *testing.T) {
	a, sent := sentAssoc(t)
	writeFullChunks(t, a, 12)
	a.mu.Lock()
	defer a.mu.Unlock()
	first := len(*sent)
	if first != 4 || len(a.snd.queue) != 8 {
		t.Fatalf("%d packets sent and %d chunks queued at first, want 4 (cwnd %d) and 8", first, len(a.snd.queue), a.snd.cc.cwnd)
	}
	// TSN 1000 is lost: three SACKs each report one more chunk after it.
	for i := range uint16(3) {
		a.onSack(sack{cumTSN: 999, rwnd: 1 << 16, gaps: []gapBlock{{2, 2 + i}}})
		a.transmitLocked(time.Now())
	}
	if a.snd.cc.fastRetransmits != 1 {
		t.Fatalf("%d fast retransmits after three miss reports, want 1", a.snd.cc.fastRetransmits)
	}
	resent := false
	for _, tsn := range dataTSNs(t, (*sent)[first:]) {
		resent = resent || tsn == 1000
	}
	if !resent {
		t.Fatalf("TSN 1000 not sent again: sent %v", dataTSNs(t, (*sent)[first:]))
	}
	waiting := len(a.snd.queue)
	a.onSack(sack{cumTSN: a.snd.nextTSN - 1, rwnd: 1 << 16})
	a.transmitLocked(time.Now())
	if len(a.snd.queue) >= waiting || a.snd.cc.fastRecovery {
		t.Fatalf("queue %d (was %d) after the loss was repaired, recovery %v: the SACK did not release it", len(a.snd.queue), waiting, a.snd.cc.fastRecovery)
	}
}

// After a T3-rtx expiry every outstanding chunk is marked; one packet goes
// at once, and once it is acknowledged the rest go as cwnd allows, not one
// per expiry.
func TestAfterT3TheMarkedChunksFollowTheFirstAck(t *testing.T) {
	a, sent := sentAssoc(t)
	writeFullChunks(t, a, 4)
	a.mu.Lock()
	a.snd.t3.deadline = time.Now().Add(-time.Millisecond) // due now
	a.mu.Unlock()
	a.t3Expired()
	a.mu.Lock()
	defer a.mu.Unlock()
	if got := dataTSNs(t, (*sent)[4:]); len(got) != 1 || got[0] != 1000 || a.snd.cc.cwnd != ownMTU {
		t.Fatalf("after T3: sent %v with cwnd %d, want only TSN 1000 and one MTU", got, a.snd.cc.cwnd)
	}
	mark := len(*sent)
	a.onSack(sack{cumTSN: 1000, rwnd: 1 << 16})
	a.transmitLocked(time.Now())
	if got := dataTSNs(t, (*sent)[mark:]); len(got) < 2 || got[0] != 1001 || got[1] != 1002 {
		t.Fatalf("after the first ack: sent %v, want 1001 and 1002 at least", got)
	}
}

// A zero window lets one chunk probe it while nothing is in flight, and no
// more (6.1 A).
func TestZeroWindowSendsOneProbe(t *testing.T) {
	a, sent := sentAssoc(t)
	a.mu.Lock()
	a.snd.peerRwnd = 0
	a.mu.Unlock()
	for range 3 {
		if err := a.WriteMsg([]byte("ngap"), 1); err != nil {
			t.Fatal(err)
		}
	}
	if got := dataTSNs(t, *sent); len(got) != 1 {
		t.Fatalf("sent %v into a zero window, want one probe", got)
	}
}

// boundedLayer is a receiver with a small socket buffer that it drains
// slower than a burst fills it: what does not fit is dropped, as the
// kernel drops UDP datagrams past SO_RCVBUF.
type boundedLayer struct {
	packetLayer
	queue   chan bufferedPacket
	dropped atomic.Int64
}

type bufferedPacket struct {
	b    []byte
	from netip.AddrPort
}

func newBoundedLayer(pc *net.UDPConn, packets int) *boundedLayer {
	l := &boundedLayer{packetLayer: udpLayer{pc}, queue: make(chan bufferedPacket, packets)}
	go func() {
		defer close(l.queue)
		for {
			buf := make([]byte, maxDatagram)
			n, from, err := l.packetLayer.readPacket(buf)
			if err != nil {
				return
			}
			select {
			case l.queue <- bufferedPacket{buf[:n], from}:
			default:
				l.dropped.Add(1)
			}
		}
	}()
	return l
}

func (l *boundedLayer) readPacket(buf []byte) (int, netip.AddrPort, error) {
	p, ok := <-l.queue
	if !ok {
		return 0, netip.AddrPort{}, net.ErrClosed
	}
	time.Sleep(50 * time.Microsecond) // the slow consumer behind the buffer
	return copy(buf, p.b), p.from, nil
}

// A 400 KiB burst (300 messages of 1 KiB and six of 20 KiB) into a
// receiver whose 16-packet buffer overflows: every message arrives once
// and in order, losses are repaired mostly by fast retransmit, and T3-rtx
// expiries stay few (before congestion control each lost packet cost one
// expiry, the RTO doubling from 1 s each time).
func TestBurstThroughASmallBufferArrivesInOrderByFastRetransmit(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprint("ReadInline=", inline), func(t *testing.T) {
			burstThroughASmallBuffer(t, inline)
		})
	}
}

func burstThroughASmallBuffer(t *testing.T, inline bool) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	layer := newBoundedLayer(pc, 16)
	ln := newSCTPListener(layer, 0, Options{SCTPImpl: ImplOwn})
	t.Cleanup(func() { ln.Close() })
	metrics := NewMetrics(prometheus.NewRegistry())
	client, server := dialTestWith(t, ln, Options{SCTPImpl: ImplOwn, ReadInline: inline, Metrics: metrics})
	var msgs [][]byte
	for i := range 306 {
		size := 1 << 10
		if i%50 == 25 {
			size = 20 << 10
		}
		msgs = append(msgs, append(fmt.Appendf(nil, "message %d ", i), bytes.Repeat([]byte{byte(i)}, size)...))
	}
	go func() {
		for i, m := range msgs {
			if err := client.WriteMsg(m, uint16(i%2)); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
		}
	}()
	for i, want := range msgs {
		got, _, err := readWithin(server, 60*time.Second)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("message %d: got %.20q (%d bytes), %v; want %.20q", i, got, len(got), err, want)
		}
	}
	a := client.(*ownAssoc)
	a.mu.Lock()
	cc := a.snd.cc
	a.mu.Unlock()
	t.Logf("dropped %d packets: %d fast retransmits, %d T3 expiries, cwnd %d", layer.dropped.Load(), cc.fastRetransmits, cc.t3Expiries, cc.cwnd)
	if layer.dropped.Load() == 0 {
		t.Fatal("the buffer never overflowed: the test proves nothing")
	}
	if cc.fastRetransmits == 0 {
		t.Fatal("losses were repaired without a single fast retransmit")
	}
	if cc.t3Expiries > 3 {
		t.Fatalf("%d T3-rtx expiries for one burst: losses wait for the RTO instead of fast retransmit", cc.t3Expiries)
	}
	if got := retransmissions(t, metrics, RetransmitFast); got != float64(cc.fastRetransmits) {
		t.Fatalf("metric counts %v fast retransmits, the association %d", got, cc.fastRetransmits)
	}
}

func retransmissions(t *testing.T, m *Metrics, kind string) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.retransmits.WithLabelValues(kind).Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetCounter().GetValue()
}

// Close right after a burst that cwnd holds back: what was written still
// arrives, in order, before the peer sees the association end (RFC 4960
// 9.2: the SHUTDOWN waits for the queue).
func TestCloseDeliversWhatCwndHeldBack(t *testing.T) {
	o := Options{SCTPImpl: ImplOwn}
	client, server := dialTestWith(t, listenWith(t, o), o)
	var msgs [][]byte
	for i := range 40 {
		m := append(fmt.Appendf(nil, "queued %d ", i), bytes.Repeat([]byte{'q'}, 2<<10)...)
		msgs = append(msgs, m)
		if err := client.WriteMsg(m, 1); err != nil {
			t.Fatal(err)
		}
	}
	go client.Close()
	for i, want := range msgs {
		got, _, err := readWithin(server, 20*time.Second)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("message %d: got %.12q, %v; want %.12q", i, got, err, want)
		}
	}
	if _, _, err := readWithin(server, 20*time.Second); err == nil {
		t.Fatal("the server still reads after the client closed")
	}
}

// writeFullChunks writes n messages of one full DATA chunk each on stream 1.
func writeFullChunks(t *testing.T, a *ownAssoc, n int) {
	t.Helper()
	msg := bytes.Repeat([]byte{'x'}, ownMaxChunkData)
	for range n {
		if err := a.WriteMsg(msg, 1); err != nil {
			t.Fatal(err)
		}
	}
}
