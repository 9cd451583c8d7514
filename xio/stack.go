package xio

/*
#include "stack.h"
*/
import "C"

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// batchMax is how many messages one poll takes from the rx ring.
const batchMax = 64

// pollSleepMS bounds one doorbell sleep; shutdown and senders wake it sooner.
const pollSleepMS = 500

// contendedYield is how long a sched_yield may take before the poller
// concludes the core is contended and stops spinning.
const contendedYield = 100 * time.Microsecond

// clockEvery is how many empty polls pass between two reads of the clock
// while the poller spins.
const clockEvery = 8

// yieldEvery is how many empty polls a spinning poller makes between two
// offers of its core to the kernel (a multiple of clockEvery). Stop 17,
// one binary, every 8, 64 and 512 polls (two runs each; bench sbi
// --transport xio --concurrency 1, then bench registration --ues 100
// --concurrency 1 --sbi xio): SBI round trip p50 13.3/13.6, 9.0/8.4,
// 8.1/8.2 µs, p99 39/49, 54/49, 125/72 µs; lone registration p50
// 0.89/0.71, 0.84/0.81, 0.96/0.90 ms. Every 8 the yields switched to
// another thread 8 times per round trip; every 512 a peer woken onto the
// spinner's core waited out up to a third of the budget. Also tried in
// stop 17: a poller that stops spinning while its process is being
// preempted (getrusage). The lone registration gained as much, but
// back-to-back round trips then slept each time (p50 26-33 µs): yields,
// and two spinners on two cores, count as preemptions too.
const yieldEvery = 8 * clockEvery

// msgHeader is the size of struct onvm_msg before its payload (pinned in
// onvm_shm.h, checked against cgo's view by onvm/internal/shmlayout).
const msgHeader = C.ONVM_MSG_HEADER

// msgPayload is what one data buffer carries.
const msgPayload = C.ONVM_MSG_PAYLOAD

// stack is this process's attachment: its NF slot and the Go objects the
// poller demultiplexes messages to (keyed by shared table index).
type stack struct {
	cfg  Config
	self uint32

	mu        sync.Mutex
	conns     map[uint32]*Conn // by connKey
	listeners map[uint32]*Listener
	packets   map[uint32]*PacketConn

	spin spinPolicy // the poller's alone
	// ring is the rx ring's consumer token: taking from the ring,
	// dispatching and freeing the batch happen only under it, so messages
	// of one conn are dispatched in ring order whoever takes them.
	ring consumerToken
	// awaiting counts the goroutines waiting for a reply (reply.go).
	awaiting atomic.Int32
	// replyPolls counts the waits for a reply that polled the ring.
	replyPolls atomic.Uint64
	// The doorbell sleep's bound (ms) and the spin policy's last
	// verdict: tests set and read them.
	sleepMS   atomic.Int32
	spinLimit atomic.Int64

	// bell is the eventfd doorbell the poller parks on, nil when it
	// sleeps on the futex (bellErr: why the eventfd was not had).
	bell    *eventfdBell
	bellErr error
	// sleepTimeouts counts eventfd parks that ran out their time (the
	// futex sleep counts its own in C).
	sleepTimeouts atomic.Uint64

	// shm is the shared memory the per-request operations work on in Go
	// (shmops.go), without a cgo call.
	shm *shmView
	// The batch being dispatched, under the consumer token: the buffers
	// (checked to be ours), checked private copies of their headers, and
	// the raw ring entries they came from.
	batch [batchMax]*C.struct_onvm_msg
	hdrs  [batchMax]C.struct_onvm_msg
	raw   [batchMax]uintptr
}

func newStack(cfg Config) *stack {
	s := &stack{
		cfg:       cfg,
		self:      uint32(C.xio_self()),
		conns:     map[uint32]*Conn{},
		listeners: map[uint32]*Listener{},
		packets:   map[uint32]*PacketConn{},
		spin:      newSpinPolicy(cfg.Spin),
		ring:      newConsumerToken(),
		shm:       newShmView(),
	}
	s.sleepMS.Store(pollSleepMS)
	s.drainStale()
	return s
}

// drainStale frees what a previous holder of our slot left in its ring
// (the manager drains it when it reaps; this is belt and braces), before
// the poller starts.
func (s *stack) drainStale() {
	for n := s.takeBatch(false); n > 0; n = s.takeBatch(false) {
		for _, m := range s.batch[:n] {
			s.shm.free(m)
		}
	}
}

