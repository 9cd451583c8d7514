package n2

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// negotiationOf is what a udp association knows of its handshake and
// heartbeats, on either data path.
func negotiationOf(c Conn) *negotiation {
	switch c := c.(type) {
	case *ownAssoc:
		return c.neg
	case *assocConn:
		return c.neg
	}
	panic("not a user-space association")
}

// The own data path and pion's speak the same SCTP: each side of either
// kind sends small messages on several streams and a message many
// fragments long, each arrives whole and in order, and a Close reaches
// the other side as the association's end.
func TestOwnDataPathInteroperatesWithPion(t *testing.T) {
	own, pion, inline := Options{SCTPImpl: ImplOwn}, Options{SCTPImpl: ImplPion}, Options{SCTPImpl: ImplOwn, ReadInline: true}
	for _, c := range []struct {
		name           string
		client, server Options
	}{
		{"own-client/pion-server", own, pion}, {"pion-client/own-server", pion, own}, {"own-client/own-server", own, own},
		{"own-inline-client/pion-server", inline, pion}, {"own-inline-client/own-server", inline, own},
	} {
		t.Run(c.name, func(t *testing.T) {
			ln, _, err := c.server.Listen(UDP, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			client, server := dialTestWith(t, ln, c.client)
			exchange(t, client, server, "uplink")
			exchange(t, server, client, "downlink")
			client.Close()
			if _, _, err := readWithin(server, 5*time.Second); err == nil {
				t.Fatal("the server still reads after the client closed")
			}
			if a, ok := client.(*ownAssoc); ok {
				select {
				case <-a.shutdown: // the SHUTDOWN ACK was read: a graceful end, not the ABORT after the timeout
				default:
					t.Fatal("Close ended without the peer's SHUTDOWN ACK")
				}
			}
		})
	}
}

// exchange sends 20 small messages over streams 0-3 and one of 100 KiB
// from one side; the other must read them intact and, per stream, in
// order (SCTP orders within a stream only, RFC 4960 6.5).
func exchange(t *testing.T, from, to Conn, what string) {
	t.Helper()
	want := map[uint16][][]byte{}
	var all [][]byte
	for i := range 21 {
		m := fmt.Appendf(nil, "%s message %d", what, i)
		if i == 20 {
			m = bytes.Repeat([]byte(what), 100<<10/len(what))
		}
		all = append(all, m)
		want[uint16(i%4)] = append(want[uint16(i%4)], m)
	}
	go func() {
		for i, m := range all {
			if err := from.WriteMsg(m, uint16(i%4)); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
		}
	}()
	for i := range all {
		got, stream, err := readWithin(to, 10*time.Second)
		if err != nil {
			t.Fatalf("%s %d: %v", what, i, err)
		}
		if len(want[stream]) == 0 || !bytes.Equal(got, want[stream][0]) {
			t.Fatalf("%s: got %d bytes %.20q on stream %d, not the next message sent on it", what, len(got), got, stream)
		}
		want[stream] = want[stream][1:]
	}
}

// readWithin is ReadMsg, failing after d.
func readWithin(c Conn, d time.Duration) ([]byte, uint16, error) {
	type read struct {
		pdu    []byte
		stream uint16
		err    error
	}
	got := make(chan read, 1)
	go func() {
		pdu, stream, err := c.ReadMsg()
		got <- read{pdu, stream, err}
	}()
	select {
	case r := <-got:
		return r.pdu, r.stream, r.err
	case <-time.After(d):
		return nil, 0, errors.New("nothing read in time")
	}
}

// lossyLayer is a packet layer that drops every third packet carrying DATA
// in each direction, and everything once cut is set.
type lossyLayer struct {
	packetLayer
	in, out, dropped atomic.Int64
	cut              atomic.Bool
}

func (l *lossyLayer) lose(pkt []byte, n *atomic.Int64) bool {
	if l.cut.Load() {
		return true
	}
	p, err := parseSCTP(pkt)
	if err != nil || !p.has(chunkData) {
		return false
	}
	if n.Add(1)%3 == 1 {
		l.dropped.Add(1)
		return true
	}
	return false
}

func (l *lossyLayer) readPacket(buf []byte) (int, netip.AddrPort, error) {
	for {
		n, from, err := l.packetLayer.readPacket(buf)
		if err != nil || !l.lose(buf[:n], &l.in) {
			return n, from, err
		}
	}
}

func (l *lossyLayer) writePacket(pkt []byte, to netip.AddrPort) error {
	if l.lose(pkt, &l.out) {
		return nil
	}
	return l.packetLayer.writePacket(pkt, to)
}

// lossyPair is an own-data-path association whose server loses packets.
func lossyPair(t *testing.T, o Options) (client, server Conn, layer *lossyLayer) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	layer = &lossyLayer{packetLayer: udpLayer{pc}}
	ln := newSCTPListener(layer, 0, o)
	t.Cleanup(func() { ln.Close() })
	client, server = dialTestWith(t, ln, o)
	return client, server, layer
}

