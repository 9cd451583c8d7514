package xio

import (
	"math/bits"
	"time"
)

// spinPolicy decides, each time the rx ring runs empty, how long the
// poller keeps polling before it sleeps on the doorbell. Spinning catches
// a message that comes soon without a wake-up (a futex wake of a sleeping
// thread on another core costs ~30 µs on this VM, each way of a round
// trip); it burns the core meanwhile, which the 2-core target cannot
// afford for nothing. So the budget is spent only while it pays: while at
// least half of the last idleHistory idle gaps (the ring empty until the
// next message) ended within the budget, typically a peer answering our
// request. An NF whose gaps are long (idle, or messages milliseconds
// apart) sleeps at once and costs no CPU; one in a conversation spins.
type spinPolicy struct {
	budget  time.Duration // <= 0: never spin
	history uint8         // last idleHistory gaps, newest in bit 0: 1 = within the budget
}

// idleHistory is how many idle gaps the policy remembers (bits of history).
const idleHistory = 8

// newSpinPolicy starts undecided (half the history hits): it spins until
// the gaps show whether that pays.
func newSpinPolicy(budget time.Duration) spinPolicy {
	return spinPolicy{budget: budget, history: 0x55}
}

// limit is how long to spin in the idle period starting now.
func (p *spinPolicy) limit() time.Duration {
	if p.budget <= 0 || bits.OnesCount8(p.history) < idleHistory/2 {
		return 0
	}
	return p.budget
}

// spun records a gap that ended while the poller was still spinning.
func (p *spinPolicy) spun() { p.record(true) }

// slept records a gap that ended after the poller went to sleep, gap long
// after the ring ran empty (or never: a doorbell sleep that timed out). A
// sleeper learns of a message a wake-up late, and on this loaded VM a
// wake-up took up to ~1 ms: a gap within the budget plus wakeUpAllowance
// counts as one spinning might have caught. With an allowance of only one
// more budget, a poller that once stopped spinning saw every quick answer
// as slow, never spun again, and bench sbi's p50 at concurrency 1 went
// from 23-33 µs to 46-60 µs.
func (p *spinPolicy) slept(gap time.Duration) {
	p.record(p.budget > 0 && gap <= p.budget+wakeUpAllowance)
}

// wakeUpAllowance is how late a sleeping poller may learn of a message.
const wakeUpAllowance = time.Millisecond

func (p *spinPolicy) record(hit bool) {
	p.history <<= 1
	if hit {
		p.history |= 1
	}
}
