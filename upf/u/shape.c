/* shape.c — fair QoS in UPF-U's fast path (issue 13, DESIGN.md "QoS"):
 * per session and direction a qos/ shaper (qos_shaper.h) enforces the
 * Session-AMBR (TS 23.501 5.7.2.6) and shares it fairly among the
 * session's QoS flows; per flow QER a trTCM (GBR = committed, MBR = peak,
 * TS 23.501 5.7.2.5, RFC 2698) drops red and queues green before yellow.
 *
 * Which rules are shaped (the contract with UPF-C, TS 29.244 5.2.4): a QER
 * with QFI 0 is session-level, its MBR of a direction the Session-AMBR,
 * listed last by every PDR of the session; a QER with QFI != 0 is a flow
 * QER, listed first; its weight (0 = 1) is the flow's share of the AMBR
 * left after the GBRs. A PDR without a flow QER is the default (non-GBR,
 * uncapped, weight 1) flow. A session without a session-level QER is not
 * shaped: its QERs' MBR buckets apply as before (pipeline.c police).
 *
 * Shapers come from a pool (upf.qos.max_shaped_sessions × 2): a shaper is
 * 19 KB, one per session slot would be GBs. A session the pool cannot
 * serve keeps the MBR buckets, counted as "unshaped". Each pool entry's
 * hot part (qos_shaper.h: 1152 bytes, what a packet sent at once touches)
 * sits in a dense array of its own, upfu_qos.hot, at the same index.
 *
 * A queued packet is a frame ready to leave (encapsulated, TTL done): its
 * handle is the mbuf pointer with the output port in bit 63 (user-space
 * pointers on x86-64 and arm64 stay below 2^48); its next hop is the
 * frame's IPv4 destination, as upfu_send_via takes it.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ip.h>

#include "shape.h"

#define PORT_BIT UPFU_SHAPE_PORT_BIT
#define DEQ_MAX UPFU_BURST
#define POLL_SHAPERS 64 /* backlogged sessions served per loop */
#define READ_TRIES 1000 /* a session being rewritten: try again at its next packet */

/* Every flow a shaper holds can have its own QER besides the session's. */
_Static_assert(UPF_MAX_QER >= QOS_MAX_FLOWS + 1, "UPF_MAX_QER holds a QER per shaped flow and the session QER");
_Static_assert(UPF_MAX_PDR >= 2 * QOS_MAX_FLOWS, "UPF_MAX_PDR holds an uplink and a downlink PDR per shaped flow");

static void pool_free(struct upfu_qos *q)
{
	if (q->pool != NULL)
		munmap(q->pool, q->pool_len);
	if (q->hot != NULL)
		munmap(q->hot, q->hot_len);
	q->pool = NULL;
	q->hot = NULL;
}

int upfu_qos_init(struct upfu *u, const struct upfu_conf *c, char *err, size_t n)
{
	struct upfu_qos *q = &u->qos;
	pool_free(q); /* a UPF-U started again in this process */
	free(q->map);
	free(q->free);
	free(q->busy);
	memset(q, 0, sizeof(*q));
	q->queue_ns = (uint64_t)c->qos_queue_us * 1000;
	if (c->qos_max_sessions == 0)
		return 0;
	q->max = c->qos_max_sessions * 2;
	q->pool = upfu_huge_map((size_t)q->max * sizeof(*q->pool), &q->pool_len);
	q->hot = upfu_huge_map((size_t)q->max * sizeof(*q->hot), &q->hot_len);
	q->map = malloc(sizeof(*q->map) * (size_t)u->t->max_sessions * 2);
	q->free = malloc(sizeof(*q->free) * q->max);
	q->busy = malloc(sizeof(*q->busy) * q->max);
	if (!q->pool || !q->hot || !q->map || !q->free || !q->busy) {
		snprintf(err, n, "upf.qos.max_shaped_sessions %u: out of memory", c->qos_max_sessions);
		return -1;
	}
	for (uint32_t i = 0; i < u->t->max_sessions * 2; i++)
		q->map[i] = -1;
	for (uint32_t i = 0; i < q->max; i++)
		q->free[q->nfree++] = q->max - 1 - i;
	q->by_slot = q->max >= u->t->max_sessions * 2;
	return 0;
}

