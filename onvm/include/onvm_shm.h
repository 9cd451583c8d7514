/*
 * onvm_shm.h — the one place that names every piece of X-IO shared memory.
 *
 * The onvm manager (DPDK primary, package onvm) creates everything named here;
 * every NF (DPDK secondary, package xio) looks it up by these names. Pointers
 * into the mempool are valid in every process because DPDK multi-process maps
 * hugepages at the same virtual addresses everywhere.
 *
 * Layout:
 *   memzone ONVM_MZ_SHM     struct onvm_shm: table lock, NF slots (pid,
 *                           doorbell), service table (address -> NF), conn table
 *   mempool ONVM_POOL_MSG   message buffers: struct onvm_msg header + payload
 *   ring    ONVM_RING_RX(i) one receive ring per NF slot i (MP enqueue, SC
 *                           dequeue): pointers to message buffers
 */
#ifndef ONVM_SHM_H
#define ONVM_SHM_H

#include <stdint.h>

#define ONVM_SHM_MAGIC 0x4c323547u /* "L25G" */
#define ONVM_SHM_VERSION 1

#define ONVM_MZ_SHM "l25gc_onvm_shm"
#define ONVM_POOL_MSG "l25gc_onvm_msg"
#define ONVM_RING_RX_FMT "l25gc_nf_rx_%u"

#define ONVM_MAX_NF 64       /* NF processes attached at once */
#define ONVM_MAX_SVC 1024    /* bound addresses (listeners, packet sockets) */
#define ONVM_MAX_CONN 16384  /* open stream connections */
#define ONVM_ADDR_LEN 64     /* "127.0.0.1:8000", "nrf", ... incl. NUL */

#define ONVM_MSG_SIZE 8192                 /* one mempool element */
#define ONVM_MSG_PAYLOAD (ONVM_MSG_SIZE - 64) /* payload bytes per buffer */
#define ONVM_RING_SIZE 16384 /* > pool size: an rx ring never fills */
#define ONVM_CONN_WINDOW (256 * 1024) /* unread bytes a sender may have in flight */

/* Descriptor types carried in onvm_msg.type. */
enum onvm_msg_type {
	ONVM_MSG_SYN = 1,   /* new conn for service msg.svc, from dialer */
	ONVM_MSG_DATA = 2,  /* stream bytes of conn msg.conn */
	ONVM_MSG_FIN = 3,   /* sender closed conn: reader sees EOF after data */
	ONVM_MSG_RST = 4,   /* conn reset (peer died, or refused): reads fail */
	ONVM_MSG_DGRAM = 5, /* one datagram to service msg.svc; data = src addr + payload */
	ONVM_MSG_WAKE = 6,  /* no-op: wakes a poller (shutdown) */
};

/* Buffer ownership, kept in each buffer so the manager can find the buffers
 * a dead NF held (the pool has no per-lcore cache, so none hide elsewhere). */
enum onvm_buf_state {
	ONVM_BUF_FREE = 0,
	ONVM_BUF_HELD = 1,   /* owned by NF msg.owner (being filled or read) */
	ONVM_BUF_INRING = 2, /* in NF msg.owner's rx ring */
};

/* Header at the start of every mempool element; 64 bytes. */
struct onvm_msg {
	uint32_t state;   /* enum onvm_buf_state */
	uint32_t owner;   /* NF slot index */
	uint16_t type;    /* enum onvm_msg_type */
	uint16_t src_nf;  /* sending NF slot (or ONVM_MAX_NF for the manager) */
	uint32_t conn;    /* conn index (SYN/DATA/FIN/RST) */
	uint32_t gen;     /* conn or service generation; stale ones are dropped */
	uint32_t svc;     /* service index (SYN, DGRAM) */
	uint32_t len;     /* payload bytes in data[] */
	uint32_t addrlen; /* DGRAM: source address bytes at the start of data[] */
	uint32_t side;    /* receiving side of conn: both may be in one process */
	uint8_t pad[28];
	uint8_t data[];
};

/* DEAD: the manager is reclaiming it; senders treat it as gone. */
enum onvm_nf_state { ONVM_NF_FREE = 0, ONVM_NF_ACTIVE = 1, ONVM_NF_DEAD = 2 };

/* One attached NF process. The doorbell is a futex word: a sender that finds
 * the NF's poller asleep bumps it and wakes the poller (FUTEX_WAKE, shared). */
struct onvm_nf {
	uint32_t state; /* enum onvm_nf_state */
	uint32_t gen;   /* bumped at each attach */
	int32_t pid;
	uint32_t sleeping; /* poller is (about to be) asleep on bell */
	uint32_t bell;     /* futex word */
	uint32_t pad;
	uint64_t rx_msgs; /* statistics */
} __attribute__((aligned(64)));

enum onvm_svc_kind { ONVM_SVC_FREE = 0, ONVM_SVC_STREAM = 1, ONVM_SVC_PACKET = 2 };

/* One bound address: which NF serves it. */
struct onvm_svc {
	uint32_t kind; /* enum onvm_svc_kind */
	uint32_t gen;
	uint32_t nf;
	uint32_t pad;
	char addr[ONVM_ADDR_LEN];
};

enum onvm_conn_state { ONVM_CONN_FREE = 0, ONVM_CONN_OPEN = 1 };

/* One stream connection. Side 0 dialed, side 1 accepted. Direction d carries
 * bytes sent by side d: sent[d] counts them, acked[d] counts those side 1-d's
 * application has read; a sender waits while sent-acked reaches the window. */
struct onvm_conn {
	uint32_t state; /* enum onvm_conn_state */
	uint32_t gen;
	uint32_t nf[2];     /* NF slot of each side */
	uint32_t nfgen[2];  /* that NF's attach generation */
	uint32_t closed[2]; /* side closed (or died) */
	uint32_t reset;     /* a side died: the other's reads and writes fail */
	uint32_t refs;      /* sides not yet closed; slot freed at 0 */
	uint64_t sent[2];
	uint64_t acked[2];
};

/* The table lock is a word holding (owner NF slot + 1), so the manager can
 * break it if its holder dies inside a critical section. */
#define ONVM_LOCK_MANAGER (ONVM_MAX_NF + 1)

struct onvm_shm {
	uint32_t magic;
	uint32_t version;
	int32_t manager_pid;
	uint32_t lock;
	uint64_t reclaimed_bufs; /* buffers the manager took back from dead NFs */
	uint64_t reaped_nfs;     /* dead NF processes cleaned up */
	struct onvm_nf nf[ONVM_MAX_NF];
	struct onvm_svc svc[ONVM_MAX_SVC];
	struct onvm_conn conn[ONVM_MAX_CONN];
};

#endif /* ONVM_SHM_H */
