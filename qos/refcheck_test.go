package qos

import "testing"

// The cheaper per-packet arithmetic of Submit and Enqueue (one credit
// product for the meter and the buckets, the meter's refill apart from its
// charge) changes nothing: against the per-packet version it replaced,
// over bursts of packets at one clock reading (as UPF-U reads the clock
// once per burst), a clock that steps back, dequeues, flushes and rule
// changes, every verdict and packet and both shapers' bytes are the same.
func TestSubmitMatchesPerPacketVersion(t *testing.T) {
	for _, seed := range []uint64{7, 99, 0xfeed} {
		step, counts := refCheck(seed, 100000)
		switch {
		case step >= 0:
			t.Fatalf("seed %d: differs from the per-packet version at step %d", seed, step)
		case step != -1:
			t.Fatalf("seed %d: check failed to run (%d)", seed, step)
		}
		for _, v := range []Verdict{QueuedGreen, QueuedYellow, DropRed, DropFull, DropNoFlow, DropLength, SentGreen, SentYellow} {
			if counts[v] == 0 {
				t.Errorf("seed %d: no submit ended %v; counts %v", seed, v, counts)
			}
		}
	}
}

// The refills add rate × time without 128-bit arithmetic and give exactly
// what the 128-bit versions gave, where the product passes 64 bits, lands
// on or next to the room left, and for buckets above their size or in debt.
func TestRefillsMatch128BitVersions(t *testing.T) {
	for _, seed := range []uint64{3, 1234, 0xabcdef} {
		if bad := fillCheck(seed, 2_000_000); bad != 0 {
			t.Fatalf("seed %d: %d refills differ from the 128-bit versions", seed, bad)
		}
	}
}
