/*
 * upf_shm.h — the UPF's shared rule tables: what UPF-C (Go, package
 * upf/shm) writes and UPF-U (C, package upf/u) forwards with, read in place.
 *
 * One shared file, UPF_TABLES_FILE in the hugepage directory, created and
 * sized (upf.max_sessions) by whichever of UPF-C and UPF-U attaches first
 * and mapped by the other (upf_shm_ops.h upf_shm_attach). It outlives
 * both: UPF-C killed and restarted reads the sessions back (Sessions), and
 * UPF-U keeps forwarding meanwhile; `l25gc down` removes it.
 *
 * Why a file and not a memzone of the onvm manager: UPF-U must own its
 * ports, and DPDK 22.11's net_af_packet refuses to be probed in a secondary
 * ("not driven by the primary process"), while reading the primary's
 * af_packet port from a secondary crashes (its socket ring is mapped in the
 * primary only). So UPF-U is a DPDK primary of its own (in-memory, any
 * PMD), UPF-C needs no DPDK at all, and the tables sit between them.
 *
 * Layout (offsets from the start of the memzone, so no process depends on
 * another's addresses; no function pointers anywhere):
 *
 *   struct upf_shm          header: magic, sizes, offsets, UPF-U's counters
 *   struct upf_sess[max]    session slots: the rules, written by UPF-C only
 *   struct upf_dyn[max]     per-slot state written by UPF-U only: URR
 *                           counters, QER token buckets
 *   uint64_t teid[teid_n]   uplink lookup: local TEID -> slot
 *   uint64_t ueip[ueip_n]   downlink lookup: UE IPv4 -> slot
 *   struct upf_rings        UPF-U -> UPF-C notes (buffered downlink data),
 *                           UPF-C -> UPF-U commands (flush, discard, End
 *                           Marker): two single-producer rings
 *
 * Consistency (TS 29.244 leaves it to the UP function): each session slot
 * is a seqlock. UPF-C (one writer: a mutex in Go) makes seq odd, writes the
 * whole session, makes seq even. UPF-U reads seq, decides the packet's
 * verdict from the slot, and keeps the verdict only if seq was even and is
 * unchanged afterwards; otherwise it reads again (bounded; a slot odd for
 * longer — a writer killed mid-write — drops the packet as "rule_busy"
 * until the restarted UPF-C rewrites it). So a packet never acts on a
 * half-written rule, and the writer never waits for the forwarder.
 *
 * The lookup tables are hints: open addressing, linear probing, one 64-bit
 * word per entry (key << 32 | slot + 1) stored atomically; 0 is empty,
 * UPF_HASH_TOMB a deleted entry. A reader that follows a hint checks the
 * key against the slot's rules under the seqlock, so a stale hint (a
 * session being replaced or removed) costs one miss, never a wrong rule.
 *
 * Counters: UPF-U is the only writer of upf_dyn and upf_stats and stores
 * them with relaxed 64-bit atomics; UPF-C reads them. A URR's counters
 * belong to the URR incarnation named by its epoch: UPF-C gives an index a
 * new epoch when a new URR takes it, UPF-U restarts counters whose epoch
 * differs, and UPF-C reads counters of another epoch as zero.
 *
 * All addresses and TEIDs in these structs are in host byte order.
 */
#ifndef UPF_SHM_H
#define UPF_SHM_H

#include <stdint.h>

#include "shm_layout.h"

#define UPF_SHM_MAGIC 0x55504654u /* "UPFT" */
#define UPF_SHM_VERSION 6         /* bump on any change of a struct below (4: 17 PDRs, 9 QERs; 5: nap counters; 6: QER weight) */

/* The tables file: printf(UPF_TABLES_FILE, huge_dir, file_prefix). */
#define UPF_TABLES_FILE "%s/%s-upf-tables"
/* UPF-C's doorbell: a unix datagram socket at the tables file's path plus
 * this suffix. UPF-U sends one byte after it queued notes, so UPF-C sleeps
 * until there is something to read; a missing UPF-C costs nothing (the
 * send fails, the notes wait in the ring for the next one). */