/* pool_take is a free pool entry for slot's shaper of dir, -1 none. A pool
 * with room for every slot gives each slot and direction its own entry,
 * in slot order like the rule tables and the verdict cache: which entry a
 * session gets does not depend on the pool's history (the free list's
 * order after releases scattered consecutive sessions' shapers, one cause
 * of run-to-run swings at 10,000 sessions). Else the entry last freed. */
static int32_t pool_take(struct upfu_qos *q, uint32_t slot, uint32_t max_sessions, int dir)
{
	if (q->by_slot)
		return (int32_t)((uint32_t)dir * max_sessions + slot); /* free: the slot's map entry was -1 */
	if (q->nfree == 0)
		return -1;
	return (int32_t)q->free[--q->nfree];
}

/* ---- reading a session's flows ------------------------------------------- */

static int pdr_in_dir(const struct upf_pdr *p, int dir)
{
	return dir == 0 ? p->source == UPF_ACCESS : p->source == UPF_CORE || p->source == UPF_SGI_LAN;
}

static uint64_t qer_mbr(const struct upf_qer *r, int dir) { return dir == 0 ? r->mbr_ul : r->mbr_dl; }
static uint64_t qer_gbr(const struct upf_qer *r, int dir) { return dir == 0 ? r->gbr_ul : r->gbr_dl; }

/* flows_of is what flows the rules give direction dir (read in place;
 * the caller validates the seqlock): conf, the QER → flow map and the
 * default flow. 0 when the direction has no Session-AMBR to shape to. */
static int flows_of(const struct upf_sess *s, int dir, uint64_t hz, uint64_t queue_ns, struct qos_shaper_conf *c,
		    int8_t fq[UPF_MAX_QER], int8_t *def)
{
	memset(c, 0, sizeof(*c));
	memset(fq, -1, UPF_MAX_QER);
	*def = -1;
	c->hz = hz;
	uint8_t np = s->npdr < UPF_MAX_PDR ? s->npdr : UPF_MAX_PDR;
	for (uint8_t i = 0; i < np; i++) {
		const struct upf_pdr *p = &s->pdr[i];
		if (!pdr_in_dir(p, dir))
			continue;
		int flow_qer = -1;
		for (int j = 0; j < UPF_PDR_QERS; j++) {
			uint8_t x = p->qer[j];
			if (x == UPF_NONE || x >= UPF_MAX_QER || x >= s->nqer)
				continue;
			const struct upf_qer *r = &s->qer[x];
			if (r->qfi == 0 && c->ambr_bps == 0)
				c->ambr_bps = qer_mbr(r, dir); /* the session-level QER */
			else if (r->qfi != 0 && flow_qer < 0)
				flow_qer = x;
		}
		int8_t *slot = flow_qer >= 0 ? &fq[flow_qer] : def;
		if (*slot >= 0 || c->nflows >= QOS_MAX_FLOWS)
			continue;
		struct qos_flow_conf *f = &c->flow[c->nflows];
		if (flow_qer >= 0) {
			f->gbr_bps = qer_gbr(&s->qer[flow_qer], dir);
			f->mbr_bps = qer_mbr(&s->qer[flow_qer], dir);
			if (f->mbr_bps != 0 && f->gbr_bps > f->mbr_bps)
				f->gbr_bps = f->mbr_bps; /* qos_fair.h takes a GBR above its MBR as the MBR */
			/* its share of the excess (the SMF's smf.qos.weights by
			 * 5QI); the default flow, without a QER, weighs 1 */
			f->weight = s->qer[flow_qer].weight;
		}
		f->queue_ns = queue_ns;
		f->in_use = 1;
		*slot = (int8_t)c->nflows++;
	}
	return c->ambr_bps != 0 && c->nflows != 0;
}

/* ---- the pool ---------------------------------------------------------------- */

static int32_t *map_at(struct upfu *u, uint32_t slot, int dir) { return &u->qos.map[(size_t)slot * 2 + dir]; }

