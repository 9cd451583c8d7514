/* reply.c — what UPF-U answers itself (ARP for its N3/N6 addresses, ICMP
 * echo to them, GTP-U Echo, Error Indication for an unknown TEID). What it
 * learns from ARP goes to the neighbour cache (neighbour.c). Replies reuse
 * the received mbuf, rewritten in place. */
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "priv.h"

#define ICMP_ECHO_REPLY 0
#define ICMP_ECHO_REQUEST 8
#define GTP_ECHO_REQUEST 1
#define GTP_ECHO_RESPONSE 2
#define GTP_ERROR_INDICATION 26
#define GTP_IE_RECOVERY 14        /* TS 29.281 8.2 */
#define GTP_IE_TEID_DATA_I 16     /* TS 29.281 8.3 */
#define GTP_IE_PEER_ADDRESS 133   /* TS 29.281 8.4 */
#define ERRIND_PER_MS 16

uint16_t upfu_ip_cksum(const void *hdr, uint32_t len)
{
	uint16_t c = rte_raw_cksum(hdr, len);
	return (uint16_t)~c;
}

/* RFC 826 "Packet Reception": the sender's address refreshes a neighbour
 * already known whoever the target (so a gratuitous ARP, RFC 5227 3, moves
 * a peer that changed its MAC), is added when the packet is for us, and a
 * request for our address is answered. */
void upfu_arp_input(struct upfu *u, int port, struct rte_mbuf *m, const struct upfu_pkt *k)
{
	struct uport *p = &u->port[port];
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct arp_pkt *a = rte_pktmbuf_mtod_offset(m, struct arp_pkt *, k->l3);
	if (a->htype != rte_cpu_to_be_16(1) || a->ptype != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    a->hlen != 6 || a->plen != 4) {
		upfu_drop(u, m, UPF_DROP_MALFORMED);
		return;
	}
	uint32_t spa = rte_be_to_cpu_32(a->spa), tpa = rte_be_to_cpu_32(a->tpa);
	struct rte_ether_addr sha = a->sha;
	int ours = tpa == p->ip;
	int refreshed = upfu_neigh_heard(u, port, spa, &sha, ours);
	if (!ours) {
		if (refreshed)
			rte_pktmbuf_free(m); /* a known peer's announcement: used */
		else
			upfu_drop(u, m, UPF_DROP_NOT_OURS);
		return;
	}
	if (a->op != rte_cpu_to_be_16(ARP_REQUEST)) {
		rte_pktmbuf_free(m); /* a reply to us: learnt */
		return;
	}
	a->op = rte_cpu_to_be_16(ARP_REPLY);
	a->tha = a->sha;
	a->tpa = a->spa;
	a->sha = p->mac;
	a->spa = rte_cpu_to_be_32(p->ip);
	eh->dst_addr = a->tha;
	eh->src_addr = p->mac;
	CNT_ADD(p->st->arp_replies, 1);
	upfu_tx(u, port, m);
}

/* turn_around addresses a received IPv4 packet back to its sender from
 * us, with a fresh TTL and header checksum. */
static void turn_around(struct uport *p, struct rte_mbuf *m, const struct upfu_pkt *k)
{
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, k->l3);
	eh->dst_addr = eh->src_addr;
	eh->src_addr = p->mac;
	ip->dst_addr = ip->src_addr;
	ip->src_addr = rte_cpu_to_be_32(p->ip);
	ip->time_to_live = 64;
	ip->fragment_offset = 0;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = upfu_ip_cksum(ip, k->ihl);
}

/* RFC 792: echo replies for our own address. */
void upfu_icmp_echo(struct upfu *u, int port, struct rte_mbuf *m, const struct upfu_pkt *k)
{
	struct uport *p = &u->port[port];
	uint32_t icmp_len = k->ip_len - k->ihl;
	uint8_t *icmp = rte_pktmbuf_mtod_offset(m, uint8_t *, k->l4);
	if (icmp_len < 8 || icmp[0] != ICMP_ECHO_REQUEST || icmp[1] != 0) {
		upfu_drop(u, m, port == UPF_N3 ? UPF_DROP_NOT_GTPU : UPF_DROP_NOT_OURS);
		return;
	}
	icmp[0] = ICMP_ECHO_REPLY;
	icmp[2] = icmp[3] = 0;
	uint16_t c = upfu_ip_cksum(icmp, icmp_len);
	memcpy(icmp + 2, &c, 2);
	rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - (k->l3 + k->ip_len));
	turn_around(p, m, k);
	CNT_ADD(p->st->icmp_replies, 1);
	upfu_tx(u, port, m);
}

