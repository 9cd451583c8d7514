/* parse.c — reads Ethernet, ARP, IPv4, UDP and GTP-U with its extension
 * headers into struct upfu_pkt. Input comes from the network: every read is
 * bounds-checked against len, and a frame is either parsed whole or given
 * a drop reason. */
#include <string.h>

#include "upf_shm.h"
#include "upfu.h"

#define ETH_HLEN 14
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define ARP_LEN 28
#define UDP_HLEN 8
#define GTP_HLEN 8
#define GTP_OPT_LEN 4

/* GTP-U header flags (TS 29.281 5.1) */
#define GTP_VERSION_MASK 0xe0
#define GTP_VERSION_1 0x20
#define GTP_PT 0x10
#define GTP_E 0x04
#define GTP_S 0x02
#define GTP_PN 0x01

#define GTP_EXT_PDU_SESSION_CONTAINER 0x85 /* TS 29.281 5.2.1.3 */
#define GTP_EXT_COMPREHENSION_REQUIRED 0x80
#define GTP_GPDU 255

static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int parse_eth(const uint8_t *p, uint32_t len, struct upfu_pkt *k)
{
	if (len < ETH_HLEN)
		return UPF_DROP_MALFORMED;
	uint16_t type = rd16(p + 12);
	k->l3 = ETH_HLEN;
	if (type == ETHERTYPE_ARP) {
		k->l3type = UPFU_L3_ARP;
		return len < ETH_HLEN + ARP_LEN ? UPF_DROP_MALFORMED : 0;
	}
	if (type != ETHERTYPE_IPV4)
		return UPF_DROP_NOT_IPV4;
	k->l3type = UPFU_L3_IPV4;
	return 0;
}

/* ipv4 reads the IPv4 header at off: its addresses, protocol, and where its
 * payload starts; fragments are not reassembled (dropped). */
static int ipv4(const uint8_t *p, uint32_t len, uint32_t off, uint32_t *src, uint32_t *dst,
		uint8_t *proto, uint8_t *ihl, uint16_t *tot)
{
	if (len < off + 20)
		return UPF_DROP_MALFORMED;
	const uint8_t *ip = p + off;
	if ((ip[0] >> 4) != 4)
		return UPF_DROP_NOT_IPV4;
	uint32_t hl = (uint32_t)(ip[0] & 0x0f) * 4;
	uint16_t total = rd16(ip + 2);
	if (hl < 20 || total < hl || off + total > len)
		return UPF_DROP_MALFORMED;
	if (rd16(ip + 6) & 0x3fff) /* MF or a fragment offset */
		return UPF_DROP_FRAGMENT;
	*ihl = (uint8_t)hl;
	*tot = total;
	*proto = ip[9];
	*src = rd32(ip + 12);
	*dst = rd32(ip + 16);
	return 0;
}

/* ports reads the UDP/TCP/SCTP ports of an IPv4 payload when there. */
static void ports(const uint8_t *p, uint32_t end, uint32_t l4, uint8_t proto, uint16_t *sport,
		  uint16_t *dport)
{
	*sport = *dport = 0;
	if ((proto == 6 || proto == 17 || proto == 132) && l4 + 4 <= end) {
		*sport = rd16(p + l4);
		*dport = rd16(p + l4 + 2);
	}
}

/* forwarded fills the 5-tuple of the IPv4 packet at off (the one the SDF
 * filters see). */
static int forwarded(const uint8_t *p, uint32_t len, uint32_t off, struct upfu_pkt *k)
{
	uint8_t ihl;
	uint16_t tot;
	int r = ipv4(p, len, off, &k->fsrc, &k->fdst, &k->fproto, &ihl, &tot);
	if (r)
		return r;
	k->inner = (uint16_t)off;
	k->inner_len = tot;
	ports(p, off + tot, off + ihl, k->fproto, &k->fsport, &k->fdport);
	return 0;
}

