package xio

/*
#include "stack.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// How the poller sleeps once its ring stays empty (Config.Doorbell).
//
// DoorbellFutex blocks the poller's thread in a C call on the slot's futex.
// Go then counts the thread as in a system call; when a sender wakes it,
// the poller hands each message to a goroutine while its own P may have
// been retaken, and the scheduler wakes yet another thread to run that
// goroutine: ~1.7 thread switches per SBI call on the server side beyond
// the one wake-up needed (issue 15).
//
// DoorbellEventfd parks the poller goroutine in Go's netpoller on an
// eventfd instead: no thread sits in C, and the thread the netpoller wakes
// runs the poller and then, on the same P, the goroutine it handed the
// message to. Senders write the eventfd (a copy they take with
// pidfd_getfd, onvm_ops.h onvm_wake) only when the poller said it is going
// to park, so a busy NF costs them no system call, as with the futex.
//
// Why pidfd_getfd rather than passing the eventfd over a unix socket
// (SCM_RIGHTS): the slot already publishes the receiver's pid and attach
// generation, so a sender needs no socket, no serving goroutine and no
// new protocol, and a peer that restarts is noticed by its new generation
// (the copy is refreshed under the same fd number, onvm_efd_fetch). The
// manager, which sends the RSTs of a dead NF's peers, uses the same path.
// The price: pidfd_getfd needs Linux 5.6+ and ptrace rights over the
// receiver (root, as DPDK's NFs run here, or the same user without Yama);
// attaching checks it on our own eventfd and keeps the futex otherwise.
const (
	DoorbellFutex   = "futex"
	DoorbellEventfd = "eventfd"
)

// defaultDoorbell is Config.Doorbell's default: the futex, because the
// eventfd measured worse on the 2-core VM (bench sbi at concurrency 1,
// futex vs eventfd alternated, loaded machine: 2.9-5.4 context switches
// per request instead of 1.1-3.3 back to back, 14-19 instead of 10-12
// with a 2 ms gap, p50 no better). The cause is sysmon, not the doorbell:
// with the poller parked in the netpoller every P goes idle, so sysmon
// sleeps until the next system call; the first cgo call after a wake-up
// (taking the batch, sending the answer) wakes it, and it then ticks every
// 20 µs for as long as the NF works, a thread switch each. A futex sleeper
// keeps its P in a system call, sysmon never waits and backs off to 10 ms.
// Since taking, sending and waking run in Go (shmops.go) no cgo call is
// left on the eventfd's path, and its server-side switches fell to the
// futex's (bench sbi --gap 2ms, loaded machine, alternated: 3.9-4.3 per
// request against the futex's 4.3-5.1, from 5.5-6.1 before), but neither
// its p50 (197-206 µs against 141-183) nor its client side (8.8-9.0
// switches against 6.6-7.0) is better yet, so the futex stays the default.
// A likely cause, not yet measured by itself:
// a poller parked in the netpoller hands each message to a goroutine whose
// P the runtime wakes another thread for (wakep), which a thread that
// leaves a futex sleep holding its P avoids.
const defaultDoorbell = DoorbellFutex

// doorbellFromEnv is Config.Doorbell's default: $L25GC_XIO_DOORBELL if set
// (an A/B knob), else doorbellFor this process's GOMAXPROCS.
func doorbellFromEnv() string {
	if v := os.Getenv("L25GC_XIO_DOORBELL"); v != "" {
		return v
	}
	return doorbellFor(runtime.GOMAXPROCS(0))
}

// doorbellFor is the default doorbell of a process with procs Ps: the
// eventfd with one P (config tuning.procs, the NFs' default), because a
// futex sleeper holds the process's only P in its cgo call, and nothing
// else of the NF runs (its N2 reader, timers, handlers) until sysmon,
// backed off to up to 10 ms when idle, retakes that P: lone registrations
// with one P and the futex had a p99 of 14-17 ms against 1.7-2.2 ms with
// the eventfd (issue 15). With several Ps, defaultDoorbell.
func doorbellFor(procs int) string {
	if procs == 1 {
		return DoorbellEventfd
	}
	return defaultDoorbell
}

// checkDoorbell rejects a doorbell name that is neither kind.
func checkDoorbell(name string) error {
	switch name {
	case DoorbellFutex, DoorbellEventfd:
		return nil
	}
	return fmt.Errorf("xio: doorbell %q: want %q or %q", name, DoorbellEventfd, DoorbellFutex)
}

// eventfdBell is the poller's eventfd doorbell, registered with Go's
// netpoller (non-blocking, so os.NewFile makes it pollable).
type eventfdBell struct {
	f   *os.File // kept for the process's life: the fd number is published
	raw syscall.RawConn
	buf [8]byte
	// sleeping is our slot's onvm_nf.sleeping in shared memory, cleared
	// from Go on wake-up (disarm) without a cgo call.
	sleeping *uint32
}

// newEventfdBell creates the eventfd and publishes it as this NF's
// doorbell (v's senders' and own wake-ups then write it). An error leaves
// the futex doorbell in place.
func newEventfdBell(v *shmView) (*eventfdBell, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("xio: eventfd doorbell: %w", err)
	}
	f := os.NewFile(uintptr(fd), "xio-doorbell")
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("xio: eventfd doorbell: %w", err)
	}
	if r := C.xio_doorbell_eventfd(C.int(fd)); r < 0 {
		f.Close()
		return nil, fmt.Errorf("xio: eventfd doorbell: pidfd_getfd: %w", syscall.Errno(-r))
	}
	v.eventfd, v.ownEfd = true, fd
	return &eventfdBell{f: f, raw: raw, sleeping: v.sleepingWord(v.me)}, nil
}

// wait parks the calling goroutine until the eventfd is written or d
// passes; false if it timed out. It reads the counter first, so a write
// that came since the last wait returns at once (a spurious wake-up the
// caller's loop absorbs).
func (b *eventfdBell) wait(d time.Duration) bool {
	if err := b.f.SetReadDeadline(time.Now().Add(d)); err != nil {
		return true // cannot park bounded: let the caller poll again
	}
	got := false
	err := b.raw.Read(func(fd uintptr) bool {
		// A raw read: the fd never blocks, and a system call through
		// entersyscall would wake sysmon, asleep while all Ps are idle
		// (it then ticks every 20 µs while we work: a thread switch
		// each).
		_, _, errno := syscall.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&b.buf[0])), uintptr(len(b.buf)))
		if errno == unix.EAGAIN {
			return false
		}
		got = errno == 0
		return true
	})
	// A read error other than EAGAIN (none is expected of an eventfd)
	// counts as a wake-up: the caller looks at the ring and parks again.
	return got || !errors.Is(err, os.ErrDeadlineExceeded)
}

// sleepEventfd is sleep for the eventfd doorbell: the poller announces it
// is about to park (check-after-set: a sender that enqueued after the last
// look at the ring sees the announcement and writes the eventfd), then
// parks in the netpoller, with the consumer token given up meanwhile.
func (s *stack) sleepEventfd(idleSince time.Time) int {
	s.ring.release()
	runtime.Gosched()
	for {
		ms := s.sleepMS.Load()
		bound := time.Duration(ms) * time.Millisecond
		woke := s.shm.efdArm() || s.bell.wait(bound)
		atomic.StoreUint32(s.bell.sleeping, 0) // disarm: senders stop writing
		if !woke {
			s.sleepTimeouts.Add(1)
		}
		s.ring.acquire()
		if n := s.takeBatch(false); n > 0 {
			s.spin.slept(time.Since(idleSince))
			return n
		}
		if !woke {
			s.spin.slept(bound) // timed out idle: longer than any budget
		}
		s.ring.release()
	}
}
