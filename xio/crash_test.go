//go:build l25gc_testhooks

package xio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/internal/testio"

	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xioproc"
)

func init() {
	roles["lockholder"] = lockHolderRole
	roles["stealer"] = stealerRole
	roles["wedger"] = wedgerRole
	roles["loader"] = loaderRole
	roles["prober"] = proberRole
	roles["survivor"] = survivorRole
	roles["halfsender"] = halfSenderRole
}

// halfSenderRole hands a buffer to the NF serving $XIO_PEER_ADDR and
// stops before the enqueue; the test kills it there.
func halfSenderRole(ctx context.Context) error {
	if err := xio.Init(xio.Config{}); err != nil {
		return err
	}
	if err := xio.HalfDeliverForTest(os.Getenv("XIO_PEER_ADDR")); err != nil {
		return err
	}
	xioproc.Ready()
	<-ctx.Done()
	return nil
}

// survivorRole echoes between two of its own conns until a write fails,
// and prints the error: an NF whose manager is gone must learn it.
func survivorRole(ctx context.Context) error {
	addr := os.Getenv("XIO_PEER_ADDR")
	ln, err := xio.Listen(addr)
	if err != nil {
		return err
	}
	c, err := xio.Dial(addr)
	if err != nil {
		return err
	}
	s, err := ln.Accept()
	if err != nil {
		return err
	}
	xioproc.Ready()
	buf := make([]byte, 1024)
	for ctx.Err() == nil {
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(buf); err != nil {
			fmt.Printf("write failed: %v\n", err)
			break
		}
		io.ReadFull(s, buf)
		time.Sleep(time.Millisecond)
	}
	<-ctx.Done()
	return nil
}

// lockHolderRole takes the shared table lock as attaching does and keeps
// it: killed, it is a process killed inside attach.
func lockHolderRole(ctx context.Context) error {
	if err := xio.Init(xio.Config{}); err != nil {
		return err
	}
	if err := xio.HoldTableLockForTest(); err != nil {
		return err
	}
	xioproc.Ready()
	<-ctx.Done()
	return nil
}

