/*
 * split.c — checks that a shaper whose two parts live apart (UPF-U keeps
 * the hot parts in one dense array and the cold parts, with the queues, in
 * another; qos_shaper.h) behaves exactly as one in one piece:
 * TestSplitShaperMatchesOnePiece drives both with the same pseudo-random
 * packets, dequeues, flushes and rule changes and compares every result.
 */
#include <stdlib.h>

#include "qos.h"
#include "split.h"

static uint64_t split_rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* split_conf is a random rule set: 1-8 flows, some removed, GBR/MBR/queue
 * bounds drawn so that every verdict occurs. */
static void split_conf(struct qos_shaper_conf *c, uint64_t *x)
{
	memset(c, 0, sizeof(*c));
	c->hz = 1000000000ull;
	c->ambr_bps = 1000000ull * (1 + split_rnd(x) % 100);
	c->nflows = 1 + (uint32_t)(split_rnd(x) % QOS_MAX_FLOWS);
	for (uint32_t i = 0; i < c->nflows; i++) {
		struct qos_flow_conf *f = &c->flow[i];
		f->in_use = split_rnd(x) % 8 != 0;
		f->gbr_bps = split_rnd(x) % 3 ? 0 : 100000ull * (split_rnd(x) % 200);
		f->mbr_bps = split_rnd(x) % 2 ? f->gbr_bps + 100000ull * (split_rnd(x) % 500) : 0;
		f->weight = (uint32_t)(split_rnd(x) % 3);
		if (split_rnd(x) % 4 == 0)
			f->queue_bytes = split_rnd(x) % 20000;
	}
}

static int split_same_out(const struct qos_out *a, const struct qos_out *b, unsigned n)
{
	return memcmp(a, b, n * sizeof(*a)) == 0;
}

static int split_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* split_step runs one random operation on both shapers: 1 when they
 * agree. counts[v] counts each verdict of qos_submit. */
static int split_step(struct qos_shaper *one, struct qos_ref two, uint64_t *x, uint64_t *now, uint64_t k, uint64_t counts[8])
{
	struct qos_out a[32], b[32];
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	*now += split_rnd(x) % (k & 1 ? 2000000 : 20000); /* loaded and idle stretches */
	unsigned op = (unsigned)(split_rnd(x) % 100);
	uint32_t flow = (uint32_t)(split_rnd(x) % (QOS_MAX_FLOWS + 1));
	uint32_t len = 1 + (uint32_t)(split_rnd(x) % 1500);
	if (op < 60) {
		enum qos_colour in = split_rnd(x) % 3 == 0 ? QOS_YELLOW : QOS_GREEN;
		enum qos_verdict v = qos_submit(one, flow, *now, k, len, in, &a[0]);
		if (v != qos_ref_submit(two, flow, *now, k, len, in, &b[0]))
			return 0;
		counts[v & 7]++;
		if ((v == QOS_SENT_GREEN || v == QOS_SENT_YELLOW) && !split_same_out(a, b, 1))
			return 0;
	} else if (op < 80) {
		if (qos_enqueue(one, flow, *now, k, len, QOS_GREEN) != qos_ref_enqueue(two, flow, *now, k, len, QOS_GREEN))
			return 0;
	} else if (op < 98) {
		unsigned max = 1 + (unsigned)(split_rnd(x) % 32);
		unsigned n = qos_dequeue(one, *now, a, max);
		if (n != qos_ref_dequeue(two, *now, b, max) || !split_same_out(a, b, n))
			return 0;
	} else if (op < 99) {
		unsigned n = qos_flush(one, flow, a, 32);
		if (n != qos_ref_flush(two, flow, b, 32) || !split_same_out(a, b, n))
			return 0;
	} else {
		struct qos_shaper_conf c;
		split_conf(&c, x);
		if (qos_shaper_configure(one, &c, *now) != qos_ref_configure(two, &c, *now))
			return 0;
	}
	if (qos_backlog(one) != two.h->backlog)
		return 0;
	for (uint32_t i = 0; i < QOS_MAX_FLOWS; i++) {
		struct qos_flow_stats s1 = qos_flow_stats_read(one, i), s2 = qos_ref_flow_stats(two, i);
		if (memcmp(&s1, &s2, sizeof(s1)) != 0)
			return 0;
	}
	return 1;
}

int64_t l25gc_qos_split_check(uint64_t seed, uint64_t steps, uint64_t counts[8])
{
	/* The split shaper's parts sit in the middle of arrays of three, as in
	 * UPF-U's pool: its neighbours must stay untouched. */
	struct qos_shaper *one = calloc(1, sizeof(*one));
	struct qos_shaper_hot *hot = calloc(3, sizeof(*hot));
	struct qos_shaper_cold *cold = calloc(3, sizeof(*cold));
	int64_t r = -1;
	if (!one || !hot || !cold) {
		r = -3;
		goto out;
	}
	struct qos_ref two = {&hot[1], &cold[1]};
	uint64_t x = seed | 1, now = 1;
	struct qos_shaper_conf c;
	split_conf(&c, &x);
	if (qos_shaper_init(one, &c, now) != qos_ref_init(two, &c, now)) {
		r = 0;
		goto out;
	}
	for (uint64_t k = 1; k <= steps && r < 0; k++)
		if (!split_step(one, two, &x, &now, k, counts))
			r = (int64_t)k;
	if (r < 0 && !(split_zero(&hot[0], sizeof(hot[0])) && split_zero(&hot[2], sizeof(hot[2])) &&
		       split_zero(&cold[0], sizeof(cold[0])) && split_zero(&cold[2], sizeof(cold[2]))))
		r = -2;
out:
	free(one);
	free(hot);
	free(cold);
	return r;
}
