/*
 * qos_shaper.h — one PDU session's shaper in one direction: enforces the
 * Session-AMBR (TS 23.501 5.7.2.6) and shares it fairly among the
 * session's QoS flows (qos_fair.h). Shaping queues, it does not drop what
 * it can send later.
 *
 * Per flow: the trTCM (red dropped: above the MBR; green and yellow queued
 * in one FIFO, so a flow is never reordered, TS 23.501 5.7.1.1 one
 * forwarding treatment per QoS flow), a bounded queue (bytes, or time at
 * the flow's share; tail drop counted per colour), and a "share" bucket
 * filled at the flow's fair rate. Per session: the AMBR bucket.
 *
 * qos_dequeue, called by the forwarding loop every iteration with "now",
 * returns at most max packets, in three passes, so no flow stalls another:
 *   1. green heads on their share's credit (the GBR part first), round
 *      robin one packet per flow per round,
 *   2. any head on its share's credit, likewise,
 *   3. borrowing: what the AMBR bucket holds beyond the shares (a flow that
 *      sends less than its share leaves it there) goes to green heads
 *      first, then to the backlogged flows by deficit round robin with a
 *      quantum proportional to weight, so unused bandwidth is redistributed
 *      at once (work conserving) and max-min fairly; the meter already
 *      capped each flow at its MBR.
 * Work per call is bounded: each step sends a packet, ends the call, or
 * moves the round robin on (a DRR cycle without a send grows every deficit
 * by a quantum, so at most QOS_MAX_PKT_BYTES / QOS_QUANTUM_BYTES cycles).
 * Passes 1-2 may take the AMBR bucket into debt up to one bucket size,
 * pass 3 only spends credit it holds, so a flow's share is never lost to
 * a borrower and the session stays within its AMBR. Nothing waits: a head
 * without credit stays queued until a later call.
 *
 * A flow is active from its first packet until its queue has been empty for
 * idle_ns; the shares are recomputed when that set changes and when the
 * rules change (qos_shaper_configure), never per packet.
 *
 * A shaper has two parts: the hot one (struct qos_shaper_hot, 1152 bytes:
 * what a packet sent at once reads and writes) and the cold one (struct
 * qos_shaper_cold: configuration, counters, the queues, ~18 KB). struct
 * qos_shaper holds both in one piece; UPF-U keeps the hot parts in a dense
 * array apart from the cold ones and calls the qos_ref_* functions with a
 * struct qos_ref naming the two. Included by qos.h.
 */
#ifndef L25GC_QOS_SHAPER_H
#define L25GC_QOS_SHAPER_H

struct qos_flow_conf {
	uint64_t gbr_bps;     /* GBR (the meter's CIR); 0 = non-GBR */
	uint64_t mbr_bps;     /* MBR (the meter's PIR); 0 = none, the AMBR caps it */
	uint64_t cbs_bytes;   /* meter bursts; 0 = rate × meter_ns */
	uint64_t pbs_bytes;
	uint64_t queue_bytes; /* queue bound in bytes; 0 = queue_ns of the flow's share */
	uint64_t queue_ns;    /* 0 = QOS_DEFAULT_QUEUE_NS */
	uint32_t weight;      /* share of the excess; 0 = 1 */
	uint32_t in_use;      /* 0: no such flow */
};

struct qos_shaper_conf {
	uint64_t ambr_bps; /* Session-AMBR of this direction */
	uint64_t hz;       /* ticks per second of the caller's clock */
	uint64_t burst_ns; /* window of derived bursts; 0 = QOS_DEFAULT_BURST_NS */
	uint64_t meter_ns; /* window of the meters' derived CBS/PBS; 0 = QOS_DEFAULT_METER_NS */
	uint64_t idle_ns;  /* empty this long: inactive; 0 = QOS_DEFAULT_IDLE_NS */
	uint32_t nflows;
	uint32_t pad;
	struct qos_flow_conf flow[QOS_MAX_FLOWS];
};

/* A bucket of signed credit: a packet may leave a full bucket even when it
 * is longer than the bucket, leaving a debt, so no rate is too low to pass
 * a frame (the published shaper stalled below 1 Mbit/s). */
struct qos_bucket {
	int64_t tokens, cap;
	uint64_t rate; /* bit/s = credit per tick */
	uint64_t last;
};

struct qos_slot {
	uint64_t handle; /* the caller's: an mbuf pointer, a pool index */
	uint32_t len;
	uint8_t colour;
	uint8_t pad[3];
};

/* Counters (Go reads them by name). A green packet qos_submit sends at
 * once is counted in the flow's straight_* pair instead (struct qos_flow),
 * as both in and out: qos_flow_stats_read adds them up. */
