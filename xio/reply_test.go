//go:build l25gc_testhooks

package xio

import (
	"testing"
	"time"
)

// TestReplyPolicyParksForSlowPeers: a conn whose replies take longer than
// the budget (a peer whose answer needs calls of its own) stops polling,
// so waiting for it costs no CPU; quick replies make it poll again.
func TestReplyPolicyParksForSlowPeers(t *testing.T) {
	p := newReplyPolicy()
	if !p.polls() {
		t.Fatal("a fresh conn does not poll: it could never learn that polling pays")
	}
	for i := 0; i < idleHistory; i++ {
		p.record(time.Millisecond, testBudget)
	}
	if p.polls() {
		t.Fatalf("after %d replies of 1 ms against a %v budget the conn still polls", idleHistory, testBudget)
	}
	for i := 0; i < idleHistory/2; i++ {
		p.record(testBudget/2, testBudget)
	}
	if !p.polls() {
		t.Fatal("half the recent replies within the budget, and the conn does not poll")
	}
}

// TestConsumerTokenWaitsForRelease: the poller, woken while a goroutine
// polls for its reply, waits for the token instead of taking from the
// ring beside it, and gets it once the goroutine gives it back.
func TestConsumerTokenWaitsForRelease(t *testing.T) {
	tok := newConsumerToken()
	if !tok.tryAcquire() {
		t.Fatal("a free token cannot be taken")
	}
	if tok.tryAcquire() {
		t.Fatal("a held token was taken twice")
	}
	got := make(chan struct{})
	go func() {
		tok.acquire()
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("acquire returned while the token was held")
	case <-time.After(20 * time.Millisecond):
	}
	tok.release()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("acquire did not return after the token was released")
	}
}
