package qos

/*
#include "bench.h"
*/
import "C"

// benchPath runs n packets through the QoS path in C and returns how many
// were sent and the thread CPU time it took (BenchmarkPathC).
func benchPath(n int) (sent, cpuNs uint64) {
	var cpu C.uint64_t
	sent = uint64(C.l25gc_qos_bench_path(C.uint64_t(n), &cpu))
	return sent, uint64(cpu)
}
