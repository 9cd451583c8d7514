/* buffer.c — what UPF-U does for idle UEs and moving ones:
 *
 *  - downlink buffering (FAR BUFF, TS 29.244 5.2.3.1; TS 23.502 4.2.3.3
 *    step 1): per session, in arrival order, bounded by
 *    upf.buffer.per_session (a full session drops its OLDEST packet: the
 *    newest data is what the UE wants) and upf.buffer.total (past it the new
 *    packet is dropped), every case counted;
 *  - the note to UPF-C (FAR NOCP): the first buffered packet of a session
 *    queues one note on the notes ring and rings UPF-C's doorbell; no other
 *    note for the session until UPF-C re-arms it (the SMF rewrote a FAR) or
 *    the buffer was served or discarded: one Downlink Data Report per
 *    session, never a storm;
 *  - UPF-C's commands (the session changed, discard, End Marker), read
 *    between bursts;
 *  - GTP-U End Marker (TS 29.281 7.3.2) into a tunnel a handover left.
 *
 * Nothing here sleeps, spins or allocates per packet; the FORW path only
 * reads u->buf.used (0 when nothing is held).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "priv.h"

#define NIL UINT32_MAX
#define GTP_END_MARKER 254 /* TS 29.281 Table 6.1-1 */

static void set_now(struct upfu *u) { __atomic_store_n(&u->st->buf_now, u->buf.used, __ATOMIC_RELAXED); }