#define UPF_DOORBELL_SUFFIX ".bell"
/* UPF-U's doorbell, the other way: UPF-C sends one byte after it queued a
 * command (a session changed: flush its buffer now; an End Marker), so a
 * napping UPF-U acts at once rather than after up to its sleep. */
#define UPF_WAKE_SUFFIX ".wake"

/* Per session. The SMF's session (nf/smf/upf_rules.go) has per QoS flow
 * an uplink and a downlink PDR and a flow QER, one session-level QER (QFI
 * 0, the Session-AMBR), 2 FARs and 1 URR; an N2 handover with indirect
 * forwarding (TS 23.502 4.9.1.3.2) adds a PDR and a FAR for a while. So
 * UPF-U's QOS_MAX_FLOWS (8) flows need 8 × 2 + 1 PDRs and 8 + 1 QERs
 * (upf/u/shape.c asserts it). A slot is 2.3 KB, its upf_dyn 0.5 KB, the
 * TEID lookup 0.5 KB: about 210 MiB of tables at the default
 * upf.max_sessions 65536 (upf/shm TableBytes). Rules beyond these are refused, PFCP cause 75 (No
 * resources available). Go reads them as rules.MaxPDRs etc. (upf/shm's
 * test checks the two agree). */
#define UPF_MAX_PDR 17
#define UPF_MAX_FAR 8
#define UPF_MAX_QER 9
#define UPF_MAX_URR 4
#define UPF_MAX_SDF 2     /* SDF filters per PDR */
#define UPF_PDR_QERS 2    /* QERs per PDR (flow QER + session AMBR QER) */
#define UPF_PDR_URRS 2    /* URRs per PDR */
#define UPF_MAX_NI 2      /* distinct network instances per session */
#define UPF_NI_LEN 32     /* a network instance (DNN) incl. NUL */
#define UPF_NONE 0xffu    /* "no rule" in an index byte */

#define UPF_HASH_TOMB 0xffffffffu /* slot field of a deleted entry */

/* Interfaces, as rules.Interface (TS 29.244 8.2.2). */
enum upf_iface { UPF_ACCESS = 0, UPF_CORE = 1, UPF_SGI_LAN = 2, UPF_CP = 3 };

/* FAR apply action bits, as rules.ApplyAction (TS 29.244 8.2.26). */
enum upf_action { UPF_DROP = 1, UPF_FORW = 2, UPF_BUFF = 4, UPF_NOCP = 8 };

/* One SDF filter (TS 29.244 8.2.5), an IPFilterRule "permit out PROTO from
 * REMOTE [PORTS] to UE [PORTS]" (RFC 6733 4.3) in match form. "from" is the
 * remote end and "to" the UE for downlink packets; uplink packets match it
 * with source and destination swapped (TS 29.212 5.4.2). */
struct upf_sdf {
	uint32_t remote_addr;
	uint32_t remote_mask;
	uint32_t ue_addr;
	uint32_t ue_mask;
	uint16_t remote_port_lo;
	uint16_t remote_port_hi;
	uint16_t ue_port_lo;
	uint16_t ue_port_hi;
	uint8_t proto; /* IP protocol; 0 = any ("ip") */
	uint8_t flags; /* UPF_SDF_* */
	uint8_t pad[6];
};

#define UPF_SDF_UE_ASSIGNED 1 /* the UE side was written "assigned" */

#define UPF_PDR_FTEID 1 /* local F-TEID set: an uplink PDR */
#define UPF_PDR_UEIP 2  /* UE IP address set */
#define UPF_PDR_OHR 4   /* outer header removal (GTP-U/UDP/IPv4) */

/* A packet detection rule (TS 29.244 5.2.1, 7.5.2.2). */
struct upf_pdr {
	uint32_t precedence; /* lowest value wins */
	uint32_t teid;       /* local F-TEID (UPF_PDR_FTEID) */
	uint32_t teid_addr;  /* its IPv4 address */
	uint32_t ue_addr;    /* UE IPv4 (UPF_PDR_UEIP) */
	uint16_t id;
	uint8_t source; /* enum upf_iface */
	uint8_t qfi;    /* uplink: only this QFI; 0 = any */
	uint8_t far;    /* index in far[] or UPF_NONE */
	uint8_t qer[UPF_PDR_QERS];
	uint8_t urr[UPF_PDR_URRS];
	uint8_t ni; /* index in ni[] or UPF_NONE */
	uint8_t flags; /* UPF_PDR_* */
	uint8_t nsdf;
	uint8_t pad[4];
	struct upf_sdf sdf[UPF_MAX_SDF];
};

