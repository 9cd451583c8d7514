package qos

/*
#include "bench.h"
*/
import "C"

// benchPath runs n packets through the QoS path in C, over one session of
// flows flows and an AMBR of ambr bit/s, and returns how many were sent and
// the thread CPU time it took (BenchmarkPathC).
func benchPath(n, flows int, ambr uint64) (sent, cpuNs uint64) {
	var cpu C.uint64_t
	sent = uint64(C.l25gc_qos_bench_path(C.uint64_t(n), C.uint32_t(flows), C.uint64_t(ambr), &cpu))
	return sent, uint64(cpu)
}
