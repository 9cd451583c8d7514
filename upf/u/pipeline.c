/* pipeline.c — UPF-U's forwarding per burst (DESIGN.md "User plane"):
 * parse → PDR lookup (uplink by TEID [+QFI, SDF], downlink by UE IP [+SDF],
 * highest precedence wins, TS 29.244 5.2.1) → FAR (TS 29.244 5.2.3) → QER
 * gate and MBR (TS 29.244 5.2.4) → URR counts (TS 29.244 5.2.2) →
 * decapsulate or encapsulate (TS 29.281, TS 38.415) → next hop → TX.
 *
 * The rules are read in place under each session's seqlock (upf_shm.h):
 * decide() computes a verdict from the slot, and the verdict is kept only
 * if the slot did not change meanwhile. Side effects (counters, buckets,
 * the packet) happen after, from the verdict alone. A verdict that depends
 * on the key alone is cached per slot and direction until the slot's seq
 * moves (verdict.h), so most packets read two lines of rules, not nine.
 */
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_pause.h>
#include <rte_prefetch.h>
#include <rte_udp.h>

#include "shape.h"

#define ENCAP_LEN (RTE_ETHER_HDR_LEN + 20 + 8 + 8 + 4 + 4) /* Eth IPv4 UDP GTP opt PDU-SC */
#define READ_BUDGET_US 20 /* wait this long for a session being written, then "rule_busy" */
#define MBR_BURST_MS 10 /* a bucket holds this much of its rate */

enum dir { UL = 0, DL = 1 };

/* struct verdict and its per-slot cache: verdict.h */

void upfu_drop(struct upfu *u, struct rte_mbuf *m, int reason)
{
	CNT_ADD(u->st->drop[reason], 1);
	rte_pktmbuf_free(m);
}

void upfu_tx(struct upfu *u, int port, struct rte_mbuf *m)
{
	struct uport *p = &u->port[port];
	if (p->ntx == TX_SLOTS)
		upfu_flush(u);
	p->tx[p->ntx++] = m;
}

static void flush_port(struct upfu *u, struct uport *p)
{
	uint32_t len[TX_SLOTS];
	uint64_t bytes = 0;
	for (uint16_t i = 0; i < p->ntx; i++)
		len[i] = rte_pktmbuf_pkt_len(p->tx[i]);
	uint16_t sent = rte_eth_tx_burst(p->id, 0, p->tx, p->ntx);
	if (sent < p->ntx) /* a full ring: one more go before dropping */
		sent += rte_eth_tx_burst(p->id, 0, p->tx + sent, p->ntx - sent);
	for (uint16_t i = 0; i < sent; i++)
		bytes += len[i];
	for (uint16_t i = sent; i < p->ntx; i++)
		upfu_drop(u, p->tx[i], UPF_DROP_TX_FULL);
	CNT_ADD(p->st->tx_pkts, sent);
	CNT_ADD(p->st->tx_bytes, bytes);
	p->ntx = 0;
}

void upfu_flush(struct upfu *u)
{
	for (int i = 0; i < UPF_PORTS; i++)
		if (u->port[i].ntx)
			flush_port(u, &u->port[i]);
}

/* ---- rules ------------------------------------------------------------------ */

static int in_range(uint16_t v, uint16_t lo, uint16_t hi) { return v >= lo && v <= hi; }

/* sdf_match: "from" is the remote end, "to" the UE (TS 29.212 5.4.2: an
 * uplink packet matches with source and destination swapped). */
static int sdf_match(const struct upf_sdf *f, enum dir d, const struct upfu_pkt *k)
{
	uint32_t remote = d == DL ? k->fsrc : k->fdst, ue = d == DL ? k->fdst : k->fsrc;
	uint16_t rport = d == DL ? k->fsport : k->fdport, uport = d == DL ? k->fdport : k->fsport;
	return (f->proto == 0 || f->proto == k->fproto) && (remote & f->remote_mask) == f->remote_addr &&
	       (ue & f->ue_mask) == f->ue_addr && in_range(rport, f->remote_port_lo, f->remote_port_hi) &&
	       in_range(uport, f->ue_port_lo, f->ue_port_hi);
}

static int sdfs_match(const struct upf_pdr *p, enum dir d, const struct upfu_pkt *k)
{
	uint8_t n = p->nsdf < UPF_MAX_SDF ? p->nsdf : UPF_MAX_SDF;
	if (n == 0)
		return 1;
	for (uint8_t i = 0; i < n; i++)
		if (sdf_match(&p->sdf[i], d, k))
			return 1;
	return 0;
}

/* keyed says whether p is found by this packet's key at all: the TEID
 * uplink, the UE address downlink. */
static int keyed(const struct upf_pdr *p, enum dir d, const struct upfu_pkt *k)
{
	if (d == UL)
		return p->source == UPF_ACCESS && (p->flags & UPF_PDR_FTEID) && p->teid == k->teid;
	return (p->source == UPF_CORE || p->source == UPF_SGI_LAN) && (p->flags & UPF_PDR_UEIP) &&
	       p->ue_addr == k->fdst;
}