struct qos_flow_stats {
	uint64_t in_pkts[QOS_COLOURS];   /* metered; red ones dropped */
	uint64_t out_pkts[2];            /* sent, green and yellow */
	uint64_t out_bytes[2];
	uint64_t in_bytes[QOS_COLOURS];
	uint64_t full_pkts[2], full_bytes[2]; /* tail drops, green and yellow */
	uint64_t borrowed_bytes;              /* sent beyond the share */
};

/* A flow's per-packet part (issue 13: with thousands of sessions every
 * line a packet touches misses): what qos_submit reads and writes for a
 * green packet it sends at once, two cache lines — line 0 the meter, share
 * bucket and arrival time, line 1 the meter's profile and the straight
 * counters. A flow is in use when its profile's unit is not 0 (unused
 * flows are zeroed), so the per-packet check reads line 1 only. */
struct qos_flow_hot {
	/* line 0: changes per packet */
	struct qos_trtcm meter;
	struct qos_bucket share;
	uint64_t last_arrival;
	/* line 1: read per packet; counts the green packets sent at once */
	struct qos_trtcm_profile prof;
	uint64_t straight_pkts, straight_bytes;
};

/* The rest of a flow: touched by a yellow, queued or dropped packet, a
 * backlog, or a change of rules. */
struct qos_flow_cold {
	uint32_t weight, in_use;
	int64_t deficit;                /* deficit round robin, bytes */
	struct qos_flow_stats st;
	uint64_t qlimit, qbytes;        /* bound and content of the queue */
	uint32_t head, count;
	uint64_t gbr, mbr;
	uint64_t queue_bytes, queue_ns; /* as configured */
	struct qos_slot q[QOS_QUEUE_SLOTS];
};

/* A shaper's per-packet part: line 0 is what qos_submit reads of the
 * session per packet (the AMBR bucket, the byte's credit, the flow sets),
 * then each flow's two hot lines. 1152 bytes (18 lines, a multiple of
 * 128): UPF-U keeps these in one dense array apart from the queues, so a
 * green packet of a session with nothing queued touches 3 lines of a
 * 1 KB record instead of 3 lines scattered over a 19 KB one (issue 13: at
 * 10,000 sessions every shaper sat on its own page). */
struct qos_shaper_hot {
	/* line 0: per packet */
	struct qos_bucket ambr;
	uint64_t unit;
	uint64_t expire_at;   /* qos_submit: when to look for idle flows next */
	uint64_t idle_ticks;
	uint32_t backlog;     /* bit i: flow i has queued packets */
	uint32_t active;      /* bit i: flow i takes part in the fair share */
	struct qos_flow_hot flow[QOS_MAX_FLOWS];
	uint8_t pad[64];      /* 128-byte records: line pairs stay whole */
};

/* A shaper's cold part: configuration, the dequeue's turns, the queues. */
struct qos_shaper_cold {
	uint64_t hz;
	uint64_t ambr_bps, burst_ns;
	uint64_t rebalances;  /* how often the shares were recomputed */
	uint32_t nflows;
	uint32_t flags;       /* the last fair share's enum qos_fair_flags */
	uint32_t rr;
	uint32_t brr, brr_granted; /* deficit round robin: whose turn, quantum given */
	uint32_t pad[3];
	struct qos_flow_cold flow[QOS_MAX_FLOWS];
};

/* A shaper in one piece (package qos, tests, benchmarks). UPF-U keeps the
 * two parts in separate arrays and passes a struct qos_ref. */
struct qos_shaper {
	struct qos_shaper_hot hot;
	struct qos_shaper_cold cold;
};

/* qos_ref names one shaper's two parts wherever they live; every function
 * below takes one by value (two pointers, passed in registers). */
struct qos_ref {
	struct qos_shaper_hot *h;
	struct qos_shaper_cold *c;
};

static inline struct qos_ref qos_ref_of(struct qos_shaper *s) { return (struct qos_ref){&s->hot, &s->cold}; }

enum qos_verdict {
	QOS_QUEUED_GREEN = 0,
	QOS_QUEUED_YELLOW = 1,
	QOS_DROP_RED = 2,     /* above the MBR (RFC 2698 red) */
	QOS_DROP_FULL = 3,    /* the flow's queue is full (tail drop) */
	QOS_DROP_NO_FLOW = 4, /* no such flow: the caller's rules are out of step */
	QOS_DROP_LEN = 5,     /* length 0 or above QOS_MAX_PKT_BYTES */
	QOS_SENT_GREEN = 6,   /* qos_submit: not queued, send it now */
	QOS_SENT_YELLOW = 7,
};

/* What qos_dequeue hands back: send it now. */
struct qos_out {
	uint64_t handle;
	uint32_t len;
	uint8_t flow;
	uint8_t colour;
	uint8_t borrowed; /* 1: sent on the AMBR's spare credit, beyond the share */
	uint8_t pad;
};

/* Fixed shapes, so a shaper can sit in a table another build reads (UPF-U's
 * shared tables pin their layouts the same way, shm_layout.h). */
