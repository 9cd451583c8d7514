//go:build l25gc_testhooks

package xio

import (
	"testing"
	"time"
)

const testBudget = 50 * time.Microsecond

// TestSpinPolicyFallsBackToSleep: a poller whose idle gaps outlast the
// budget (an idle NF, or one answering now and then) stops spinning.
func TestSpinPolicyFallsBackToSleep(t *testing.T) {
	p := newSpinPolicy(testBudget)
	if p.limit() != testBudget {
		t.Fatalf("a fresh policy spins %v, want the budget %v until gaps say otherwise", p.limit(), testBudget)
	}
	for i := 0; i < idleHistory; i++ {
		p.slept(5 * time.Millisecond)
	}
	if p.limit() != 0 {
		t.Fatalf("after %d gaps of 5 ms the poller still spins %v", idleHistory, p.limit())
	}
	p.slept(500 * time.Millisecond) // doorbell sleeps timing out keep it asleep
	if p.limit() != 0 {
		t.Fatal("an idle poller spins again")
	}
}

// TestSpinPolicySpinsInConversation: gaps that end within the budget (a
// peer answering our requests) make the poller spin, also when it learned
// of them asleep, a wake-up late; half of the recent gaps suffice.
func TestSpinPolicySpinsInConversation(t *testing.T) {
	p := newSpinPolicy(testBudget)
	for i := 0; i < idleHistory; i++ {
		p.slept(time.Second)
	}
	for i := 0; i < idleHistory/2; i++ {
		if p.limit() != 0 {
			t.Fatalf("spins after only %d quick gaps of %d", i, idleHistory)
		}
		p.slept(testBudget + wakeUpAllowance) // caught asleep, a slow wake-up late
	}
	if p.limit() != testBudget {
		t.Fatalf("after half the gaps quick the poller spins %v, want %v", p.limit(), testBudget)
	}
	for i := 0; i < 3*idleHistory; i++ {
		p.spun()
	}
	p.slept(time.Second)
	if p.limit() != testBudget {
		t.Fatal("one slow gap in a conversation stopped the spinning")
	}
}

// TestSpinPolicyOff: a budget of zero or less never spins.
func TestSpinPolicyOff(t *testing.T) {
	for _, b := range []time.Duration{0, -1} {
		p := newSpinPolicy(b)
		for i := 0; i < idleHistory; i++ {
			p.spun()
		}
		if p.limit() != 0 {
			t.Fatalf("budget %v spins %v", b, p.limit())
		}
	}
}

// TestContentionFollowsPreemptions: the poller stops spinning while its
// process's threads are being preempted, re-reads the count at most every
// contentionEvery, and takes a count from long ago (it slept) as no sign.
func TestContentionFollowsPreemptions(t *testing.T) {
	var switches int64
	reads := 0
	c := cpuContention{sample: func() (int64, bool) { reads++; return switches, true }}
	t0 := time.Unix(1000, 0)
	if c.contended(t0) {
		t.Fatal("the first sample has nothing to compare with, yet counts as contended")
	}
	switches = 3
	if !c.contended(t0.Add(contentionEvery)) {
		t.Fatal("3 preemptions since the last sample: not contended")
	}
	switches = 5
	if !c.contended(t0.Add(contentionEvery+contentionEvery/2)) || reads != 2 {
		t.Fatalf("within contentionEvery the verdict is kept without a read (reads %d, want 2)", reads)
	}
	if !c.contended(t0.Add(2 * contentionEvery)) {
		t.Fatal("2 more preemptions: not contended")
	}
	if c.contended(t0.Add(3 * contentionEvery)) {
		t.Fatal("no preemption since the last sample, yet contended")
	}
	switches = 9
	if c.contended(t0.Add(3*contentionEvery + contentionStale)) {
		t.Fatal("preemptions over a stale interval (the poller slept) count as contention now")
	}
	if n, ok := involuntarySwitches(); !ok || n < 0 {
		t.Fatalf("getrusage: %d, %v", n, ok)
	}
}
