/* bench.h — see bench.c. */
#ifndef L25GC_QOS_BENCH_H
#define L25GC_QOS_BENCH_H
#include <stdint.h>
uint64_t l25gc_qos_bench_path(uint64_t n, uint32_t nflows, uint64_t ambr_bps, uint64_t *cpu_ns);
#endif
