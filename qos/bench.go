package qos

/*
#include "bench.h"
*/
import "C"

// benchPath runs n packets through the QoS path in C and returns how many
// were sent (BenchmarkPathC).
func benchPath(n int) uint64 { return uint64(C.l25gc_qos_bench_path(C.uint64_t(n))) }