/* drop_queued frees every queued packet of sh (rules gone or remapped). */
static void drop_queued(struct upfu *u, uint32_t idx)
{
	struct qos_ref r = upfu_qos_ref(u, idx);
	struct qos_out out[DEQ_MAX];
	for (uint32_t f = 0; f < QOS_MAX_FLOWS; f++) {
		unsigned n;
		while ((n = qos_ref_flush(r, f, out, DEQ_MAX)) != 0) {
			for (unsigned i = 0; i < n; i++)
				rte_pktmbuf_free((struct rte_mbuf *)(uintptr_t)(out[i].handle & ~(1ull << PORT_BIT)));
			CNT_ADD(u->qos.st.flushed, n);
		}
	}
}

static void release(struct upfu *u, uint32_t idx)
{
	struct shaped *sh = &u->qos.pool[idx];
	/* Its slot's seq has moved, so no cache entry that names it is read
	 * again (verdict.h); forgetting it here keeps that true whatever
	 * the order of events. */
	struct vcache *c = upfu_vcache_at(u, sh->slot, sh->dir);
	if (c->v.shaper == (int32_t)idx)
		c->v.shaper = -1;
	drop_queued(u, idx);
	*map_at(u, sh->slot, sh->dir) = -1;
	sh->in_use = 0;
	if (!u->qos.by_slot)
		u->qos.free[u->qos.nfree++] = idx;
	CNT_ADD(u->qos.st.shapers, -1);
	/* a busy entry is dropped from the busy list by the next poll */
}

/* configure reads slot's flows and (re)configures sh: in place when the
 * flows are the same QERs (queues, meters and counters stay), else from
 * nothing. 0 = shaped, else the session is not (to be) shaped. */
static int configure(struct upfu *u, struct shaped *sh, const struct upf_sess *s)
{
	struct qos_shaper_conf c;
	int8_t fq[UPF_MAX_QER], def;
	uint32_t seq = 0;
	int ok = 0, tries = 0;
	for (;; tries++) {
		if (tries == READ_TRIES)
			return -1;
		seq = upf_read_begin(s);
		if (seq & 1)
			continue;
		ok = s->state == UPF_SESS_USED && flows_of(s, sh->dir, u->hz, u->qos.queue_ns, &c, fq, &def);
		if (upf_read_valid(s, seq))
			break;
	}
	if (!ok)
		return -1;
	uint64_t now = u->now; /* the burst's clock, as its packets' (upfu_shape) */
	uint32_t idx = (uint32_t)(sh - u->qos.pool);
	struct qos_ref r = upfu_qos_ref(u, idx);
	int same = sh->cold.hz != 0 && sh->def_flow == def && memcmp(sh->flow_of_qer, fq, sizeof(fq)) == 0;
	if (!same) {
		drop_queued(u, idx);
		if (qos_ref_init(r, &c, now) != QOS_OK)
			return -1;
	} else if (qos_ref_configure(r, &c, now) != QOS_OK) {
		return -1;
	}
	memcpy(sh->flow_of_qer, fq, sizeof(fq));
	sh->def_flow = def;
	sh->seq = seq;
	CNT_ADD(u->qos.st.rebalances, 1);
	return 0;
}

struct shaped *upfu_shaper(struct upfu *u, uint32_t slot, int dir, uint64_t up_seid, uint32_t seq)
{
	struct upfu_qos *q = &u->qos;
	if (q->max == 0)
		return NULL;
	int32_t *at = map_at(u, slot, dir);
	struct shaped *sh = *at >= 0 ? &q->pool[*at] : NULL;
	if (sh != NULL && sh->up_seid == up_seid && sh->seq == seq)
		return sh; /* the fast path: rules unchanged */
	if (sh != NULL && sh->up_seid != up_seid) {
		release(u, (uint32_t)*at); /* the slot holds another session now */
		sh = NULL;
	}
	if (sh == NULL) {
		int32_t idx = pool_take(q, slot, u->t->max_sessions, dir);
		if (idx < 0) {
			CNT_ADD(q->st.unshaped, 1);
			return NULL;
		}
		sh = &q->pool[idx];
		memset(&sh->cold, 0, sizeof(sh->cold));
		memset(&q->hot[idx], 0, sizeof(q->hot[idx]));
		sh->up_seid = up_seid;
		sh->slot = slot;
		sh->dir = (uint8_t)dir;
		sh->in_use = 1;
		sh->def_flow = -1; /* busy stays: a released entry may still be listed */
		memset(sh->flow_of_qer, -1, sizeof(sh->flow_of_qer));
		*at = (int32_t)idx;
		CNT_ADD(q->st.shapers, 1);
	}
	if (configure(u, sh, upf_sess_at(u->t, slot)) != 0) {
		release(u, (uint32_t)*at);
		CNT_ADD(q->st.unshaped, 1);
		return NULL;
	}
	return sh;
}