/* gtp_exts walks the extension header chain (TS 29.281 5.2) from the
 * first type at *off, keeping the QFI of a PDU Session Container (TS
 * 38.415 5.5.2); end bounds the GTP-U message. */
static int gtp_exts(const uint8_t *p, uint32_t *off, uint32_t end, uint8_t next, struct upfu_pkt *k)
{
	while (next != 0) {
		if (*off + 4 > end)
			return UPF_DROP_MALFORMED;
		uint32_t elen = (uint32_t)p[*off] * 4;
		if (elen == 0 || *off + elen > end)
			return UPF_DROP_MALFORMED;
		if (next == GTP_EXT_PDU_SESSION_CONTAINER) {
			k->has_pdusc = 1;
			k->qfi = p[*off + 2] & 0x3f;
		} else if (next & GTP_EXT_COMPREHENSION_REQUIRED) {
			return UPF_DROP_MALFORMED; /* TS 29.281 5.2.1: we cannot comprehend it */
		}
		next = p[*off + elen - 1];
		*off += elen;
	}
	return 0;
}

static int parse_gtp(const uint8_t *p, uint32_t end, uint32_t off, struct upfu_pkt *k)
{
	if (off + GTP_HLEN > end)
		return UPF_DROP_MALFORMED;
	const uint8_t *g = p + off;
	if ((g[0] & GTP_VERSION_MASK) != GTP_VERSION_1 || !(g[0] & GTP_PT))
		return UPF_DROP_MALFORMED;
	k->gtp = 1;
	k->gtp_flags = g[0];
	k->gtp_type = g[1];
	k->teid = rd32(g + 4);
	uint32_t mend = off + GTP_HLEN + rd16(g + 2);
	if (mend > end)
		return UPF_DROP_MALFORMED;
	uint32_t at = off + GTP_HLEN;
	if (g[0] & (GTP_E | GTP_S | GTP_PN)) {
		if (at + GTP_OPT_LEN > mend)
			return UPF_DROP_MALFORMED;
		k->gtp_seq = rd16(p + at);
		uint8_t next = (g[0] & GTP_E) ? p[at + 3] : 0;
		at += GTP_OPT_LEN;
		int r = gtp_exts(p, &at, mend, next, k);
		if (r)
			return r;
	}
	if (k->gtp_type != GTP_GPDU)
		return 0;
	return forwarded(p, mend, at, k);
}

static int parse_l3(const uint8_t *p, uint32_t len, struct upfu_pkt *k)
{
	memset(k, 0, sizeof(*k));
	int r = parse_eth(p, len, k);
	if (r || k->l3type != UPFU_L3_IPV4)
		return r;
	r = ipv4(p, len, k->l3, &k->src, &k->dst, &k->proto, &k->ihl, &k->ip_len);
	if (r)
		return r;
	k->l4 = (uint16_t)(k->l3 + k->ihl);
	ports(p, k->l3 + k->ip_len, k->l4, k->proto, &k->sport, &k->dport);
	return 0;
}

int upfu_parse_n3(const uint8_t *p, uint32_t len, struct upfu_pkt *k)
{
	int r = parse_l3(p, len, k);
	if (r || k->l3type != UPFU_L3_IPV4)
		return r;
	if (k->proto != 17 || k->dport != UPFU_GTPU_PORT)
		return 0; /* ICMP to us is answered, the rest dropped, by the pipeline */
	uint32_t end = k->l3 + k->ip_len;
	if (k->l4 + UDP_HLEN > end || rd16(p + k->l4 + 4) < UDP_HLEN ||
	    k->l4 + rd16(p + k->l4 + 4) > end)
		return UPF_DROP_MALFORMED;
	return parse_gtp(p, k->l4 + rd16(p + k->l4 + 4), k->l4 + UDP_HLEN, k);
}

int upfu_parse_n6(const uint8_t *p, uint32_t len, struct upfu_pkt *k)
{
	int r = parse_l3(p, len, k);
	if (r || k->l3type != UPFU_L3_IPV4)
		return r;
	return forwarded(p, len, k->l3, k);
}