/* mbr_depth is the size of an MBR bucket in credit (unit per byte, police):
 * MBR_BURST_MS of the rate, at least two full frames, at most what credit
 * holds. Computed when the rules are read, not per packet. */
static uint64_t mbr_depth(uint64_t mbr, uint64_t unit)
{
	uint64_t bytes = qos_window_bytes(mbr, MBR_BURST_MS * 1000000ull);
	if (bytes < 2 * RTE_ETHER_MAX_LEN)
		bytes = 2 * RTE_ETHER_MAX_LEN;
	if (bytes > (QOS_MAX_CREDIT - 1) / unit)
		bytes = (QOS_MAX_CREDIT - 1) / unit;
	return bytes * unit;
}

static void take_qers(const struct upf_sess *s, const struct upf_pdr *p, enum dir d, uint64_t unit, struct verdict *v)
{
	for (int i = 0; i < UPF_PDR_QERS; i++) {
		uint8_t q = p->qer[i];
		if (q == UPF_NONE || q >= UPF_MAX_QER || q >= s->nqer)
			continue;
		const struct upf_qer *r = &s->qer[q];
		if (!(r->gates & (d == UL ? UPF_GATE_UL : UPF_GATE_DL)))
			v->gate_closed = 1;
		if (v->qfi == 0)
			v->qfi = r->qfi;
		/* the contract with UPF-C: flow QER first, session-level QER last */
		if (r->qfi != 0 && v->flow_qer == UPF_NONE)
			v->flow_qer = q;
		else if (r->qfi == 0 && (d == UL ? r->mbr_ul : r->mbr_dl) != 0)
			v->sess_qer = q;
		v->qer[v->nqer] = q;
		v->mbr[v->nqer] = d == UL ? r->mbr_ul : r->mbr_dl;
		v->depth[v->nqer] = mbr_depth(v->mbr[v->nqer], unit);
		v->nqer++;
	}
}

static void take_urrs(const struct upf_sess *s, const struct upf_pdr *p, struct verdict *v)
{
	for (int i = 0; i < UPF_PDR_URRS; i++) {
		uint8_t r = p->urr[i];
		if (r == UPF_NONE || r >= UPF_MAX_URR || r >= s->nurr || s->urr[r].epoch == 0)
			continue;
		v->urr[v->nurr] = r;
		v->epoch[v->nurr++] = s->urr[r].epoch;
	}
}

/* ue_of_uplink is the UE address of a packet a PDR on N3 detects: its
 * source, but for a handover's forwarding tunnel (TS 23.502 4.9.1.3.2: its
 * FAR sends it back to ACCESS), which carries downlink data to the UE. */
static uint32_t ue_of_uplink(const struct upf_sess *s, const struct upf_pdr *p, const struct upfu_pkt *k)
{
	if (p->far < UPF_MAX_FAR && p->far < s->nfar && s->far[p->far].dest == UPF_ACCESS)
		return k->fdst;
	return k->fsrc;
}

/* pick is the PDR with the lowest precedence value that matches, or NULL;
 * *keyed_n counts the PDRs the packet's key finds at all. */
static const struct upf_pdr *pick(const struct upf_sess *s, enum dir d, const struct upfu_pkt *k, uint32_t *keyed_n)
{
	const struct upf_pdr *best = NULL;
	uint8_t n = s->npdr < UPF_MAX_PDR ? s->npdr : UPF_MAX_PDR;
	*keyed_n = 0;
	for (uint8_t i = 0; i < n; i++) {
		const struct upf_pdr *p = &s->pdr[i];
		if (!keyed(p, d, k))
			continue;
		(*keyed_n)++;
		if (d == UL && p->qfi != 0 && p->qfi != k->qfi)
			continue;
		/* TS 29.244 5.2.1: a PDI's UE IP address is the source of uplink
		 * packets; another source is not this UE's (spoofed). */
		if (d == UL && (p->flags & UPF_PDR_UEIP) && p->ue_addr != ue_of_uplink(s, p, k))
			continue;
		if (sdfs_match(p, d, k) && (best == NULL || p->precedence < best->precedence))
			best = p;
	}
	return best;
}

/* cacheable says whether best's verdict holds for every packet of this key
 * that passes w (verdict.h: the only PDR of the key, no SDF filter). */
static int cacheable(const struct upf_sess *s, const struct upf_pdr *best, enum dir d, uint32_t keyed_n,
		     struct vc_cond *w)
{
	if (keyed_n != 1 || best->nsdf != 0)
		return 0;
	w->qfi = d == UL ? best->qfi : 0;
	w->ue_at = VC_UE_ANY;
	w->ue = 0;
	if (d == UL && (best->flags & UPF_PDR_UEIP)) {
		int fwd = best->far < UPF_MAX_FAR && best->far < s->nfar && s->far[best->far].dest == UPF_ACCESS;
		w->ue_at = fwd ? VC_UE_DST : VC_UE_SRC; /* as ue_of_uplink */
		w->ue = best->ue_addr;
	}
	return 1;
}

