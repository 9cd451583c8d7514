//go:build l25gc_testhooks

package xio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xioproc"
)

// noManagerErr is what attaching said before the manager was started.
var noManagerErr error

// testManager is the onvm manager the test process is attached to.
var testManager *xioproc.Manager

// roles are the child processes tests start (xioproc.Start); files add
// theirs in init.
var roles = map[string]func(context.Context) error{"peer": peerRole}

// TestMain runs as root: it reserves hugepages if needed, starts an onvm
// manager child with a private file prefix, attaches, and stops it after.
func TestMain(m *testing.M) {
	if ok, code := xioproc.RunRole(roles); ok {
		os.Exit(code)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	noManagerErr = xio.Init(xio.Config{FilePrefix: fmt.Sprintf("xio-none-%d", os.Getpid())})
	mgr, err := xioproc.StartManager()
	if err != nil {
		fmt.Fprintln(os.Stderr, "xio tests need root and hugepages:", err)
		return 1
	}
	defer mgr.Close()
	testManager = mgr
	// Callers poll for replies (off by default) so the tests cover it;
	// the poller parks on the eventfd doorbell (also off by default) and
	// child processes sleep on the futex unless a test says otherwise,
	// so every test's messages cross both kinds.
	// L25GC_XIO_DOORBELL=futex runs the suite with this process on the
	// futex too.
	bell := xio.DoorbellEventfd
	if v := os.Getenv("L25GC_XIO_DOORBELL"); v != "" {
		bell = v
	}
	if err := xio.Init(xio.Config{FilePrefix: mgr.Prefix, ReplySpin: 100 * time.Microsecond, Doorbell: bell}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// peerRole is a separate NF process: an echo server at $XIO_PEER_ADDR that
// also holds $XIO_PEER_HOLD buffers, as if it died mid-send.
func peerRole(ctx context.Context) error {
	ln, err := xio.Listen(os.Getenv("XIO_PEER_ADDR"))
	if err != nil {
		return err
	}
	var hold int
	fmt.Sscan(os.Getenv("XIO_PEER_HOLD"), &hold)
	xio.HoldBuffersForTest(hold)
	go serveEcho(ln)
	xioproc.Ready()
	<-ctx.Done()
	return nil
}

func serveEcho(ln net.Listener) {
	xioproc.ServeEach(ln, func(c net.Conn) {
		io.Copy(c, c)
		c.Close()
	})
}

var addrSeq struct {
	sync.Mutex
	n int
}

func uniqueAddr(t *testing.T) string {
	addrSeq.Lock()
	defer addrSeq.Unlock()
	addrSeq.n++
	return fmt.Sprintf("127.0.0.1:%d", 20000+addrSeq.n)
}

func echoListener(t *testing.T) string {
	t.Helper()
	addr := uniqueAddr(t)
	ln, err := xio.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go serveEcho(ln)
	return addr
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := xio.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// connectedPair is a conn dialled to a fresh listener at addr and the
// listener's side of it, all closed when the test ends.
func connectedPair(t *testing.T) (addr string, c, s net.Conn) {
	t.Helper()
	addr = uniqueAddr(t)
	ln, err := xio.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	c = dial(t, addr)
	if s, err = ln.Accept(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return addr, c, s
}

func roundTrip(t *testing.T, c net.Conn, msg []byte) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(msg)
		errc <- err
	}()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read back %d bytes: %v", len(msg), err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("echo of %d bytes differs", len(msg))
	}
}

func TestEcho(t *testing.T) {
	c := dial(t, echoListener(t))
	for _, n := range []int{1, 100, 8127, 8128, 8129, 20000} {
		roundTrip(t, c, bytes.Repeat([]byte{byte(n)}, n))
	}
}

func TestLargeMessageSpansBuffers(t *testing.T) {
	c := dial(t, echoListener(t))
	msg := make([]byte, 1<<20+7)
	rand.New(rand.NewSource(1)).Read(msg)
	roundTrip(t, c, msg)
}

func TestThousandConcurrentConns(t *testing.T) {
	addr := echoListener(t)
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := 0; i < 1000; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs <- echoOnce(addr, []byte(fmt.Sprintf("conn %04d says %s", i, strings.Repeat("x", i))))
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func echoOnce(addr string, msg []byte) error {
	c, err := xio.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Write(msg); err != nil {
		return err
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if !bytes.Equal(got, msg) {
		return fmt.Errorf("got %q, want %q", got, msg)
	}
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() && errors.Is(err, os.ErrDeadlineExceeded)
}

func TestReadDeadline(t *testing.T) {
	c := dial(t, echoListener(t))
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := c.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("read past deadline: %v, want a timeout", err)
	}
	// Moving the deadline to the past wakes a reader already blocked.
	c.SetReadDeadline(time.Time{})
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		errc <- err
	}()
	c.SetReadDeadline(time.Now())
	if err := <-errc; !isTimeout(err) {
		t.Fatalf("blocked read after deadline moved: %v, want a timeout", err)
	}
	// With no deadline the conn works again.
	c.SetDeadline(time.Time{})
	roundTrip(t, c, []byte("still alive"))
}

// ReadContext and WriteContext give up with the context's error when it
// ends, waking a blocked reader or writer, and leave the conn usable.
func TestReadWriteContext(t *testing.T) {
	_, c, srv := connectedPair(t)
	xc := c.(*xio.Conn)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := xc.ReadContext(ctx, make([]byte, 1))
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("blocked read after its context ended: %v, want context.Canceled", err)
	}
	// A writer waiting for window: the peer does not read.
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	n, err := xc.WriteContext(ctx, make([]byte, 1<<20))
	if !errors.Is(err, context.DeadlineExceeded) || n != 256*1024 {
		t.Fatalf("write past its context: n=%d err=%v; want the 256 KiB window, then context.DeadlineExceeded", n, err)
	}
	if _, err := io.ReadFull(srv, make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	if n, err := xc.ReadContext(context.Background(), nil); n != 0 || err != nil {
		t.Fatalf("empty read on a live conn: %d, %v", n, err)
	}
}

// A writer whose peer does not read blocks once the window is in flight;
// nothing is dropped, and it resumes as soon as the peer reads.
func TestWriterBlocksOnFullWindowThenResumes(t *testing.T) {
	_, c, srv := connectedPair(t)

	msg := make([]byte, 1<<20)
	rand.New(rand.NewSource(2)).Read(msg)
	c.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
	n, err := c.Write(msg)
	if !isTimeout(err) || n != 256*1024 {
		t.Fatalf("write to a peer that does not read: n=%d err=%v; want the 256 KiB window, then a timeout", n, err)
	}
	c.SetWriteDeadline(time.Time{})
	done := make(chan error, 1)
	go func() {
		_, err := c.Write(msg[n:])
		done <- err
	}()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(srv, got); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatal("bytes lost or reordered under back-pressure")
	}
}

func TestCloseFromEitherSide(t *testing.T) {
	addr := uniqueAddr(t)
	ln, err := xio.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, dialerCloses := range []bool{true, false} {
		c := dial(t, addr)
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		closer, peer := s, c
		if dialerCloses {
			closer, peer = c, s
		}
		closer.Write([]byte("bye"))
		closer.Close()
		got, err := io.ReadAll(peer)
		if err != nil || string(got) != "bye" {
			t.Fatalf("peer read %q, %v; want \"bye\" then EOF", got, err)
		}
		if _, err := peer.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
			t.Fatalf("write to a closed peer: %v, want EPIPE", err)
		}
		if _, err := closer.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read after own Close: %v, want net.ErrClosed", err)
		}
		peer.Close()
	}
}

