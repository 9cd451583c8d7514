/*
 * refcheck.c — checks that qos_ref_submit and qos_ref_enqueue, whose
 * per-packet arithmetic was made cheaper (issue 13: one credit product for
 * the meter and the buckets, the meter's refill apart from its charge),
 * behave exactly as the per-packet version they replaced, kept here frozen
 * as ref_*: TestSubmitMatchesPerPacketVersion drives a shaper with each,
 * with the same pseudo-random packets, bursts of packets at one clock
 * reading (UPF-U reads the TSC once per burst: a refill at an unchanged
 * time adds nothing), dequeues, flushes and rule changes, and compares
 * every result and both shapers byte for byte after every step.
 */
#include <stdlib.h>

#include "qos.h"
#include "refcheck.h"

/* ---- the per-packet version (qos_shaper.h before the change), frozen ---- */

/* The refills with 128-bit products, as they were. */
static inline uint64_t ref_fill(uint64_t tok, uint64_t cap, uint64_t rate, uint64_t dt)
{
	qos_u128 t = (qos_u128)rate * dt + tok;
	return t >= cap ? cap : (uint64_t)t;
}

static inline void ref_trtcm_refill(struct qos_trtcm *m, const struct qos_trtcm_profile *p, uint64_t now)
{
	if (now <= m->last)
		return;
	uint64_t dt = now - m->last;
	m->last = now;
	m->tc = ref_fill(m->tc, p->cbs, p->cir, dt);
	m->tp = ref_fill(m->tp, p->pbs, p->pir, dt);
}

static inline void ref_bucket_refill(struct qos_bucket *b, uint64_t now)
{
	if (now <= b->last)
		return;
	uint64_t room = b->tokens >= b->cap ? 0 : (uint64_t)(b->cap - b->tokens);
	qos_u128 add = (qos_u128)b->rate * (now - b->last);
	b->tokens = add >= room ? b->cap : b->tokens + (int64_t)add;
	b->last = now;
}

static inline enum qos_colour ref_trtcm_aware(struct qos_trtcm *m, const struct qos_trtcm_profile *p, uint64_t now, uint32_t len,
					      enum qos_colour in)
{
	if (len > QOS_MAX_PKT_BYTES)
		return QOS_RED;
	ref_trtcm_refill(m, p, now);
	uint64_t b = (uint64_t)len * p->unit;
	if (in == QOS_RED || (!p->no_peak && m->tp < b))
		return QOS_RED;
	if (!p->no_peak)
		m->tp -= b;
	if (in == QOS_YELLOW || m->tc < b)
		return QOS_YELLOW;
	m->tc -= b;
	return QOS_GREEN;
}

static inline int ref_admit(struct qos_ref s, uint32_t i, uint64_t now, uint32_t len, enum qos_colour in)
{
	if (i >= QOS_MAX_FLOWS || s.h->flow[i].prof.unit == 0)
		return QOS_COLOURS + QOS_DROP_NO_FLOW;
	if (len == 0 || len > QOS_MAX_PKT_BYTES)
		return QOS_COLOURS + QOS_DROP_LEN;
	struct qos_flow_hot *f = &s.h->flow[i];
	if (now > f->last_arrival)
		f->last_arrival = now;
	if (!(s.h->active & QOS_BIT(i)))
		qos_activate(s, i, now);
	enum qos_colour c = ref_trtcm_aware(&f->meter, &f->prof, now, len, in);
	if (c == QOS_RED) {
		qos_count_in(&s.c->flow[i], c, len);
		return QOS_COLOURS + QOS_DROP_RED;
	}
	return (int)c;
}

static inline enum qos_verdict ref_enqueue(struct qos_ref s, uint32_t i, uint64_t now, uint64_t handle, uint32_t len, enum qos_colour in)
{
	int c = ref_admit(s, i, now, len, in);
	if (c >= QOS_COLOURS)
		return (enum qos_verdict)(c - QOS_COLOURS);
	qos_count_in(&s.c->flow[i], (enum qos_colour)c, len);
	return qos_queue(s, i, handle, len, (enum qos_colour)c);
}