/* decide picks the PDR with the lowest precedence value that matches and
 * reads its FAR, QERs and URRs into v; *w says whether (1) and on what
 * condition the verdict may be cached. */
static int decide(const struct upf_sess *s, enum dir d, const struct upfu_pkt *k, uint64_t unit, struct verdict *v,
		  struct vc_cond *w, int *cache)
{
	uint32_t keyed_n;
	const struct upf_pdr *best = pick(s, d, k, &keyed_n);
	*cache = 0;
	if (keyed_n == 0)
		return d == UL ? UPF_DROP_UNKNOWN_TEID : UPF_DROP_NOT_OURS;
	if (best == NULL)
		return UPF_DROP_NO_PDR;
	memset(v, 0, sizeof(*v));
	if (best->far >= UPF_MAX_FAR || best->far >= s->nfar)
		return UPF_DROP_FAR_DROP;
	const struct upf_far *f = &s->far[best->far];
	v->action = f->action;
	v->dest = f->dest;
	v->ohr = (best->flags & UPF_PDR_OHR) != 0;
	v->has_oh = (f->flags & UPF_FAR_OH) != 0;
	v->oh_teid = f->oh_teid;
	v->oh_addr = f->oh_addr;
	v->pdr_id = best->id;
	v->up_seid = s->up_seid;
	v->flow_qer = v->sess_qer = UPF_NONE;
	v->shaper = -1; /* found at the first shaped packet (shape.h upfu_shaper_of) */
	take_qers(s, best, d, unit, v);
	take_urrs(s, best, v);
	*cache = cacheable(s, best, d, keyed_n, w);
	return 0;
}

static uint32_t key_of(enum dir d, const struct upfu_pkt *k) { return d == UL ? k->teid : k->fdst; }

/* read_rules decides under the seqlock of slot s (the slow path: the
 * verdict cache had nothing for this packet) and caches what it may. */
static int read_rules(struct upfu *u, enum dir d, const struct upfu_pkt *k, const struct upf_sess *s,
		      struct vcache *c, struct verdict *v)
{
	int none = d == UL ? UPF_DROP_UNKNOWN_TEID : UPF_DROP_NOT_OURS;
	/* UPF-C holds a slot odd for the ~100 ns of a copy; one descheduled
	 * mid-write (or killed) costs this session's packets, not the burst. */
	for (uint64_t deadline = 0;;) {
		uint32_t seq = upf_read_begin(s);
		if (!(seq & 1)) {
			struct vc_cond w;
			int cache = 0;
			int r = s->state == UPF_SESS_USED ? decide(s, d, k, u->unit, v, &w, &cache) : none;
			if (upf_read_valid(s, seq)) {
				v->seq = seq;
				if (r == 0 && cache)
					vcache_fill(c, seq, key_of(d, k), &w, v);
				return r;
			}
		}
		uint64_t now = rte_rdtsc();
		if (deadline == 0)
			deadline = now + u->hz / 1000000 * READ_BUDGET_US;
		else if (now > deadline)
			return UPF_DROP_RULE_BUSY;
		rte_pause();
	}
}

/* lookup finds the packet's verdict in slot sl, the lookup table's hint
 * for its key (found ahead for the whole burst): from the verdict cache
 * when the slot is unchanged since, else from the rules. */
static int lookup(struct upfu *u, enum dir d, const struct upfu_pkt *k, int64_t sl, uint32_t *slot, struct verdict *v)
{
	struct upf_shm *t = u->t;
	if (sl < 0 || sl >= t->max_sessions)
		return d == UL ? UPF_DROP_UNKNOWN_TEID : UPF_DROP_NOT_OURS;
	const struct upf_sess *s = upf_sess_at(t, (uint32_t)sl);
	struct vcache *c = upfu_vcache_at(u, (uint32_t)sl, d);
	*slot = (uint32_t)sl;
	uint32_t seq = upf_read_begin(s);
	if (vcache_hit(c, seq, key_of(d, k), k->qfi, k->fsrc, k->fdst)) {
		*v = c->v;
		return 0;
	}
	return read_rules(u, d, k, s, c, v);
}

/* police applies each QER's MBR as a token bucket (the full trTCM of
 * qos/ runs when a shaper serves the session). Integer credit as in qos/:
 * a byte is unit (8 × hz) credit and a tick adds MBR (bit/s) credit, so
 * the refill is one multiplication, exact, with no division per packet. */
