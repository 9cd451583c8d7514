package qos

import "testing"

// A shaper whose hot part (per-packet state) and cold part (configuration,
// counters, queues) live in separate arrays, as UPF-U keeps them, gives the
// same verdicts, packets, backlog and counters as a shaper in one piece,
// over packets sent at once, queued, tail dropped, red, flushed and rule
// changes, and writes nothing outside its own parts.
func TestSplitShaperMatchesOnePiece(t *testing.T) {
	for _, seed := range []uint64{1, 42, 0x5eed} {
		step, counts := splitCheck(seed, 200000)
		switch {
		case step == -2:
			t.Fatalf("seed %d: the split shaper wrote into its neighbours' parts", seed)
		case step >= 0:
			t.Fatalf("seed %d: the split shaper differs from the one-piece one at step %d", seed, step)
		case step != -1:
			t.Fatalf("seed %d: check failed to run (%d)", seed, step)
		}
		// The sequence reaches every path the split could break.
		for _, v := range []Verdict{QueuedGreen, QueuedYellow, DropRed, DropFull, DropNoFlow, SentGreen, SentYellow} {
			if counts[v] == 0 {
				t.Errorf("seed %d: no submit ended %v; counts %v", seed, v, counts)
			}
		}
	}
}