_Static_assert(sizeof(struct qos_slot) == 16, "qos_slot is 16 bytes");
_Static_assert(sizeof(struct qos_out) == 16, "qos_out is 16 bytes");
_Static_assert((QOS_QUEUE_SLOTS & (QOS_QUEUE_SLOTS - 1)) == 0, "QOS_QUEUE_SLOTS is a power of 2");
_Static_assert(QOS_MAX_FLOWS <= 32, "flow sets are 32-bit masks");
/* The hot lines described at struct qos_flow_hot and struct qos_shaper_hot. */
_Static_assert(sizeof(struct qos_trtcm) + sizeof(struct qos_bucket) + 8 == 64, "a flow's line 0 is its meter, share and arrival");
_Static_assert(__builtin_offsetof(struct qos_flow_hot, prof) == 64, "a flow's profile starts line 1");
_Static_assert(sizeof(struct qos_flow_hot) == 128, "a flow's hot part is two lines");
_Static_assert(__builtin_offsetof(struct qos_shaper_hot, flow) == 64, "a shaper's per-packet fields fill line 0");
_Static_assert(sizeof(struct qos_shaper_hot) % 128 == 0, "hot records keep line pairs whole");
_Static_assert(sizeof(struct qos_shaper_cold) % 64 == 0, "cold parts stay line aligned");
_Static_assert(__builtin_offsetof(struct qos_shaper_cold, flow) == 64, "a shaper's cold header is one line");

#define QOS_BIT(i) (1u << (i))

/* ---- buckets -------------------------------------------------------------- */

static inline void qos_bucket_refill(struct qos_bucket *b, uint64_t now)
{
	if (now <= b->last)
		return;
	/* cap - tokens fits 64 bits unsigned (tokens >= -cap - one packet);
	 * a product beyond 64 bits fills it (qos_fill) */
	uint64_t room = b->tokens >= b->cap ? 0 : (uint64_t)(b->cap - b->tokens), add;
	if (__builtin_mul_overflow(b->rate, now - b->last, &add) || add >= room)
		b->tokens = b->cap;
	else
		b->tokens += (int64_t)add;
	b->last = now;
}

/* qos_bucket_holds: the bucket has need credit, or is full (and not empty
 * by size: a rate of 0 never passes anything). */
static inline int qos_bucket_holds(const struct qos_bucket *b, int64_t need)
{
	return b->tokens >= need || (b->cap > 0 && b->tokens == b->cap);
}

/* qos_bucket_set changes a bucket's rate and size from now on: what it
 * earned at the old rate until now stays, capped at the new size. */
static inline void qos_bucket_set(struct qos_bucket *b, uint64_t rate, uint64_t burst_ns, uint64_t unit, uint64_t now)
{
	qos_bucket_refill(b, now);
	uint64_t cap;
	qos_burst_credit(rate, 0, burst_ns, unit, &cap); /* derived: cannot fail */
	b->rate = rate;
	b->cap = (int64_t)cap;
	if (b->tokens > b->cap)
		b->tokens = b->cap;
	if (b->last < now)
		b->last = now;
}

/* ---- shares ---------------------------------------------------------------- */

static inline void qos_flow_set_rate(struct qos_ref s, uint32_t i, uint64_t rate, uint64_t now)
{
	struct qos_flow_cold *f = &s.c->flow[i];
	qos_bucket_set(&s.h->flow[i].share, rate, s.c->burst_ns, s.h->unit, now);
	if (f->queue_bytes != 0) {
		f->qlimit = f->queue_bytes;
		return;
	}
	/* A time bound holds that long at the share the flow is sure to get. */
	f->qlimit = qos_window_bytes(rate, f->queue_ns ? f->queue_ns : QOS_DEFAULT_QUEUE_NS);
	if (f->qlimit < QOS_MIN_BURST_BYTES)
		f->qlimit = QOS_MIN_BURST_BYTES;
}

/* qos_rebalance recomputes every flow's share (qos_fair.h). */
static inline void qos_rebalance(struct qos_ref s, uint64_t now)
{
	struct qos_fair_flow ff[QOS_MAX_FLOWS];
	struct qos_fair_result r;
	for (uint32_t i = 0; i < s.c->nflows; i++) {
		const struct qos_flow_cold *f = &s.c->flow[i];
		ff[i].gbr_bps = f->gbr;
		ff[i].mbr_bps = f->mbr;
		ff[i].weight = f->weight;
		ff[i].active = f->in_use && (s.h->active & QOS_BIT(i));
	}
	qos_fair_share(s.c->ambr_bps, ff, s.c->nflows, &r); /* validated by configure */
	s.c->flags = r.flags;
	s.c->rebalances++;
	for (uint32_t i = 0; i < s.c->nflows; i++)
		qos_flow_set_rate(s, i, r.rate_bps[i], now);
}

/* qos_activate: a flow's first packet after a pause joins the fair share.
 * Its share bucket starts empty (an idle flow's is 0): its first packets
 * go on the AMBR bucket's spare, so a session's burst stays within the
 * AMBR bucket however many flows wake up. */
