package qos

/*
#include "refcheck.h"
*/
import "C"

// refCheck drives a shaper with qos_ref_submit/qos_ref_enqueue and another
// with the frozen per-packet version they replaced (refcheck.c) through
// steps pseudo-random operations from seed. It returns the first step where
// they differ (0: init), -1 when they never did; and how often qos_submit
// gave each verdict.
func refCheck(seed, steps uint64) (int64, [8]uint64) {
	var counts [8]C.uint64_t
	r := int64(C.l25gc_qos_ref_check(C.uint64_t(seed), C.uint64_t(steps), &counts[0]))
	return r, verdictCounts(&counts)
}

// fillCheck compares the refills (qos_fill, qos_bucket_refill) with their
// 128-bit versions on n random cases around their edges: how many differ.
func fillCheck(seed, n uint64) uint64 {
	return uint64(C.l25gc_qos_fill_check(C.uint64_t(seed), C.uint64_t(n)))
}
