/*
 * bench.c — the per-packet cost of the QoS path (meter + enqueue + dequeue)
 * without cgo in the loop: BenchmarkPathC in bench_test.go runs it. One
 * session with a GBR flow and a non-QoS flow under an AMBR above the
 * offered load, so every packet is metered, queued and sent; now advances
 * as a TSC would, and the forwarding loop's dequeue runs once per burst.
 * It also returns the thread's CPU time: on a shared, loaded machine the
 * wall clock counts time the thread was not running.
 */
#include <time.h>

#include "qos.h"
#include "bench.h"

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t l25gc_qos_bench_path(uint64_t n, uint64_t *cpu_ns)
{
	static struct qos_shaper s;
	struct qos_out out[32];
	struct qos_shaper_conf c = {
		.ambr_bps = 100000000000ull, /* 100 Gbit/s */
		.hz = 1000000000ull,
		.nflows = 2,
		.flow = {
			{.gbr_bps = 10000000000ull, .mbr_bps = 50000000000ull, .in_use = 1},
			{.in_use = 1},
		},
	};
	uint64_t now = 1, sent = 0;
	if (qos_shaper_init(&s, &c, now) != QOS_OK)
		return 0;
	uint64_t start = thread_cpu_ns();
	for (uint64_t i = 0; i < n; i++) {
		now += 100; /* 1000 bytes each 100 ns: 80 Gbit/s offered */
		qos_enqueue(&s, (uint32_t)(i & 1), now, i, 1000, QOS_GREEN);
		if ((i & 31) == 31)
			sent += qos_dequeue(&s, now, out, 32);
	}
	*cpu_ns = thread_cpu_ns() - start;
	return sent;
}
