/* priv.h — UPF-U's process state, shared by its C files. */
#ifndef UPFU_PRIV_H
#define UPFU_PRIV_H

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>

#include "qos.h"
#include "upf_shm_ops.h"
#include "upfu.h"
#include "verdict.h"

/* UPF-U is the only writer of its counters: a relaxed load-add-store keeps
 * each 64-bit value whole for UPF-C's readers without a locked add. */
#define CNT_ADD(x, v) __atomic_store_n(&(x), (x) + (v), __ATOMIC_RELAXED)

#define ARP_SLOTS 1024            /* next hops per port (gNBs, DN hosts) */
#define ARP_RETRY_MS 200          /* ask again after this long unanswered */
#define TX_SLOTS (UPFU_BURST * 4) /* a burst's output plus replies and ARPs */

/* Packets held while their next hop is resolved (neighbour.c; RFC 1122
 * 2.3.2.2: queue at least one, keep the newest). Constants, not config:
 *  - HOLD_PER_HOP: a paging flush hands a whole session's buffer
 *    (upf.buffer.per_session, 64 by default) to a gNB UPF-U may never have
 *    talked to, so one hop holds that many; past it the OLDEST is dropped;
 *  - HOLD_HOPS next hops wait at once, HOLD_TOTAL packets in all: an
 *    unreachable-hop flood pins at most HOLD_TOTAL mbufs of the pool;
 *  - ARP_GIVE_UP_MS: unanswered this long (about 5 requests, one every
 *    ARP_RETRY_MS), the hop's packets are dropped.
 * Every drop is counted as no_arp. */
#define HOLD_PER_HOP 64
#define HOLD_HOPS 32
#define HOLD_TOTAL 1024
#define ARP_GIVE_UP_MS 1000

#define ARP_REQUEST 1
#define ARP_REPLY 2

struct arp_pkt {
	uint16_t htype, ptype;
	uint8_t hlen, plen;
	uint16_t op;
	struct rte_ether_addr sha;
	uint32_t spa;
	struct rte_ether_addr tha;
	uint32_t tpa;
} __attribute__((packed, aligned(2))); /* after a 14-byte Ethernet header */

struct arp_entry {
	uint32_t ip; /* 0 = unused */
	uint8_t valid;
	uint8_t hold; /* 1 + its index in upfu_holds.hop while packets wait, else 0 */
	struct rte_ether_addr mac;
	uint64_t asked; /* TSC of the last request we sent */
};

/* arp_hold is one unresolved next hop's packets, oldest at head: whole
 * frames, all but the destination MAC written. */
struct arp_hold {
	uint32_t ip;
	uint8_t port;
	uint16_t head, n;
	uint64_t since; /* TSC of the first packet held: the give-up clock */
	struct rte_mbuf *m[HOLD_PER_HOP];
};

struct upfu_holds {
	uint32_t nhops; /* hop[0..nhops) in use: 0 keeps the loop's check free */
	uint32_t total; /* packets held in all */
	struct arp_hold hop[HOLD_HOPS];
};

struct uport {
	uint16_t id;
	uint32_t ip, mask, gw;
	struct rte_ether_addr mac;
	uint16_t ntx;
	struct rte_mbuf *tx[TX_SLOTS];
	struct arp_entry arp[ARP_SLOTS];
	struct upf_port_stats *st;
	uint8_t intr_asked; /* configured with intr_conf.rxq = 1 (rx_wake.c) */
};

/* rx_wake is what ends a nap when a packet reaches a port (rx_wake.c). */
struct rx_wake {
	int fd;       /* -1: none, the nap ends on its timeout */
	uint8_t intr; /* 1: the PMD's Rx interrupt fd, else an AF_PACKET side socket */
};

/* Downlink buffering (buffer.c): per session slot a FIFO of held packets,
 * linked through a node array of upf.buffer.total entries. Process-local:
 * the packets die with UPF-U, which the SMF learns from paging timing out. */
struct dlq {
	uint64_t up_seid; /* the session incarnation its packets belong to */
	uint32_t head, tail, n;
	uint8_t notified; /* a note went to UPF-C; none again until re-armed */
};

struct bnode {
	struct rte_mbuf *m;
	uint32_t next;
};