#define UPF_FAR_OH 1 /* outer header creation: GTP-U/UDP/IPv4 */

/* A forwarding action rule (TS 29.244 5.2.3). */
struct upf_far {
	uint32_t id;
	uint32_t oh_teid; /* the peer's TEID (UPF_FAR_OH) */
	uint32_t oh_addr; /* the peer's IPv4 */
	uint16_t action;  /* enum upf_action bits */
	uint8_t dest;     /* enum upf_iface */
	uint8_t ni;       /* index in ni[] or UPF_NONE */
	uint8_t flags;    /* UPF_FAR_* */
	uint8_t pad[3];
};

#define UPF_GATE_UL 1 /* uplink gate open */
#define UPF_GATE_DL 2 /* downlink gate open */

/* A QoS enforcement rule (TS 29.244 5.2.4); rates in bit/s, 0 = none. */
struct upf_qer {
	uint64_t mbr_ul;
	uint64_t mbr_dl;
	uint64_t gbr_ul;
	uint64_t gbr_dl;
	uint32_t id;
	uint8_t qfi;     /* marked in the downlink PDU Session Container */
	uint8_t gates;   /* UPF_GATE_* */
	uint16_t weight; /* the flow's share of the AMBR's excess (qos_fair.h); 0 = 1 */
};

/* A usage reporting rule (TS 29.244 5.2.2). */
struct upf_urr {
	uint32_t id;
	uint32_t epoch; /* incarnation of this index (see the top comment) */
	uint64_t volume_threshold;
};

enum upf_sess_state { UPF_SESS_FREE = 0, UPF_SESS_USED = 1 };

/* One PFCP session's rules; written by UPF-C under the seqlock. */
struct upf_sess {
	uint32_t seq;   /* seqlock: odd while UPF-C writes */
	uint32_t state; /* enum upf_sess_state */
	uint64_t up_seid;
	uint64_t cp_seid;
	uint32_t cp_addr;
	uint8_t npdr, nfar, nqer, nurr;
	char ni[UPF_MAX_NI][UPF_NI_LEN];
	uint8_t pad[32];
	struct upf_pdr pdr[UPF_MAX_PDR];
	struct upf_far far[UPF_MAX_FAR];
	struct upf_qer qer[UPF_MAX_QER];
	struct upf_urr urr[UPF_MAX_URR];
};

/* What one URR counted, written by UPF-U. */
struct upf_count {
	uint32_t epoch; /* the URR incarnation these count */
	uint32_t pad;
	uint64_t ul_bytes;
	uint64_t dl_bytes;
	uint64_t ul_pkts;
	uint64_t dl_pkts;
};

/* A token bucket for a QER's MBR in one direction: credit (a byte is 8 ×
 * the TSC rate, a tick adds the MBR in bit/s, as qos/ counts) and the TSC
 * of its last fill. Only UPF-U reads or writes it. */
struct upf_bucket {
	int64_t tokens;
	uint64_t last;
};

/* A slot's forwarding state, written by UPF-U only. */
struct upf_dyn {
	struct upf_count urr[UPF_MAX_URR];
	struct upf_bucket qer[UPF_MAX_QER][2]; /* [0] uplink, [1] downlink */
	uint8_t pad[32];
};

