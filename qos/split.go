package qos

/*
#include "split.h"
*/
import "C"

// splitCheck drives a shaper in one piece and one whose hot and cold parts
// live apart (as UPF-U keeps them) with the same steps pseudo-random
// operations from seed. It returns the first step where they differ (0:
// init), -1 when they never did, -2 when the split one wrote outside its
// parts; and how often qos_submit gave each verdict.
func splitCheck(seed, steps uint64) (int64, [8]uint64) {
	var counts [8]C.uint64_t
	r := int64(C.l25gc_qos_split_check(C.uint64_t(seed), C.uint64_t(steps), &counts[0]))
	return r, verdictCounts(&counts)
}

// verdictCounts turns the C check's per-verdict counts into Go's.
func verdictCounts(counts *[8]C.uint64_t) [8]uint64 {
	var out [8]uint64
	for i, c := range counts {
		out[i] = uint64(c)
	}
	return out
}