static int police(struct upfu *u, uint32_t slot, const struct verdict *v, enum dir d, uint32_t bytes)
{
	struct upf_dyn *dyn = upf_dyn_at(u->t, slot);
	uint64_t now = u->now, need = (uint64_t)bytes * u->unit;
	for (int i = 0; i < v->nqer; i++) {
		if (v->mbr[i] == 0)
			continue;
		struct upf_bucket *b = &dyn->qer[v->qer[i]][d];
		uint64_t had = b->tokens > 0 ? (uint64_t)b->tokens : 0;
		uint64_t tokens = b->last == 0 ? v->depth[i] : qos_fill(had, v->depth[i], v->mbr[i], now > b->last ? now - b->last : 0);
		b->last = now;
		if (tokens < need) {
			b->tokens = (int64_t)tokens;
			return UPF_DROP_MBR;
		}
		b->tokens = (int64_t)(tokens - need);
	}
	return 0;
}

/* count adds a forwarded packet to its URRs (the T-PDU's bytes: the UE's
 * IP packet). A URR index of a new epoch starts from zero. */
static void count(struct upfu *u, uint32_t slot, const struct verdict *v, enum dir d, uint32_t bytes)
{
	struct upf_dyn *dyn = upf_dyn_at(u->t, slot);
	for (int i = 0; i < v->nurr; i++) {
		struct upf_count *c = &dyn->urr[v->urr[i]];
		if (c->epoch != v->epoch[i]) {
			__atomic_store_n(&c->ul_bytes, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&c->dl_bytes, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&c->ul_pkts, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&c->dl_pkts, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&c->epoch, v->epoch[i], __ATOMIC_RELEASE);
		}
		if (d == UL) {
			CNT_ADD(c->ul_bytes, bytes);
			CNT_ADD(c->ul_pkts, 1);
		} else {
			CNT_ADD(c->dl_bytes, bytes);
			CNT_ADD(c->dl_pkts, 1);
		}
	}
}

/* enforce applies FAR action, gate and MBR (unless a shaper's meters do,
 * police = 0); 0 = forward. */
static int enforce(struct upfu *u, uint32_t slot, const struct verdict *v, enum dir d, uint32_t bytes, int police_mbr)
{
	if (v->action & UPF_DROP)
		return UPF_DROP_FAR_DROP;
	if (v->action & UPF_BUFF)
		return UPF_DROP_BUFFERED; /* uplink: nothing to page for */
	if (!(v->action & UPF_FORW))
		return UPF_DROP_FAR_DROP;
	if (v->gate_closed)
		return UPF_DROP_GATE;
	return police_mbr ? police(u, slot, v, d, bytes) : 0;
}

/* ---- output ------------------------------------------------------------------ */

/* hop_ttl decrements the forwarded packet's TTL (RFC 791), with an
 * incremental checksum update (RFC 1624). */
static int hop_ttl(struct rte_ipv4_hdr *ip)
{
	if (ip->time_to_live <= 1)
		return UPF_DROP_TTL;
	ip->time_to_live--;
	uint32_t sum = (uint32_t)rte_be_to_cpu_16(ip->hdr_checksum) + 0x0100;
	sum = (sum & 0xffff) + (sum >> 16);
	ip->hdr_checksum = rte_cpu_to_be_16((uint16_t)sum);
	return 0;
}

/* to_n6 sends the IPv4 packet at ip_off (ip_len bytes) out of N6. */
/* emit sends the prepared frame m toward dst on port, or, when h is not
 * NULL (a shaper holds it first), only says where in h. */
static int emit(struct upfu *u, int port, uint32_t dst, struct rte_mbuf *m, struct upfu_hop *h)
{
	if (h == NULL)
		return upfu_send_via(u, port, dst, m);
	h->port = port;
	h->dst = dst;
	return 0;
}

static int to_n6(struct upfu *u, struct rte_mbuf *m, uint32_t ip_off, uint32_t ip_len, uint32_t dst, struct upfu_hop *h)
{
	int r;
	rte_pktmbuf_adj(m, (uint16_t)(ip_off - RTE_ETHER_HDR_LEN));
	rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - (RTE_ETHER_HDR_LEN + ip_len));
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	if ((r = hop_ttl((struct rte_ipv4_hdr *)(eh + 1))) != 0)
		return r;
	eh->src_addr = u->port[UPF_N6].mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	return emit(u, UPF_N6, dst, m, h);
}

static void put_gtpu(uint8_t *g, uint32_t teid, uint16_t ip_len, uint8_t qfi)
{
	g[0] = 0x34; /* version 1, PT, E (TS 29.281 5.1) */
	g[1] = 0xff; /* G-PDU */
	uint16_t len = rte_cpu_to_be_16((uint16_t)(ip_len + 8));
	memcpy(g + 2, &len, 2);
	uint32_t t = rte_cpu_to_be_32(teid);
	memcpy(g + 4, &t, 4);
	g[8] = g[9] = g[10] = 0; /* sequence number, N-PDU number unused */
	g[11] = 0x85;             /* next: PDU Session Container */
	/* TS 38.415 5.5.2.1 DL PDU SESSION INFORMATION (PDU type 0), QFI */
	g[12] = 1;
	g[13] = 0x00;
	g[14] = qfi & 0x3f;
	g[15] = 0; /* no next extension header */
}