static inline enum qos_verdict ref_submit(struct qos_ref s, uint32_t i, uint64_t now, uint64_t handle, uint32_t len,
					  enum qos_colour in, struct qos_out *o)
{
	int c = ref_admit(s, i, now, len, in);
	if (c >= QOS_COLOURS)
		return (enum qos_verdict)(c - QOS_COLOURS);
	struct qos_flow_hot *f = &s.h->flow[i];
	o->colour = (uint8_t)c;
	if (s.h->backlog) {
		qos_count_in(&s.c->flow[i], (enum qos_colour)c, len);
		return qos_queue(s, i, handle, len, (enum qos_colour)c);
	}
	if (now >= s.h->expire_at) {
		qos_expire_idle(s, now);
		s.h->expire_at = now + (s.h->idle_ticks >> 3);
	}
	int64_t need = (int64_t)len * (int64_t)s.h->unit;
	ref_bucket_refill(&s.h->ambr, now);
	ref_bucket_refill(&f->share, now);
	int own = qos_bucket_holds(&f->share, need) &&
		  (s.h->ambr.tokens + s.h->ambr.cap >= need || qos_bucket_holds(&s.h->ambr, need));
	if (!own && !qos_bucket_holds(&s.h->ambr, need)) {
		qos_count_in(&s.c->flow[i], (enum qos_colour)c, len);
		return qos_queue(s, i, handle, len, (enum qos_colour)c);
	}
	s.h->ambr.tokens -= need;
	if (own)
		f->share.tokens -= need;
	else
		s.c->flow[i].st.borrowed_bytes += len;
	if (c == QOS_GREEN) {
		f->straight_pkts++;
		f->straight_bytes += len;
	} else {
		struct qos_flow_cold *fc = &s.c->flow[i];
		qos_count_in(fc, QOS_YELLOW, len);
		fc->st.out_pkts[1]++;
		fc->st.out_bytes[1] += len;
	}
	*o = (struct qos_out){.handle = handle, .len = len, .flow = (uint8_t)i, .colour = (uint8_t)c, .borrowed = (uint8_t)!own};
	return c == QOS_GREEN ? QOS_SENT_GREEN : QOS_SENT_YELLOW;
}

/* ---- the check ------------------------------------------------------------ */

static uint64_t ref_rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* ref_conf is a random rule set: 1-8 flows, some removed, GBR/MBR/queue
 * bounds and meter bursts drawn so that every verdict occurs. */
static void ref_conf(struct qos_shaper_conf *c, uint64_t *x)
{
	memset(c, 0, sizeof(*c));
	c->hz = ref_rnd(x) % 2 ? 1000000000ull : 2800000000ull; /* ns, or a TSC */
	c->ambr_bps = 1000000ull * (1 + ref_rnd(x) % 100);
	c->nflows = 1 + (uint32_t)(ref_rnd(x) % QOS_MAX_FLOWS);
	for (uint32_t i = 0; i < c->nflows; i++) {
		struct qos_flow_conf *f = &c->flow[i];
		f->in_use = ref_rnd(x) % 8 != 0;
		f->gbr_bps = ref_rnd(x) % 3 ? 0 : 100000ull * (ref_rnd(x) % 200);
		f->mbr_bps = ref_rnd(x) % 2 ? f->gbr_bps + 100000ull * (ref_rnd(x) % 500) : 0;
		f->weight = (uint32_t)(ref_rnd(x) % 3);
		if (ref_rnd(x) % 4 == 0)
			f->queue_bytes = ref_rnd(x) % 20000;
		if (ref_rnd(x) % 4 == 0)
			f->cbs_bytes = 1 + ref_rnd(x) % 5000, f->pbs_bytes = f->cbs_bytes + ref_rnd(x) % 5000;
	}
}

/* ref_packet runs one packet through both: 1 when they agree. */
static int ref_packet(struct qos_ref a, struct qos_ref b, uint64_t *x, uint64_t now, uint64_t k, uint64_t counts[8])
{
	struct qos_out oa, ob;
	memset(&oa, 0, sizeof(oa));
	memset(&ob, 0, sizeof(ob));
	uint32_t flow = (uint32_t)(ref_rnd(x) % (QOS_MAX_FLOWS + 1));
	uint32_t len = (uint32_t)(ref_rnd(x) % 1501); /* 0: refused */
	if (ref_rnd(x) % 512 == 0)
		len = QOS_MAX_PKT_BYTES + 1;
	unsigned pick = (unsigned)(ref_rnd(x) % 6);
	enum qos_colour in = pick == 0 ? QOS_YELLOW : pick == 1 ? QOS_RED : QOS_GREEN;
	if (ref_rnd(x) % 4 == 0)
		return qos_ref_enqueue(a, flow, now, k, len, in) == ref_enqueue(b, flow, now, k, len, in);
	enum qos_verdict v = qos_ref_submit(a, flow, now, k, len, in, &oa);
	if (v != ref_submit(b, flow, now, k, len, in, &ob))
		return 0;
	counts[v & 7]++;
	/* both write the same fields of o for every verdict (all of it when
	 * sent, the colour when queued or tail dropped) */
	return memcmp(&oa, &ob, sizeof(oa)) == 0;
}

/* ref_step runs one random operation on both: a burst of packets at one
 * clock reading, a dequeue, a flush or a rule change. 1 when they agree,
 * to the last byte of both shapers. */
