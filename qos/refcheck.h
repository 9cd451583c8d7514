/* refcheck.h — see refcheck.c. */
#ifndef L25GC_QOS_REFCHECK_H
#define L25GC_QOS_REFCHECK_H
#include <stdint.h>
int64_t l25gc_qos_ref_check(uint64_t seed, uint64_t steps, uint64_t counts[8]);
uint64_t l25gc_qos_fill_check(uint64_t seed, uint64_t n);
#endif