/* outer_cksum is the checksum (RFC 791, RFC 1071) of the outer header
 * to_n3 writes: options none, fragment offset 0, so five of its ten words
 * vary and the sum is a few additions, not a loop over the header. */
static uint16_t outer_cksum(const struct rte_ipv4_hdr *ip)
{
	uint32_t src = rte_be_to_cpu_32(ip->src_addr), dst = rte_be_to_cpu_32(ip->dst_addr);
	uint32_t sum = ((uint32_t)ip->version_ihl << 8 | ip->type_of_service) + rte_be_to_cpu_16(ip->total_length) +
		       rte_be_to_cpu_16(ip->packet_id) + rte_be_to_cpu_16(ip->fragment_offset) +
		       ((uint32_t)ip->time_to_live << 8 | ip->next_proto_id) + (src >> 16) + (src & 0xffff) + (dst >> 16) +
		       (dst & 0xffff);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return rte_cpu_to_be_16((uint16_t)~sum);
}

/* to_n3 encapsulates the IPv4 packet at ip_off in GTP-U with a PDU Session
 * Container toward the FAR's peer (the gNB's F-TEID) and sends it on N3. */
static int to_n3(struct upfu *u, struct rte_mbuf *m, uint32_t ip_off, uint32_t ip_len, const struct verdict *v,
		 struct upfu_hop *h)
{
	struct uport *p = &u->port[UPF_N3];
	int r;
	if ((r = hop_ttl(rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, ip_off))) != 0)
		return r;
	rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - (ip_off + ip_len));
	if (ip_off >= ENCAP_LEN)
		rte_pktmbuf_adj(m, (uint16_t)(ip_off - ENCAP_LEN));
	else if (rte_pktmbuf_prepend(m, (uint16_t)(ENCAP_LEN - ip_off)) == NULL)
		return UPF_DROP_UNSUPPORTED; /* no headroom */
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	eh->src_addr = p->mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);
	ip->version_ihl = 0x45;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(ENCAP_LEN - RTE_ETHER_HDR_LEN + ip_len));
	ip->packet_id = rte_cpu_to_be_16(u->ip_id++);
	ip->fragment_offset = 0;
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(p->ip);
	ip->dst_addr = rte_cpu_to_be_32(v->oh_addr);
	ip->hdr_checksum = outer_cksum(ip);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16(UPFU_GTPU_PORT);
	udp->dst_port = rte_cpu_to_be_16(UPFU_GTPU_PORT);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(8 + 16 + ip_len));
	udp->dgram_cksum = 0; /* optional over IPv4 (RFC 768) */
	put_gtpu((uint8_t *)(udp + 1), v->oh_teid, (uint16_t)ip_len, v->qfi);
	return emit(u, UPF_N3, v->oh_addr, m, h);
}

/* deliver sends the T-PDU where the FAR says: GTP-U toward a peer when it
 * creates an outer header, else (its outer header removed) to N6. */
static int deliver(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k, const struct verdict *v, enum dir d,
		   struct upfu_hop *h)
{
	/* TS 23.502 4.9.1.3.2 indirect data forwarding: what arrives in a
	 * forwarding tunnel on N3 leaves in the FAR's tunnel on N3. */
	if (d == UL && v->has_oh && v->dest == UPF_ACCESS)
		return to_n3(u, m, k->inner, k->inner_len, v, h);
	if (d == UL && !v->ohr)
		return UPF_DROP_UNSUPPORTED; /* forwarding GTP-U as is (N9) is not served */
	if (v->has_oh)
		return v->dest == UPF_ACCESS ? to_n3(u, m, k->inner, k->inner_len, v, h) : UPF_DROP_UNSUPPORTED;
	if (v->dest == UPF_CORE || v->dest == UPF_SGI_LAN)
		return to_n6(u, m, k->inner, k->inner_len, k->fdst, h);
	return UPF_DROP_UNSUPPORTED;
}

/* shape prepares the frame and hands it to the session's shaper (shape.c),
 * which sends it when the flow's share and the Session-AMBR allow. The
 * URRs count it once queued: a queued packet leaves unless the rules
 * change under it (counted as flushed). */
static int shape(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k, uint32_t slot, const struct verdict *v,
		 enum dir d, uint32_t shaper, int flow)
{
	uint32_t bytes = k->inner_len;
	struct upfu_hop h;
	int r = deliver(u, m, k, v, d, &h);
	if (r == 0 && (r = upfu_shape(u, shaper, flow, m, &h, bytes)) == 0)
		count(u, slot, v, d, bytes);
	return r;
}

/* forward applies the verdict's FAR, gate and MBR and sends the packet;
 * 0 = it left, else the drop reason (m not yet freed). */