/* Why UPF-U dropped a packet (TS 29.281 and the pipeline of DESIGN.md). */
enum upf_drop {
	UPF_DROP_NONE = 0,      /* not a drop: UPF-U's functions return 0 for "go on" */
	UPF_DROP_MALFORMED,     /* truncated or inconsistent headers */
	UPF_DROP_NOT_IPV4,      /* neither IPv4 nor ARP (IPv6, VLAN, ...) */
	UPF_DROP_NOT_OURS,      /* N3: not to our address; N6: not to a UE */
	UPF_DROP_NOT_GTPU,      /* N3: IPv4 but not GTP-U (or ICMP to us) */
	UPF_DROP_GTPU_TYPE,     /* GTP-U message we do not serve */
	UPF_DROP_UNKNOWN_TEID,  /* no session: Error Indication sent */
	UPF_DROP_NO_PDR,        /* a session but no PDR matched */
	UPF_DROP_FAR_DROP,      /* FAR says DROP (or no FAR) */
	UPF_DROP_BUFFERED,      /* the downlink buffer dropped it (full, overflow, discarded) */
	UPF_DROP_GATE,          /* QER gate closed */
	UPF_DROP_MBR,           /* over the QER's MBR */
	UPF_DROP_TTL,           /* TTL expired */
	UPF_DROP_FRAGMENT,      /* IPv4 fragment */
	UPF_DROP_NO_ARP,        /* next hop unresolved: held past 1 s, or past the hold queues' bounds */
	UPF_DROP_NO_ROUTE,      /* no on-link next hop and no gateway */
	UPF_DROP_TX_FULL,       /* the port did not take it */
	UPF_DROP_RULE_BUSY,     /* session rewritten for too long */
	UPF_DROP_UNSUPPORTED,   /* a FAR we cannot apply */
	UPF_DROP_MAX = 24
};

enum upf_port_idx { UPF_N3 = 0, UPF_N6 = 1, UPF_PORTS = 2 };

/* One port's counters, written by UPF-U. */
struct upf_port_stats {
	uint64_t rx_pkts;
	uint64_t rx_bytes;
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t arp_replies;   /* ARP replies we sent */
	uint64_t icmp_replies;  /* ICMP echo replies we sent */
	uint64_t gtpu_echo;     /* GTP-U Echo Responses we sent */
	uint64_t err_ind;       /* GTP-U Error Indications we sent */
};

/* UPF-U's counters and state, written by UPF-U. */
struct upf_stats {
	int32_t upfu_pid; /* the running UPF-U, 0 = none */
	uint32_t pad;
	uint64_t bursts; /* bursts handled (an epoch: moves while UPF-U runs) */
	struct upf_port_stats port[UPF_PORTS];
	uint64_t drop[UPF_DROP_MAX];
	/* Downlink buffering (FAR BUFF, TS 29.244 5.2.3; paging TS 23.502
	 * 4.2.3.3): packets held now, and totals of packets buffered, flushed
	 * (sent after the FAR became FORW), dropped by overflow (the oldest of
	 * a full session, or a new one when upf.buffer.total is reached) and
	 * discarded (FAR DROP, session removed, the SMF did not know it). */
	uint64_t buf_now;
	uint64_t buf_total;
	uint64_t buf_flushed;
	uint64_t buf_overflow;
	uint64_t buf_discarded;
	uint64_t notes;       /* Downlink Data notes queued for UPF-C */
	uint64_t notes_lost;  /* notes not queued: the ring was full (retried) */
	uint64_t end_markers; /* GTP-U End Markers sent (TS 29.281 7.3.2) */
	/* Idle naps (upf.sleep) UPF-U took, and those a packet on a port ended
	 * before their timeout (its Rx interrupt or side socket). */
	uint64_t naps;
	uint64_t naps_rx;
};

/* ---- rings between UPF-C and UPF-U ------------------------------------------
 * Single producer, single consumer each: the producer writes an entry and
 * then publishes head (release), the consumer reads up to head (acquire)
 * and then publishes tail. head - tail (mod 2^32) entries are queued.
 * Both outlive either process: UPF-C drains the notes UPF-U queued while
 * it was down; a starting UPF-U skips the commands queued before it
 * (their buffers died with the last UPF-U). */

#define UPF_RING_N 1024 /* entries per ring, a power of 2 */

struct upf_ring_idx {
	uint32_t head; /* written by the producer */
	uint32_t pad0[15];
	uint32_t tail; /* written by the consumer */
	uint32_t pad1[15];
};

