/* bench.c — the isolated path of `l25gc bench upf`: UPF-U's own cost per
 * packet with no kernel in the loop. One prebuilt frame is copied into each
 * mbuf as a NIC would DMA it, with the session's key patched in (TEID
 * uplink, UE address downlink: sessions in turn), and runs through the
 * whole pipeline (parse, PDR by TEID or UE IP, FAR, QER, URR, decap or
 * encap with the PDU Session Container, next hop) and out of the port,
 * which should be net_null: it frees what it is given. */
#include <time.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_udp.h>

#include "priv.h"

/* the inner IPv4 source of an uplink frame: Eth, IPv4, UDP, GTP-U with
 * its options and PDU Session Container, then the UE's packet */
#define UL_UE_OFF (RTE_ETHER_HDR_LEN + 20 + 8 + 16 + 12)

static struct upfu *bench_u;

void upfu_bench_bind(struct upfu *u) { bench_u = u; }

/* neighbour makes ip reachable on port at mac without ARP. */
static void neighbour(struct uport *p, uint32_t ip, const struct rte_ether_addr *mac)
{
	uint32_t i = upf_hash(ip, ARP_SLOTS);
	while (p->arp[i].ip != 0 && p->arp[i].ip != ip)
		i = (i + 1) & (ARP_SLOTS - 1);
	p->arp[i].ip = ip;
	p->arp[i].mac = *mac;
	p->arp[i].valid = 1;
}

static void put_ipv4(uint8_t *d, uint32_t src, uint32_t dst, uint16_t len)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)d;
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(len);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	ip->hdr_checksum = upfu_ip_cksum(ip, sizeof(*ip));
}

static void put_udp(uint8_t *d, uint16_t sport, uint16_t dport, uint16_t len)
{
	struct rte_udp_hdr *u = (struct rte_udp_hdr *)d;
	u->src_port = rte_cpu_to_be_16(sport);
	u->dst_port = rte_cpu_to_be_16(dport);
	u->dgram_len = rte_cpu_to_be_16(len);
	u->dgram_cksum = 0;
}

/* frame writes session i's packet: the UE's IP packet of ip_len bytes,
 * in GTP-U from the gNB (uplink) or plain from the DN (downlink). */
static uint32_t frame(uint8_t *d, int downlink, uint32_t i, uint32_t ip_len, const struct upfu_bench_plan *b)
{
	struct upfu *u = bench_u;
	uint32_t ue = b->ue_base + i, off = RTE_ETHER_HDR_LEN;
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)d;
	int port = downlink ? UPF_N6 : UPF_N3;
	eh->dst_addr = u->port[port].mac;
	memset(&eh->src_addr, 0x02, sizeof(eh->src_addr));
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	if (!downlink) {
		uint16_t gtp_len = (uint16_t)(ip_len + 8);
		put_ipv4(d + off, b->gnb, u->port[UPF_N3].ip, (uint16_t)(20 + 8 + 8 + gtp_len));
		put_udp(d + off + 20, UPFU_GTPU_PORT, UPFU_GTPU_PORT, (uint16_t)(8 + 8 + gtp_len));
		uint8_t *g = d + off + 28;
		uint32_t teid = rte_cpu_to_be_32(b->teid_base + i);
		uint16_t len = rte_cpu_to_be_16(gtp_len);
		g[0] = 0x34;
		g[1] = 0xff;
		memcpy(g + 2, &len, 2);
		memcpy(g + 4, &teid, 4);
		g[8] = g[9] = g[10] = 0;
		g[11] = 0x85;
		g[12] = 1;
		g[13] = 0x10; /* UL PDU SESSION INFORMATION */
		g[14] = b->qfi;
		g[15] = 0;
		off += 20 + 8 + 16;
		put_ipv4(d + off, ue, b->dn, (uint16_t)ip_len);
	} else {
		put_ipv4(d + off, b->dn, ue, (uint16_t)ip_len);
	}
	put_udp(d + off + 20, 5201, 40000, (uint16_t)(ip_len - 20));
	memset(d + off + 28, 0x5a, ip_len - 28);
	return off + ip_len;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* bench_frames is the template frame and where each packet's session key
 * goes; next is the session of the next packet. */
struct bench_frames {
	const uint8_t *tmpl;
	uint32_t flen, key_off, key_base, next;
};

/* bench_burst runs one burst of frames, a session each in turn, through
 * the pipeline as upfu_run's loop does; -1 when the pool is empty. */