static int forward(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k, uint32_t slot,
		   struct verdict *v, enum dir d)
{
	if (d == UL && v->qfi == 0)
		v->qfi = k->qfi; /* forwarded data keeps its QoS flow (TS 38.415) */
	uint32_t bytes = k->inner_len; /* deliver rewrites k's packet */
	struct upfu_shaper_pick sp = {-1, -1};
	if (v->sess_qer != UPF_NONE)
		sp = upfu_shaper_of(u, slot, d, v);
	int r = enforce(u, slot, v, d, bytes, sp.idx < 0);
	if (r == 0 && sp.idx >= 0)
		return shape(u, m, k, slot, v, d, (uint32_t)sp.idx, sp.flow);
	if (r == 0 && (r = deliver(u, m, k, v, d, NULL)) == 0)
		count(u, slot, v, d, bytes); /* what left, not what a next hop lost */
	return r;
}

static int buffers(const struct verdict *v) { return (v->action & UPF_BUFF) && !(v->action & UPF_DROP); }

static void buffer_downlink(struct upfu *u, struct rte_mbuf *m, uint32_t slot, const struct verdict *v)
{
	struct buf_info bi = {.up_seid = v->up_seid, .pdr_id = v->pdr_id, .qfi = v->qfi,
			      .notify = (v->action & UPF_NOCP) != 0};
	upfu_buffer(u, m, slot, &bi);
}

static void user_packet(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k, enum dir d, int64_t hint)
{
	uint32_t slot = 0;
	struct verdict v;
	int r = lookup(u, d, k, hint, &slot, &v);
	if (r == UPF_DROP_UNKNOWN_TEID) {
		upfu_error_indication(u, m, k);
		return;
	}
	if (r == 0 && d == DL) {
		if (buffers(&v)) {
			buffer_downlink(u, m, slot, &v);
			return;
		}
		/* TS 23.502 4.2.3.3 step 17: what waited goes first, in order. */
		if (upfu_has_buffered(u, slot))
			upfu_flush_slot(u, slot);
	}
	if (r == 0)
		r = forward(u, m, k, slot, &v, d);
	if (r)
		upfu_drop(u, m, r);
}

void upfu_flush_slot(struct upfu *u, uint32_t slot)
{
	struct rte_mbuf *m;
	u->now = rte_rdtsc(); /* also called between bursts (buffer.c) */
	while ((m = upfu_buf_head(u, slot)) != NULL) {
		struct upfu_pkt k;
		struct verdict v;
		uint32_t at = slot;
		int r = upfu_parse_n6(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), &k);
		if (r == 0)
			r = lookup(u, DL, &k, slot, &at, &v);
		if (r == 0 && v.up_seid != upfu_buf_owner(u, slot))
			r = UPF_DROP_NOT_OURS; /* the slot holds another session now */
		if (r == 0 && buffers(&v))
			return; /* still buffering: keep them, in order */
		upfu_buf_pop(u, slot);
		if (r == 0 && (v.action & UPF_FORW) && !(v.action & UPF_DROP)) {
			if ((r = forward(u, m, &k, slot, &v, DL)) == 0)
				CNT_ADD(u->st->buf_flushed, 1);
			else
				upfu_drop(u, m, r);
			continue;
		}
		CNT_ADD(u->st->buf_discarded, 1); /* FAR DROP, or the session is gone */
		upfu_drop(u, m, UPF_DROP_BUFFERED);
	}
	upfu_buf_served(u, slot);
}

/* ---- per port --------------------------------------------------------------- */

#define GTP_ECHO_REQUEST 1
#define GTP_END_MARKER 254
#define GTP_GPDU 255

/* forwarding_tunnel reads, under the seqlock, the tunnel a forwarding PDR
 * of local TEID teid sends to (its FAR: ACCESS with an outer header);
 * 0 with *oh_teid and *oh_addr, else a drop reason. */
static int forwarding_tunnel(struct upfu *u, uint32_t teid, uint32_t *oh_teid, uint32_t *oh_addr)
{
	struct upf_shm *t = u->t;
	int64_t sl = upf_hash_find(upf_teid_tab(t), t->teid_n, teid);
	if (sl < 0 || sl >= t->max_sessions)
		return UPF_DROP_UNKNOWN_TEID;
	const struct upf_sess *s = upf_sess_at(t, (uint32_t)sl);
	uint32_t seq = upf_read_begin(s);
	int r = UPF_DROP_GTPU_TYPE; /* an End Marker on a tunnel that forwards nowhere on N3 */
	uint8_t n = s->npdr < UPF_MAX_PDR ? s->npdr : UPF_MAX_PDR;
	for (uint8_t i = 0; i < n && s->state == UPF_SESS_USED; i++) {
		const struct upf_pdr *p = &s->pdr[i];
		if (!(p->flags & UPF_PDR_FTEID) || p->teid != teid || p->far >= UPF_MAX_FAR || p->far >= s->nfar)
			continue;
		const struct upf_far *f = &s->far[p->far];
		if (f->dest == UPF_ACCESS && (f->flags & UPF_FAR_OH) && (f->action & UPF_FORW)) {
			*oh_teid = f->oh_teid;
			*oh_addr = f->oh_addr;
			r = 0;
			break;
		}
	}
	return upf_read_valid(s, seq) ? r : UPF_DROP_RULE_BUSY;
}

