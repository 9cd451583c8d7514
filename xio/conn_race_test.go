//go:build l25gc_testhooks

package xio_test

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/l25gc/l25gc/xio"
)

// A Close racing a Write whose peer already closed must not let the rest of
// the Write reach another conn that reuses the slot. The hook parks the
// writer between chunks right after the peer's side closed; meanwhile the
// writer's own side is closed and a new conn is dialed into the same slot.
// Its server must read nothing: before the fix, Close freed the slot under
// the writer, and the writer stamped its chunks with the new conn's gen.
func TestCloseRacingWriteNeverFeedsAReusedSlot(t *testing.T) {
	addr1, addr2 := uniqueAddr(t), uniqueAddr(t)
	ln1, err := xio.Listen(addr1)
	if err != nil {
		t.Fatal(err)
	}
	defer ln1.Close()
	ln2, err := xio.Listen(addr2)
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	c1 := dial(t, addr1)
	s1, err := ln1.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()

	xio.ArmSendRaceForTest()
	wrote := make(chan error, 1)
	go func() {
		_, err := c1.Write(make([]byte, 100000))
		wrote <- err
	}()
	waitFor(t, xio.SendParkedForTest)
	closed := make(chan struct{})
	go func() {
		c1.Close()
		close(closed)
	}()
	select { // with the fix Close waits for the writer; give it the chance not to
	case <-closed:
	case <-time.After(30 * time.Millisecond):
	}
	xio.ReuseSlotNextForTest(c1)
	c2 := dial(t, addr2)
	s2, err := ln2.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	xio.ReleaseSendForTest()
	<-wrote
	<-closed

	s2.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := s2.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("a conn dialed into a slot being closed under a writer read %d bytes (%v): the writer's bytes leaked into it", n, err)
	}
	roundTripVia(t, c2, s2, []byte("the new conn works"))
}

// roundTripVia writes msg on c and reads it on s.
func roundTripVia(t *testing.T, c, s net.Conn, msg []byte) {
	t.Helper()
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	s.SetReadDeadline(time.Now().Add(2 * time.Second))
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(s, got); err != nil || string(got) != string(msg) {
		t.Fatalf("read %q, %v; want %q", got, err, msg)
	}
	s.SetReadDeadline(time.Time{})
}

// A Close while a Write waits for window makes the Write return at once.
func TestCloseUnblocksWriterWaitingForWindow(t *testing.T) {
	_, c, _ := connectedPair(t) // the server side stays open and never reads
	wrote := make(chan error, 1)
	go func() {
		_, err := c.Write(make([]byte, 1<<20)) // 4 windows: blocks, nobody reads
		wrote <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	// Nobody ever reads, so the window never opens: only the Close can end
	// the Write, and a writer Close does not wake hangs here. (A 100 ms
	// bound on the Write's return failed when a loaded CI machine stalled
	// this process that long.)
	select {
	case err := <-wrote:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("write blocked on window, then Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(30 * time.Second): // bounds a failing test only
		t.Fatal("Close did not end a Write waiting for window")
	}
}

// Readers park as goroutines: a thousand conns with a goroutine blocked in
// Read on each (and as many echo goroutines blocked in theirs) hold a
// handful of OS threads.
func TestBlockedReadersHoldNoThreads(t *testing.T) {
	addr := echoListener(t)
	before := threads(t)
	var wg sync.WaitGroup
	conns := make([]net.Conn, 1000)
	for i := range conns {
		c, err := xio.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Read(make([]byte, 1))
		}()
	}
	time.Sleep(300 * time.Millisecond) // let every reader block
	n := threads(t)
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()
	if n >= 50 {
		t.Fatalf("%d OS threads with 2000 goroutines blocked in Read (%d before); readers must not hold threads", n, before)
	}
	t.Logf("%d threads with 2000 blocked readers (%d before)", n, before)
}

// A sender refuses a ring whose producer head runs far ahead of its tail
// (a sender killed inside an enqueue wedged it) and reads the head before
// the tail. Between the two reads other senders may finish whole
// deliveries (the checking thread preempted on a busy node), so the tail
// read can be past the head read: the ring is live and the write must go
// through. Before the fix the unsigned head-tail distance wrapped, the
// write failed with ENOTRECOVERABLE, and the xiohttp server whose response
// it was closed the conn, so its client read EOF.
func TestWriteOvertakenInTheWedgeCheckGoesThrough(t *testing.T) {
	_, c, s := connectedPair(t)
	xio.ArmRingOvertakeForTest()
	msg := []byte("a response to a live peer")
	if _, err := s.Write(msg); err != nil {
		t.Fatalf("write to a live peer whose ring another sender filled meanwhile: %v", err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != string(msg) {
		t.Fatalf("read %q, %v; want %q", got, err, msg)
	}
}