func TestDialNothingIsRefused(t *testing.T) {
	_, err := xio.Dial("127.0.0.1:1")
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial to nothing: %v, want ECONNREFUSED", err)
	}
}

func TestNoManagerSaysSo(t *testing.T) {
	if noManagerErr == nil || !errors.Is(noManagerErr, xio.ErrNoManager) ||
		!strings.Contains(noManagerErr.Error(), "is the onvm manager running? file-prefix xio-none-") {
		t.Fatalf("attach without a manager: %v", noManagerErr)
	}
}

func TestListenTwiceIsAddrInUse(t *testing.T) {
	addr := echoListener(t)
	if _, err := xio.Listen(addr); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("second listen: %v, want EADDRINUSE", err)
	}
}

func TestClosedListenerResetsPendingConns(t *testing.T) {
	addr := uniqueAddr(t)
	ln, err := xio.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, addr)
	c.Write([]byte("never accepted"))
	// Wait until the SYN reached the listener, then close it unaccepted.
	waitFor(t, func() bool { return pendingAccepts(ln) > 0 })
	ln.Close()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read on a conn its listener dropped: %v, want ECONNRESET", err)
	}
	if _, err := xio.Dial(addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial after listener closed: %v, want ECONNREFUSED", err)
	}
}

func pendingAccepts(ln net.Listener) int { return xio.PendingForTest(ln) }

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("condition not reached in 5s")
}

