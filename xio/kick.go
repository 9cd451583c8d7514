package xio

/*
#include "stack.h"
*/
import "C"

// ExpectReply tells X-IO that a reply to what this conn just sent (or is
// about to send) should come soon: an SBI client's request. If the
// process's poller sleeps on its doorbell, and replies have lately come
// within its spin budget, it is woken now to spin for the reply. Its
// wake-up (~30 µs on this VM) then overlaps the peer's work instead of
// following the reply's arrival, which is what a lone procedure through
// NFs that are otherwise idle pays at every SBI call. When replies come
// later than twice the budget the poller stops being woken (spin.go), so
// a slow peer costs no spinning.
func (c *Conn) ExpectReply() {
	s := c.st
	if !s.kickPays.Load() {
		return
	}
	s.kicked.Store(true)
	C.xio_kick() // rings only if the poller sleeps
}
