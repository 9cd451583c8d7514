//go:build race

package xio

/*
static void xio_race_sync(void) {}
*/
import "C"

// raceSync gives the race detector the happens-before edge that the
// shared-memory ring gives the program. Its atomics live in DPDK's
// hugepages, outside the memory the detector shadows, so it cannot see
// them; a cgo call, though, releases and acquires one detector-wide sync
// object (runtime's racecgosync), the same edge the ring carried while it
// was C. Race builds only: production builds call the empty function in
// race_off.go.
func raceSync() { C.xio_race_sync() }