// poll is the process's poller: it drains the rx ring and hands every
// message to its Go owner, copying the payload so buffers go back to the
// pool at once. While traffic flows it spins in Go, yielding to the
// goroutines it just woke so they run on this P without a thread wake-up
// (~30 µs each on this VM); once the ring is empty it spins for as long as
// s.spin says that pays (spin.go), then sleeps on the doorbell (blocked in
// C on the futex, or parked on an eventfd: doorbell.go), which a sender
// rings only when it sees us asleep. Taking, dispatching and freeing make
// no cgo call (shmops.go). It holds the ring's
// consumer token except while it sleeps: meanwhile a goroutine waiting for
// a reply may take the token and drain the ring itself (reply.go).
func (s *stack) poll() {
	s.ring.acquire()
	for {
		n := s.pollIdle()
		s.drainBatch(n)
	}
}

// drainBatch dispatches the n messages just taken into s.batch and frees
// their buffers (consumer token held).
func (s *stack) drainBatch(n int) {
	for i := 0; i < n; i++ {
		s.dispatch(s.batch[i], &s.hdrs[i])
	}
	for i := 0; i < n; i++ {
		s.shm.free(s.batch[i])
		s.batch[i] = nil
	}
}

// takeBatch takes up to batchMax messages into s.batch without blocking
// (consumer token held); yield gives up the core once if there are none:
// a poller that never yields can starve, on two shared cores, the very
// thread it waits for; one that always yields loses a whole time slice to
// any busy process on every empty poll.
func (s *stack) takeBatch(yield bool) int {
	n := s.shm.take(s.batch[:], s.hdrs[:], s.raw[:])
	if n == 0 && yield {
		schedYield()
	}
	return n
}

// pollIdle returns the next messages of the rx ring (at least one),
// spinning and then sleeping while there are none. It is called and
// returns with the consumer token held.
//
// The clock is read once when the ring runs empty and then every
// clockEvery empty polls, not per poll or per message: a read costs ~45 ns
// here (vdso), more than an empty poll, and was 5 % of all CPU of an SBI
// benchmark.
func (s *stack) pollIdle() int {
	if n := s.takeBatch(false); n > 0 {
		return n
	}
	idleSince := time.Now()
	limit := s.spin.limit()
	s.spinLimit.Store(int64(limit))
	lastCheck := idleSince
	for idle := 1; ; idle++ {
		if n := s.takeBatch(false); n > 0 {
			s.spin.spun()
			return n
		}
		if idle%clockEvery != 0 && limit > 0 {
			runtime.Gosched()
			continue
		}
		// Offer the core to the OS once every yieldEvery empty polls:
		// runtime.Gosched alone never does (the poller is this
		// process's only runnable goroutine), so a spinning poller kept
		// its core for the whole budget while the peer it waits for,
		// woken onto the same core, waited for it (perf sched, paging
		// at 64: the AMF woken 1.6 ms in first ran at 3.3 ms). Not
		// before a sleep (limit 0 or spent): the sleep gives the core up.
		if spinYield && limit > 0 && idle%yieldEvery == 0 {
			schedYield()
		}
		// Yields that took long mean other threads want this core:
		// stop spinning and sleep, so a wake-up (which the kernel
		// favours) rather than our turn in the queue brings us back.
		now := time.Now()
		if now.Sub(lastCheck) < clockEvery*contendedYield && now.Sub(idleSince) < limit {
			lastCheck = now
			runtime.Gosched()
			continue
		}
		return s.sleep(idleSince)
	}
}

// sleep waits on the doorbell until a message comes, recording in the
// spin policy how long the ring stayed empty (once per idle period). It
// gives the consumer token up meanwhile, and first lets the goroutines the
// last batch woke run on this thread (a handler's request, a client's
// reply): left queued on this P while its thread blocks in the futex, they
// would wait for another thread to be woken to steal them, a second
// wake-up (~30 µs here) per message.
func (s *stack) sleep(idleSince time.Time) int {
	if s.bell != nil {
		return s.sleepEventfd(idleSince)
	}
	s.ring.release()
	runtime.Gosched()
	for {
		ms := s.sleepMS.Load()
		ready := C.xio_sleep(C.int(ms)) != 0
		s.ring.acquire()
		if n := s.takeBatch(false); n > 0 {
			s.spin.slept(time.Since(idleSince))
			return n
		}
		if !ready && time.Since(idleSince) >= time.Duration(ms)*time.Millisecond {
			// Timed out idle: the gap is longer than any budget.
			s.spin.slept(time.Duration(ms) * time.Millisecond)
		}
		s.ring.release()
	}
}

