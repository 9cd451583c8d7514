//go:build l25gc_testhooks

package xio_test

import (
	"testing"
	"time"

	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xioproc"
)

// forgeries are ring entries a buggy or hostile process can write: each is
// dropped and counted by the NF whose ring it lands in, which keeps serving.
var forgeries = []struct {
	name string
	kind int
}{
	{"DATA with len >= 2^31", xio.ForgeHugeLen},
	{"DATA with len past the buffer", xio.ForgeLongLen},
	{"pointer into the middle of a buffer", xio.ForgeMisaligned},
	{"pointer outside the buffers", xio.ForgeOutside},
	{"datagram address longer than the datagram", xio.ForgeAddrLen},
	{"free buffer nobody handed over", xio.ForgeNotHanded},
	{"unknown message type", xio.ForgeBadType},
	{"DATA in a header-only control buffer", xio.ForgeCtlData},
}

// Forged entries in this process's own ring, aimed at a live conn.
func TestForgedEntriesAreDroppedAndCounted(t *testing.T) {
	base := settledPool(t)
	addr, c, s := connectedPair(t)
	before := xio.BadMessagesForTest(addr)
	for _, f := range forgeries {
		if err := xio.ForgeForTest(addr, f.kind, c); err != nil {
			t.Fatalf("forge %s: %v", f.name, err)
		}
	}
	waitFor(t, func() bool { return xio.BadMessagesForTest(addr) == before+uint64(len(forgeries)) })
	s.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, err := s.Read(make([]byte, 64)); !isTimeout(err) {
		t.Fatalf("the conn read %d forged bytes (%v)", n, err)
	}
	s.SetReadDeadline(time.Time{})
	roundTripVia(t, c, s, []byte("still serving"))
	roundTripVia(t, s, c, []byte("both ways"))
	waitFor(t, func() bool { n, _, _ := xio.PoolInUse(); return n == base })
}

// Forged entries in another NF process's ring: it survives them (a bad
// length used to panic its poller), counts them, and keeps echoing.
func TestPeerSurvivesForgedEntries(t *testing.T) {
	base := settledPool(t)
	addr := uniqueAddr(t)
	peer, err := xioproc.Start("peer", "XIO_PEER_ADDR="+addr)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Kill()
	c := dial(t, addr)
	roundTrip(t, c, []byte("before"))
	before := xio.BadMessagesForTest(addr)
	for _, f := range forgeries {
		if err := xio.ForgeForTest(addr, f.kind, c); err != nil {
			t.Fatalf("forge %s: %v", f.name, err)
		}
	}
	waitFor(t, func() bool { return xio.BadMessagesForTest(addr) == before+uint64(len(forgeries)) })
	roundTrip(t, c, []byte("after: the peer still serves"))
	select {
	case <-peer.Exited():
		t.Fatalf("peer died of forged entries: %v", peer.Err())
	default:
	}
	c.Close()
	waitFor(t, func() bool { n, _, _ := xio.PoolInUse(); return n == base })
}