/* relay_end_marker passes the source gNB's End Marker on a forwarding
 * tunnel to the target gNB (TS 23.502 4.9.1.3.3 step 3, TS 29.281
 * 7.3.2): the target then knows the forwarded data is complete. */
static void relay_end_marker(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k)
{
	uint32_t teid = 0, addr = 0;
	int r = forwarding_tunnel(u, k->teid, &teid, &addr);
	if (r == 0)
		r = upfu_end_marker(u, teid, addr);
	if (r) {
		upfu_drop(u, m, r);
		return;
	}
	rte_pktmbuf_free(m);
}

static void from_n3(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k, int64_t hint)
{
	if (k->l3type == UPFU_L3_ARP) {
		upfu_arp_input(u, UPF_N3, m, k);
	} else if (k->dst != u->port[UPF_N3].ip) {
		upfu_drop(u, m, UPF_DROP_NOT_OURS);
	} else if (k->proto == IPPROTO_ICMP) {
		upfu_icmp_echo(u, UPF_N3, m, k);
	} else if (!k->gtp) {
		upfu_drop(u, m, UPF_DROP_NOT_GTPU);
	} else if (k->gtp_type == GTP_GPDU) {
		user_packet(u, m, k, UL, hint);
	} else if (k->gtp_type == GTP_ECHO_REQUEST) {
		upfu_gtpu_echo(u, m, k);
	} else if (k->gtp_type == GTP_END_MARKER) {
		relay_end_marker(u, m, k);
	} else {
		upfu_drop(u, m, UPF_DROP_GTPU_TYPE); /* Error Indication, End Marker, ... */
	}
}

static void from_n6(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k, int64_t hint)
{
	if (k->l3type == UPFU_L3_ARP)
		upfu_arp_input(u, UPF_N6, m, k);
	else if (k->dst == u->port[UPF_N6].ip && k->proto == IPPROTO_ICMP)
		upfu_icmp_echo(u, UPF_N6, m, k);
	else if (k->dst == u->port[UPF_N6].ip)
		upfu_drop(u, m, UPF_DROP_NOT_OURS);
	else
		user_packet(u, m, k, DL, hint);
}

/* ---- the burst ------------------------------------------------------------- */

/* user_key says whether k is a user packet (a G-PDU to our N3 address, or
 * an IPv4 packet on N6 not to us) and gives its lookup table and key. */
static int user_key(struct upfu *u, int port, const struct upfu_pkt *k, const uint64_t **tab, uint32_t *n,
		    uint32_t *key)
{
	struct upf_shm *t = u->t;
	if (k->l3type != UPFU_L3_IPV4)
		return 0;
	if (port == UPF_N3) {
		if (!k->gtp || k->gtp_type != GTP_GPDU || k->dst != u->port[UPF_N3].ip)
			return 0;
		*tab = upf_teid_tab(t);
		*n = t->teid_n;
		*key = k->teid;
		return 1;
	}
	if (k->dst == u->port[UPF_N6].ip)
		return 0;
	*tab = upf_ueip_tab(t);
	*n = t->ueip_n;
	*key = k->fdst;
	return 1;
}

/* prefetch_session asks for the cache lines decide() and the counters
 * read: with thousands of sessions they are rarely cached. */
static void prefetch_session(struct upfu *u, uint32_t sl)
{
	const char *s = (const char *)upf_sess_at(u->t, sl);
	for (size_t off = offsetof(struct upf_sess, pdr); off < offsetof(struct upf_sess, pdr[2]); off += 64)
		rte_prefetch0(s + off);
	rte_prefetch0(s + offsetof(struct upf_sess, far));
	rte_prefetch0(s + offsetof(struct upf_sess, qer));
	rte_prefetch0(s + offsetof(struct upf_sess, urr));
	const char *dyn = (const char *)upf_dyn_at(u->t, sl);
	rte_prefetch0(dyn);
	rte_prefetch0(dyn + offsetof(struct upf_dyn, qer));
}

/* prefetch_verdict asks for what every packet of slot sl reads first: the
 * slot's seq and its verdict cache entry (verdict.h). */
static void prefetch_verdict(struct upfu *u, uint32_t sl, enum dir d)
{
	const struct vcache *c = upfu_vcache_at(u, sl, d);
	rte_prefetch0(upf_sess_at(u->t, sl));
	rte_prefetch0(c);
	rte_prefetch0((const char *)c + 64);
	upfu_qos_prefetch_map(u, sl, d);
}

/* prefetch_rest asks, once the lines of prefetch_verdict are near, for what
 * the packet reads next: with a cached verdict only its counters (and MBR
 * buckets when no shaper serves it), else the rules themselves. */