func TestPacketConn(t *testing.T) {
	a, err := xio.ListenPacket("pfcp-a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := xio.ListenPacket("pfcp-b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := 0; i < 100; i++ {
		if _, err := a.WriteTo([]byte(fmt.Sprintf("dgram %d", i)), xio.Addr("pfcp-b")); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 64)
	for i := 0; i < 100; i++ {
		n, from, err := b.ReadFrom(buf)
		if err != nil || from.String() != "pfcp-a" || string(buf[:n]) != fmt.Sprintf("dgram %d", i) {
			t.Fatalf("datagram %d: %q from %v, %v", i, buf[:n], from, err)
		}
	}
	if _, err := a.WriteTo([]byte("x"), xio.Addr("nobody")); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("datagram to nobody: %v, want ECONNREFUSED", err)
	}
	if _, err := a.WriteTo(make([]byte, 9000), xio.Addr("pfcp-b")); !errors.Is(err, syscall.EMSGSIZE) {
		t.Fatalf("oversized datagram: %v, want EMSGSIZE", err)
	}
	b.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, _, err := b.ReadFrom(buf); !isTimeout(err) {
		t.Fatalf("ReadFrom past deadline: %v", err)
	}
}

// A peer NF killed with SIGKILL: reads on its conns fail within 1 s, and the
// manager takes back the buffers it held and those queued to it.
func TestPeerKilledResetsConnsAndBuffersReturn(t *testing.T) {
	base := settledPool(t)
	addr := uniqueAddr(t)
	peer, err := xioproc.Start("peer", "XIO_PEER_ADDR="+addr, "XIO_PEER_HOLD=40")
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, addr)
	roundTrip(t, c, []byte("ping"))
	// Stop the peer so what we send next stays queued in its ring.
	peer.Cmd.Process.Signal(syscall.SIGSTOP)
	// SIGSTOP takes effect when the peer next enters the kernel; on a busy
	// host it could still echo what we write unless we wait for it.
	waitFor(t, func() bool { return processStopped(peer.Cmd.Process.Pid) })
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write(make([]byte, 100000))
	if inUse, _, _ := xio.PoolInUse(); inUse < base+40+12 {
		t.Fatalf("pool in use %d; want the peer's 40 held plus 13 queued over base %d", inUse, base)
	}
	peer.Kill()

	c.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read from a killed peer: %v, want ECONNRESET within 1s", err)
	}
	waitFor(t, func() bool { n, _, _ := xio.PoolInUse(); return n == base })
	if _, err := xio.Dial(addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial to a dead peer's address: %v, want ECONNREFUSED", err)
	}
}

