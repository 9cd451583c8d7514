package ratelimit

import "runtime"

// Warm workers. A worker started for each lone message begins on a small
// stack and grows it (runtime.morestack, copystack) while the AMF decodes
// NGAP and NAS; with one goroutine per message that was ~20 % of the AMF's
// CPU in a profile of lone registrations. A worker that finds no ready key
// therefore parks instead of exiting, up to warm of them, and Dispatch
// hands work to a parked one before starting a goroutine. Parked workers
// cost no CPU; what they keep is their stacks. Per-key order is untouched:
// it is the queues' (keyQueue.running), not the workers'.

// defaultWarm keeps two parked workers per P, at least four: enough for a
// lone UE's messages and the gNB's, bounded whatever E_max grew to.
func defaultWarm() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// SetWarm sets how many idle workers stay parked (n < 0 means 0); surplus
// parked workers leave.
func (p *Pool) SetWarm(n int) {
	p.mu.Lock()
	p.warm = max(n, 0)
	if p.idle-p.wakeups > p.warm {
		p.wake.Broadcast() // each re-checks: the surplus leaves
	}
	p.mu.Unlock()
}

// Idle is the number of parked workers.
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idle - p.wakeups
}

// wakeParkedLocked hands one unit of work to a parked worker (already
// counted busy by the caller); false when none is parked.
func (p *Pool) wakeParkedLocked() bool {
	if p.idle-p.wakeups <= 0 {
		return false
	}
	p.wakeups++
	p.wake.Signal()
	return true
}

// parkLocked parks a worker that ran out of ready keys. It returns true
// when handed work (spawnLocked counted it busy), false when the worker
// should leave: the pool closed or enough workers are parked already.
func (p *Pool) parkLocked() bool {
	if p.closed || p.idle >= p.warm {
		return false
	}
	p.idle++
	for p.wakeups == 0 && !p.closed && p.idle <= p.warm {
		p.wake.Wait()
	}
	p.idle--
	if p.wakeups > 0 {
		p.wakeups--
		return true
	}
	return false
}

// Workers is how many worker goroutines are alive and how many of them are
// parked, so a leak check can tell the warm pool from a leak.
func (p *Pool) Workers() (alive, parked int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.workers, p.idle - p.wakeups
}