// stealerRole listens at $XIO_PEER_ADDR with its poller paused, waits for
// $XIO_STEAL_N entries in its ring, dequeues them without taking them and
// says so: killed then, it is a poller killed mid-dequeue.
func stealerRole(ctx context.Context) error {
	ln, err := xio.Listen(os.Getenv("XIO_PEER_ADDR"))
	if err != nil {
		return err
	}
	defer ln.Close()
	xio.PausePollerForTest(true)
	n, _ := strconv.Atoi(os.Getenv("XIO_STEAL_N"))
	xioproc.Ready()
	for xio.RingCountForTest() < n {
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("stolen %d\n", xio.StealFromRingForTest(n))
	<-ctx.Done()
	return nil
}

// wedgerRole leaves its ring as a sender killed inside an enqueue would.
func wedgerRole(ctx context.Context) error {
	if err := xio.Init(xio.Config{}); err != nil {
		return err
	}
	xio.WedgeOwnRingForTest()
	xioproc.Ready()
	<-ctx.Done()
	return nil
}

// loaderRole keeps 8 conns to the echo server at $XIO_PEER_ADDR busy with
// 64 KiB echoes, checking every byte, until it is killed.
func loaderRole(ctx context.Context) error {
	addr := os.Getenv("XIO_PEER_ADDR")
	errc := make(chan error, 8)
	ready := make(chan struct{}, 8)
	for i := 0; i < 8; i++ {
		go func(i int) { errc <- echoLoop(ctx, addr, int64(i), ready) }(i)
	}
	for i := 0; i < 8; i++ {
		select {
		case <-ready:
		case err := <-errc:
			return err
		}
	}
	xioproc.Ready()
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}

func echoLoop(ctx context.Context, addr string, seed int64, ready chan<- struct{}) error {
	c, err := xio.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	rnd := rand.New(rand.NewSource(seed))
	out, in := make([]byte, 64<<10), make([]byte, 64<<10)
	for i := 0; ctx.Err() == nil; i++ {
		rnd.Read(out)
		go c.Write(out)
		if _, err := io.ReadFull(c, in); err != nil {
			return err
		}
		if !bytes.Equal(in, out) {
			return errors.New("echo came back different: a buffer was shared")
		}
		if i == 0 {
			ready <- struct{}{}
		}
	}
	return nil
}

// proberRole checks that the echo server at $XIO_PEER_ADDR still serves
// (every byte right, within deadlines) and that every shared buffer is back
// in the pool once it is done; it is ready only if all that holds.
func proberRole(ctx context.Context) error {
	addr := os.Getenv("XIO_PEER_ADDR")
	c, err := xio.Dial(addr)
	if err != nil {
		return err
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	msg := make([]byte, 300<<10)
	rand.Read(msg)
	go c.Write(msg)
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		return fmt.Errorf("echo after the kills: %w", err)
	}
	if !bytes.Equal(got, msg) {
		return errors.New("echo after the kills came back different")
	}
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, _, err := xio.PoolInUse()
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d buffers still taken with every NF idle", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	xioproc.Ready()
	return nil
}

// A process killed while holding the table lock (here: inside attach,
// before it had an NF slot) must not hang everyone else on it.
func TestLockOfKilledHolderIsBroken(t *testing.T) {
	holder, err := xioproc.Start("lockholder")
	if err != nil {
		t.Fatal(err)
	}
	holder.Kill()
	done := make(chan error, 1)
	go func() {
		ln, err := xio.Listen(uniqueAddr(t))
		if err == nil {
			ln.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("listen after the lock holder was killed: %v", err)
		}
	case <-time.After(20 * time.Second): // bounds a failing test only (a held lock's 2 s timeout fails it above)
		t.Fatal("listen still waits for the table lock of a killed process after 20 s")
	}
}

// A live holder that never releases the lock (stopped) costs waiters a
// bounded wait and an error that says so, not a hang.
func TestLockOfStoppedHolderTimesOut(t *testing.T) {
	holder, err := xioproc.Start("lockholder")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Kill()
	stopProc(t, holder)
	xio.SetLockTimeoutForTest(200 * time.Millisecond)
	defer xio.SetLockTimeoutForTest(2 * time.Second)
	start := time.Now()
	_, err = xio.Listen(uniqueAddr(t))
	if !errors.Is(err, syscall.EBUSY) || !strings.Contains(err.Error(), "table lock") {
		t.Fatalf("listen while a stopped process holds the lock: %v, want EBUSY naming the lock", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("gave up after %v, want about the 200ms timeout", d)
	}
	holder.Cmd.Process.Signal(syscall.SIGCONT)
	holder.Kill()
	ln, err := xio.Listen(uniqueAddr(t))
	if err != nil {
		t.Fatalf("listen once the holder is gone: %v", err)
	}
	ln.Close()
}

// A poller killed between dequeuing entries and taking them leaves them
// INRING outside any ring; the manager takes them back too.
func TestKilledMidDequeueBuffersReturn(t *testing.T) {
	base := settledPool(t)
	addr := uniqueAddr(t)
	out := &testio.SyncBuffer{}
	p := startCaptured(t, "stealer", out, "XIO_PEER_ADDR="+addr, "XIO_STEAL_N=14")
	defer p.Kill()
	c := dial(t, addr)
	if _, err := c.Write(make([]byte, 100000)); err != nil { // 13 buffers after the SYN
		t.Fatal(err)
	}
	waitOutput(t, out, "stolen 14", 20*time.Second)
	p.Kill()
	c.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read from the killed peer: %v, want ECONNRESET", err)
	}
	waitFor(t, func() bool { n, _, _ := xio.PoolInUse(); return n == base })
}

// A sender killed between handing a buffer to a live NF and enqueueing it
// leaves it INRING in no ring; once that NF has read past the death, the
// manager takes it back and uncounts it from the NF's quota.
func TestSenderKilledMidDeliveryOrphanReturns(t *testing.T) {
	base := settledPool(t)
	addr := echoListener(t) // served by this process
	queued := xio.QueuedForTest(addr)
	p, err := xioproc.Start("halfsender", "XIO_PEER_ADDR="+addr)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := xio.PoolInUse(); n != base+1 || xio.QueuedForTest(addr) != queued+1 {
		t.Fatalf("half delivery: %d buffers over base, %d queued over before; want 1 and 1", n-base, xio.QueuedForTest(addr)-queued)
	}
	p.Kill()
	waitFor(t, func() bool { n, _, _ := xio.PoolInUse(); return n == base })
	if q := xio.QueuedForTest(addr); q != queued {
		t.Fatalf("%d counted against our quota after the orphan was freed, want %d", q, queued)
	}
	roundTrip(t, dial(t, addr), []byte("the NF it was sent to still serves"))
}

// Nothing may be queued to an NF slot no process holds: it would stay
// there until the slot is next taken.
func TestDeliveryToFreeSlotIsRefused(t *testing.T) {
	if err := xio.DeliverToFreeSlotForTest(); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("delivery to a free NF slot: %v, want ECONNREFUSED", err)
	}
}

