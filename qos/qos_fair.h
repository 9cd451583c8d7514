/*
 * qos_fair.h — each flow's share of the Session-AMBR (TS 23.501 5.7.2.6),
 * computed when the rules or the set of active flows change, never per
 * packet.
 *
 * 1. Every active GBR flow gets its GBR (TS 23.501 5.7.2.5: the bit rate
 *    guaranteed to the flow), clamped to its MBR.
 * 2. The rest of the AMBR is shared max-min fairly by weight among all
 *    active flows, QoS and non-QoS alike, each capped at its MBR (an MBR of
 *    0 = capped by the AMBR only): progressive filling, where a flow whose
 *    headroom is below its weighted share takes its headroom and the rest
 *    is shared again among the others (work conserving).
 * With one QoS flow and one non-QoS flow of equal weights this is the
 * paper's R_QoS = min(GBR + (AMBR - GBR)/2, MBR), R_nonQoS = AMBR - R_QoS.
 *
 * GBRs summing above the AMBR (admission control upstream let through more
 * than the session may carry): every GBR is scaled by AMBR/ΣGBR, so each
 * GBR flow keeps the same fraction of its guarantee and none is starved
 * (the rules carry no ARP priority to choose a victim by), and the result
 * says so (QOS_FAIR_GBR_SCALED) for UPF-C to report. Included by qos.h.
 */
#ifndef L25GC_QOS_FAIR_H
#define L25GC_QOS_FAIR_H

struct qos_fair_flow {
	uint64_t gbr_bps; /* 0 = non-GBR */
	uint64_t mbr_bps; /* 0 = no MBR (the AMBR caps it) */
	uint32_t weight;  /* share of the excess; 0 = 1 */
	uint32_t active;  /* 0: idle, gets 0 */
};

enum qos_fair_flags {
	QOS_FAIR_GBR_SCALED = 1,  /* GBRs summed above the AMBR: scaled down */
	QOS_FAIR_GBR_CLAMPED = 2, /* a GBR above its MBR: clamped to the MBR */
};

struct qos_fair_result {
	uint64_t rate_bps[QOS_MAX_FLOWS];
	uint64_t unassigned_bps; /* AMBR left because every active flow is at its MBR */
	uint32_t flags;          /* enum qos_fair_flags */
	uint32_t pad;
};

static inline uint64_t qos_fair_cap(const struct qos_fair_flow *f, uint64_t ambr)
{
	return f->mbr_bps != 0 && f->mbr_bps < ambr ? f->mbr_bps : ambr;
}

static inline uint32_t qos_fair_weight(const struct qos_fair_flow *f)
{
	return f->weight ? f->weight : 1;
}

/* qos_fair_gbr gives step 1 and returns what is left of the AMBR. */
static inline uint64_t qos_fair_gbr(uint64_t ambr, const struct qos_fair_flow *f, unsigned n, struct qos_fair_result *r)
{
	qos_u128 sum = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t g = f[i].gbr_bps;
		if (!f[i].active)
			g = 0;
		if (f[i].mbr_bps != 0 && g > f[i].mbr_bps) {
			g = f[i].mbr_bps;
			r->flags |= QOS_FAIR_GBR_CLAMPED;
		}
		r->rate_bps[i] = g;
		sum += g;
	}
	if (sum <= ambr)
		return ambr - (uint64_t)sum;
	r->flags |= QOS_FAIR_GBR_SCALED;
	uint64_t given = 0;
	for (unsigned i = 0; i < n; i++) {
		r->rate_bps[i] = (uint64_t)((qos_u128)r->rate_bps[i] * ambr / sum);
		given += r->rate_bps[i];
	}
	return ambr - given; /* the rounding, less than one bit/s per flow */
}

/* qos_fair_spread gives each flow in the set its weighted part of left
 * when no flow in it saturates; the remainder of the division goes one
 * bit/s each to the first flows (each has at least that headroom). */
static inline void qos_fair_spread(const struct qos_fair_flow *f, unsigned n, uint32_t set, uint64_t left, uint64_t wsum, struct qos_fair_result *r)
{
	uint64_t given = 0;
	for (unsigned i = 0; i < n; i++)
		if (set & (1u << i)) {
			uint64_t x = (uint64_t)((qos_u128)left * qos_fair_weight(&f[i]) / wsum);
			r->rate_bps[i] += x;
			given += x;
		}
	for (unsigned i = 0; i < n && given < left; i++)
		if (set & (1u << i)) {
			r->rate_bps[i]++;
			given++;
		}
}

/* qos_fair_fill gives step 2: progressive filling of left over the active
 * flows' headroom up to their caps; returns what no flow could take. */
static inline uint64_t qos_fair_fill(uint64_t ambr, const struct qos_fair_flow *f, unsigned n, uint64_t left, struct qos_fair_result *r)
{
	uint32_t set = 0;
	for (unsigned i = 0; i < n; i++)
		if (f[i].active && r->rate_bps[i] < qos_fair_cap(&f[i], ambr))
			set |= 1u << i;
	while (set && left) {
		uint64_t wsum = 0;
		for (unsigned i = 0; i < n; i++)
			if (set & (1u << i))
				wsum += qos_fair_weight(&f[i]);
		/* Saturate every flow whose headroom is within its share at this
		 * level: taking less than its share only raises the others'. */
		uint32_t full = 0;
		uint64_t taken = 0;
		for (unsigned i = 0; i < n; i++) {
			if (!(set & (1u << i)))
				continue;
			uint64_t room = qos_fair_cap(&f[i], ambr) - r->rate_bps[i];
			if ((qos_u128)room * wsum <= (qos_u128)left * qos_fair_weight(&f[i])) {
				full |= 1u << i;
				taken += room;
			}
		}
		if (!full) {
			qos_fair_spread(f, n, set, left, wsum, r);
			return 0;
		}
		for (unsigned i = 0; i < n; i++)
			if (full & (1u << i))
				r->rate_bps[i] = qos_fair_cap(&f[i], ambr);
		left -= taken;
		set &= ~full;
	}
	return left;
}

/* qos_fair_share computes every flow's rate; n <= QOS_MAX_FLOWS. */
static inline int qos_fair_share(uint64_t ambr, const struct qos_fair_flow *f, unsigned n, struct qos_fair_result *r)
{
	memset(r, 0, sizeof(*r));
	if (n > QOS_MAX_FLOWS)
		return QOS_ERR_NFLOWS;
	if (ambr == 0)
		return QOS_ERR_AMBR;
	uint64_t left = qos_fair_gbr(ambr, f, n, r);
	r->unassigned_bps = qos_fair_fill(ambr, f, n, left, r);
	return QOS_OK;
}

#endif
