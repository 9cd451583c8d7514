/* shape.h — the per-packet part of fair QoS in UPF-U (issue 13, shape.c
 * has the rest): inlined into pipeline.c's burst loop, so a shaped packet
 * sent at once costs no call into shape.c and no pointer arithmetic on the
 * 18 KB pool entries (the verdict cache entry names the pool index). */
#ifndef UPFU_SHAPE_H
#define UPFU_SHAPE_H

#include "priv.h"

#define UPFU_SHAPE_PORT_BIT 63 /* a queued handle: the mbuf, output port N3 in bit 63 */

/* upfu_shaper_of is the shaper of the session whose verdict v is
 * (pipeline forward): its pool index (-1 not shaped) and the flow v's
 * packets take, from the verdict when the cache entry knew it, else from
 * upfu_shaper (shape.c), noted in the entry for the next packets.
 * Returned by value: an address-taken flow lived on the stack and the
 * burst loop reloaded it at every use. */
static inline struct upfu_shaper_pick upfu_shaper_of(struct upfu *u, uint32_t slot, int dir, const struct verdict *v)
{
	if (v->shaper >= 0)
		return (struct upfu_shaper_pick){v->shaper, v->shaper_flow};
	return upfu_shaper_find(u, slot, dir, v);
}

/* upfu_shape meters the prepared frame m of pool entry idx's flow and
 * sends it at once when its session has nothing queued and the buckets
 * allow it (qos_ref_submit: the common case costs no queue and no
 * dequeue); else it queues it and lists the session for upfu_qos_poll.
 * 0 = sent or queued (m is taken), else m is the caller's and the reason
 * says why (UPF_DROP_MBR: red, or its queue is full). */
static inline int upfu_shape(struct upfu *u, uint32_t idx, int flow, struct rte_mbuf *m, const struct upfu_hop *h,
			     uint32_t bytes)
{
	if (flow < 0)
		return UPF_DROP_RULE_BUSY; /* rules and verdict out of step: the next packet rereads */
	uint64_t handle = (uint64_t)(uintptr_t)m | ((uint64_t)(h->port == UPF_N3) << UPFU_SHAPE_PORT_BIT);
	struct qos_out o;
	/* The common case first, on the hot part alone (qos_submit_straight:
	 * when it does not apply, qos_ref_submit runs as without it). */
	enum qos_verdict r = QOS_SENT_GREEN;
	if (!upfu_shape_straight(&u->qos.hot[idx], (uint32_t)flow, u->now, bytes))
		r = qos_ref_submit(upfu_qos_ref(u, idx), (uint32_t)flow, u->now, handle, bytes, QOS_GREEN, &o);
	switch (r) {
	case QOS_SENT_GREEN:
	case QOS_SENT_YELLOW: {
		int e = upfu_send_via(u, h->port, h->dst, m);
		if (e == 0)
			CNT_ADD(u->qos.st.sent[r == QOS_SENT_GREEN ? 0 : 1], 1);
		return e;
	}
	case QOS_QUEUED_GREEN:
	case QOS_QUEUED_YELLOW:
		upfu_shape_listed(u, idx);
		return 0;
	case QOS_DROP_RED:
		CNT_ADD(u->qos.st.red, 1);
		return UPF_DROP_MBR;
	case QOS_DROP_FULL:
		/* the colour the meter gave it says which guarantee was lost */
		CNT_ADD(u->qos.st.full[o.colour == QOS_GREEN ? 0 : 1], 1);
		return UPF_DROP_MBR;
	default:
		return UPF_DROP_RULE_BUSY;
	}
}

#endif /* UPFU_SHAPE_H */