static int bench_burst(struct upfu *u, int in, struct bench_frames *f, const struct upfu_bench_plan *b)
{
	struct rte_mbuf *pkts[UPFU_BURST];
	if (rte_pktmbuf_alloc_bulk(u->pool, pkts, UPFU_BURST) != 0)
		return -1;
	for (int j = 0; j < UPFU_BURST; j++) {
		uint8_t *d = (uint8_t *)rte_pktmbuf_append(pkts[j], (uint16_t)f->flen);
		rte_memcpy(d, f->tmpl, f->flen);
		uint32_t key = rte_cpu_to_be_32(f->key_base + f->next);
		memcpy(d + f->key_off, &key, 4);
		if (!b->downlink) { /* the inner source: the session's UE */
			uint32_t ue = rte_cpu_to_be_32(b->ue_base + f->next);
			memcpy(d + UL_UE_OFF, &ue, 4);
		}
		if (++f->next == b->sessions)
			f->next = 0;
	}
	upfu_burst(u, in, pkts, UPFU_BURST);
	upfu_qos_poll(u); /* as upfu_run does every loop */
	upfu_flush(u);
	return 0;
}

/* drain sends what the shapers still hold. */
static void drain(struct upfu *u)
{
	for (int i = 0; i < 1000 && upfu_qos_backlog(u); i++) {
		upfu_qos_poll(u);
		upfu_flush(u);
	}
}

/* as_lcore gives the calling thread an lcore id, as upfu_run gives its
 * own: without one every mbuf comes from and goes back to the pool's ring,
 * cold, so the bench would charge UPF-U a cost its forwarding loop does
 * not pay (a third of a packet's time at 10,000 sessions). 1 = registered
 * here: lcore_done undoes it. */
static int as_lcore(void)
{
	if (rte_lcore_id() != LCORE_ID_ANY)
		return 0;
	return rte_thread_register() == 0;
}

/* lcore_done hands the thread's cached mbufs back to the pool and its
 * lcore id back to EAL: the next plan may run on another Go thread. */
static void lcore_done(struct upfu *u, int registered)
{
	if (!registered)
		return;
	struct rte_mempool_cache *c = rte_mempool_default_cache(u->pool, rte_lcore_id());
	if (c != NULL)
		rte_mempool_cache_flush(c, u->pool);
	rte_thread_unregister();
}

/* bench_plan runs the plan on this thread (see upfu_bench). */
static uint64_t bench_plan(struct upfu *u, const struct upfu_bench_plan *b, uint64_t *hz, uint64_t *forwarded,
			   uint64_t *cpu_ns)
{
	int in = b->downlink ? UPF_N6 : UPF_N3, out = b->downlink ? UPF_N3 : UPF_N6;
	struct rte_ether_addr peer = {{0x02, 0x02, 0x02, 0x02, 0x02, 0x02}};
	neighbour(&u->port[UPF_N3], b->gnb, &peer);
	neighbour(&u->port[UPF_N6], b->dn, &peer);
	uint32_t ip_len = b->pkt_bytes > RTE_ETHER_HDR_LEN + 28 ? b->pkt_bytes - RTE_ETHER_HDR_LEN : 28;
	uint8_t tmpl[2048];
	uint32_t flen = frame(tmpl, b->downlink, 0, ip_len, b);
	/* where the key sits: the TEID of the GTP-U header, the IPv4 destination */
	uint32_t key_off = b->downlink ? RTE_ETHER_HDR_LEN + 16 : RTE_ETHER_HDR_LEN + 28 + 4;
	uint32_t key_base = b->downlink ? b->ue_base : b->teid_base;
	if (b->sessions == 0 || flen > sizeof(tmpl))
		return 0;
	struct bench_frames f = {tmpl, flen, key_off, key_base, 0};
	/* Warm up: one packet per session first, as a running UPF-U has met
	 * its sessions before (a session's shaper is set up at its first
	 * packet; that is per-session cost, not per-packet). */
	for (uint64_t done = 0; done < b->sessions; done += UPFU_BURST)
		if (bench_burst(u, in, &f, b) != 0)
			break;
	drain(u);
	uint64_t before = u->port[out].st->tx_pkts;
	uint64_t t0 = rte_rdtsc(), c0 = thread_cpu_ns();
	for (uint64_t done = 0; done < b->packets; done += UPFU_BURST)
		if (bench_burst(u, in, &f, b) != 0)
			break;
	drain(u);
	uint64_t cycles = rte_rdtsc() - t0;
	*cpu_ns = thread_cpu_ns() - c0;
	*hz = u->hz;
	*forwarded = u->port[out].st->tx_pkts - before;
	return cycles;
}

uint64_t upfu_bench(const struct upfu_bench_plan *b, uint64_t *hz, uint64_t *forwarded, uint64_t *cpu_ns)
{
	struct upfu *u = bench_u;
	int registered = as_lcore();
	uint64_t cycles = bench_plan(u, b, hz, forwarded, cpu_ns);
	lcore_done(u, registered);
	return cycles;
}