static int ref_step(struct qos_shaper *one, struct qos_shaper *two, uint64_t *x, uint64_t *now, uint64_t k, uint64_t counts[8])
{
	struct qos_ref a = qos_ref_of(one), b = qos_ref_of(two);
	struct qos_out oa[32], ob[32];
	memset(oa, 0, sizeof(oa));
	memset(ob, 0, sizeof(ob));
	*now += ref_rnd(x) % (k & 1 ? 3000000 : 30000); /* loaded and idle stretches */
	if (ref_rnd(x) % 64 == 0 && *now > 1000)
		*now -= 1000; /* a clock that went back adds nothing */
	unsigned op = (unsigned)(ref_rnd(x) % 100);
	if (op < 75) {
		unsigned n = 1 + (unsigned)(ref_rnd(x) % 32);
		for (unsigned j = 0; j < n; j++)
			if (!ref_packet(a, b, x, *now, k * 32 + j, counts))
				return 0;
	} else if (op < 97) {
		unsigned max = 1 + (unsigned)(ref_rnd(x) % 32);
		unsigned n = qos_dequeue(one, *now, oa, max);
		if (n != qos_dequeue(two, *now, ob, max) || memcmp(oa, ob, n * sizeof(oa[0])) != 0)
			return 0;
	} else if (op < 98) {
		uint32_t flow = (uint32_t)(ref_rnd(x) % QOS_MAX_FLOWS);
		unsigned n = qos_flush(one, flow, oa, 32);
		if (n != qos_flush(two, flow, ob, 32) || memcmp(oa, ob, n * sizeof(oa[0])) != 0)
			return 0;
	} else {
		struct qos_shaper_conf c;
		ref_conf(&c, x);
		if (qos_shaper_configure(one, &c, *now) != qos_shaper_configure(two, &c, *now))
			return 0;
	}
	return memcmp(one, two, sizeof(*one)) == 0;
}

int64_t l25gc_qos_ref_check(uint64_t seed, uint64_t steps, uint64_t counts[8])
{
	struct qos_shaper *one = calloc(1, sizeof(*one)), *two = calloc(1, sizeof(*two));
	int64_t r = -1;
	if (!one || !two) {
		r = -3;
		goto out;
	}
	uint64_t x = seed | 1, now = 1;
	struct qos_shaper_conf c;
	ref_conf(&c, &x);
	if (qos_shaper_init(one, &c, now) != qos_shaper_init(two, &c, now) || memcmp(one, two, sizeof(*one)) != 0) {
		r = 0;
		goto out;
	}
	for (uint64_t k = 1; k <= steps && r < 0; k++)
		if (!ref_step(one, two, &x, &now, k, counts))
			r = (int64_t)k;
out:
	free(one);
	free(two);
	return r;
}

/* l25gc_qos_fill_check compares qos_fill and qos_bucket_refill with the
 * 128-bit versions on n random cases drawn around their edges (products
 * beyond 64 bits, at and next to the room left, a bucket above its size
 * or in debt): how many differ. */
uint64_t l25gc_qos_fill_check(uint64_t seed, uint64_t n)
{
	uint64_t x = seed | 1, bad = 0;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t cap = ref_rnd(&x) % 8 == 0 ? ref_rnd(&x) % 4 : ref_rnd(&x) >> (2 + ref_rnd(&x) % 60);
		uint64_t rate = ref_rnd(&x) >> (ref_rnd(&x) % 64), dt = ref_rnd(&x) >> (ref_rnd(&x) % 64);
		uint64_t tok = ref_rnd(&x) % 4 == 0 ? cap - ref_rnd(&x) % (cap + 1) : ref_rnd(&x) % (cap + 2 + cap / 8);
		if (rate != 0 && ref_rnd(&x) % 4 == 0) /* a product right at the room, or one next to it */
			dt = (cap > tok ? cap - tok : 0) / rate + ref_rnd(&x) % 3;
		if (qos_fill(tok, cap, rate, dt) != ref_fill(tok, cap, rate, dt))
			bad++;
		cap &= (QOS_MAX_CREDIT - 1);
		struct qos_bucket a = {.cap = (int64_t)cap, .rate = rate, .last = 1};
		a.tokens = ref_rnd(&x) % 2 ? (int64_t)(tok & (QOS_MAX_CREDIT - 1)) : -(int64_t)(ref_rnd(&x) % (cap + 1));
		if (ref_rnd(&x) % 2 == 0 && a.tokens > a.cap)
			a.tokens = a.cap;
		struct qos_bucket b = a;
		uint64_t now = 1 + (dt >> 1);
		qos_bucket_refill(&a, now);
		ref_bucket_refill(&b, now);
		if (memcmp(&a, &b, sizeof(a)) != 0)
			bad++;
	}
	return bad;
}
