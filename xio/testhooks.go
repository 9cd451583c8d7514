//go:build l25gc_testhooks

package xio

/*
#cgo CFLAGS: -DL25GC_TESTHOOKS
#include <stdlib.h>
#include "stack.h"
#include "testhooks.h"
*/
import "C"

import (
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The functions below are for tests only (cgo cannot be used in _test.go
// files): they put the stack into states that a crash, a race or a hostile
// peer process would. This file, testhooks.c and the hooks in stack.c build
// only with -tags l25gc_testhooks (make unit sets it); a production build
// (go build ./cmd/l25gc) carries none of them.

// HoldBuffersForTest takes n shared buffers and never gives them back, as a
// process killed while filling buffers would. Only tests of the manager's
// reclaim use it.
func HoldBuffersForTest(n int) int {
	if _, err := defaultStack(); err != nil {
		return 0
	}
	return int(C.xio_test_hold_buffers(C.int(n)))
}

// PendingForTest says how many connections wait in ln's accept queue.
func PendingForTest(ln interface{}) int {
	l, ok := ln.(*Listener)
	if !ok {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.q)
}

// ArmSendRaceForTest makes the next Write, before its first chunk, close
// the conn's other side in the shared table (as a peer's Close would) and
// then wait, at most 300 ms, until ReleaseSendForTest.
func ArmSendRaceForTest() { C.xio_test_arm_send_race() }

// SendParkedForTest says whether a Write waits in the armed race.
func SendParkedForTest() bool { return C.xio_test_send_parked() != 0 }

// ReleaseSendForTest lets the parked Write go on.
func ReleaseSendForTest() { C.xio_test_release_send() }

// ReuseSlotNextForTest makes this process's next Dial try c's conn slot
// first.
func ReuseSlotNextForTest(c net.Conn) {
	if xc, ok := c.(*Conn); ok {
		C.xio_test_set_conn_hint(C.uint32_t(xc.idx))
	}
}

// HoldTableLockForTest takes the shared table lock the way attaching does
// and never releases it.
func HoldTableLockForTest() error {
	if r := C.xio_test_hold_lock(); r < 0 {
		return syscall.Errno(-r)
	}
	return nil
}

// SetLockTimeoutForTest changes how long this process waits for a table
// lock held by a live process.
func SetLockTimeoutForTest(d time.Duration) {
	C.xio_test_set_lock_timeout(C.uint32_t(d / time.Millisecond))
}

// Forged ring entries (ForgeForTest), named in testhooks.h.
const (
	ForgeHugeLen    = C.XIO_FORGE_HUGE_LEN   // DATA with len >= 2^31
	ForgeLongLen    = C.XIO_FORGE_LONG_LEN   // DATA with len one past a buffer's payload
	ForgeMisaligned = C.XIO_FORGE_MISALIGNED // pointer into the middle of a buffer
	ForgeOutside    = C.XIO_FORGE_OUTSIDE    // pointer outside the shared buffers
	ForgeAddrLen    = C.XIO_FORGE_ADDRLEN    // datagram whose address is longer than it
	ForgeNotHanded  = C.XIO_FORGE_NOT_HANDED // a free buffer nobody handed over
	ForgeBadType    = C.XIO_FORGE_BAD_TYPE   // unknown message type
	ForgeCtlData    = C.XIO_FORGE_CTL_DATA   // DATA in a header-only control buffer
)

// slotOf is the NF slot serving stream address addr, or -1.
func slotOf(addr string, kind C.uint32_t) int {
	caddr := C.CString(addr)
	defer C.free(unsafe.Pointer(caddr))
	return int(C.xio_test_slot_of(caddr, kind))
}

// ForgeForTest enqueues a forged entry of kind into the ring of the NF
// serving stream address addr, aimed at conn c (which may be nil) as seen
// from that NF.
func ForgeForTest(addr string, kind int, c net.Conn) error {
	slot := slotOf(addr, C.ONVM_SVC_STREAM)
	if slot < 0 {
		return syscall.ENOENT
	}
	var idx, gen uint32
	if xc, ok := c.(*Conn); ok {
		idx, gen = xc.idx, xc.gen
	}
	if r := C.xio_test_forge(C.uint32_t(slot), C.int(kind), C.uint32_t(idx), C.uint32_t(gen)); r < 0 {
		return syscall.Errno(-r)
	}
	return nil
}

// ReapsPendingForTest is how many NF slots of killed processes the
// manager has not finished reaping: their buffers still count as in use.
func ReapsPendingForTest() int { return int(C.xio_test_reaps_pending()) }

// BadMessagesForTest is how many malformed or foreign ring entries the NF
// serving stream address addr has dropped.
func BadMessagesForTest(addr string) uint64 {
	slot := slotOf(addr, C.ONVM_SVC_STREAM)
	if slot < 0 {
		return 0
	}
	return uint64(C.xio_test_rx_bad(C.uint32_t(slot)))
}

// PausePollerForTest makes this process's poller take nothing from its
// ring (on) or go on (off).
func PausePollerForTest(on bool) {
	v := 0
	if on {
		v = 1
	}
	C.xio_test_pause_take(C.int(v))
}

// RingCountForTest is how many entries wait in this process's ring.
func RingCountForTest() int { return int(C.xio_test_ring_count()) }

// StealFromRingForTest dequeues up to n entries of this process's ring and
// drops them, as a poller killed between dequeuing and taking them would.
func StealFromRingForTest(n int) int { return int(C.xio_test_steal(C.uint(n))) }

// DeliverToFreeSlotForTest delivers a control message to an NF slot no
// process holds; the delivery's error.
func DeliverToFreeSlotForTest() error {
	slot := C.xio_test_free_slot()
	if slot < 0 {
		return syscall.ENOENT
	}
	if r := C.xio_test_deliver_to(C.uint32_t(slot)); r < 0 {
		return syscall.Errno(-r)
	}
	return nil
}

// WedgeOwnRingForTest leaves this process's ring as a sender killed inside
// an enqueue would: head moved, tail never.
func WedgeOwnRingForTest() { C.xio_test_wedge_own_ring() }

// QuotaForTest is how many data buffers one NF may have queued.
func QuotaForTest() int { return int(C.xio_test_quota()) }

// HalfDeliverForTest hands a buffer to the NF serving stream address addr
// and stops before enqueueing it, as a sender killed inside a delivery.
func HalfDeliverForTest(addr string) error {
	slot := slotOf(addr, C.ONVM_SVC_STREAM)
	if slot < 0 {
		return syscall.ENOENT
	}
	if r := C.xio_test_half_deliver(C.uint32_t(slot)); r < 0 {
		return syscall.Errno(-r)
	}
	return nil
}

// HalfReapForTest leaves the NF serving stream address addr (dead, not
// yet reaped) as a manager killed inside its reap would: marked dead, its
// conns reset in the table, but no RST sent to their other sides.
func HalfReapForTest(addr string) error {
	slot := slotOf(addr, C.ONVM_SVC_STREAM)
	if slot < 0 {
		return syscall.ENOENT
	}
	if r := C.xio_test_half_reap(C.uint32_t(slot)); r < 0 {
		return syscall.Errno(-r)
	}
	return nil
}

// LeakAsManagerForTest leaves n control buffers taken by the running
// manager and one handed by it to the NF serving stream address addr but
// never enqueued, as a manager killed while sending RSTs would.
func LeakAsManagerForTest(addr string, n int) error {
	slot := slotOf(addr, C.ONVM_SVC_STREAM)
	if slot < 0 {
		return syscall.ENOENT
	}
	if r := C.xio_test_leak_as_manager(C.uint32_t(slot), C.int(n)); r != C.int(n+1) {
		return fmt.Errorf("took %d control buffers, want %d", int(r), n+1)
	}
	return nil
}

// QueuedForTest is how many counted buffers are queued to the NF serving
// stream address addr (its quota use).
func QueuedForTest(addr string) int {
	slot := slotOf(addr, C.ONVM_SVC_STREAM)
	if slot < 0 {
		return -1
	}
	return int(C.xio_test_queued(C.uint32_t(slot)))
}

// ArmRingOvertakeForTest makes the next delivery to this process's own
// ring be overtaken, once: between its wedge check's read of the ring's
// head and its read of the tail, another sender's whole delivery to the
// ring runs, as when the checking thread is preempted there.
func ArmRingOvertakeForTest() { C.xio_test_arm_overtake() }

// ArmSleepParkForTest holds the poller, the next time it goes to sleep,
// between telling senders it sleeps and waiting on its doorbell, until
// ReleaseSleepForTest (at most 2 s).
func ArmSleepParkForTest() { C.xio_test_arm_sleep_park() }

// SleepParkedForTest says whether the poller is held there.
func SleepParkedForTest() bool { return C.xio_test_sleep_parked() != 0 }

// ReleaseSleepForTest lets the held poller wait on its doorbell.
func ReleaseSleepForTest() { C.xio_test_release_sleep() }

// SleepTimeoutsForTest is how many doorbell sleeps of this process's
// poller ran out their time.
func SleepTimeoutsForTest() uint64 {
	return uint64(C.xio_sleep_timeouts()) + attached.sleepTimeouts.Load()
}

// SetSleepForTest sets how long one doorbell sleep lasts at most.
func SetSleepForTest(d time.Duration) { attached.sleepMS.Store(int32(d / time.Millisecond)) }

// SpinLimitForTest is how long the poller would spin if its ring ran
// empty now (its spin policy's verdict from the idle gaps so far).
func SpinLimitForTest() time.Duration { return time.Duration(attached.spinLimit.Load()) }

// handBackPark holds the next goroutine that ends its polling for a reply
// (ArmHandBackParkForTest): 0 idle, 1 armed, 2 parked, 3 released.
var handBackPark atomic.Int32

// handBackHook holds a goroutine that polled for its reply where its last
// look found the ring empty and senders ring again, before it gives the
// consumer token back: a message that arrives now must wake the poller.
// At most 2 s, so a test that never releases it does not hang.
func handBackHook() {
	if !handBackPark.CompareAndSwap(1, 2) {
		return
	}
	for i := 0; i < 20000 && handBackPark.Load() != 3; i++ {
		time.Sleep(100 * time.Microsecond)
	}
	handBackPark.Store(0)
}

// ArmHandBackParkForTest holds the next goroutine that stops polling for
// its reply there (handBackHook), until ReleaseHandBackForTest.
func ArmHandBackParkForTest() { handBackPark.Store(1) }

// HandBackParkedForTest says whether a goroutine is held there.
func HandBackParkedForTest() bool { return handBackPark.Load() == 2 }

// ReleaseHandBackForTest lets the held goroutine give the token back.
func ReleaseHandBackForTest() { handBackPark.CompareAndSwap(2, 3) }

// PollerAsleepForTest says whether no consumer holds the rx ring's token:
// the poller sleeps on its doorbell (or is about to), so a goroutine
// waiting for a reply would poll.
func PollerAsleepForTest() bool { return !attached.ring.held.Load() }

// ReplyPollingForTest says whether a ReadReply on c would poll for its
// reply (its conn's policy), false for a conn that is not X-IO's.
func ReplyPollingForTest(c net.Conn) bool {
	xc, ok := c.(*Conn)
	if !ok {
		return false
	}
	xc.rmu.Lock()
	defer xc.rmu.Unlock()
	return xc.reply.polls()
}

// AwaitingForTest is how many goroutines wait for a reply (ReadReply).
func AwaitingForTest() int { return int(attached.awaiting.Load()) }

// ReplyPollsForTest is how many waits for a reply have polled the ring.
func ReplyPollsForTest() uint64 { return attached.replyPolls.Load() }

// The Go data path's hooks (hooks_off.go): each reads the C hook of the
// same name, so one arming in testhooks.c holds C and Go alike.
func takePausedHook() bool {
	return atomic.LoadInt32((*int32)(unsafe.Pointer(&C.xio_take_paused))) != 0
}

func sendHook(c, gen, side uint32, chunk int) {
	if C.xio_send_hook != nil {
		C.xio_test_run_send_hook(C.uint32_t(c), C.uint32_t(gen), C.uint32_t(side), C.uint(chunk))
	}
}

func sleepHook() {
	if C.xio_sleep_hook != nil {
		C.xio_test_run_sleep_hook()
	}
}

func wedgeCheckHook(r *shmRing) {
	if C.xio_test_wedge_check_hook != nil {
		C.xio_test_run_wedge_check_hook(r.c)
	}
}
