/* verdict.h — what a packet's session says to do (pipeline.c decide), and
 * the per-slot cache of it that spares the per-packet walk of the rules.
 *
 * Why a cache: a slot is 2.3 KB of rules (17 PDRs of 96 bytes, FARs,
 * QERs, URRs). Reading a verdict from it touches 7-9 cache lines — the
 * header, the PDRs scanned, the FAR, the QERs, the URRs — and with
 * thousands of sessions every one of them misses (issue 13: 10,000
 * sessions ran at half the rate of 1,000). The cache keeps, per slot and
 * direction, the verdict last read and the session's seqlock value it was
 * read at, in two adjacent lines UPF-U alone writes: a packet then reads
 * the slot's first line (seq) and its cache entry.
 *
 * Correctness rests on the seqlock (upf_shm.h): UPF-C changes a slot only
 * between an odd and an even seq, and never gives a slot an even value it
 * had before (it only counts up; upft_recover too), so an entry whose seq
 * equals the slot's even seq now holds the verdict the rules give now. A
 * 32-bit seq would have to wrap for an old entry to match: 2^31 rewrites
 * of one slot while the entry stays.
 *
 * Only verdicts that depend on nothing but the lookup key and two fields
 * checked on each hit are kept: exactly one PDR of the direction has the
 * key (the TEID uplink, the UE address downlink) and it has no SDF filter
 * (TS 29.244 5.2.1: precedence and filters decide only among several).
 * That is the default QoS flow of every PDU session; sessions with more
 * PDRs per key (QoS flows with packet filters) take the rules each time.
 */
#ifndef UPFU_VERDICT_H
#define UPFU_VERDICT_H

#include <stdint.h>

#include "upf_shm.h"

/* verdict is what a packet's session says to do, read whole. */
struct verdict {
	uint16_t action;
	uint8_t dest;
	uint8_t ohr;
	uint8_t has_oh;
	uint8_t qfi; /* QFI to mark on N3 (first QER with one) */
	uint8_t gate_closed;
	uint8_t nqer, nurr;
	uint8_t flow_qer; /* the PDR's flow QER (QFI != 0), UPF_NONE: the default flow */
	uint8_t sess_qer; /* its session-level QER (QFI 0, an AMBR): shaped (shape.c) */
	uint8_t qer[UPF_PDR_QERS];
	uint8_t urr[UPF_PDR_URRS];
	uint32_t oh_teid, oh_addr;
	uint16_t pdr_id;  /* the PDR that matched (a Downlink Data note names it) */
	int8_t shaper_flow; /* with shaper: the flow of the shaper this verdict's packets take */
	uint64_t up_seid; /* the session read (buffered packets belong to it) */
	uint32_t seq;     /* the seqlock value it was read at: a shaper's rules are current */
	/* The shaper pool entry set up for this slot, direction and seq (shape.c),
	 * -1 = not known yet: kept in the cache entry so a shaped packet goes
	 * straight to its shaper's hot lines, without the pool map and the
	 * shaper's header line (issue 13: two misses per packet at 10,000
	 * sessions). Valid exactly as long as the entry: a shaper is released
	 * only when its slot's seq has moved (session gone or rewritten). */
	int32_t shaper;
	uint64_t mbr[UPF_PDR_QERS];   /* bit/s, 0 = none */
	uint64_t depth[UPF_PDR_QERS]; /* the MBR bucket's size in credit (pipeline.c police) */
	uint32_t epoch[UPF_PDR_URRS];
};

/* Which address of an uplink packet must be the PDR's UE address (TS
 * 29.244 5.2.1 anti-spoofing; a forwarding tunnel carries downlink data,
 * so there it is the destination). */
enum vc_ue { VC_UE_ANY = 0, VC_UE_SRC = 1, VC_UE_DST = 2 };

/* vcache is one slot's cached verdict in one direction. */
struct vcache {
	uint32_t seq; /* the slot's seq v was read at; odd (VC_EMPTY) = nothing cached */
	uint32_t key; /* the key it was read for: the TEID uplink, the UE address downlink */
	uint32_t ue;  /* uplink: the address ue_at must carry */
	uint8_t ue_at; /* enum vc_ue */
	uint8_t qfi;   /* uplink: the QFI the PDU Session Container must carry, 0 = any */
	uint8_t pad[2];
	struct verdict v;
} __attribute__((aligned(64)));

#define VC_EMPTY 0xffffffffu /* odd: never a seq a reader accepts */

_Static_assert(sizeof(struct vcache) == 128, "a cache entry is two cache lines");
_Static_assert(__builtin_offsetof(struct vcache, v.shaper) < 64, "a packet finds its shaper in the entry's first line");

/* vc_cond is what a cacheable verdict asks of the next packets. */
struct vc_cond {
	uint32_t ue;
	uint8_t ue_at, qfi;
};

/* vcache_hit says whether c holds the verdict for a packet with this key,
 * QFI and addresses, the slot's seq now being seq. */
static inline int vcache_hit(const struct vcache *c, uint32_t seq, uint32_t key, uint8_t qfi, uint32_t src,
			     uint32_t dst)
{
	if (c->seq != seq || (seq & 1) || c->key != key)
		return 0;
	if (c->qfi != 0 && c->qfi != qfi)
		return 0;
	return c->ue_at == VC_UE_ANY || c->ue == (c->ue_at == VC_UE_SRC ? src : dst);
}

static inline void vcache_fill(struct vcache *c, uint32_t seq, uint32_t key, const struct vc_cond *w,
			       const struct verdict *v)
{
	c->seq = seq;
	c->key = key;
	c->ue = w->ue;
	c->ue_at = w->ue_at;
	c->qfi = w->qfi;
	c->v = *v;
}

#endif /* UPFU_VERDICT_H */
