/* split.h — see split.c. */
#ifndef L25GC_QOS_SPLIT_H
#define L25GC_QOS_SPLIT_H
#include <stdint.h>
int64_t l25gc_qos_split_check(uint64_t seed, uint64_t steps, uint64_t counts[8]);
#endif