struct upfu_buf {
	struct dlq *q;       /* [max_sessions] */
	struct bnode *node;  /* [total] */
	uint32_t free;       /* first free node */
	uint32_t used;       /* packets held: 0 keeps the FORW path free of buffer checks */
	uint32_t total, per_session;
	int bell;            /* doorbell socket to UPF-C, -1 none */
	uint8_t ring;        /* notes queued since the last doorbell */
	char bell_path[560];
};

/* What the buffer needs of a downlink packet's verdict. */
struct buf_info {
	uint64_t up_seid;
	uint16_t pdr_id;
	uint8_t qfi;
	uint8_t notify; /* the FAR says NOCP */
};

/* A session's shaper in one direction (shape.c): how the session's QERs
 * map to its flows, and the cold part of its qos/ shaper (configuration,
 * counters, queues). The hot part (what a packet sent at once touches) is
 * in upfu_qos.hot at the same index: a green packet of a session with
 * nothing queued reads 3 lines of a dense 1 KB record, all prefetched
 * (upfu_qos_prefetch_flow: the verdict cache entry names the pool index
 * and the flow, so this header is read only when that changes), not a
 * 19 KB entry of its own (issue 13: at 10,000 sessions each was a page). */
struct shaped {
	/* line 0: what upfu_shaper checks */
	uint64_t up_seid; /* the session incarnation it shapes */
	uint32_t slot;
	uint32_t seq;     /* the session's seqlock value its flows were read at */
	uint8_t dir;
	uint8_t in_use;
	uint8_t busy;     /* listed in upfu_qos.busy: has a backlog */
	int8_t def_flow;  /* the flow of PDRs without a flow QER, -1 none */
	int8_t flow_of_qer[UPF_MAX_QER]; /* -1: not a flow QER of this direction */
	struct qos_shaper_cold cold __attribute__((aligned(64)));
};

_Static_assert(offsetof(struct shaped, cold) == 64, "a shaped session's header is one cache line");
_Static_assert(sizeof(struct shaped) % 64 == 0, "pool entries stay line aligned");

/* The shaper pool (upf.qos.max_shaped_sessions × 2 directions). */
struct upfu_qos {
	uint32_t max;       /* shapers in the pool, 0 = QoS shaping off */
	struct shaped *pool;
	size_t pool_len;    /* bytes mapped for pool */
	struct qos_shaper_hot *hot; /* [max]: pool entry i's hot part */
	size_t hot_len;     /* bytes mapped for hot */
	int32_t *map;       /* [max_sessions * 2]: pool index, -1 none */
	uint32_t *free;     /* stack of free pool indexes */
	uint32_t nfree;
	int by_slot;        /* room for every slot: entry = dir × max_sessions + slot (shape.c pool_take) */
	uint32_t *busy;     /* shapers with a backlog: upfu_qos_poll serves them in turn */
	uint32_t nbusy;
	uint32_t cursor;    /* the next busy entry upfu_qos_poll serves */
	uint32_t sweep;     /* the next pool entry checked for a gone session */
	uint64_t queue_ns;  /* a flow's queue in time at its share, 0 = qos/ default */
	struct upfu_qos_stats st;
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
	struct upfu_buf buf;
	struct upfu_holds holds;
	struct upfu_qos qos;
	uint64_t unit;          /* credit of one byte in the MBR buckets: 8 × hz (police) */
	uint64_t now;           /* TSC read once per burst (upfu_burst, upfu_flush_slot): the
				 * meters' and buckets' clock, not an rdtsc per packet */
	struct vcache *vcache;  /* [max_sessions * 2]: verdict.h */
	size_t vcache_len;      /* bytes mapped for vcache */
	int wake_fd; /* UPF_WAKE_SUFFIX: UPF-C's commands end a nap; -1 = none */
	struct rx_wake rxw[UPF_PORTS]; /* a packet on a port ends a nap */
	int stop_fd; /* eventfd upfu_stop writes: ends a nap; -1 = none */
	char wake_path[560];
};

/* pipeline.c */
void upfu_burst(struct upfu *u, int port, struct rte_mbuf **pkts, uint16_t n);
void upfu_flush(struct upfu *u);
void upfu_drop(struct upfu *u, struct rte_mbuf *m, int reason);
void upfu_tx(struct upfu *u, int port, struct rte_mbuf *m);