static void prefetch_rest(struct upfu *u, uint32_t sl, enum dir d)
{
	const struct vcache *c = upfu_vcache_at(u, sl, d);
	if (c->seq != upf_read_begin(upf_sess_at(u->t, sl))) {
		prefetch_session(u, sl);
		upfu_qos_prefetch(u, sl, d);
		return;
	}
	struct upf_dyn *dyn = upf_dyn_at(u->t, sl);
	for (uint8_t i = 0; i < c->v.nurr && i < UPF_PDR_URRS; i++)
		rte_prefetch0(&dyn->urr[c->v.urr[i] % UPF_MAX_URR]);
	if (c->v.sess_qer != UPF_NONE && u->qos.max) {
		if (c->v.shaper >= 0)
			upfu_qos_prefetch_flow(u, c->v.shaper, c->v.shaper_flow);
		else
			upfu_qos_prefetch(u, sl, d);
		return;
	}
	for (uint8_t i = 0; i < c->v.nqer && i < UPF_PDR_QERS; i++)
		rte_prefetch0(&dyn->qer[c->v.qer[i] % UPF_MAX_QER][d]);
}

#define REST_AHEAD 6 /* packets handled while a packet's rules arrive */

static int hinted(const struct upfu *u, int64_t sl) { return sl >= 0 && sl < u->t->max_sessions; }

/* burst handles at most UPFU_BURST packets in three passes, so that memory
 * latency overlaps: parse each (and fetch its lookup entry), find each
 * session (and fetch its seq and cached verdict), then act on each while
 * fetching what the verdict of a packet a few places on needs (or its
 * rules). */
static void burst(struct upfu *u, int port, struct rte_mbuf **pkts, uint16_t n)
{
	struct upfu_pkt ks[UPFU_BURST];
	int rs[UPFU_BURST];
	int64_t hints[UPFU_BURST];
	const uint64_t *tabs[UPFU_BURST];
	uint32_t ns[UPFU_BURST], keys[UPFU_BURST];
	enum dir d = port == UPF_N3 ? UL : DL;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		hints[i] = -1;
		tabs[i] = NULL;
		if (!rte_pktmbuf_is_contiguous(m)) {
			rs[i] = UPF_DROP_UNSUPPORTED;
			continue;
		}
		const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
		if (port == UPF_N6) /* downlink: to_n3 writes the tunnel's headers in front of it */
			__builtin_prefetch(p + RTE_ETHER_HDR_LEN - ENCAP_LEN, 1, 3);
		rs[i] = port == UPF_N3 ? upfu_parse_n3(p, rte_pktmbuf_data_len(m), &ks[i])
				       : upfu_parse_n6(p, rte_pktmbuf_data_len(m), &ks[i]);
		if (rs[i] == 0 && user_key(u, port, &ks[i], &tabs[i], &ns[i], &keys[i]))
			rte_prefetch0(&tabs[i][upf_hash(keys[i], ns[i])]);
		else
			tabs[i] = NULL;
	}
	for (uint16_t i = 0; i < n; i++) {
		if (tabs[i] != NULL) {
			hints[i] = upf_hash_find(tabs[i], ns[i], keys[i]);
			if (hinted(u, hints[i]))
				prefetch_verdict(u, (uint32_t)hints[i], d);
		}
	}
	/* The rest is asked for REST_AHEAD packets ahead of the one handled, not
	 * for the whole burst at once: a shaped packet needs some ten lines,
	 * and a burst's worth would queue behind the core's few fill buffers. */
	for (uint16_t i = 0; i < n && i < REST_AHEAD; i++)
		if (hinted(u, hints[i]))
			prefetch_rest(u, (uint32_t)hints[i], d);
	for (uint16_t i = 0; i < n; i++) {
		if (i + REST_AHEAD < n && hinted(u, hints[i + REST_AHEAD]))
			prefetch_rest(u, (uint32_t)hints[i + REST_AHEAD], d);
		if (rs[i])
			upfu_drop(u, pkts[i], rs[i]);
		else if (port == UPF_N3)
			from_n3(u, pkts[i], &ks[i], hints[i]);
		else
			from_n6(u, pkts[i], &ks[i], hints[i]);
	}
}

void upfu_burst(struct upfu *u, int port, struct rte_mbuf **pkts, uint16_t n)
{
	struct uport *p = &u->port[port];
	uint64_t bytes = 0;
	/* A burst arrived at once: one clock reading serves its packets'
	 * meters and buckets (an rdtsc costs tens of cycles in a VM). */
	u->now = rte_rdtsc();
	for (uint16_t i = 0; i < n; i++)
		bytes += rte_pktmbuf_pkt_len(pkts[i]);
	CNT_ADD(p->st->rx_pkts, n);
	CNT_ADD(p->st->rx_bytes, bytes);
	for (uint16_t i = 0; i < n; i += UPFU_BURST)
		burst(u, port, pkts + i, (uint16_t)(n - i < UPFU_BURST ? n - i : UPFU_BURST));
}
