package u_test

import "testing"

// A shaped session (issue 13) sends through the same next-hop hold: what
// waited for the gNB's address leaves first, in order, then what came
// after it was learnt (the order TestHeldPacketsLeaveInOrderBeforeLaterOnes
// checks for a plain session; here the shaper releases the packets).
func TestShapedSessionsHeldPacketsLeaveInOrderBeforeLaterOnes(t *testing.T) {
	heldPacketsLeaveInOrder(t, qosSession(1, ueIP, 100*mbit, 0, 0))
}