int upfu_shaper_flow(const struct shaped *sh, uint8_t qer)
{
	return qer < UPF_MAX_QER ? sh->flow_of_qer[qer] : sh->def_flow;
}

/* remember notes sh and the flow of c's verdict in the verdict cache entry
 * c when both were read at the same seq: the entry's next packets go
 * straight to the shaper (verdict.h). */
static void remember(struct upfu *u, struct vcache *c, const struct shaped *sh)
{
	if (c->seq != sh->seq || c->v.sess_qer == UPF_NONE || c->v.up_seid != sh->up_seid)
		return;
	int flow = upfu_shaper_flow(sh, c->v.flow_qer);
	if (flow < 0)
		return;
	c->v.shaper = (int32_t)(sh - u->qos.pool);
	c->v.shaper_flow = (int8_t)flow;
}

struct upfu_shaper_pick upfu_shaper_find(struct upfu *u, uint32_t slot, int dir, const struct verdict *v)
{
	struct shaped *sh = upfu_shaper(u, slot, dir, v->up_seid, v->seq);
	if (sh == NULL)
		return (struct upfu_shaper_pick){-1, -1};
	remember(u, upfu_vcache_at(u, slot, dir), sh);
	return (struct upfu_shaper_pick){(int32_t)(sh - u->qos.pool), upfu_shaper_flow(sh, v->flow_qer)};
}

/* ---- per packet -------------------------------------------------------------- */

/* upfu_shape_straight is qos_submit_straight out of line: in a frame of
 * its own its few values stay in registers, where inlined into the burst
 * loop GCC spilled them. */
__attribute__((noinline)) int upfu_shape_straight(struct qos_shaper_hot *h, uint32_t flow, uint64_t now, uint32_t len)
{
	struct qos_out o;
	return qos_submit_straight(h, flow, now, 0, len, QOS_GREEN, &o);
}

/* upfu_shape_listed lists pool entry idx for upfu_qos_poll: a packet of
 * its session was queued (upfu_shape, shape.h). */
void upfu_shape_listed(struct upfu *u, uint32_t idx)
{
	struct shaped *sh = &u->qos.pool[idx];
	if (!sh->busy) {
		sh->busy = 1;
		u->qos.busy[u->qos.nbusy++] = idx;
	}
}

/* ---- per loop iteration ------------------------------------------------------ */

static void send_out(struct upfu *u, const struct qos_out *o)
{
	struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)(o->handle & ~(1ull << PORT_BIT));
	int port = (o->handle >> PORT_BIT) ? UPF_N3 : UPF_N6;
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, RTE_ETHER_HDR_LEN);
	int r = upfu_send_via(u, port, rte_be_to_cpu_32(ip->dst_addr), m);
	if (r)
		upfu_drop(u, m, r);
	else
		CNT_ADD(u->qos.st.sent[o->colour == QOS_GREEN ? 0 : 1], 1);
}

void upfu_qos_drain(struct upfu *u, uint32_t slot, int dir)
{
	if (u->qos.max == 0 || slot >= u->t->max_sessions)
		return;
	int32_t i = *map_at(u, slot, dir);
	if (i < 0)
		return;
	struct qos_ref r = upfu_qos_ref(u, (uint32_t)i);
	struct qos_out out[DEQ_MAX];
	for (uint32_t f = 0; f < QOS_MAX_FLOWS; f++) {
		unsigned n;
		while ((n = qos_ref_flush(r, f, out, DEQ_MAX)) != 0)
			for (unsigned k = 0; k < n; k++)
				send_out(u, &out[k]);
	}
}

