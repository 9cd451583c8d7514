/* priv.h — UPF-U's process state, shared by its C files. */
#ifndef UPFU_PRIV_H
#define UPFU_PRIV_H

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "upf_shm_ops.h"
#include "upfu.h"

/* UPF-U is the only writer of its counters: a relaxed load-add-store keeps
 * each 64-bit value whole for UPF-C's readers without a locked add. */
#define CNT_ADD(x, v) __atomic_store_n(&(x), (x) + (v), __ATOMIC_RELAXED)

#define ARP_SLOTS 1024            /* next hops per port (gNBs, DN hosts) */
#define ARP_RETRY_MS 200          /* ask again after this long unanswered */
#define TX_SLOTS (UPFU_BURST * 4) /* a burst's output plus replies and ARPs */

struct arp_entry {
	uint32_t ip; /* 0 = unused */
	uint8_t valid;
	struct rte_ether_addr mac;
	uint64_t asked; /* TSC of the last request we sent */
};

struct uport {
	uint16_t id;
	uint32_t ip, mask, gw;
	struct rte_ether_addr mac;
	uint16_t ntx;
	struct rte_mbuf *tx[TX_SLOTS];
	struct arp_entry arp[ARP_SLOTS];
	struct upf_port_stats *st;
};

struct upfu {
	struct upf_shm *t;
	struct upf_stats *st;
	struct uport port[UPF_PORTS];
	struct rte_mempool *pool;
	uint64_t hz;
	uint16_t ip_id;
	uint32_t errind_sent;   /* Error Indications sent in the current ms */
	uint64_t errind_window; /* TSC start of that ms */
	volatile int stop;
	uint32_t spin_us, sleep_us;
};

/* pipeline.c */
void upfu_burst(struct upfu *u, int port, struct rte_mbuf **pkts, uint16_t n);
void upfu_flush(struct upfu *u);
void upfu_drop(struct upfu *u, struct rte_mbuf *m, int reason);
void upfu_tx(struct upfu *u, int port, struct rte_mbuf *m);

/* reply.c */
void upfu_arp_input(struct upfu *u, int port, struct rte_mbuf *m, const struct upfu_pkt *k);
void upfu_icmp_echo(struct upfu *u, int port, struct rte_mbuf *m, const struct upfu_pkt *k);
void upfu_gtpu_echo(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k);
void upfu_error_indication(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k);
/* upfu_next_hop resolves where a packet to dst leaves port: 0 with the MAC,
 * or a drop reason (an ARP request is sent for an unknown neighbour). */
int upfu_next_hop(struct upfu *u, int port, uint32_t dst, struct rte_ether_addr *mac);
uint16_t upfu_ip_cksum(const void *hdr, uint32_t len);

/* bench.c */
void upfu_bench_bind(struct upfu *u);

#endif
