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
