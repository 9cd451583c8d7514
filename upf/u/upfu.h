/*
 * upfu.h — UPF-U, the user plane's forwarding process (DESIGN.md "User
 * plane"): GTP-U on N3 (TS 29.281, PDU Session Container TS 38.415), IPv4 on
 * N6, with the rules UPF-C writes into the shared tables (upf_shm.h).
 *
 *   parse.c     packet parsing, a pure function (fuzzed through Go)
 *   pipeline.c  per burst: uplink and downlink, PDR/FAR/QER/URR
 *   reply.c     what UPF-U answers itself: ARP, ICMP echo, GTP-U Echo,
 *               Error Indication
 *   neighbour.c the ARP cache of next hops and the packets held while one
 *               is resolved
 *   port.c      EAL attach, the two ports, the poll/sleep loop
 */
#ifndef UPFU_H
#define UPFU_H

#include <stddef.h>
#include <stdint.h>

#define UPFU_BURST 32
#define UPFU_GTPU_PORT 2152 /* TS 29.281 4.4.2.3 */

/* ---- parsing ---------------------------------------------------------- */

enum upfu_l3 { UPFU_L3_OTHER = 0, UPFU_L3_ARP = 1, UPFU_L3_IPV4 = 2 };

/* Offsets are from the start of the frame; addresses in host order. */
struct upfu_pkt {
	uint8_t l3type;   /* enum upfu_l3 */
	uint8_t proto;    /* outer IPv4 protocol */
	uint8_t ihl;      /* outer IPv4 header bytes */
	uint8_t gtp;      /* 1: a GTP-U message was parsed */
	uint16_t l3;      /* offset of ARP or IPv4 */
	uint16_t l4;      /* offset of the outer L4 header */
	uint16_t ip_len;  /* outer IPv4 total length */
	uint16_t sport, dport;
	uint32_t src, dst;
	/* GTP-U (TS 29.281 5.1) */
	uint8_t gtp_type;
	uint8_t gtp_flags;
	uint8_t qfi;      /* from the PDU Session Container, 0 = none */
	uint8_t has_pdusc;
	uint16_t gtp_seq; /* valid when gtp_flags has S */
	uint16_t inner;   /* offset of the T-PDU (inner IPv4) */
	uint32_t teid;
	uint16_t inner_len;
	/* the IPv4 packet forwarded: inner on N3, outer on N6 (for SDF) */
	uint8_t fproto;
	uint8_t pad;
	uint32_t fsrc, fdst;
	uint16_t fsport, fdport;
};

/* upfu_parse_n3 reads a frame received on N3 (ARP, ICMP to us, GTP-U);
 * upfu_parse_n6 one received on N6 (ARP, IPv4 to a UE or to us). Both
 * return 0 or an enum upf_drop reason, and never read past len. */
int upfu_parse_n3(const uint8_t *p, uint32_t len, struct upfu_pkt *k);
int upfu_parse_n6(const uint8_t *p, uint32_t len, struct upfu_pkt *k);

/* ---- the process ---------------------------------------------------------- */

struct upfu_port_conf {
	char dev[256];     /* DPDK devargs or PCI address */
	uint32_t ip;       /* our address */
	uint32_t plen;     /* its prefix length */
	uint32_t gateway;  /* next hop off the prefix, 0 = none */
};

struct upfu_conf {
	char tables[512];   /* the rule tables file (UPF_TABLES_FILE) */
	struct upfu_port_conf port[2]; /* UPF_N3, UPF_N6 */
	uint32_t max_sessions;
	uint32_t spin_us;   /* keep polling this long after the last packet */
	uint32_t sleep_us;  /* then sleep this long between polls */
	uint32_t buf_per_session; /* upf.buffer.per_session: downlink packets held per session */
	uint32_t buf_total;       /* upf.buffer.total: for all sessions */
	uint32_t qos_max_sessions; /* upf.qos.max_shaped_sessions: sessions shaped at once, 0 = off */
	uint32_t qos_queue_us;     /* upf.qos.queue: a flow's queue in time at its share, 0 = default */
};

/* What the QoS shapers did (shape.c); UPF-U writes, /metrics reads. */
struct upfu_qos_stats {
	uint64_t sent[2];       /* released, green and yellow */
	uint64_t red;           /* above the flow's MBR: dropped (RFC 2698 red) */
	uint64_t full[2];       /* tail drops of a full flow queue, green and yellow */
	uint64_t flushed;       /* dropped from queues when the flows changed or the session went */
	uint64_t unshaped;      /* packets of sessions the pool could not serve (MBR buckets only) */
	uint64_t shapers;       /* shapers in use now */
	uint64_t rebalances;    /* shapers (re)configured from the rules */
};

/* upfu_qos_stats_read copies the counters (any thread). */
void upfu_qos_stats_read(struct upfu_qos_stats *out);

/* upfu_start brings up EAL, the tables and the ports; upfu_run
 * forwards until upfu_stop; upfu_close releases the ports. Errors go to
 * err. One UPF-U per process. */
int upfu_start(const struct upfu_conf *c, char *err, size_t n);
void upfu_run(void);
void upfu_stop(void);
void upfu_close(void);

/* upfu_port_mac writes port i's MAC (6 bytes). */
void upfu_port_mac(int i, uint8_t *mac);

/* The isolated-path benchmark (bench.c): packets of one direction for
 * sessions installed with TEIDs teid_base+i and UE addresses ue_base+i. */
struct upfu_bench_plan {
	int downlink;
	uint32_t sessions;
	uint32_t pkt_bytes; /* the UE's packet as an Ethernet frame on N6 */
	uint32_t teid_base, ue_base;
	uint32_t gnb, dn;   /* the peers, reachable without ARP */
	uint8_t qfi;
	uint64_t packets;
};

/* upfu_bench runs the plan on this thread (the forwarding loop must not
 * run) and returns the TSC cycles it took (wall clock); *cpu_ns is this
 * thread's CPU time meanwhile (what it cost, on a machine shared with
 * others), *hz the TSC rate and *forwarded what left the output port. */
uint64_t upfu_bench(const struct upfu_bench_plan *b, uint64_t *hz, uint64_t *forwarded, uint64_t *cpu_ns);


#endif /* UPFU_H */