static inline void qos_activate(struct qos_ref s, uint32_t i, uint64_t now)
{
	s.h->active |= QOS_BIT(i);
	qos_rebalance(s, now);
}

/* qos_expire_idle takes flows empty for idle_ticks out of the fair share. */
static inline void qos_expire_idle(struct qos_ref s, uint64_t now)
{
	uint32_t idle = s.h->active & ~s.h->backlog, gone = 0;
	for (uint32_t i = 0; idle; i++, idle >>= 1)
		if ((idle & 1) && now >= s.h->flow[i].last_arrival && now - s.h->flow[i].last_arrival >= s.h->idle_ticks)
			gone |= QOS_BIT(i);
	if (gone) {
		s.h->active &= ~gone;
		qos_rebalance(s, now);
	}
}

/* ---- configuration --------------------------------------------------------- */

static inline int qos_shaper_check(struct qos_ref s, const struct qos_shaper_conf *c, struct qos_trtcm_profile *prof)
{
	if (c->hz == 0 || c->hz > 100000000000ull)
		return QOS_ERR_HZ;
	if (c->ambr_bps == 0)
		return QOS_ERR_AMBR;
	if (c->nflows > QOS_MAX_FLOWS)
		return QOS_ERR_NFLOWS;
	/* Credit of queued packets was counted in the old clock's units. */
	if (s.c->hz != 0 && s.c->hz != c->hz && s.h->backlog)
		return QOS_ERR_BUSY;
	for (uint32_t i = 0; i < QOS_MAX_FLOWS; i++) {
		const struct qos_flow_conf *fc = &c->flow[i];
		int used = i < c->nflows && fc->in_use;
		if (!used && s.c->flow[i].count != 0)
			return QOS_ERR_BUSY;
		if (!used)
			continue;
		struct qos_trtcm_conf mc = {fc->gbr_bps, fc->mbr_bps, fc->cbs_bytes, fc->pbs_bytes,
					    c->meter_ns ? c->meter_ns : QOS_DEFAULT_METER_NS};
		int e = qos_trtcm_profile_init(&prof[i], &mc, c->hz);
		if (e != QOS_OK)
			return e;
		if (fc->queue_bytes > (uint64_t)1 << 40)
			return QOS_ERR_BURST;
	}
	return QOS_OK;
}

/* qos_flow_clear zeroes flow i, both parts (not in use). */
static inline void qos_flow_clear(struct qos_ref s, uint32_t i)
{
	memset(&s.h->flow[i], 0, sizeof(s.h->flow[i]));
	memset(&s.c->flow[i], 0, sizeof(s.c->flow[i]));
}

static inline void qos_flow_configure(struct qos_ref s, uint32_t i, const struct qos_flow_conf *conf, const struct qos_trtcm_profile *p, int fresh, uint64_t now)
{
	struct qos_flow_hot *fh = &s.h->flow[i];
	struct qos_flow_cold *f = &s.c->flow[i];
	if (fresh || !f->in_use) {
		qos_flow_clear(s, i);
		fh->prof = *p;
		qos_trtcm_init(&fh->meter, p, now);
		fh->share.last = now;
		s.h->active &= ~QOS_BIT(i);
	} else {
		fh->prof = *p;
		qos_trtcm_reprofile(&fh->meter, p);
	}
	f->gbr = conf->gbr_bps;
	f->mbr = conf->mbr_bps;
	f->queue_bytes = conf->queue_bytes;
	f->queue_ns = conf->queue_ns;
	f->weight = conf->weight ? conf->weight : 1;
	f->in_use = 1;
}

/* qos_ref_configure applies the rules (all or nothing) and recomputes the
 * shares: a flow keeps its queue, meter credit and counters across a
 * change of its rates; a flow removed must be empty (qos_flush). A new
 * clock rate restarts every meter and bucket. */
static inline int qos_ref_configure(struct qos_ref s, const struct qos_shaper_conf *c, uint64_t now)
{
	struct qos_trtcm_profile prof[QOS_MAX_FLOWS];
	int e = qos_shaper_check(s, c, prof);
	if (e != QOS_OK)
		return e;
	int fresh = s.c->hz != c->hz;
	s.c->hz = c->hz;
	s.h->unit = qos_unit(c->hz);
	s.c->ambr_bps = c->ambr_bps;
	s.c->burst_ns = c->burst_ns ? c->burst_ns : QOS_DEFAULT_BURST_NS;
	s.h->idle_ticks = qos_ticks(c->idle_ns ? c->idle_ns : QOS_DEFAULT_IDLE_NS, c->hz);
	if (fresh)
		s.h->ambr = (struct qos_bucket){.last = now};
	qos_bucket_set(&s.h->ambr, c->ambr_bps, s.c->burst_ns, s.h->unit, now);
	if (fresh)
		s.h->ambr.tokens = s.h->ambr.cap;
	uint32_t used = 0;
	for (uint32_t i = 0; i < QOS_MAX_FLOWS; i++) {
		if (i < c->nflows && c->flow[i].in_use) {
			qos_flow_configure(s, i, &c->flow[i], &prof[i], fresh, now);
			used |= QOS_BIT(i);
		} else {
			qos_flow_clear(s, i);
		}
	}
	s.c->nflows = c->nflows;
	s.h->active &= used;
	s.h->backlog &= used;
	if (s.c->rr >= s.c->nflows)
		s.c->rr = 0;
	if (s.c->brr >= s.c->nflows)
		s.c->brr = 0, s.c->brr_granted = 0;
	qos_rebalance(s, now);
	return QOS_OK;
}