// An NF restarted right after it was killed binds its address again at
// once, before the manager's liveness scan has cleaned up after it.
func TestRebindAfterKillIsImmediate(t *testing.T) {
	addr := uniqueAddr(t)
	peer, err := xioproc.Start("peer", "XIO_PEER_ADDR="+addr)
	if err != nil {
		t.Fatal(err)
	}
	peer.Kill()
	ln, err := xio.Listen(addr)
	if err != nil {
		t.Fatalf("listen on a killed NF's address: %v", err)
	}
	ln.Close()
}

// processStopped reports whether pid is in state T (stopped by a signal).
func processStopped(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'T'
}

// TestSmallReadsAcrossChunks: a reader taking a few bytes at a time gets
// every byte in order, across the received chunks (each recycled once read).
func TestSmallReadsAcrossChunks(t *testing.T) {
	_, c, s := connectedPair(t)
	msg := make([]byte, 20000)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	go func() {
		for i := 0; i < len(msg); i += 1100 { // one pooled chunk per write
			s.Write(msg[i:min(i+1100, len(msg))])
		}
	}()
	got := make([]byte, 0, len(msg))
	buf := make([]byte, 7)
	for len(got) < len(msg) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != string(msg) {
		t.Fatal("bytes read a few at a time differ from those written")
	}
}

// TestWakeupNotLostAsPollerSleeps: a message that arrives just as the
// poller has found its ring empty and decided to sleep (after it told
// senders so, before it waits on the doorbell) is served at once: the
// sender's ring makes the wait return, not the sleep's timeout.
func TestWakeupNotLostAsPollerSleeps(t *testing.T) {
	_, c, s := connectedPair(t)
	roundTripPair(t, c, s, []byte("warm"))
	xio.SetSleepForTest(time.Minute) // a lost wake-up would wait this long
	defer xio.SetSleepForTest(500 * time.Millisecond)
	xio.ArmSleepParkForTest()
	defer xio.ReleaseSleepForTest()
	for waited := 0; !xio.SleepParkedForTest(); waited++ { // the poller goes idle and parks at the futex
		if waited == 10000 {
			t.Fatal("the poller never went to sleep")
		}
		time.Sleep(time.Millisecond)
	}
	// Counted from here: a sleep begun before the long bound was set may
	// have timed out meanwhile; the parked one has not begun to wait.
	timeouts := xio.SleepTimeoutsForTest()
	if _, err := c.Write([]byte("now")); err != nil {
		t.Fatal(err)
	}
	xio.ReleaseSleepForTest()
	got := make([]byte, 3)
	if _, err := io.ReadFull(s, got); err != nil || string(got) != "now" {
		t.Fatalf("read %q, %v", got, err)
	}
	if n := xio.SleepTimeoutsForTest() - timeouts; n != 0 {
		t.Fatalf("the message was served after %d doorbell sleeps timed out: its wake-up was lost", n)
	}
}

// TestPollerStopsSpinningWhenGapsAreLong: messages far apart (here 5 ms,
// a hundred budgets) teach the poller that spinning does not pay, so an
// NF with sporadic traffic sleeps at once instead of spinning each time.
func TestPollerStopsSpinningWhenGapsAreLong(t *testing.T) {
	_, c, s := connectedPair(t)
	for i := 0; i < 12; i++ {
		time.Sleep(5 * time.Millisecond)
		roundTripPair(t, c, s, []byte("sporadic"))
	}
	time.Sleep(5 * time.Millisecond)
	if l := xio.SpinLimitForTest(); l != 0 {
		t.Fatalf("after 12 messages 5 ms apart the poller still spins %v per idle period", l)
	}
}

// roundTripPair sends msg on c and reads it on s.
func roundTripPair(t *testing.T, c, s net.Conn, msg []byte) {
	t.Helper()
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(s, got); err != nil || string(got) != string(msg) {
		t.Fatalf("read %q, %v", got, err)
	}
}
