/*
 * bench.c — the per-packet cost of the QoS path (meter + enqueue + dequeue)
 * without cgo in the loop: BenchmarkPathC in bench_test.go runs it. One
 * session, 1000-byte packets offered at 80 Gbit/s spread over its flows;
 * now advances as a TSC would, and the forwarding loop's dequeue runs once
 * per burst of 32. With an AMBR above the load every packet is metered,
 * queued and sent; below it, the shaper also borrows and tail drops.
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

/* bench_conf: nflows flows, flow 0 with a GBR and an MBR, the others
 * non-QoS (odd ones weight 2); an AMBR of ambr_bps. */
static void bench_conf(struct qos_shaper_conf *c, uint32_t nflows, uint64_t ambr_bps)
{
	memset(c, 0, sizeof(*c));
	c->ambr_bps = ambr_bps;
	c->hz = 1000000000ull;
	c->nflows = nflows;
	for (uint32_t i = 0; i < nflows; i++) {
		c->flow[i].in_use = 1;
		c->flow[i].weight = 1 + (i & 1);
	}
	c->flow[0].gbr_bps = ambr_bps / 10;
	c->flow[0].mbr_bps = ambr_bps / 2;
}

uint64_t l25gc_qos_bench_path(uint64_t n, uint32_t nflows, uint64_t ambr_bps, uint64_t *cpu_ns)
{
	static struct qos_shaper s;
	struct qos_out out[32];
	struct qos_shaper_conf c;
	bench_conf(&c, nflows, ambr_bps);
	uint64_t now = 1, sent = 0;
	if (qos_shaper_init(&s, &c, now) != QOS_OK)
		return 0;
	uint64_t start = thread_cpu_ns();
	for (uint64_t i = 0; i < n; i++) {
		now += 100; /* 1000 bytes each 100 ns: 80 Gbit/s offered */
		qos_enqueue(&s, (uint32_t)(i % nflows), now, i, 1000, QOS_GREEN);
		if ((i & 31) == 31)
			sent += qos_dequeue(&s, now, out, 32);
	}
	*cpu_ns = thread_cpu_ns() - start;
	return sent;
}