/* qos_ref_init starts a shaper from nothing. */
static inline int qos_ref_init(struct qos_ref s, const struct qos_shaper_conf *c, uint64_t now)
{
	memset(s.h, 0, sizeof(*s.h));
	memset(s.c, 0, sizeof(*s.c));
	return qos_ref_configure(s, c, now);
}

/* ---- per packet ------------------------------------------------------------ */

/* qos_count_in counts a metered packet of colour c in the flow's in
 * counters (a green one qos_submit sends at once goes to straight_*). */
static inline void qos_count_in(struct qos_flow_cold *f, enum qos_colour c, uint32_t len)
{
	f->st.in_pkts[c]++;
	f->st.in_bytes[c] += len;
}

/* qos_admit checks and meters a packet of flow i (RFC 2698; colour-blind
 * callers pass QOS_GREEN as in), activating the flow in the fair share;
 * the caller counts it (a red one is counted here). Its colour, or a
 * QOS_DROP_* verdict + QOS_COLOURS; *need is its credit (len × unit),
 * what the shaper's buckets charge too. */
static inline int qos_admit(struct qos_ref s, uint32_t i, uint64_t now, uint32_t len, enum qos_colour in, int64_t *need)
{
	/* Flows from nflows on are zeroed (qos_ref_configure) and a flow in
	 * use has a unit (8 × hz), so the profile's line says it, without
	 * reading nflows from the shaper's cold part. */
	if (i >= QOS_MAX_FLOWS || s.h->flow[i].prof.unit == 0)
		return QOS_COLOURS + QOS_DROP_NO_FLOW;
	if (len == 0 || len > QOS_MAX_PKT_BYTES)
		return QOS_COLOURS + QOS_DROP_LEN;
	struct qos_flow_hot *f = &s.h->flow[i];
	if (now > f->last_arrival)
		f->last_arrival = now;
	if (!(s.h->active & QOS_BIT(i)))
		qos_activate(s, i, now);
	/* A flow's profile and its shaper count credit in the same unit (both
	 * qos_unit of the shaper's clock, qos_ref_configure): one product
	 * serves the meter and the buckets. */
	*need = (int64_t)((uint64_t)len * f->prof.unit);
	qos_trtcm_refill(&f->meter, &f->prof, now);
	enum qos_colour c = qos_trtcm_charge(&f->meter, &f->prof, (uint64_t)*need, in);
	if (c == QOS_RED) {
		qos_count_in(&s.c->flow[i], c, len);
		return QOS_COLOURS + QOS_DROP_RED;
	}
	return (int)c;
}

/* qos_queue puts a metered packet of colour c at flow i's tail, or tail
 * drops it. */
static inline enum qos_verdict qos_queue(struct qos_ref s, uint32_t i, uint64_t handle, uint32_t len, enum qos_colour c)
{
	struct qos_flow_cold *f = &s.c->flow[i];
	/* An empty queue always takes one packet, however long. */
	if (f->count == QOS_QUEUE_SLOTS || (f->count != 0 && f->qbytes + len > f->qlimit)) {
		f->st.full_pkts[c]++;
		f->st.full_bytes[c] += len;
		return QOS_DROP_FULL;
	}
	struct qos_slot *q = &f->q[(f->head + f->count) & (QOS_QUEUE_SLOTS - 1)];
	q->handle = handle;
	q->len = len;
	q->colour = (uint8_t)c;
	f->count++;
	f->qbytes += len;
	s.h->backlog |= QOS_BIT(i);
	return c == QOS_GREEN ? QOS_QUEUED_GREEN : QOS_QUEUED_YELLOW;
}

/* qos_ref_enqueue meters a packet of flow i and queues it unless it is red
 * or the queue is full; on a drop the packet stays the caller's to free.
 * Colour-blind callers pass QOS_GREEN as in (RFC 2698 section 3). */
static inline enum qos_verdict qos_ref_enqueue(struct qos_ref s, uint32_t i, uint64_t now, uint64_t handle, uint32_t len, enum qos_colour in)
{
	int64_t need;
	int c = qos_admit(s, i, now, len, in, &need);
	if (c >= QOS_COLOURS)
		return (enum qos_verdict)(c - QOS_COLOURS);
	qos_count_in(&s.c->flow[i], (enum qos_colour)c, len);
	return qos_queue(s, i, handle, len, (enum qos_colour)c);
}