/* A note from UPF-U: the first downlink packet of a session was buffered
 * and its FAR says NOCP (TS 29.244 5.2.3.1): UPF-C reports it to the SMF
 * (Downlink Data Report). One per session until UPF-C re-arms it. */
struct upf_note {
	uint64_t up_seid;
	uint32_t slot;
	uint16_t pdr_id; /* the PDR that detected the packet */
	uint8_t qfi;     /* its QoS flow, 0 = unknown */
	uint8_t pad;
};

enum upf_cmd_type {
	UPF_CMD_CHANGED = 1,    /* the session was rewritten: flush if FORW, discard if DROP */
	UPF_CMD_DISCARD = 2,    /* drop what is buffered for the session */
	UPF_CMD_END_MARKER = 3, /* send End Marker into the old tunnel (teid, addr) */
};

#define UPF_CMD_REARM 1 /* flags: the SMF rewrote a FAR: a new note may follow */

/* A command from UPF-C to UPF-U about one session (slot and SEID: a
 * command for a session since replaced in its slot is ignored). */
struct upf_cmd {
	uint64_t up_seid;
	uint32_t slot;
	uint16_t type;  /* enum upf_cmd_type */
	uint16_t flags; /* UPF_CMD_* */
	uint32_t teid;  /* UPF_CMD_END_MARKER: the old tunnel */
	uint32_t addr;
	uint64_t pad;
};

struct upf_rings {
	struct upf_ring_idx note_idx;
	struct upf_note note[UPF_RING_N];
	struct upf_ring_idx cmd_idx;
	struct upf_cmd cmd[UPF_RING_N];
};

struct upf_shm {
	uint32_t magic; /* UPF_SHM_MAGIC once ready (written last) */
	uint32_t version;
	uint32_t max_sessions;
	uint32_t teid_n; /* entries of the TEID table, a power of 2 */
	uint32_t ueip_n; /* entries of the UE IP table, a power of 2 */
	int32_t upfc_pid; /* the UPF-C writing the tables, 0 = none */
	uint64_t size;    /* bytes of the memzone */
	uint64_t sess_off;
	uint64_t dyn_off;
	uint64_t teid_off;
	uint64_t ueip_off;
	uint32_t sessions; /* sessions installed, kept by UPF-C (for exporters) */
	uint32_t pad;
	struct upf_stats stats;
	uint64_t rings_off; /* struct upf_rings */
};

/* ---- pinned layout (shm_layout.h) -------------------------------------- */

