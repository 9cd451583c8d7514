/* neighbour.c — UPF-U's next hops: the ARP cache per port (gNBs on N3, the
 * gateway or on-link hosts on N6, RFC 826) and the packets that wait for a
 * next hop being resolved.
 *
 * A packet toward an unresolved hop is held, not dropped (RFC 1122
 * 2.3.2.2), so the first ping through a fresh core and the first packets a
 * paging flush sends to a gNB arrive. The hop's held packets leave in
 * order the moment its address is learnt, before anything sent to it
 * later; unanswered for ARP_GIVE_UP_MS (asked again every ARP_RETRY_MS)
 * they are dropped. Bounds and their reasons: priv.h, HOLD_*.
 *
 * The known-hop path is one cache lookup as before; the loop's tick reads
 * holds.nhops only (0 when nothing waits).
 */
#include <rte_byteorder.h>
#include <rte_cycles.h>

#include "priv.h"

static struct arp_entry *arp_slot(struct uport *p, uint32_t ip, int create)
{
	uint32_t i = upf_hash(ip, ARP_SLOTS);
	for (uint32_t probes = 0; probes < ARP_SLOTS; probes++, i = (i + 1) & (ARP_SLOTS - 1)) {
		if (p->arp[i].ip == ip)
			return &p->arp[i];
		if (p->arp[i].ip == 0) {
			if (!create)
				return NULL;
			p->arp[i].ip = ip;
			return &p->arp[i];
		}
	}
	return NULL;
}

static int on_link(const struct uport *p, uint32_t ip) { return (ip & p->mask) == (p->ip & p->mask); }

static void arp_request(struct upfu *u, int port, uint32_t ip)
{
	struct uport *p = &u->port[port];
	struct rte_mbuf *m = rte_pktmbuf_alloc(u->pool);
	if (m == NULL)
		return;
	uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, RTE_ETHER_HDR_LEN + sizeof(struct arp_pkt));
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)d;
	memset(&eh->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	eh->src_addr = p->mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	struct arp_pkt *a = (struct arp_pkt *)(d + RTE_ETHER_HDR_LEN);
	a->htype = rte_cpu_to_be_16(1);
	a->ptype = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->hlen = 6;
	a->plen = 4;
	a->op = rte_cpu_to_be_16(ARP_REQUEST);
	a->sha = p->mac;
	a->spa = rte_cpu_to_be_32(p->ip);
	memset(&a->tha, 0, sizeof(a->tha));
	a->tpa = rte_cpu_to_be_32(ip);
	upfu_tx(u, port, m);
}

/* ask sends a request for e unless one went out less than ARP_RETRY_MS
 * ago: a flood toward an unresolved hop costs one request per interval. */
static void ask(struct upfu *u, int port, struct arp_entry *e, uint64_t now)
{
	if (e->asked == 0 || now - e->asked > u->hz / 1000 * ARP_RETRY_MS) {
		e->asked = now;
		arp_request(u, port, e->ip);
	}
}

/* ---- held packets ---------------------------------------------------------- */

static struct rte_mbuf *take_oldest(struct upfu_holds *hs, struct arp_hold *h)
{
	struct rte_mbuf *m = h->m[h->head];
	h->head = (uint16_t)((h->head + 1) % HOLD_PER_HOP);
	h->n--;
	hs->total--;
	return m;
}

static void put_newest(struct upfu_holds *hs, struct arp_hold *h, struct rte_mbuf *m)
{
	h->m[(h->head + h->n) % HOLD_PER_HOP] = m;
	h->n++;
	hs->total++;
}

/* new_hold starts waiting for e's packets; NULL when HOLD_HOPS wait. */
static struct arp_hold *new_hold(struct upfu *u, int port, struct arp_entry *e, uint64_t now)
{
	struct upfu_holds *hs = &u->holds;
	if (hs->nhops == HOLD_HOPS)
		return NULL;
	struct arp_hold *h = &hs->hop[hs->nhops++];
	h->ip = e->ip;
	h->port = (uint8_t)port;
	h->head = h->n = 0;
	h->since = now;
	e->hold = (uint8_t)hs->nhops;
	return h;
}

/* end_hold forgets hold h of entry e (emptied by the caller), moving the
 * last hold into its place. */