/* qos_pop takes flow i's head into o and charges it. */
static inline void qos_pop(struct qos_ref s, uint32_t i, struct qos_out *o, int borrowed)
{
	struct qos_flow_cold *f = &s.c->flow[i];
	const struct qos_slot *q = &f->q[f->head];
	int64_t need = (int64_t)q->len * (int64_t)s.h->unit;
	o->handle = q->handle;
	o->len = q->len;
	o->flow = (uint8_t)i;
	o->colour = q->colour;
	o->borrowed = (uint8_t)borrowed;
	o->pad = 0;
	f->head = (f->head + 1) & (QOS_QUEUE_SLOTS - 1);
	f->count--;
	f->qbytes -= q->len;
	if (f->count == 0)
		s.h->backlog &= ~QOS_BIT(i);
	s.h->ambr.tokens -= need;
	if (borrowed)
		f->st.borrowed_bytes += o->len;
	else
		s.h->flow[i].share.tokens -= need;
	f->st.out_pkts[o->colour]++;
	f->st.out_bytes[o->colour] += o->len;
}

static inline const struct qos_slot *qos_head(const struct qos_flow_cold *f)
{
	return &f->q[f->head];
}

/* Pass 1 (green_only) and 2: heads on their share's credit; the AMBR may
 * go into debt up to its size so that borrowers never take a share. */
static inline unsigned qos_serve_shares(struct qos_ref s, struct qos_out *out, unsigned n, unsigned max, int green_only)
{
	for (;;) {
		unsigned sent = 0;
		for (uint32_t k = 0, i = s.c->rr; k < s.c->nflows && n < max; k++, i = i + 1 == s.c->nflows ? 0 : i + 1) {
			if (!(s.h->backlog & QOS_BIT(i)))
				continue;
			const struct qos_slot *q = qos_head(&s.c->flow[i]);
			int64_t need = (int64_t)q->len * (int64_t)s.h->unit;
			if (green_only && q->colour != QOS_GREEN)
				continue;
			if (!qos_bucket_holds(&s.h->flow[i].share, need))
				continue;
			if (s.h->ambr.tokens + s.h->ambr.cap < need && !qos_bucket_holds(&s.h->ambr, need))
				continue;
			qos_pop(s, i, &out[n++], 0);
			sent++;
		}
		if (sent == 0 || n >= max)
			return n;
	}
}

/* Pass 3a: green heads without share credit (a flow that just woke up,
 * or GBRs scaled below their guarantee) borrow first, round robin. */
static inline unsigned qos_serve_green_borrowers(struct qos_ref s, struct qos_out *out, unsigned n, unsigned max)
{
	for (;;) {
		unsigned sent = 0;
		for (uint32_t k = 0, i = s.c->rr; k < s.c->nflows && n < max; k++, i = i + 1 == s.c->nflows ? 0 : i + 1) {
			if (!(s.h->backlog & QOS_BIT(i)))
				continue;
			const struct qos_slot *q = qos_head(&s.c->flow[i]);
			if (q->colour != QOS_GREEN || !qos_bucket_holds(&s.h->ambr, (int64_t)q->len * (int64_t)s.h->unit))
				continue;
			qos_pop(s, i, &out[n++], 1);
			sent++;
		}
		if (sent == 0 || n >= max)
			return n;
	}
}

/* qos_borrow_next hands the deficit round robin's turn to the next flow. */
static inline void qos_borrow_next(struct qos_ref s)
{
	s.c->brr = s.c->brr + 1 >= s.c->nflows ? 0 : s.c->brr + 1;
	s.c->brr_granted = 0;
}

/* Pass 3b: the AMBR's spare credit by deficit round robin (Shreedhar and
 * Varghese): the turn stays with a flow across calls until it has spent
 * its quantum (proportional to its weight), so the spare, which arrives a
 * few bytes per call, is split by weight whatever the call pattern. */
static inline unsigned qos_serve_borrowers(struct qos_ref s, struct qos_out *out, unsigned n, unsigned max)
{
	while (n < max && s.h->backlog && s.h->ambr.tokens > 0) {
		uint32_t i = s.c->brr;
		struct qos_flow_cold *f = &s.c->flow[i];
		if (!(s.h->backlog & QOS_BIT(i))) {
			f->deficit = 0; /* DRR: an empty flow keeps no credit */
			qos_borrow_next(s);
			continue;
		}
		if (!s.c->brr_granted) {
			f->deficit += (int64_t)QOS_QUANTUM_BYTES * f->weight;
			s.c->brr_granted = 1;
		}
		while (n < max && (s.h->backlog & QOS_BIT(i))) {
			const struct qos_slot *q = qos_head(f);
			if (f->deficit < (int64_t)q->len)
				break;
			if (!qos_bucket_holds(&s.h->ambr, (int64_t)q->len * (int64_t)s.h->unit))
				return n; /* the spare is spent: the turn stays here */
			f->deficit -= q->len;
			qos_pop(s, i, &out[n++], 1);
		}
		if (n >= max && (s.h->backlog & QOS_BIT(i)) && f->deficit >= (int64_t)qos_head(f)->len)
			return n; /* out of room, not of deficit: the turn stays */
		if (!(s.h->backlog & QOS_BIT(i)))
			f->deficit = 0;
		qos_borrow_next(s);
	}
	return n;
}

