package n2

import (
	"testing"
	"time"
)

// The lazy timer expires at its latest deadline: a firing before it arms
// again for the rest, a stopped timer's firing finds nothing due, and an
// earlier deadline than the armed one re-arms the Go timer.
func TestLazyTimerExpiresAtItsLatestDeadline(t *testing.T) {
	l := newLazyTimer(func() {})
	defer l.kill()
	t0 := time.Unix(1000, 0)
	l.set(t0, time.Second)
	l.set(t0.Add(500*time.Millisecond), time.Second) // restarted: now due at t0+1.5s
	if l.fireAt != t0.Add(time.Second) {
		t.Fatalf("armed for %v, want the first deadline (no re-arm for a later one)", l.fireAt.Sub(t0))
	}
	if l.due(t0.Add(time.Second)) {
		t.Fatal("due at the first deadline although restarted since")
	}
	if l.fireAt != t0.Add(1500*time.Millisecond) {
		t.Fatalf("re-armed for %v, want 1.5s", l.fireAt.Sub(t0))
	}
	if !l.due(t0.Add(1500*time.Millisecond)) || l.running() {
		t.Fatal("not due at its deadline, or still running after")
	}
	l.set(t0.Add(2*time.Second), time.Second)
	l.stop()
	if l.due(t0.Add(3 * time.Second)) {
		t.Fatal("a stopped timer came due")
	}
	l.set(t0.Add(4*time.Second), time.Hour)
	l.set(t0.Add(4*time.Second), time.Second) // the deadline moved earlier than the armed firing
	if l.fireAt != t0.Add(5*time.Second) {
		t.Fatalf("armed for %v, want 5s", l.fireAt.Sub(t0))
	}
}
