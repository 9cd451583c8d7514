//go:build l25gc_testhooks

package shm

import "testing"

// A UPF-C killed inside the seqlock leaves a slot odd; the next Open drops
// that session (its keys too) instead of leaving UPF-U waiting on it.
func TestOpenDropsHalfWrittenSessions(t *testing.T) {
	tab, cfg := openTemp(t, 4)
	if err := tab.Install(sessionWith(1, ue, 0x10)); err != nil {
		t.Fatal(err)
	}
	tab.killedMidWriteForTest(1)
	again, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if again.Broken != 1 || again.Len() != 0 {
		t.Fatalf("broken %d, sessions %d: want the half-written one dropped", again.Broken, again.Len())
	}
	if err := again.Install(sessionWith(2, ue, 0x10)); err != nil {
		t.Fatalf("its TEID and UE address are free again: %v", err)
	}
}