/* qos_ref_dequeue returns in out (room for max) the packets to send now. */
static inline unsigned qos_ref_dequeue(struct qos_ref s, uint64_t now, struct qos_out *out, unsigned max)
{
	qos_expire_idle(s, now);
	if (!s.h->backlog)
		return 0;
	qos_bucket_refill(&s.h->ambr, now);
	for (uint32_t b = s.h->backlog, i = 0; b; i++, b >>= 1)
		if (b & 1)
			qos_bucket_refill(&s.h->flow[i].share, now);
	unsigned n = qos_serve_shares(s, out, 0, max, 1);
	n = qos_serve_shares(s, out, n, max, 0);
	n = qos_serve_green_borrowers(s, out, n, max);
	n = qos_serve_borrowers(s, out, n, max);
	s.c->rr = s.c->rr + 1 >= s.c->nflows ? 0 : s.c->rr + 1;
	return n;
}

/* qos_submit_straight is qos_ref_submit's common case in one pass (issue
 * 13: what every packet of a session within its rates does): a green
 * packet of an active flow of a session with nothing queued, between idle
 * checks, that its meter (green), its share and the AMBR all pay for. It
 * refills the flow's meter and share and the AMBR bucket, and when they
 * pay, charges them as qos_ref_submit would and returns 1 (sent green, *o
 * filled). Else 0, having changed nothing but the refills the general
 * path then does too, for the same packet at the same time, where a
 * refill at an unchanged time adds nothing: it runs exactly as without
 * this one (TestSubmitMatchesPerPacketVersion, whose clock also steps
 * back, where an extra refill would show). Needs only
 * the hot part, with few values live, so a caller that inlines it keeps
 * them in registers. */
static inline int qos_submit_straight(struct qos_shaper_hot *h, uint32_t i, uint64_t now, uint64_t handle, uint32_t len,
				      enum qos_colour in, struct qos_out *o)
{
	if (in != QOS_GREEN || i >= QOS_MAX_FLOWS || len == 0 || len > QOS_MAX_PKT_BYTES)
		return 0;
	if (h->backlog || now >= h->expire_at || !(h->active & QOS_BIT(i)))
		return 0;
	struct qos_flow_hot *f = &h->flow[i];
	/* unit 0: no such flow (qos_admit); else the shaper's unit too */
	uint64_t b = (uint64_t)len * f->prof.unit;
	if (b == 0)
		return 0;
	if (now > f->last_arrival)
		f->last_arrival = now;
	qos_trtcm_refill(&f->meter, &f->prof, now);
	/* RFC 2698 green: Tp and Tc both hold B (qos_trtcm_charge). A red
	 * packet leaves the buckets below unrefilled, as the general path. */
	if ((!f->prof.no_peak && f->meter.tp < b) || f->meter.tc < b)
		return 0;
	qos_bucket_refill(&h->ambr, now);
	qos_bucket_refill(&f->share, now);
	int64_t need = (int64_t)b;
	/* on the flow's share, the AMBR within its debt allowance (qos_ref_submit's own) */
	if (!qos_bucket_holds(&f->share, need) || (h->ambr.tokens + h->ambr.cap < need && !qos_bucket_holds(&h->ambr, need)))
		return 0;
	if (!f->prof.no_peak)
		f->meter.tp -= b;
	f->meter.tc -= b;
	h->ambr.tokens -= need;
	f->share.tokens -= need;
	f->straight_pkts++;
	f->straight_bytes += len;
	*o = (struct qos_out){.handle = handle, .len = len, .flow = (uint8_t)i, .colour = QOS_GREEN};
	return 1;
}

/* qos_ref_submit is qos_ref_enqueue with a fast path (issue 13: QoS must
 * cost the fast path little when every packet is of another session).
 * When the session has nothing queued, a packet its flow's share can pay
 * for (the AMBR within its debt allowance, as passes 1-2 of qos_dequeue),
 * or else the AMBR's spare credit (pass 3), leaves at once: *o says so and
 * the caller sends it. That is exactly what qos_dequeue would hand back
 * for it if called right after queueing it, charged the same; with a
 * backlog the packet queues behind it (order within a flow, green before
 * yellow across flows, DRR among borrowers). A packet that cannot pay
 * queues, and the caller lists the session for qos_dequeue; on
 * QOS_DROP_FULL o->colour is the colour the meter gave. Idle flows are
 * expired here too, at most 8 times per idle time, since a session that
 * never queues is never dequeued. A green packet sent at once touches the
 * hot part only: its line 0 and the flow's two lines. */