#define UPF_SHM_LAYOUT(S, F)                                                    \
	S(upf_sdf, 32)                                                          \
	F(upf_sdf, remote_addr, 0)                                              \
	F(upf_sdf, remote_mask, 4)                                              \
	F(upf_sdf, ue_addr, 8)                                                  \
	F(upf_sdf, ue_mask, 12)                                                 \
	F(upf_sdf, remote_port_lo, 16)                                          \
	F(upf_sdf, remote_port_hi, 18)                                          \
	F(upf_sdf, ue_port_lo, 20)                                              \
	F(upf_sdf, ue_port_hi, 22)                                              \
	F(upf_sdf, proto, 24)                                                   \
	F(upf_sdf, flags, 25)                                                   \
	F(upf_sdf, pad, 26)                                                     \
	S(upf_pdr, 96)                                                          \
	F(upf_pdr, precedence, 0)                                               \
	F(upf_pdr, teid, 4)                                                     \
	F(upf_pdr, teid_addr, 8)                                                \
	F(upf_pdr, ue_addr, 12)                                                 \
	F(upf_pdr, id, 16)                                                      \
	F(upf_pdr, source, 18)                                                  \
	F(upf_pdr, qfi, 19)                                                     \
	F(upf_pdr, far, 20)                                                     \
	F(upf_pdr, qer, 21)                                                     \
	F(upf_pdr, urr, 23)                                                     \
	F(upf_pdr, ni, 25)                                                      \
	F(upf_pdr, flags, 26)                                                   \
	F(upf_pdr, nsdf, 27)                                                    \
	F(upf_pdr, pad, 28)                                                     \
	F(upf_pdr, sdf, 32)                                                     \
	S(upf_far, 20)                                                          \
	F(upf_far, id, 0)                                                       \
	F(upf_far, oh_teid, 4)                                                  \
	F(upf_far, oh_addr, 8)                                                  \
	F(upf_far, action, 12)                                                  \
	F(upf_far, dest, 14)                                                    \
	F(upf_far, ni, 15)                                                      \
	F(upf_far, flags, 16)                                                   \
	F(upf_far, pad, 17)                                                     \
	S(upf_qer, 40)                                                          \
	F(upf_qer, mbr_ul, 0)                                                   \
	F(upf_qer, mbr_dl, 8)                                                   \
	F(upf_qer, gbr_ul, 16)                                                  \
	F(upf_qer, gbr_dl, 24)                                                  \
	F(upf_qer, id, 32)                                                      \
	F(upf_qer, qfi, 36)                                                     \
	F(upf_qer, gates, 37)                                                   \
	F(upf_qer, weight, 38)                                                  \
	S(upf_urr, 16)                                                          \
	F(upf_urr, id, 0)                                                       \
	F(upf_urr, epoch, 4)                                                    \
	F(upf_urr, volume_threshold, 8)                                         \
	S(upf_sess, 128 + UPF_MAX_PDR * 96 + UPF_MAX_FAR * 20 + UPF_MAX_QER * 40 + UPF_MAX_URR * 16) \
	F(upf_sess, seq, 0)                                                     \
	F(upf_sess, state, 4)                                                   \
	F(upf_sess, up_seid, 8)                                                 \
	F(upf_sess, cp_seid, 16)                                                \
	F(upf_sess, cp_addr, 24)                                                \
	F(upf_sess, npdr, 28)                                                   \
	F(upf_sess, nfar, 29)                                                   \
	F(upf_sess, nqer, 30)                                                   \
	F(upf_sess, nurr, 31)                                                   \
	F(upf_sess, ni, 32)                                                     \
	F(upf_sess, pad, 96)                                                    \
	F(upf_sess, pdr, 128)                                                   \
	F(upf_sess, far, 128 + UPF_MAX_PDR * 96)                                \
	F(upf_sess, qer, 128 + UPF_MAX_PDR * 96 + UPF_MAX_FAR * 20)             \
	F(upf_sess, urr, 128 + UPF_MAX_PDR * 96 + UPF_MAX_FAR * 20 + UPF_MAX_QER * 40) \
	S(upf_count, 40)                                                        \
	F(upf_count, epoch, 0)                                                  \
	F(upf_count, pad, 4)                                                    \
	F(upf_count, ul_bytes, 8)                                               \
	F(upf_count, dl_bytes, 16)                                              \
	F(upf_count, ul_pkts, 24)                                               \
	F(upf_count, dl_pkts, 32)                                               \
	S(upf_bucket, 16)                                                       \
	F(upf_bucket, tokens, 0)                                                \
	F(upf_bucket, last, 8)                                                  \
	S(upf_dyn, UPF_MAX_URR * 40 + UPF_MAX_QER * 32 + 32)                    \
	F(upf_dyn, urr, 0)                                                      \
	F(upf_dyn, qer, UPF_MAX_URR * 40)                                       \
	F(upf_dyn, pad, UPF_MAX_URR * 40 + UPF_MAX_QER * 32)                    \
	S(upf_port_stats, 64)                                                   \
	F(upf_port_stats, rx_pkts, 0)                                           \
	F(upf_port_stats, rx_bytes, 8)                                          \
	F(upf_port_stats, tx_pkts, 16)                                          \
	F(upf_port_stats, tx_bytes, 24)                                         \
	F(upf_port_stats, arp_replies, 32)                                      \
	F(upf_port_stats, icmp_replies, 40)                                     \
	F(upf_port_stats, gtpu_echo, 48)                                        \
	F(upf_port_stats, err_ind, 56)                                          \
	S(upf_stats, 16 + UPF_PORTS * 64 + UPF_DROP_MAX * 8 + 80)               \
	F(upf_stats, upfu_pid, 0)                                               \
	F(upf_stats, pad, 4)                                                    \
	F(upf_stats, bursts, 8)                                                 \
	F(upf_stats, port, 16)                                                  \
	F(upf_stats, drop, 16 + UPF_PORTS * 64)                                 \
	F(upf_stats, buf_now, 16 + UPF_PORTS * 64 + UPF_DROP_MAX * 8)           \
	F(upf_stats, buf_total, 24 + UPF_PORTS * 64 + UPF_DROP_MAX * 8)         \
	F(upf_stats, buf_flushed, 32 + UPF_PORTS * 64 + UPF_DROP_MAX * 8)       \
	F(upf_stats, buf_overflow, 40 + UPF_PORTS * 64 + UPF_DROP_MAX * 8)      \
	F(upf_stats, buf_discarded, 48 + UPF_PORTS * 64 + UPF_DROP_MAX * 8)     \
	F(upf_stats, notes, 56 + UPF_PORTS * 64 + UPF_DROP_MAX * 8)             \
	F(upf_stats, notes_lost, 64 + UPF_PORTS * 64 + UPF_DROP_MAX * 8)        \
	F(upf_stats, end_markers, 72 + UPF_PORTS * 64 + UPF_DROP_MAX * 8)       \
	F(upf_stats, naps, 80 + UPF_PORTS * 64 + UPF_DROP_MAX * 8)              \
	F(upf_stats, naps_rx, 88 + UPF_PORTS * 64 + UPF_DROP_MAX * 8)           \
	S(upf_ring_idx, 128)                                                    \
	F(upf_ring_idx, head, 0)                                                \
	F(upf_ring_idx, pad0, 4)                                                \
	F(upf_ring_idx, tail, 64)                                               \
	F(upf_ring_idx, pad1, 68)                                               \
	S(upf_note, 16)                                                         \
	F(upf_note, up_seid, 0)                                                 \
	F(upf_note, slot, 8)                                                    \
	F(upf_note, pdr_id, 12)                                                 \
	F(upf_note, qfi, 14)                                                    \
	F(upf_note, pad, 15)                                                    \
	S(upf_cmd, 32)                                                          \
	F(upf_cmd, up_seid, 0)                                                  \
	F(upf_cmd, slot, 8)                                                     \
	F(upf_cmd, type, 12)                                                    \
	F(upf_cmd, flags, 14)                                                   \
	F(upf_cmd, teid, 16)                                                    \
	F(upf_cmd, addr, 20)                                                    \
	F(upf_cmd, pad, 24)                                                     \
	S(upf_rings, 128 + UPF_RING_N * 16 + 128 + UPF_RING_N * 32)             \
	F(upf_rings, note_idx, 0)                                               \
	F(upf_rings, note, 128)                                                 \
	F(upf_rings, cmd_idx, 128 + UPF_RING_N * 16)                            \
	F(upf_rings, cmd, 256 + UPF_RING_N * 16)                                \
	S(upf_shm, 72 + 16 + UPF_PORTS * 64 + UPF_DROP_MAX * 8 + 80 + 8)        \
	F(upf_shm, magic, 0)                                                    \
	F(upf_shm, version, 4)                                                  \
	F(upf_shm, max_sessions, 8)                                             \
	F(upf_shm, teid_n, 12)                                                  \
	F(upf_shm, ueip_n, 16)                                                  \
	F(upf_shm, upfc_pid, 20)                                                \
	F(upf_shm, size, 24)                                                    \
	F(upf_shm, sess_off, 32)                                                \
	F(upf_shm, dyn_off, 40)                                                 \
	F(upf_shm, teid_off, 48)                                                \
	F(upf_shm, ueip_off, 56)                                                \
	F(upf_shm, sessions, 64)                                                \
	F(upf_shm, pad, 68)                                                     \
	F(upf_shm, stats, 72)                                                   \
	F(upf_shm, rings_off, 72 + 16 + UPF_PORTS * 64 + UPF_DROP_MAX * 8 + 80)

SHM_PIN_LAYOUT(UPF_SHM_LAYOUT)

_Static_assert(UPF_DROP_MAX > UPF_DROP_UNSUPPORTED, "UPF_DROP_MAX holds every drop reason");

#endif /* UPF_SHM_H */
