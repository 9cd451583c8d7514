//go:build l25gc_testhooks

package xio_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/l25gc/l25gc/internal/testio"
	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xioproc"
)

func init() { roles["countingecho"] = countingEchoRole }

// askTimeouts is the question countingEchoRole answers with how many of
// its doorbell sleeps ran out their time (a lost wake-up, while traffic
// flows).
const askTimeouts = "timeouts?"

// askDoorbell is the question countingEchoRole answers with the doorbell
// its poller sleeps on.
const askDoorbell = "doorbell?"

// countingEchoRole is an NF process echoing at $XIO_PEER_ADDR, sleeping on
// the doorbell $L25GC_XIO_DOORBELL names; it answers askTimeouts.
func countingEchoRole(ctx context.Context) error {
	ln, err := xio.Listen(os.Getenv("XIO_PEER_ADDR"))
	if err != nil {
		return err
	}
	go xioproc.ServeEach(ln, countingEcho)
	xioproc.Ready()
	<-ctx.Done()
	return nil
}

func countingEcho(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 256)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		out := buf[:n]
		switch string(out) {
		case askTimeouts:
			out = []byte(strconv.FormatUint(xio.SleepTimeoutsForTest(), 10))
		case askDoorbell:
			bell, err := xio.DoorbellInUse()
			out = []byte(fmt.Sprintf("%s %v", bell, err))
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// peerTimeouts asks the countingecho NF at addr for its sleep timeouts.
func peerTimeouts(t *testing.T, addr string) uint64 {
	t.Helper()
	answer := askPeer(t, addr, askTimeouts)
	v, err := strconv.ParseUint(answer, 10, 64)
	if err != nil {
		t.Fatalf("peer answered %q: %v", answer, err)
	}
	return v
}

// askPeer asks the countingecho NF at addr question and returns its answer.
func askPeer(t *testing.T, addr, question string) string {
	t.Helper()
	c := dial(t, addr)
	defer c.Close()
	if _, err := c.Write([]byte(question)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func startCountingEcho(t *testing.T, addr, doorbell string) *xioproc.Proc {
	t.Helper()
	p := startCaptured(t, "countingecho", &testio.SyncBuffer{},
		"XIO_PEER_ADDR="+addr, "L25GC_XIO_DOORBELL="+doorbell)
	t.Cleanup(p.Kill)
	return p
}

// TestEventfdDoorbellInUseWhenAsked: a process run as root that asks for
// the eventfd doorbell (TestMain does) parks its poller on it: the
// pidfd_getfd check at attach passed, no silent fallback to the futex.
func TestEventfdDoorbellInUseWhenAsked(t *testing.T) {
	if v := os.Getenv("L25GC_XIO_DOORBELL"); v != "" && v != xio.DoorbellEventfd {
		t.Skipf("this run's process sleeps on the %s (L25GC_XIO_DOORBELL)", v)
	}
	got, err := xio.DoorbellInUse()
	if got != xio.DoorbellEventfd || err != nil {
		t.Fatalf("doorbell in use %q (%v), want %q", got, err, xio.DoorbellEventfd)
	}
}

// TestDoorbellDefaultFollowsProcs: an NF process left to the default
// sleeps on the eventfd when it runs on one P (config tuning.procs), where
// a futex sleep would hold its only P, and on the futex with more.
func TestDoorbellDefaultFollowsProcs(t *testing.T) {
	for procs, want := range map[string]string{"1": xio.DoorbellEventfd, "2": xio.DoorbellFutex} {
		t.Run("GOMAXPROCS="+procs, func(t *testing.T) {
			addr := uniqueAddr(t)
			p := startCaptured(t, "countingecho", &testio.SyncBuffer{},
				"XIO_PEER_ADDR="+addr, "L25GC_XIO_DOORBELL=", "GOMAXPROCS="+procs)
			t.Cleanup(p.Kill)
			if got := askPeer(t, addr, askDoorbell); got != want+" <nil>" {
				t.Fatalf("the peer sleeps on %q, want %q", got, want+" <nil>")
			}
		})
	}
}

// TestUnknownDoorbellIsRefused: a doorbell name that is neither kind is
// a configuration error, not a silent fallback, even once attached.
func TestUnknownDoorbellIsRefused(t *testing.T) {
	cfg := xio.Config{FilePrefix: testManager.Prefix, Doorbell: "semaphore"}
	if err := xio.Init(cfg); err == nil {
		t.Fatal("doorbell \"semaphore\" accepted")
	}
}

// TestNoWakeupLostUnderStress: many conns to another NF process, each
// request after a random pause (none, or long enough for both pollers to
// go to sleep), so wake-ups race with pollers arming and disarming their
// doorbells. Every byte comes back and no doorbell sleep on either side
// runs out its time, which only a lost wake-up would do while traffic
// flows. The peer sleeps on an eventfd, then on the futex (a sender must
// wake each kind).
func TestNoWakeupLostUnderStress(t *testing.T) {
	for _, peerBell := range []string{xio.DoorbellEventfd, xio.DoorbellFutex} {
		t.Run("peer "+peerBell, func(t *testing.T) {
			addr := uniqueAddr(t)
			startCountingEcho(t, addr, peerBell)
			ours, theirs := xio.SleepTimeoutsForTest(), peerTimeouts(t, addr)
			stressRoundTrips(t, addr, 16, 150)
			if n := xio.SleepTimeoutsForTest() - ours; n != 0 {
				t.Errorf("%d of our doorbell sleeps timed out under traffic: wake-ups lost", n)
			}
			if n := peerTimeouts(t, addr) - theirs; n != 0 {
				t.Errorf("%d of the peer's doorbell sleeps timed out under traffic: wake-ups lost", n)
			}
		})
	}
}

// TestNoWakeupLostInOneProcessUnderStress: the same with both ends in
// this process, many more conns, and the doorbell sleep's bound at a
// minute, so a lost wake-up cannot hide behind a timeout: senders wake
// their own process's poller (the eventfd it copied from itself, or its
// futex), and callers polling for replies hand the ring back and forth.
func TestNoWakeupLostInOneProcessUnderStress(t *testing.T) {
	addr := echoListener(t)
	xio.SetSleepForTest(time.Minute)
	defer xio.SetSleepForTest(500 * time.Millisecond)
	ours := xio.SleepTimeoutsForTest()
	stressRoundTrips(t, addr, 48, 60)
	if n := xio.SleepTimeoutsForTest() - ours; n != 0 {
		t.Errorf("%d doorbell sleeps timed out under traffic: wake-ups lost", n)
	}
}

// stressRoundTrips runs conns goroutines, each sending rounds messages on
// its own conn to addr and checking the echo.
func stressRoundTrips(t *testing.T, addr string, conns, rounds int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for g := 0; g < conns; g++ {
		c := dial(t, addr)
		wg.Add(1)
		go func(g int, c net.Conn) {
			defer wg.Done()
			defer c.Close()
			errs <- echoRounds(c, rand.New(rand.NewSource(int64(g))), g, rounds)
		}(g, c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func echoRounds(c net.Conn, rnd *rand.Rand, g, rounds int) error {
	got := make([]byte, 64)
	for i := 0; i < rounds; i++ {
		switch rnd.Intn(3) {
		case 0: // back to back: the pollers spin
		case 1:
			time.Sleep(time.Duration(rnd.Intn(200)) * time.Microsecond)
		default: // past the spin budget: the pollers sleep
			time.Sleep(time.Duration(200+rnd.Intn(1500)) * time.Microsecond)
		}
		msg := []byte(fmt.Sprintf("g%d-r%d", g, i))
		if _, err := c.Write(msg); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, got[:len(msg)]); err != nil {
			return fmt.Errorf("conn %d round %d: %w", g, i, err)
		}
		if !bytes.Equal(got[:len(msg)], msg) {
			return fmt.Errorf("conn %d round %d: echo %q, want %q", g, i, got[:len(msg)], msg)
		}
	}
	return nil
}

// TestPeerKilledWhileWeSleepWakesUs: our poller parked on its eventfd,
// the peer NF is SIGKILLed; the manager's RST (the manager writes our
// eventfd too) wakes the poller, so the read fails at once rather than
// after the sleep's bound (a minute here).
func TestPeerKilledWhileWeSleepWakesUs(t *testing.T) {
	addr := uniqueAddr(t)
	peer := startCountingEcho(t, addr, xio.DoorbellEventfd)
	c := dial(t, addr)
	defer c.Close()
	roundTripPair(t, c, c, []byte("warm"))
	xio.SetSleepForTest(time.Minute) // a lost wake-up would wait this long
	defer xio.SetSleepForTest(500 * time.Millisecond)
	waitPollerAsleep(t)
	timeouts := xio.SleepTimeoutsForTest()
	peer.Kill()
	if _, err := c.Read(make([]byte, 8)); err == nil {
		t.Fatal("read from a killed peer succeeded")
	}
	if n := xio.SleepTimeoutsForTest() - timeouts; n != 0 {
		t.Fatalf("the peer's death was seen after %d doorbell sleeps timed out: the manager's wake-up was lost", n)
	}
}

// TestRestartedPeerIsWokenOnItsNewEventfd: senders keep a copy of each
// peer's eventfd; a peer that restarts (a new process, likely in the same
// NF slot) has a new one, and a sender still writing the dead process's
// copy would never wake it. After the restart, round trips with pauses
// that put the new peer's poller to sleep go through with none of its
// sleeps timing out.
func TestRestartedPeerIsWokenOnItsNewEventfd(t *testing.T) {
	addr := uniqueAddr(t)
	first := startCountingEcho(t, addr, xio.DoorbellEventfd)
	stressRoundTrips(t, addr, 2, 20)
	first.Kill()
	var second *xioproc.Proc
	waitFor(t, func() bool { // the manager reaps the dead one and frees addr
		p, err := xioproc.Start("countingecho", "XIO_PEER_ADDR="+addr, "L25GC_XIO_DOORBELL="+xio.DoorbellEventfd)
		second = p
		return err == nil
	})
	t.Cleanup(second.Kill)
	theirs := peerTimeouts(t, addr)
	stressRoundTrips(t, addr, 2, 40)
	if n := peerTimeouts(t, addr) - theirs; n != 0 {
		t.Fatalf("%d of the restarted peer's doorbell sleeps timed out: its wake-ups went to the old eventfd", n)
	}
}
