package xio

/*
#include "stack.h"
*/
import "C"

// HoldBuffersForTest takes n shared buffers and never gives them back, as a
// process killed while filling buffers would. Only tests of the manager's
// reclaim use it.
func HoldBuffersForTest(n int) int {
	if _, err := defaultStack(); err != nil {
		return 0
	}
	return int(C.xio_hold_buffers(C.int(n)))
}

// PendingForTest says how many connections wait in ln's accept queue.
func PendingForTest(ln interface{}) int {
	l, ok := ln.(*Listener)
	if !ok {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.q)
}