// An NF killed but not reaped yet (the manager scans every 100ms; here it
// is stopped) refuses dials at once instead of accepting them into a dead
// ring, so callers see ECONNREFUSED, not a later ECONNRESET.
func TestDialKilledUnreapedNFIsRefused(t *testing.T) {
	addr := uniqueAddr(t)
	peer, err := xioproc.Start("peer", "XIO_PEER_ADDR="+addr)
	if err != nil {
		t.Fatal(err)
	}
	mgr := testManager.Cmd.Process
	mgr.Signal(syscall.SIGSTOP)
	defer mgr.Signal(syscall.SIGCONT)
	waitFor(t, func() bool { return processStopped(mgr.Pid) })
	peer.Kill()
	if c, err := xio.Dial(addr); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial to a killed, unreaped NF: %v, want ECONNREFUSED", err)
	}
}

// A process killed inside a ring enqueue wedges that ring for good; the
// manager cannot repair it, so it exits non-zero saying what is wedged and
// the node restarts X-IO (node.watchManager).
func TestWedgedRingStopsManagerWithReason(t *testing.T) {
	mgr := startPrivateManager(t)
	survived := &testio.SyncBuffer{}
	survivor := startCaptured(t, "survivor", survived, mgr.env(), "XIO_PEER_ADDR=survivor")
	defer survivor.Kill()
	w := startCaptured(t, "wedger", &testio.SyncBuffer{}, mgr.env())
	w.Kill()
	select {
	case <-mgr.Exited():
	case <-time.After(20 * time.Second): // bounds a failing test only
		t.Fatal("manager still runs 20 s after a ring was wedged by a killed process")
	}
	if mgr.Err() == nil {
		t.Fatal("manager exited 0 over a wedged ring")
	}
	// The node tells this exit from a crash by its code: a new manager
	// would find the same ring wedged, so X-IO restarts with its NFs.
	if code := mgr.Cmd.ProcessState.ExitCode(); code != xioproc.ExitWedged {
		t.Fatalf("manager exited %d over a wedged ring, want xioproc.ExitWedged (%d)", code, xioproc.ExitWedged)
	}
	msg := mgr.out.String()
	if !strings.Contains(msg, "ring l25gc_nf_rx_") || !strings.Contains(msg, "is wedged: producer head") ||
		!strings.Contains(msg, fmt.Sprintf("pid %d", w.Cmd.Process.Pid)) {
		t.Fatalf("manager's last words do not say what is wedged by whom:\n%s", msg)
	}
	// NFs still attached fail their writes at once, saying why.
	waitOutput(t, survived, "the onvm manager stopped", 20*time.Second)
}

// NFs killed with SIGKILL again and again while they load an echo server
// (8 conns of 64 KiB echoes each): the server and a new client go on
// working with every byte right, and every buffer comes back, unless a kill
// landed inside a ring enqueue, which the manager must then report and exit
// on. Either is correct; hanging or corrupting is not.
func TestKillsUnderLoad(t *testing.T) {
	mgr := startPrivateManager(t)
	addr := "kill-sink"
	sink := startCaptured(t, "peer", &testio.SyncBuffer{}, mgr.env(), "XIO_PEER_ADDR="+addr)
	defer sink.Kill()
	kills := 0
	for i := 0; i < 12 && !mgr.exited(); i++ {
		loader := startCaptured(t, "loader", &testio.SyncBuffer{}, mgr.env(), "XIO_PEER_ADDR="+addr)
		time.Sleep(time.Duration(10+rand.Intn(50)) * time.Millisecond)
		loader.Kill()
		kills++
	}
	time.Sleep(500 * time.Millisecond) // past the watchdog's 200ms
	if mgr.exited() {
		if mgr.Err() == nil || !strings.Contains(mgr.out.String(), "is wedged") {
			t.Fatalf("manager exited (%v) without saying a ring is wedged:\n%s", mgr.Err(), mgr.out.String())
		}
		t.Logf("after %d kills a ring was wedged; the manager said so and exited:\n%s", kills, mgr.out.String())
		return
	}
	out := &testio.SyncBuffer{}
	prober, err := startProber(mgr, out, addr)
	if err != nil {
		if mgr.exited() && strings.Contains(mgr.out.String(), "is wedged") {
			t.Logf("a ring was wedged; the manager said so and exited:\n%s", mgr.out.String())
			return
		}
		t.Fatalf("after %d kills under load: %v\n%s", kills, err, out.String())
	}
	if err := prober.Err(); err != nil {
		t.Fatalf("prober: %v", err)
	}
	t.Logf("%d NFs killed under load; the survivors work and every buffer came back", kills)
}

func startProber(mgr *privateManager, out *testio.SyncBuffer, addr string) (*xioproc.Proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), mgr.env(), "XIO_PEER_ADDR="+addr)
	cmd.Stdout, cmd.Stderr = out, out
	return xioproc.StartCmd(cmd, "prober")
}