static void end_hold(struct upfu *u, struct arp_entry *e, struct arp_hold *h)
{
	struct upfu_holds *hs = &u->holds;
	struct arp_hold *last = &hs->hop[hs->nhops - 1];
	if (e != NULL) /* entries are never removed: only a broken table lacks it */
		e->hold = 0;
	if (h != last) {
		*h = *last;
		struct arp_entry *moved = arp_slot(&u->port[h->port], h->ip, 0);
		if (moved)
			moved->hold = (uint8_t)(h - hs->hop + 1);
	}
	hs->nhops--;
}

/* hold keeps m until e is resolved. RFC 1122 2.3.2.2: a full hop drops
 * its oldest (the newest data is what the receiver still wants); a full
 * total refuses m. */
static int hold(struct upfu *u, int port, struct arp_entry *e, struct rte_mbuf *m, uint64_t now)
{
	struct upfu_holds *hs = &u->holds;
	struct arp_hold *h = e->hold ? &hs->hop[e->hold - 1] : NULL;
	if (h != NULL && h->n == HOLD_PER_HOP) {
		upfu_drop(u, take_oldest(hs, h), UPF_DROP_NO_ARP);
	} else if (hs->total >= HOLD_TOTAL) {
		return UPF_DROP_NO_ARP;
	} else if (h == NULL && (h = new_hold(u, port, e, now)) == NULL) {
		return UPF_DROP_NO_ARP;
	}
	put_newest(hs, h, m);
	return 0;
}

/* release sends e's held packets in arrival order to its MAC, now known. */
static void release(struct upfu *u, int port, struct arp_entry *e)
{
	struct arp_hold *h = &u->holds.hop[e->hold - 1];
	while (h->n) {
		struct rte_mbuf *m = take_oldest(&u->holds, h);
		rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->dst_addr = e->mac;
		upfu_tx(u, port, m);
	}
	end_hold(u, e, h);
}

/* give_up drops what waited for an entry nobody answered for. */
static void give_up(struct upfu *u, struct arp_entry *e, struct arp_hold *h)
{
	while (h->n)
		upfu_drop(u, take_oldest(&u->holds, h), UPF_DROP_NO_ARP);
	end_hold(u, e, h);
}

/* ---- the API of priv.h ------------------------------------------------------ */

int upfu_send_via(struct upfu *u, int port, uint32_t dst, struct rte_mbuf *m)
{
	struct uport *p = &u->port[port];
	uint32_t hop = on_link(p, dst) ? dst : p->gw;
	if (hop == 0)
		return UPF_DROP_NO_ROUTE;
	struct arp_entry *e = arp_slot(p, hop, 1);
	if (e == NULL)
		return UPF_DROP_NO_ROUTE;
	if (likely(e->valid)) {
		rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->dst_addr = e->mac;
		upfu_tx(u, port, m);
		return 0;
	}
	uint64_t now = rte_rdtsc();
	ask(u, port, e, now);
	return hold(u, port, e, m, now);
}

int upfu_neigh_heard(struct upfu *u, int port, uint32_t ip, const struct rte_ether_addr *mac, int add)
{
	struct uport *p = &u->port[port];
	/* a broadcast or multicast sender would send our unicast everywhere */
	if (!on_link(p, ip) || ip == p->ip || !rte_is_valid_assigned_ether_addr(mac))
		return 0;
	struct arp_entry *e = arp_slot(p, ip, add);
	if (e == NULL)
		return 0;
	e->mac = *mac;
	e->valid = 1;
	if (e->hold)
		release(u, port, e);
	return 1;
}

void upfu_neigh_tick(struct upfu *u)
{
	struct upfu_holds *hs = &u->holds;
	if (hs->nhops == 0)
		return;
	uint64_t now = rte_rdtsc(), limit = u->hz / 1000 * ARP_GIVE_UP_MS;
	for (uint32_t i = 0; i < hs->nhops;) {
		struct arp_hold *h = &hs->hop[i];
		struct arp_entry *e = arp_slot(&u->port[h->port], h->ip, 0);
		if (e == NULL || now - h->since > limit) {
			give_up(u, e, h); /* hop[i] is now the last one was: look again */
			continue;
		}
		ask(u, h->port, e, now);
		i++;
	}
}