/* gtp_reply rewrites m as a GTP-U signalling message (S flag set, TS
 * 29.281 5.1) of type and IEs ie[ielen] back to the sender, port 2152. */
static void gtp_reply(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k, uint8_t type,
		      uint16_t seq, const uint8_t *ie, uint16_t ielen)
{
	struct uport *p = &u->port[UPF_N3];
	uint32_t gtp = k->l4 + 8;
	uint32_t total = gtp + 12 + ielen;
	if (rte_pktmbuf_pkt_len(m) < total && rte_pktmbuf_append(m, total - rte_pktmbuf_pkt_len(m)) == NULL) {
		upfu_drop(u, m, UPF_DROP_MALFORMED);
		return;
	}
	rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - total);
	uint8_t *g = rte_pktmbuf_mtod_offset(m, uint8_t *, gtp);
	g[0] = 0x32; /* version 1, PT, S */
	g[1] = type;
	uint16_t glen = rte_cpu_to_be_16((uint16_t)(4 + ielen));
	memcpy(g + 2, &glen, 2);
	memset(g + 4, 0, 4); /* TEID 0 (TS 29.281 5.1) */
	uint16_t s = rte_cpu_to_be_16(seq);
	memcpy(g + 8, &s, 2);
	g[10] = g[11] = 0;
	memcpy(g + 12, ie, ielen);
	struct rte_udp_hdr *udp = rte_pktmbuf_mtod_offset(m, struct rte_udp_hdr *, k->l4);
	udp->src_port = rte_cpu_to_be_16(UPFU_GTPU_PORT);
	udp->dst_port = rte_cpu_to_be_16(UPFU_GTPU_PORT);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(total - k->l4));
	udp->dgram_cksum = 0;
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, k->l3);
	ip->total_length = rte_cpu_to_be_16((uint16_t)(total - k->l3));
	turn_around(p, m, k);
	upfu_tx(u, UPF_N3, m);
}

/* TS 29.281 7.2.2: Echo Response, with the Recovery IE (restart counter 0). */
void upfu_gtpu_echo(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k)
{
	static const uint8_t recovery[] = {GTP_IE_RECOVERY, 0};
	CNT_ADD(u->port[UPF_N3].st->gtpu_echo, 1);
	gtp_reply(u, m, k, GTP_ECHO_RESPONSE, (k->gtp_flags & 0x02) ? k->gtp_seq : 0, recovery,
		  sizeof(recovery));
}

/* TS 29.281 7.3.1: Error Indication to the sender of a G-PDU whose TEID we
 * do not know, naming the TEID and our address; at most ERRIND_PER_MS a
 * millisecond, so a flood of forged G-PDUs does not turn UPF-U into a
 * reflector (the rest are dropped and counted alike). */
void upfu_error_indication(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k)
{
	uint64_t now = rte_rdtsc();
	if (now - u->errind_window > u->hz / 1000) {
		u->errind_window = now;
		u->errind_sent = 0;
	}
	if (u->errind_sent >= ERRIND_PER_MS) {
		upfu_drop(u, m, UPF_DROP_UNKNOWN_TEID);
		return;
	}
	u->errind_sent++;
	uint8_t ie[12];
	ie[0] = GTP_IE_TEID_DATA_I;
	uint32_t teid = rte_cpu_to_be_32(k->teid);
	memcpy(ie + 1, &teid, 4);
	ie[5] = GTP_IE_PEER_ADDRESS;
	ie[6] = 0;
	ie[7] = 4;
	uint32_t addr = rte_cpu_to_be_32(u->port[UPF_N3].ip);
	memcpy(ie + 8, &addr, 4);
	CNT_ADD(u->port[UPF_N3].st->err_ind, 1);
	CNT_ADD(u->st->drop[UPF_DROP_UNKNOWN_TEID], 1);
	gtp_reply(u, m, k, GTP_ERROR_INDICATION, 0, ie, sizeof(ie));
}