int upfu_buf_init(struct upfu *u, const struct upfu_conf *c, char *err, size_t n)
{
	struct upfu_buf *b = &u->buf;
	b->per_session = c->buf_per_session ? c->buf_per_session : 64;
	b->total = c->buf_total ? c->buf_total : 16384;
	/* Held packets are mbufs of the receive pool: past half of it, the
	 * ports would starve. */
	uint32_t cap = rte_mempool_avail_count(u->pool) / 2;
	if (b->total > cap)
		b->total = cap;
	b->q = calloc(u->t->max_sessions, sizeof(*b->q));
	b->node = calloc(b->total, sizeof(*b->node));
	if (b->q == NULL || b->node == NULL) {
		snprintf(err, n, "downlink buffer of %u packets: out of memory", b->total);
		return -1;
	}
	for (uint32_t i = 0; i < u->t->max_sessions; i++)
		b->q[i].head = b->q[i].tail = NIL;
	for (uint32_t i = 0; i < b->total; i++)
		b->node[i].next = i + 1 < b->total ? i + 1 : NIL;
	b->free = 0;
	/* Commands queued for a UPF-U before this one named its buffers, which
	 * are gone: skip them (an End Marker that late would mislead the gNB). */
	struct upf_ring_idx *x = &upf_rings_of(u->t)->cmd_idx;
	__atomic_store_n(&x->tail, __atomic_load_n(&x->head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	snprintf(b->bell_path, sizeof(b->bell_path), "%s%s", c->tables, UPF_DOORBELL_SUFFIX);
	b->bell = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	return 0;
}

/* ---- the queues ---------------------------------------------------------- */

static void push(struct upfu_buf *b, struct dlq *q, struct rte_mbuf *m)
{
	uint32_t i = b->free;
	b->free = b->node[i].next;
	b->node[i].m = m;
	b->node[i].next = NIL;
	if (q->tail == NIL)
		q->head = i;
	else
		b->node[q->tail].next = i;
	q->tail = i;
	q->n++;
	b->used++;
}

/* pop unlinks the oldest packet of q and returns it. */
static struct rte_mbuf *pop(struct upfu_buf *b, struct dlq *q)
{
	uint32_t i = q->head;
	struct rte_mbuf *m = b->node[i].m;
	q->head = b->node[i].next;
	if (q->head == NIL)
		q->tail = NIL;
	b->node[i].next = b->free;
	b->free = i;
	q->n--;
	b->used--;
	return m;
}

static void dropped(struct upfu *u, struct rte_mbuf *m, uint64_t *counter)
{
	CNT_ADD(*counter, 1);
	upfu_drop(u, m, UPF_DROP_BUFFERED);
}

struct rte_mbuf *upfu_buf_head(struct upfu *u, uint32_t slot)
{
	struct dlq *q = &u->buf.q[slot];
	return q->n ? u->buf.node[q->head].m : NULL;
}

void upfu_buf_pop(struct upfu *u, uint32_t slot)
{
	pop(&u->buf, &u->buf.q[slot]);
	set_now(u);
}

void upfu_buf_discard(struct upfu *u, uint32_t slot)
{
	struct dlq *q = &u->buf.q[slot];
	while (q->n)
		dropped(u, pop(&u->buf, q), &u->st->buf_discarded);
	q->notified = 0;
	set_now(u);
}

void upfu_buf_served(struct upfu *u, uint32_t slot) { u->buf.q[slot].notified = 0; }

/* ---- notes to UPF-C ---------------------------------------------------------- */

/* note queues a Downlink Data note; a full ring (UPF-C gone for long)
 * leaves the session un-notified, so its next packet tries again. */
static int note(struct upfu *u, uint32_t slot, const struct buf_info *bi)
{
	struct upf_rings *r = upf_rings_of(u->t);
	int64_t i = upf_ring_reserve(&r->note_idx);
	if (i < 0) {
		CNT_ADD(u->st->notes_lost, 1);
		return 0;
	}
	struct upf_note *e = &r->note[i];
	e->up_seid = bi->up_seid;
	e->slot = slot;
	e->pdr_id = bi->pdr_id;
	e->qfi = bi->qfi;
	e->pad = 0;
	upf_ring_publish(&r->note_idx);
	CNT_ADD(u->st->notes, 1);
	u->buf.ring = 1;
	return 1;
}

/* upfu_ring_bell wakes UPF-C after notes were queued: one datagram for
 * all of a loop's notes. A UPF-C that is not listening finds them in the
 * ring when it starts. */
void upfu_ring_bell(struct upfu *u)
{
	struct upfu_buf *b = &u->buf;
	if (!b->ring || b->bell < 0)
		return;
	b->ring = 0;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", b->bell_path);
	char one = 1;
	(void)sendto(b->bell, &one, 1, MSG_DONTWAIT, (struct sockaddr *)&a, sizeof(a));
}

/* ---- buffering ------------------------------------------------------------- */

/* upfu_buffer holds downlink packet m of the session in slot (its FAR says
 * BUFF), dropping the session's oldest when it holds per_session already,
 * or m itself when all sessions together hold total. */
void upfu_buffer(struct upfu *u, struct rte_mbuf *m, uint32_t slot, const struct buf_info *bi)
{
	struct upfu_buf *b = &u->buf;
	struct dlq *q = &b->q[slot];
	if (q->n && q->up_seid != bi->up_seid) /* left by a session this slot held before */
		upfu_buf_discard(u, slot);
	if (q->n == 0) {
		q->up_seid = bi->up_seid;
	}
	if (bi->notify && !q->notified)
		q->notified = (uint8_t)note(u, slot, bi);
	if (q->n >= b->per_session)
		dropped(u, pop(b, q), &u->st->buf_overflow);
	if (b->used >= b->total) {
		dropped(u, m, &u->st->buf_overflow);
		set_now(u);
		return;
	}
	push(b, q, m);
	CNT_ADD(u->st->buf_total, 1);
	set_now(u);
}

/* ---- commands from UPF-C ------------------------------------------------------ */

static void command(struct upfu *u, const struct upf_cmd *c)
{
	if (c->slot >= u->t->max_sessions)
		return;
	struct dlq *q = &u->buf.q[c->slot];
	switch (c->type) {
	case UPF_CMD_CHANGED:
		if (c->flags & UPF_CMD_REARM)
			q->notified = 0;
		if (q->n)
			upfu_flush_slot(u, c->slot);
		break;
	case UPF_CMD_DISCARD:
		if (q->n == 0 || q->up_seid == c->up_seid)
			upfu_buf_discard(u, c->slot);
		break;
	case UPF_CMD_END_MARKER: {
		upfu_qos_drain(u, c->slot, 1); /* the old tunnel's queued downlink first */
		int r = upfu_end_marker(u, c->teid, c->addr);
		if (r) /* no route to the old gNB or no mbuf: counted, not resent */
			CNT_ADD(u->st->drop[r], 1);
		break;
	}
	}
}

/* upfu_commands runs what UPF-C queued; between bursts, so an End Marker
 * follows every packet already sent into the old tunnel. */
void upfu_commands(struct upfu *u)
{
	struct upf_rings *r = upf_rings_of(u->t);
	int64_t i;
	while ((i = upf_ring_next(&r->cmd_idx)) >= 0) {
		struct upf_cmd c = r->cmd[i];
		upf_ring_consume(&r->cmd_idx);
		command(u, &c);
	}
}

/* ---- End Marker ------------------------------------------------------------------ */

/* upfu_end_marker sends GTP-U End Marker (TS 29.281 7.3.2: type 254, no
 * payload, the tunnel's TEID) to the old tunnel (teid, addr) on N3. */
int upfu_end_marker(struct upfu *u, uint32_t teid, uint32_t addr)
{
	struct uport *p = &u->port[UPF_N3];
	struct rte_mbuf *m = rte_pktmbuf_alloc(u->pool);
	if (m == NULL)
		return UPF_DROP_TX_FULL;
	const uint16_t len = RTE_ETHER_HDR_LEN + 20 + 8 + 8;
	uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, len);
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)d;
	eh->src_addr = p->mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(20 + 8 + 8);
	ip->packet_id = rte_cpu_to_be_16(u->ip_id++);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(p->ip);
	ip->dst_addr = rte_cpu_to_be_32(addr);
	ip->hdr_checksum = upfu_ip_cksum(ip, sizeof(*ip));
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16(UPFU_GTPU_PORT);
	udp->dst_port = rte_cpu_to_be_16(UPFU_GTPU_PORT);
	udp->dgram_len = rte_cpu_to_be_16(8 + 8);
	udp->dgram_cksum = 0;
	uint8_t *g = (uint8_t *)(udp + 1);
	g[0] = 0x30; /* version 1, PT 1, no optional fields (TS 29.281 5.1) */
	g[1] = GTP_END_MARKER;
	g[2] = g[3] = 0; /* no payload */
	uint32_t t = rte_cpu_to_be_32(teid);
	memcpy(g + 4, &t, 4);
	/* held behind the data to an unresolved old gNB, it still comes last */
	int r = upfu_send_via(u, UPF_N3, addr, m);
	if (r) {
		rte_pktmbuf_free(m);
		return r;
	}
	CNT_ADD(u->st->end_markers, 1);
	return 0;
}