/* sweep_next is the pool entry after i. */
static uint32_t sweep_next(const struct upfu_qos *q, uint32_t i) { return i + 1 >= q->max ? 0 : i + 1; }

/* sweep_one releases one shaper whose session is gone (deleted, or its
 * slot reused), so deleted sessions do not hold the pool; one entry per
 * loop keeps the cost flat. The entries ahead are fetched in steps (the
 * header two calls ahead, then its session's line), so the check costs
 * no miss: it was ~3 % of the loop at 10,000 sessions. */
static void sweep_one(struct upfu *u)
{
	struct upfu_qos *q = &u->qos;
	uint32_t i = q->sweep >= q->max ? 0 : q->sweep, next = sweep_next(q, i);
	q->sweep = next;
	rte_prefetch0(&q->pool[sweep_next(q, next)]);
	const struct shaped *ahead = &q->pool[next];
	if (ahead->in_use && ahead->slot < u->t->max_sessions)
		rte_prefetch0(upf_sess_at(u->t, ahead->slot));
	struct shaped *sh = &q->pool[i];
	if (!sh->in_use)
		return;
	const struct upf_sess *s = upf_sess_at(u->t, sh->slot);
	uint32_t seq = upf_read_begin(s);
	int gone = s->state != UPF_SESS_USED || s->up_seid != sh->up_seid;
	if (!(seq & 1) && upf_read_valid(s, seq) && gone)
		release(u, i);
}

/* upfu_qos_poll serves the sessions with a backlog, at most POLL_SHAPERS
 * of them per call, taking turns (a cursor over the busy list), so the
 * work per loop stays bounded however many sessions queue. */
void upfu_qos_poll(struct upfu *u)
{
	struct upfu_qos *q = &u->qos;
	if (q->max == 0)
		return;
	sweep_one(u);
	if (q->nbusy == 0)
		return;
	uint64_t now = rte_rdtsc();
	struct qos_out out[DEQ_MAX];
	for (uint32_t k = 0; k < POLL_SHAPERS && q->nbusy != 0; k++) {
		if (q->cursor >= q->nbusy)
			q->cursor = 0;
		uint32_t idx = q->busy[q->cursor];
		struct shaped *sh = &q->pool[idx];
		if (sh->in_use) {
			unsigned n = qos_ref_dequeue(upfu_qos_ref(u, idx), now, out, DEQ_MAX);
			for (unsigned i = 0; i < n; i++)
				send_out(u, &out[i]);
		}
		if (sh->in_use && q->hot[idx].backlog) {
			q->cursor++;
			continue;
		}
		sh->busy = 0;
		q->busy[q->cursor] = q->busy[--q->nbusy]; /* the last one takes its turn next */
	}
}

void upfu_qos_stats_copy(const struct upfu *u, struct upfu_qos_stats *o)
{
	const struct upfu_qos_stats *s = &u->qos.st;
	o->sent[0] = __atomic_load_n(&s->sent[0], __ATOMIC_RELAXED);
	o->sent[1] = __atomic_load_n(&s->sent[1], __ATOMIC_RELAXED);
	o->red = __atomic_load_n(&s->red, __ATOMIC_RELAXED);
	o->full[0] = __atomic_load_n(&s->full[0], __ATOMIC_RELAXED);
	o->full[1] = __atomic_load_n(&s->full[1], __ATOMIC_RELAXED);
	o->flushed = __atomic_load_n(&s->flushed, __ATOMIC_RELAXED);
	o->unshaped = __atomic_load_n(&s->unshaped, __ATOMIC_RELAXED);
	o->shapers = __atomic_load_n(&s->shapers, __ATOMIC_RELAXED);
	o->rebalances = __atomic_load_n(&s->rebalances, __ATOMIC_RELAXED);
}