// payload copies m's payload out of shared memory. h is the private copy
// of m's header that take checked (len fits the buffer); the check is repeated
// here so that no path can hand GoBytes a length past the buffer.
func payload(m, h *C.struct_onvm_msg) []byte {
	n := uint32(h.len)
	if n > msgPayload {
		return nil
	}
	return C.GoBytes(unsafe.Add(unsafe.Pointer(m), msgHeader), C.int(n))
}

// dispatch hands one message to its Go owner. It reads the header only
// from h (checked by take), the payload from m.
func (s *stack) dispatch(m, h *C.struct_onvm_msg) {
	switch h._type {
	case C.ONVM_MSG_SYN:
		s.onSYN(uint32(h.svc), uint32(h.conn), uint32(h.gen))
	case C.ONVM_MSG_DATA:
		if c := s.conn(uint32(h.conn), uint32(h.side), uint32(h.gen)); c != nil {
			if n := uint32(h.len); n > 0 && n <= msgPayload {
				c.deliver(copyPayload(unsafe.Add(unsafe.Pointer(m), msgHeader), int(n)))
			}
		}
	case C.ONVM_MSG_FIN, C.ONVM_MSG_RST:
		s.onClose(uint32(h.conn), uint32(h.side), uint32(h.gen), h._type == C.ONVM_MSG_RST)
	case C.ONVM_MSG_DGRAM:
		s.onDatagram(m, h)
	}
}

// onClose passes a FIN or RST to its conn. One for a conn we do not know
// closes our side in the table: we closed it already (a no-op), or the
// dialer died between opening the conn and sending its SYN, and nobody else
// would ever free the slot.
func (s *stack) onClose(idx, side, gen uint32, reset bool) {
	if c := s.conn(idx, side, gen); c != nil {
		c.peerClosed(reset)
		return
	}
	C.xio_close(C.uint32_t(idx), C.uint32_t(gen), C.uint32_t(side), 0)
}

// connKey names one side of a conn: a process may hold both sides.
func connKey(idx, side uint32) uint32 { return idx<<1 | side }

func (s *stack) conn(idx, side, gen uint32) *Conn {
	s.mu.Lock()
	c := s.conns[connKey(idx, side)]
	s.mu.Unlock()
	if c == nil || c.gen != gen {
		return nil
	}
	return c
}

// onSYN registers the new conn before any of its data can be dispatched
// (same ring, later), then queues it for Accept; with no listener it resets.
func (s *stack) onSYN(svc, idx, gen uint32) {
	s.mu.Lock()
	l := s.listeners[svc]
	var c *Conn
	if l != nil {
		c = newConn(s, idx, gen, 1, l.addr, Addr(peerName(idx)))
		s.conns[connKey(idx, 1)] = c
	}
	s.mu.Unlock()
	if l == nil || !l.push(c) {
		if c != nil {
			s.forget(c)
		}
		C.xio_close(C.uint32_t(idx), C.uint32_t(gen), 1, 1)
	}
}

func (s *stack) onDatagram(m, h *C.struct_onvm_msg) {
	s.mu.Lock()
	p := s.packets[uint32(h.svc)]
	s.mu.Unlock()
	if p == nil || p.gen != uint32(h.gen) {
		return // unbound meanwhile: the socket's window went with it
	}
	data := payload(m, h)
	alen := int(h.addrlen)
	if alen > len(data) {
		s.shm.dgramAck(uint32(h.svc), uint32(h.gen), uint32(h.len)) // keep the window whole
		return
	}
	p.deliver(Addr(data[:alen]), data[alen:], uint32(len(data)))
}

func (s *stack) forget(c *Conn) {
	s.mu.Lock()
	if k := connKey(c.idx, c.side); s.conns[k] == c {
		delete(s.conns, k)
	}
	s.mu.Unlock()
}

// spinYield: a spinning poller offers its core to the OS every yieldEvery
// empty polls (pollIdle); $L25GC_XIO_SPIN_YIELD=0 turns it off for an A/B
// run of one binary.
var spinYield = os.Getenv("L25GC_XIO_SPIN_YIELD") != "0"