// A third of the DATA packets lost each way: T3-rtx sends them again and
// every message arrives once, in order, both ways at the same time.
func TestOwnDataPathRetransmitsLostDataInOrder(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprint("ReadInline=", inline), func(t *testing.T) {
			retransmitsLostDataInOrder(t, Options{SCTPImpl: ImplOwn, RTOMax: 50 * time.Millisecond, ReadInline: inline})
		})
	}
}

func retransmitsLostDataInOrder(t *testing.T, o Options) {
	client, server, layer := lossyPair(t, o)
	const n = 60
	var wg sync.WaitGroup
	for _, dir := range []struct {
		from, to Conn
		name     string
	}{{client, server, "up"}, {server, client, "down"}} {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range n {
				if err := dir.from.WriteMsg(fmt.Appendf(nil, "%s %d", dir.name, i), 1); err != nil {
					t.Errorf("%s write %d: %v", dir.name, i, err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := range n {
				got, _, err := readWithin(dir.to, 20*time.Second)
				if want := fmt.Sprintf("%s %d", dir.name, i); err != nil || string(got) != want {
					t.Errorf("%s: got %q, %v; want %q", dir.name, got, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	if layer.dropped.Load() < n/2 {
		t.Fatalf("only %d packets dropped: the test lost too little to prove anything", layer.dropped.Load())
	}
}

// A peer that stops answering altogether: T3-rtx gives up after
// Association.Max.Retrans and the association ends for its user.
func TestOwnDataPathFailsWhenThePeerGoesSilent(t *testing.T) {
	client, _, layer := lossyPair(t, Options{SCTPImpl: ImplOwn, RTOMax: 20 * time.Millisecond, HeartbeatInterval: -1})
	layer.cut.Store(true)
	if err := client.WriteMsg([]byte("into the void"), 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readWithin(client, 10*time.Second); !errors.Is(err, errRetransLimit) {
		t.Fatalf("read after the peer went silent: %v, want the retransmission limit", err)
	}
	if err := client.WriteMsg([]byte("again"), 1); err == nil {
		t.Fatal("a failed association still accepts messages")
	}
}

// A message over the receiver's MaxMessageSize is dropped and counted;
// the association carries on.
func TestOwnDataPathDropsAndCountsTooBigMessages(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	ln, _, err := Options{SCTPImpl: ImplOwn, Metrics: m, MaxMessageSize: 4 << 10}.Listen(UDP, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	client, server := dialTestWith(t, ln, Options{SCTPImpl: ImplOwn})
	if err := client.WriteMsg(make([]byte, 10<<10), 1); err != nil {
		t.Fatal(err)
	}
	if err := client.WriteMsg([]byte("small"), 1); err != nil {
		t.Fatal(err)
	}
	if got, _, err := readWithin(server, 5*time.Second); err != nil || string(got) != "small" {
		t.Fatalf("got %d bytes, %v; want the small message only", len(got), err)
	}
	if got := discarded(t, m, DiscardTooBig); got != 1 {
		t.Fatalf("l25gc_n2_discarded_total{reason=too_big} = %v, want 1", got)
	}
}

// An unknown data path name is refused, not silently replaced.
func TestUnknownSCTPImplIsRefused(t *testing.T) {
	if _, _, err := (Options{SCTPImpl: "usrsctp"}).Listen(UDP, "127.0.0.1:0"); err == nil {
		t.Fatal("listen accepted sctp_impl usrsctp")
	}
	if _, _, err := (Options{SCTPImpl: "usrsctp"}).Dial(context.Background(), UDP, "127.0.0.1:1"); err == nil {
		t.Fatal("dial accepted sctp_impl usrsctp")
	}
}

// A SACK survives its encoding, and the receiver reports the runs of
// TSNs it holds past a gap as Gap Ack Blocks (RFC 4960 3.3.4).
func TestSackEncodingAndGapBlocks(t *testing.T) {
	r := receiver{cumTSN: 100, pending: map[uint32]sctpData{}}
	for _, tsn := range []uint32{102, 103, 104, 107, 110, 111} {
		r.pending[tsn] = sctpData{tsn: tsn}
	}
	gaps := r.gapBlocks()
	want := []gapBlock{{2, 4}, {7, 7}, {10, 11}}
	if fmt.Sprint(gaps) != fmt.Sprint(want) {
		t.Fatalf("gap blocks %v, want %v", gaps, want)
	}
	s := sack{cumTSN: 100, rwnd: 4096, gaps: gaps, dups: []uint32{99}}
	got, err := parseSack(appendSack(nil, s))
	if err != nil || fmt.Sprint(got) != fmt.Sprint(s) {
		t.Fatalf("round trip: %+v, %v; want %+v", got, err, s)
	}
	if _, err := parseSack(appendSack(nil, s)[:20]); err == nil {
		t.Fatal("a truncated SACK parsed")
	}
}

// TSNs compare as serial numbers across the wrap (RFC 4960 1.6).
func TestTSNOrderWraps(t *testing.T) {
	if !tsnBefore(0xfffffffe, 1) || tsnBefore(1, 0xfffffffe) || tsnBefore(5, 5) {
		t.Fatal("serial number arithmetic wrong across the wrap")
	}
}
