//go:build l25gc_testhooks

package xio

import "testing"

// TestKicksProbeWhileTheyDoNotPay: once replies came too late for kicks
// to pay, a request still kicks now and then (one in kickProbe), so the
// poller learns when its peers answer quickly again instead of never
// being woken for a reply for good.
func TestKicksProbeWhileTheyDoNotPay(t *testing.T) {
	s := attached
	pays := s.kickPays.Load()
	defer s.kickPays.Store(pays)
	s.kickPays.Store(false)
	c := &Conn{st: s}
	kicks := s.kicks.Load()
	for i := 0; i < kickProbe && s.kicks.Load() == kicks; i++ {
		c.ExpectReply()
	}
	if s.kicks.Load() != kicks+1 {
		t.Fatalf("%d requests while kicks did not pay: %d kicked, want 1", kickProbe, s.kicks.Load()-kicks)
	}
	c.ExpectReply()
	if s.kicks.Load() != kicks+1 {
		t.Fatal("the request after a probe kicked too")
	}
}
