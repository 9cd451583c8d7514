//go:build l25gc_testhooks

package xio_test

import (
	"bytes"
	"context"
	"fmt"

	"net"
	"sync"
	"testing"
	"time"

	"github.com/l25gc/l25gc/xio"
)

// replyReader is the X-IO conn's read for a reply (xio/reply.go).
type replyReader interface {
	ReadReply(ctx context.Context, b []byte) (int, error)
}

// readReplyFull reads len(b) bytes of a reply on c.
func readReplyFull(c net.Conn, b []byte) error {
	r := c.(replyReader)
	for n := 0; n < len(b); {
		k, err := r.ReadReply(context.Background(), b[n:])
		if err != nil {
			return err
		}
		n += k
	}
	return nil
}

// waitPollerAsleep waits until the poller has given up the ring (it
// sleeps on its doorbell), so that a reply's reader polls for itself.
func waitPollerAsleep(t *testing.T) {
	t.Helper()
	for waited := 0; !xio.PollerAsleepForTest(); waited++ {
		if waited == 10000 {
			t.Fatal("the poller never went to sleep")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestReplyArrivingAsPollingStopsIsNotLost: a reply that arrives just as
// the goroutine polling for it gives up (its last look found the ring
// empty, senders ring again, it still holds the ring) reaches the reader
// at once: the sender's ring wakes the poller, which waits for the ring and
// takes it, instead of the reply waiting for the doorbell sleep's timeout.
func TestReplyArrivingAsPollingStopsIsNotLost(t *testing.T) {
	_, c, s := connectedPair(t)
	roundTripPair(t, c, s, []byte("warm"))
	xio.SetSleepForTest(time.Minute) // a lost wake-up would wait this long
	defer xio.SetSleepForTest(500 * time.Millisecond)
	waitPollerAsleep(t)
	xio.ArmHandBackParkForTest()
	defer xio.ReleaseHandBackForTest()
	got := make(chan error, 1)
	buf := make([]byte, 5)
	go func() { got <- readReplyFull(c, buf) }()
	for waited := 0; !xio.HandBackParkedForTest(); waited++ {
		if waited == 10000 {
			t.Fatal("the reader never polled for its reply (the poller held the ring?)")
		}
		time.Sleep(time.Millisecond)
	}
	timeouts := xio.SleepTimeoutsForTest()
	if _, err := s.Write([]byte("reply")); err != nil {
		t.Fatal(err)
	}
	xio.ReleaseHandBackForTest()
	select {
	case err := <-got:
		if err != nil || string(buf) != "reply" {
			t.Fatalf("read %q, %v", buf, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the reply never reached its reader: its wake-up was lost")
	}
	if n := xio.SleepTimeoutsForTest() - timeouts; n != 0 {
		t.Fatalf("the reply was read after %d doorbell sleeps timed out: its wake-up was lost", n)
	}
}

// TestReplyPollingStopsForSlowReplies: replies that come long after the
// budget (here 5 ms) turn the conn's polling off, so waiting for a slow
// peer costs no CPU; the replies still arrive.
func TestReplyPollingStopsForSlowReplies(t *testing.T) {
	_, c, s := connectedPair(t)
	if !xio.ReplyPollingForTest(c) {
		t.Fatal("a fresh conn does not poll for its replies")
	}
	buf := make([]byte, 4)
	for i := 0; i < 10; i++ {
		go func() {
			time.Sleep(5 * time.Millisecond)
			s.Write([]byte("slow"))
		}()
		if err := readReplyFull(c, buf); err != nil || string(buf) != "slow" {
			t.Fatalf("reply %d: read %q, %v", i, buf, err)
		}
	}
	if xio.ReplyPollingForTest(c) {
		t.Fatal("after 10 replies of 5 ms the conn still polls for them")
	}
}

// TestRepliesPolledByManyReadersArriveWhole: readers polling for their
// replies take and dispatch each other's messages; every conn still gets
// its own bytes, in order, also replies that span several buffers.
func TestRepliesPolledByManyReadersArriveWhole(t *testing.T) {
	addr := echoListener(t)
	const conns, rounds = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := xio.Dial(addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for r := 0; r < rounds; r++ {
				msg := bytes.Repeat([]byte(fmt.Sprintf("%d.%d|", i, r)), 1+(i*rounds+r)%3000)
				if _, err := c.Write(msg); err != nil {
					errs <- err
					return
				}
				got := make([]byte, len(msg))
				if err := readReplyFull(c, got); err != nil {
					errs <- fmt.Errorf("conn %d round %d: %w", i, r, err)
					return
				}
				if !bytes.Equal(got, msg) {
					errs <- fmt.Errorf("conn %d round %d: reply differs", i, r)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestReplyPollingLeftToThePollerWhenManyWait: with more goroutines
// waiting for replies than a procedure's few parallel calls, a new waiter
// parks and leaves the ring to the poller (waiters taking turns at it cost
// more wake-ups than they save); with one other waiter it polls.
func TestReplyPollingLeftToThePollerWhenManyWait(t *testing.T) {
	for _, c := range []struct {
		others int
		polls  bool
	}{{1, true}, {5, false}} {
		t.Run(fmt.Sprintf("%d others waiting", c.others), func(t *testing.T) {
			if got := pollsWithOthersWaiting(t, c.others); got != c.polls {
				t.Fatalf("with %d others waiting for replies a waiter polled: %v, want %v", c.others, got, c.polls)
			}
		})
	}
}

// pollsWithOthersWaiting says whether a wait for a reply polled the ring
// while others goroutines waited for theirs and the poller slept.
func pollsWithOthersWaiting(t *testing.T, others int) bool {
	t.Helper()
	var servers []net.Conn
	done := make(chan error, others)
	for i := 0; i < others; i++ {
		_, c, s := connectedPair(t)
		servers = append(servers, s)
		go func() { done <- readReplyFull(c, make([]byte, 1)) }()
	}
	defer func() {
		for _, s := range servers {
			s.Write([]byte("x"))
		}
		for i := 0; i < others; i++ {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}()
	waitAwaiting(t, others)
	_, c, s := connectedPair(t)
	if !xio.ReplyPollingForTest(c) {
		t.Fatal("a fresh conn does not poll for its replies")
	}
	waitPollerAsleep(t)
	polls := xio.ReplyPollsForTest()
	got := make(chan error, 1)
	go func() { got <- readReplyFull(c, make([]byte, 1)) }()
	waitAwaiting(t, others+1)
	s.Write([]byte("y"))
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	return xio.ReplyPollsForTest() > polls
}

// waitAwaiting waits until n goroutines wait for replies.
func waitAwaiting(t *testing.T, n int) {
	t.Helper()
	for waited := 0; xio.AwaitingForTest() != n; waited++ {
		if waited == 10000 {
			t.Fatalf("%d goroutines wait for replies, want %d", xio.AwaitingForTest(), n)
		}
		time.Sleep(time.Millisecond)
	}
}