/* upfu_flush_slot sends what slot buffered, in order, when its FAR now
 * forwards, discards it when the FAR drops or the session is gone, and
 * keeps it while the FAR still buffers. */
void upfu_flush_slot(struct upfu *u, uint32_t slot);

/* buffer.c */
int upfu_buf_init(struct upfu *u, const struct upfu_conf *c, char *err, size_t n);
void upfu_buffer(struct upfu *u, struct rte_mbuf *m, uint32_t slot, const struct buf_info *b);
struct rte_mbuf *upfu_buf_head(struct upfu *u, uint32_t slot);
void upfu_buf_pop(struct upfu *u, uint32_t slot);
void upfu_buf_discard(struct upfu *u, uint32_t slot);
void upfu_buf_served(struct upfu *u, uint32_t slot);
void upfu_commands(struct upfu *u);
void upfu_ring_bell(struct upfu *u);
int upfu_end_marker(struct upfu *u, uint32_t teid, uint32_t addr);

static inline int upfu_has_buffered(const struct upfu *u, uint32_t slot)
{
	return u->buf.used != 0 && u->buf.q[slot].n != 0;
}

static inline uint64_t upfu_buf_owner(const struct upfu *u, uint32_t slot) { return u->buf.q[slot].up_seid; }

/* huge_map.c */
/* upfu_huge_map maps len bytes of zeroed process memory, 2 MB aligned,
 * asking for transparent huge pages; NULL when out of memory. *mapped is
 * the length to munmap. */
void *upfu_huge_map(size_t len, size_t *mapped);

/* verdict_cache.c */
/* upfu_vcache_init maps an empty verdict cache for every slot and
 * direction (verdict.h). */
int upfu_vcache_init(struct upfu *u, char *err, size_t n);

static inline struct vcache *upfu_vcache_at(const struct upfu *u, uint32_t slot, int dir)
{
	return &u->vcache[(size_t)slot * 2 + dir];
}

/* shape.c */
/* upfu_hop is where a prepared frame goes: its port and next-hop target. */
struct upfu_hop {
	int port;
	uint32_t dst;
};
int upfu_qos_init(struct upfu *u, const struct upfu_conf *c, char *err, size_t n);
/* upfu_shaper is the shaper of slot's session in direction dir (0 UL, 1
 * DL), its flows read again when the rules changed (seq); NULL when the
 * pool is off or exhausted (counted: the MBR buckets apply as before). */
struct shaped *upfu_shaper(struct upfu *u, uint32_t slot, int dir, uint64_t up_seid, uint32_t seq);
/* upfu_shaper_flow is the flow of sh that flow QER index qer takes
 * (UPF_NONE: the default flow), -1 none. */
int upfu_shaper_flow(const struct shaped *sh, uint8_t qer);
/* upfu_shaper_pick is a session's shaper for a packet: its pool index
 * (-1 not shaped) and the flow of it the packet takes (-1 none). */
struct upfu_shaper_pick {
	int32_t idx;
	int32_t flow;
};
/* upfu_shaper_find is upfu_shaper_of's slow part (shape.h): the shaper of
 * the session whose verdict v is, noted in the verdict cache entry. */
struct upfu_shaper_pick upfu_shaper_find(struct upfu *u, uint32_t slot, int dir, const struct verdict *v);
/* upfu_shape_straight is qos_submit_straight out of line (shape.h). */
int upfu_shape_straight(struct qos_shaper_hot *h, uint32_t flow, uint64_t now, uint32_t len);
/* upfu_shape_listed lists pool entry idx for upfu_qos_poll (shape.h). */
void upfu_shape_listed(struct upfu *u, uint32_t idx);
/* upfu_qos_drain sends at once, in order, whatever slot's shaper of dir
 * holds: before an End Marker, every packet queued for the old tunnel
 * must have left (TS 23.502 4.9.1.2.2 step 6, TS 29.281 7.3.2). */
void upfu_qos_drain(struct upfu *u, uint32_t slot, int dir);
/* upfu_qos_poll sends what the shapers release now; called every loop. */
void upfu_qos_poll(struct upfu *u);
void upfu_qos_stats_copy(const struct upfu *u, struct upfu_qos_stats *o);
static inline int upfu_qos_backlog(const struct upfu *u) { return u->qos.nbusy != 0; }