static inline enum qos_verdict qos_ref_submit(struct qos_ref s, uint32_t i, uint64_t now, uint64_t handle, uint32_t len,
					      enum qos_colour in, struct qos_out *o)
{
	if (qos_submit_straight(s.h, i, now, handle, len, in, o))
		return QOS_SENT_GREEN;
	int64_t need;
	int c = qos_admit(s, i, now, len, in, &need);
	if (c >= QOS_COLOURS)
		return (enum qos_verdict)(c - QOS_COLOURS);
	struct qos_flow_hot *f = &s.h->flow[i];
	o->colour = (uint8_t)c; /* a tail drop's colour, without reading the counters' cold part */
	if (s.h->backlog) {
		qos_count_in(&s.c->flow[i], (enum qos_colour)c, len);
		return qos_queue(s, i, handle, len, (enum qos_colour)c);
	}
	if (now >= s.h->expire_at) {
		qos_expire_idle(s, now);
		s.h->expire_at = now + (s.h->idle_ticks >> 3);
	}
	qos_bucket_refill(&s.h->ambr, now);
	qos_bucket_refill(&f->share, now);
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
	if (c == QOS_GREEN) { /* in and out at once: one pair on line 1 */
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

/* qos_ref_flow_stats is flow i's counters, the straight pair added to
 * green's in and out. */
static inline struct qos_flow_stats qos_ref_flow_stats(struct qos_ref s, uint32_t i)
{
	struct qos_flow_stats st = s.c->flow[i].st;
	const struct qos_flow_hot *f = &s.h->flow[i];
	st.in_pkts[QOS_GREEN] += f->straight_pkts;
	st.in_bytes[QOS_GREEN] += f->straight_bytes;
	st.out_pkts[0] += f->straight_pkts;
	st.out_bytes[0] += f->straight_bytes;
	return st;
}

/* qos_ref_flush takes up to max queued packets of flow i back, unsent, for
 * the caller to free (a flow being removed, a session being deleted). */
static inline unsigned qos_ref_flush(struct qos_ref s, uint32_t i, struct qos_out *out, unsigned max)
{
	if (i >= QOS_MAX_FLOWS)
		return 0;
	struct qos_flow_cold *f = &s.c->flow[i];
	unsigned n = 0;
	for (; n < max && f->count; n++) {
		const struct qos_slot *q = qos_head(f);
		out[n] = (struct qos_out){.handle = q->handle, .len = q->len, .flow = (uint8_t)i, .colour = q->colour};
		f->head = (f->head + 1) & (QOS_QUEUE_SLOTS - 1);
		f->count--;
		f->qbytes -= q->len;
	}
	if (f->count == 0)
		s.h->backlog &= ~QOS_BIT(i);
	return n;
}

/* ---- a shaper in one piece ---------------------------------------------------- */

static inline int qos_shaper_configure(struct qos_shaper *s, const struct qos_shaper_conf *c, uint64_t now)
{
	return qos_ref_configure(qos_ref_of(s), c, now);
}

static inline int qos_shaper_init(struct qos_shaper *s, const struct qos_shaper_conf *c, uint64_t now)
{
	return qos_ref_init(qos_ref_of(s), c, now);
}

static inline enum qos_verdict qos_enqueue(struct qos_shaper *s, uint32_t i, uint64_t now, uint64_t handle, uint32_t len, enum qos_colour in)
{
	return qos_ref_enqueue(qos_ref_of(s), i, now, handle, len, in);
}

static inline enum qos_verdict qos_submit(struct qos_shaper *s, uint32_t i, uint64_t now, uint64_t handle, uint32_t len,
					  enum qos_colour in, struct qos_out *o)
{
	return qos_ref_submit(qos_ref_of(s), i, now, handle, len, in, o);
}

static inline unsigned qos_dequeue(struct qos_shaper *s, uint64_t now, struct qos_out *out, unsigned max)
{
	return qos_ref_dequeue(qos_ref_of(s), now, out, max);
}

static inline unsigned qos_flush(struct qos_shaper *s, uint32_t i, struct qos_out *out, unsigned max)
{
	return qos_ref_flush(qos_ref_of(s), i, out, max);
}

static inline struct qos_flow_stats qos_flow_stats_read(struct qos_shaper *s, uint32_t i)
{
	return qos_ref_flow_stats(qos_ref_of(s), i);
}

/* qos_backlog: flows with queued packets; UPF-U keeps polling (and does not
 * sleep) while it is not 0. */
static inline uint32_t qos_backlog(const struct qos_shaper *s)
{
	return s->hot.backlog;
}

#endif
