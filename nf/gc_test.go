package nf

import "testing"

// A small live heap gets gcHeadroom of room, a large one Go's default
// proportion, a tiny one a bounded percent.
func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, maxGCPercent}, {1 << 20, maxGCPercent}, {16 << 20, 400}, {32 << 20, 200},
		{64 << 20, 100}, {512 << 20, 100},
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}