/* upfu_qos_ref is pool entry idx's shaper, both parts. */
static inline struct qos_ref upfu_qos_ref(const struct upfu *u, uint32_t idx)
{
	return (struct qos_ref){&u->qos.hot[idx], &u->qos.pool[idx].cold};
}

/* upfu_qos_prefetch_map / upfu_qos_prefetch ask for the lines a shaped
 * packet of slot touches before its cache entry names its shaper (its map
 * entry; then the pool entry's header, the hot part's per-packet line and
 * its first flow's two hot lines: meter and share, profile and counters),
 * a burst pass ahead. A packet of another flow misses on its own flow's
 * lines; flow 0 is the first PDR's, the one most traffic of a session
 * takes. */
static inline void upfu_qos_prefetch_map(const struct upfu *u, uint32_t slot, int dir)
{
	if (u->qos.max)
		rte_prefetch0(&u->qos.map[(size_t)slot * 2 + dir]);
}

static inline void upfu_qos_prefetch(const struct upfu *u, uint32_t slot, int dir)
{
	if (!u->qos.max)
		return;
	int32_t i = u->qos.map[(size_t)slot * 2 + dir];
	if (i < 0)
		return;
	const struct qos_shaper_hot *h = &u->qos.hot[i];
	rte_prefetch0(&u->qos.pool[i]);
	rte_prefetch0(h);
	rte_prefetch0(&h->flow[0]);
	rte_prefetch0((const char *)&h->flow[0] + 64);
}

/* upfu_qos_prefetch_flow asks for what a packet of flow of pool entry
 * idx touches, known from its verdict cache entry: the hot part's
 * per-packet line and the flow's two hot lines, not the header. */
static inline void upfu_qos_prefetch_flow(const struct upfu *u, int32_t idx, int8_t flow)
{
	const struct qos_shaper_hot *h = &u->qos.hot[idx];
	const char *f = (const char *)&h->flow[(uint8_t)flow % QOS_MAX_FLOWS];
	rte_prefetch0(h);
	rte_prefetch0(f);
	rte_prefetch0(f + 64);
}

/* reply.c */
void upfu_arp_input(struct upfu *u, int port, struct rte_mbuf *m, const struct upfu_pkt *k);
void upfu_icmp_echo(struct upfu *u, int port, struct rte_mbuf *m, const struct upfu_pkt *k);
void upfu_gtpu_echo(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k);
void upfu_error_indication(struct upfu *u, struct rte_mbuf *m, const struct upfu_pkt *k);
uint16_t upfu_ip_cksum(const void *hdr, uint32_t len);

/* neighbour.c */
/* upfu_send_via sends the frame m (its destination MAC still to fill)
 * out of port toward dst (on-link, else through the port's gateway): at
 * once when the next hop is known, else held while ARP asks. 0 = sent or
 * held (m is taken), else a drop reason (m is still the caller's). */
int upfu_send_via(struct upfu *u, int port, uint32_t dst, struct rte_mbuf *m);
/* upfu_neigh_heard takes ip at mac from an ARP packet on port: it updates a
 * neighbour UPF-U has an entry for, adds one only if add, and sends what
 * waited for it. 1 when ip's entry now says mac, else 0. */
int upfu_neigh_heard(struct upfu *u, int port, uint32_t ip, const struct rte_ether_addr *mac, int add);
/* upfu_neigh_tick, between bursts, asks again for hops still unresolved
 * and drops what waited past ARP_GIVE_UP_MS. */
void upfu_neigh_tick(struct upfu *u);

/* rx_wake.c */
/* upfu_rx_wake_open finds what ends a nap when port i (started from the
 * devargs dev) receives: its Rx interrupt, else for net_af_packet a side
 * socket on its interface, else nothing. */
void upfu_rx_wake_open(struct upfu *u, int i, const char *dev);
void upfu_rx_wake_close(struct upfu *u);
struct pollfd;
int upfu_rx_wake_arm(struct upfu *u, struct pollfd *p, int first);
int upfu_rx_wake_disarm(struct upfu *u, const struct pollfd *p, int n);

/* bench.c */
void upfu_bench_bind(struct upfu *u);

#endif
