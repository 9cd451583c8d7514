//go:build l25gc_testhooks

package shm

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/l25gc/l25gc/upf/rules"
)

// With no UPF-U taking commands the ring fills after its UPF_RING_N
// entries and says so; commands for unknown sessions get cause 65, an End
// Marker toward no IPv4 address an error.
func TestCommandRingIsBoundedAndChecked(t *testing.T) {
	tab, _ := openTemp(t, 4)
	if err := tab.Install(sessionWith(1, netip.MustParseAddr("10.60.0.1"), 0x10)); err != nil {
		t.Fatal(err)
	}
	old := rules.OuterHeader{TEID: 0x77, PeerIPv4: gnb}
	sent := 0
	var err error
	for ; sent <= ringEntries; sent++ {
		if err = tab.SendEndMarker(1, old); err != nil {
			break
		}
	}
	if sent != ringEntries || !errors.Is(err, ErrRingFull) {
		t.Fatalf("%d commands queued, then %v; want %d, then ErrRingFull", sent, err, ringEntries)
	}
	var ce *rules.CauseError
	if err := tab.Discard(99); !errors.As(err, &ce) || ce.Cause != 65 {
		t.Fatalf("discard of an unknown session: %v, want cause 65", err)
	}
	if err := tab.SendEndMarker(1, rules.OuterHeader{TEID: 1}); err == nil {
		t.Fatal("End Marker toward no address queued")
	}
}

// The watcher drains notes queued while no UPF-C listened, then sleeps on
// the doorbell until a datagram says there are more (what UPF-U sends).
func TestWatchDrainsQueuedNotesThenWaitsForTheBell(t *testing.T) {
	tab, cfg := openTemp(t, 4)
	queueNote(tab, Note{UPSEID: 1, PDRID: 2, QFI: 9})
	got := make(chan Note, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tab.WatchDownlinkData(ctx, func(n Note) { got <- n }) }()
	if n := <-got; n != (Note{UPSEID: 1, PDRID: 2, QFI: 9}) {
		t.Fatalf("note %+v", n)
	}
	queueNote(tab, Note{UPSEID: 3, PDRID: 4})
	ring(t, cfg.Path()+doorbellSuffix)
	select {
	case n := <-got:
		if n.UPSEID != 3 {
			t.Fatalf("note %+v, want session 3's", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the bell did not wake the watcher")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// ring sends UPF-U's doorbell datagram, once the watcher listens.
func ring(t *testing.T, path string) {
	t.Helper()
	addr := &net.UnixAddr{Name: path, Net: "unixgram"}
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		c, err := net.DialUnix("unixgram", nil, addr)
		if err == nil {
			_, err = c.Write([]byte{1})
			c.Close()
		}
		if err == nil {
			return
		}
		if time.Now().After(end) {
			t.Fatal(err)
		}
	}
}
