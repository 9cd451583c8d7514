package xio

import (
	"context"
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"
)

// Inside a procedure an NF calls its peers one at a time, milliseconds
// apart, so its poller is asleep on the doorbell when a reply comes: the
// reply's sender pays a futex wake, the poller a thread wake-up (~30 µs on
// this VM), and the waiting goroutine a hand-off from the poller. The
// goroutine that just sent a request is running anyway: while the poller
// sleeps it takes the rx ring's consumer token and polls the ring itself
// for a bounded budget (Config.ReplySpin), with the doorbell quiet so the
// reply's sender makes no syscall. Messages for other conns it meets on the
// way are dispatched as the poller would. The budget is spent only on conns
// whose recent replies came within it (replyPolicy), so a conn to a slow
// peer parks at once; while the poller is awake (it holds the token) the
// goroutine parks as before and the poller hands it the reply. It is off
// by default (defaultReplySpin, attach.go says why).

// consumerToken serializes the rx ring's consumers (the poller and
// goroutines polling for their reply): one takes, dispatches and frees a
// batch at a time, so a conn's messages reach it in ring order.
type consumerToken struct {
	held atomic.Bool
	back chan struct{} // cap 1: signalled on every release
}

func newConsumerToken() consumerToken { return consumerToken{back: make(chan struct{}, 1)} }

func (t *consumerToken) tryAcquire() bool { return t.held.CompareAndSwap(false, true) }

// acquire waits for the token; the poller uses it after a wake-up, when a
// goroutine polling for its reply may hold the token for up to a budget.
func (t *consumerToken) acquire() {
	for !t.tryAcquire() {
		<-t.back
	}
}

// release gives the token up and wakes a waiting acquire (a stale signal
// left in the channel costs that acquire one extra look).
func (t *consumerToken) release() {
	t.held.Store(false)
	select {
	case t.back <- struct{}{}:
	default:
	}
}

// replyPolicy remembers, per conn, whether the last idleHistory replies
// came within the reply budget: a goroutine polls only while at least half
// did (the same rule as the poller's spinPolicy). It starts undecided and
// so polls until the conn's replies show whether that pays. Only the
// conn's reader touches it (under rmu).
type replyPolicy struct{ history uint8 }

func newReplyPolicy() replyPolicy { return replyPolicy{history: 0x55} }

func (p *replyPolicy) polls() bool { return bits.OnesCount8(p.history) >= idleHistory/2 }

// record notes a reply that came waited after the read began to wait.
func (p *replyPolicy) record(waited, budget time.Duration) {
	p.history <<= 1
	if waited <= budget {
		p.history |= 1
	}
}

// ReadReply is ReadContext for a reply to a request just written on c:
// while no reply is there and the poller sleeps, the calling goroutine
// polls the rx ring itself for up to the reply budget before it parks.
func (c *Conn) ReadReply(ctx context.Context, b []byte) (int, error) {
	return c.readWith(ctx, b, true)
}

// replyWait is one read's wait for a reply: when it began (zero: not yet).
type replyWait struct{ since time.Time }

// beginWait starts waiting (once per read) and polls for the reply if the
// budget and the conn's policy allow and the poller sleeps; true if it
// polled, so the caller looks at the conn again before parking.
//
// Only while at most maxPollingWaiters goroutines of the process wait for
// replies: a procedure's few calls in parallel, not a loaded NF, whose
// poller is awake anyway and where waiters taking turns at the ring (each
// re-arming the doorbell as it leaves) cost more wake-ups than they save
// (bench sbi at concurrency 32: 0.4-0.9 context switches per request
// instead of 0.1-0.15, a third fewer requests/s).
func (c *Conn) beginWait(w *replyWait) bool {
	if !w.since.IsZero() {
		return false
	}
	w.since = time.Now()
	waiting := c.st.awaiting.Add(1)
	budget := c.st.cfg.ReplySpin
	if budget <= 0 || waiting > maxPollingWaiters || !c.reply.polls() {
		return false
	}
	return c.st.pollForReply(c, w.since.Add(budget))
}

// maxPollingWaiters is how many goroutines may wait for replies at once
// for one of them to poll (beginWait).
const maxPollingWaiters = 4

// leaveWait ends a read's wait for a reply, however the read ended.
func (c *Conn) leaveWait(w *replyWait) {
	if !w.since.IsZero() {
		c.st.awaiting.Add(-1)
	}
}

// endWait records how long the read waited for its reply.
func (c *Conn) endWait(w *replyWait) {
	if !w.since.IsZero() && c.st.cfg.ReplySpin > 0 {
		c.reply.record(time.Since(w.since), c.st.cfg.ReplySpin)
	}
}

// readable says whether a read of c would not wait.
func (c *Conn) readable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.q) > 0 || c.eof || c.reset || c.closed
}

// pollForReply polls the rx ring until c is readable or until passes,
// dispatching whatever comes; false, without polling, if another consumer
// (the poller, awake) holds the token. Each empty poll yields the core
// once: on two cores the peer that is to answer may need this one.
func (s *stack) pollForReply(c *Conn, until time.Time) bool {
	polled := false
	for s.ring.tryAcquire() {
		if !polled {
			s.replyPolls.Add(1)
		}
		polled = true
		s.shm.bellQuiet()
		woke := s.pollRing(c, until)
		s.handBack()
		if !woke || c.readable() || time.Now().After(until) {
			break
		}
		// Messages for others woke goroutines on this P: let them run
		// on this thread (rather than wait for another to be woken to
		// steal them), with the token free meanwhile, then go on.
		runtime.Gosched()
	}
	return polled
}

// pollRing polls (token held) until c is readable, until passes, or a
// batch held messages for others; true in that last case. Like the
// poller, it stops early when its yields take long: other threads want
// this core, and with the doorbell quiet a reply that came meanwhile would
// wait for our turn in the run queue.
func (s *stack) pollRing(c *Conn, until time.Time) bool {
	last := time.Now()
	for empty := 1; ; {
		if n := s.takeBatch(true); n > 0 {
			s.drainBatch(n)
			return !c.readable()
		}
		if empty++; empty%clockEvery != 0 {
			continue
		}
		now := time.Now()
		if now.After(until) || now.Sub(last) >= clockEvery*contendedYield {
			return false
		}
		last = now
	}
}

// handBack ends a goroutine's polling: senders ring again, what came
// before they could see that is drained, then the token goes back (to the
// poller, if it woke meanwhile and waits for it). A message enqueued after
// the last look rings the doorbell, so none waits for the sleep's timeout.
// The drain is bounded (traffic may never stop); what it leaves, it rings
// for itself, as a sender would have.
func (s *stack) handBack() {
	s.shm.bellArm()
	for i := 0; ; i++ {
		if i == handBackBatches {
			s.shm.bellSelf()
			break
		}
		n := s.takeBatch(false)
		if n == 0 {
			handBackHook()
			break
		}
		s.drainBatch(n)
	}
	s.ring.release()
}

// handBackBatches bounds the batches handBack drains.
const handBackBatches = 4
