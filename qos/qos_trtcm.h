/*
 * qos_trtcm.h — the two-rate three-colour marker of RFC 2698, one per QoS
 * flow and direction (each flow its own profile: the published UPF shared
 * one profile, so the last QER configured set every flow's rate).
 *
 * Committed rate (CIR) = the flow's GBR, peak rate (PIR) = its MBR (TS
 * 23.501 5.7.2.5). Green is within the GBR, yellow between GBR and MBR, red
 * above the MBR. Included by qos.h; include that.
 */
#ifndef L25GC_QOS_TRTCM_H
#define L25GC_QOS_TRTCM_H

struct qos_trtcm_conf {
	uint64_t cir_bps;   /* committed rate (GBR); 0 = none: nothing is green */
	uint64_t pir_bps;   /* peak rate (MBR); 0 = no peak: nothing is red */
	uint64_t cbs_bytes; /* committed burst; 0 = CIR × window (at least QOS_MIN_BURST_BYTES) */
	uint64_t pbs_bytes; /* peak burst; 0 = PIR × window (likewise) */
	uint64_t window_ns; /* 0 = QOS_DEFAULT_BURST_NS */
};

/* A profile is a conf turned into credit units for one clock. */
struct qos_trtcm_profile {
	uint64_t cir, pir; /* bit/s: credit added per tick */
	uint64_t cbs, pbs; /* bucket sizes in credit */
	uint64_t unit;     /* credit of one byte */
	uint32_t no_peak;  /* PIR 0: the P bucket never runs dry */
	uint32_t pad;
};

/* The meter's state: the C and P buckets (credit) and when they were filled. */
struct qos_trtcm {
	uint64_t tc, tp;
	uint64_t last;
};

/* qos_burst_credit is a bucket size in credit: the configured bytes, or
 * rate × window with a floor of one frame, clamped to what credit holds.
 * A rate of 0 has no bucket. */
static inline int qos_burst_credit(uint64_t rate, uint64_t bytes, uint64_t window_ns, uint64_t unit, uint64_t *out)
{
	int ok = 1;
	if (bytes != 0) {
		*out = qos_credit(bytes, unit, &ok);
		return ok ? QOS_OK : QOS_ERR_BURST;
	}
	if (rate == 0) {
		*out = 0;
		return QOS_OK;
	}
	uint64_t b = qos_window_bytes(rate, window_ns ? window_ns : QOS_DEFAULT_BURST_NS);
	if (b < QOS_MIN_BURST_BYTES)
		b = QOS_MIN_BURST_BYTES;
	if (b > (QOS_MAX_CREDIT - 1) / unit)
		b = (QOS_MAX_CREDIT - 1) / unit;
	*out = b * unit;
	return QOS_OK;
}

static inline int qos_trtcm_profile_init(struct qos_trtcm_profile *p, const struct qos_trtcm_conf *c, uint64_t hz)
{
	if (hz == 0 || hz > 100000000000ull)
		return QOS_ERR_HZ;
	/* RFC 2698 section 2: the PIR must be equal to or greater than the CIR. */
	if (c->pir_bps != 0 && c->cir_bps > c->pir_bps)
		return QOS_ERR_GBR_MBR;
	memset(p, 0, sizeof(*p));
	p->unit = qos_unit(hz);
	p->cir = c->cir_bps;
	p->pir = c->pir_bps;
	p->no_peak = c->pir_bps == 0;
	int e = qos_burst_credit(c->cir_bps, c->cbs_bytes, c->window_ns, p->unit, &p->cbs);
	if (e == QOS_OK)
		e = qos_burst_credit(c->pir_bps, c->pbs_bytes, c->window_ns, p->unit, &p->pbs);
	return e;
}

/* RFC 2698 section 3: both buckets are full at the start. */
static inline void qos_trtcm_init(struct qos_trtcm *m, const struct qos_trtcm_profile *p, uint64_t now)
{
	m->tc = p->cbs;
	m->tp = p->pbs;
	m->last = now;
}

/* qos_trtcm_reprofile keeps a running meter's credit (capped at the new
 * sizes) when its rates change with the rules. */
static inline void qos_trtcm_reprofile(struct qos_trtcm *m, const struct qos_trtcm_profile *p)
{
	if (m->tc > p->cbs)
		m->tc = p->cbs;
	if (m->tp > p->pbs)
		m->tp = p->pbs;
}

/* RFC 2698 section 3: Tc grows CIR times a second up to CBS, Tp PIR times
 * up to PBS. A clock that went back adds nothing. */
static inline void qos_trtcm_refill(struct qos_trtcm *m, const struct qos_trtcm_profile *p, uint64_t now)
{
	if (now <= m->last)
		return;
	uint64_t dt = now - m->last;
	m->last = now;
	m->tc = qos_fill(m->tc, p->cbs, p->cir, dt);
	m->tp = qos_fill(m->tp, p->pbs, p->pir, dt);
}

/* qos_trtcm_charge colours a packet of b credit (its length × unit)
 * pre-coloured in against buckets already refilled to its arrival (RFC
 * 2698 section 3, colour-aware mode). Apart from the refill so that a
 * caller that has the credit at hand (qos_ref_submit: the shaper's buckets
 * charge the same credit) computes it once. */
static inline enum qos_colour qos_trtcm_charge(struct qos_trtcm *m, const struct qos_trtcm_profile *p, uint64_t b, enum qos_colour in)
{
	/* "If the packet has been precolored as red or if Tp(t)-B < 0, the
	 * packet is red" */
	if (in == QOS_RED || (!p->no_peak && m->tp < b))
		return QOS_RED;
	/* "else if ... precolored as yellow or if Tc(t)-B < 0, the packet is
	 * yellow and Tp is decremented by B" */
	if (!p->no_peak)
		m->tp -= b;
	if (in == QOS_YELLOW || m->tc < b)
		return QOS_YELLOW;
	/* "else the packet is green and both Tp and Tc are decremented by B" */
	m->tc -= b;
	return QOS_GREEN;
}

/* qos_trtcm_aware colours a packet of len bytes pre-coloured in (RFC 2698
 * section 3, colour-aware mode). */
static inline enum qos_colour qos_trtcm_aware(struct qos_trtcm *m, const struct qos_trtcm_profile *p, uint64_t now, uint32_t len, enum qos_colour in)
{
	if (len > QOS_MAX_PKT_BYTES)
		return QOS_RED;
	qos_trtcm_refill(m, p, now);
	return qos_trtcm_charge(m, p, (uint64_t)len * p->unit, in);
}

/* qos_trtcm_blind colours a packet of len bytes (colour-blind mode, which is
 * the colour-aware mode with every packet pre-coloured green). */
static inline enum qos_colour qos_trtcm_blind(struct qos_trtcm *m, const struct qos_trtcm_profile *p, uint64_t now, uint32_t len)
{
	return qos_trtcm_aware(m, p, now, len, QOS_GREEN);
}

#endif
