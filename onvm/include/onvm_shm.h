/*
 * onvm_shm.h — the one place that names every piece of X-IO shared memory.
 *
 * The onvm manager (DPDK primary, package onvm) creates everything named here;
 * every NF (DPDK secondary, package xio) looks it up by these names. Pointers
 * into the memzones are valid in every process because DPDK multi-process maps
 * hugepages at the same virtual addresses everywhere.
 *
 * Layout:
 *   memzone ONVM_MZ_SHM     struct onvm_shm: table lock, NF slots (pid,
 *                           doorbell, quota), service table (address -> NF),
 *                           conn table
 *   memzone ONVM_MZ_BUFS    the message buffers: shm.nbufs data buffers of
 *                           ONVM_MSG_SIZE (struct onvm_msg header + payload:
 *                           SYN, DATA, DGRAM), then ONVM_CTL_BUFS header-only
 *                           control buffers (FIN, RST, WAKE), at least one per
 *                           connection, so data can never take the buffer a
 *                           close notification needs
 *   ring    ONVM_RING_RX(i) one receive ring per NF slot i (MP RTS enqueue, SC
 *                           dequeue): pointers to buffers
 *
 * Who holds it: DPDK lets a new primary start only once every secondary of
 * the old one has gone (it cannot take the memzone list they still map),
 * and a primary always builds fresh memory. So on a node (package node) a
 * primary that does nothing but create these objects and hold them (onvm
 * "shm" role) outlives the manager, which is a secondary like the NFs: a
 * manager killed at any instant is restarted and adopts its duties from
 * here (manager_pid, manager_epoch, the reap records), while the NFs keep
 * their processes, connections and in-memory state (manager.c).
 *
 * The sizes and field offsets of these structs are pinned at the end of
 * this file (shm_layout.h): C asserts them, a Go test compares them with
 * Go's cgo view. Reading DPDK's ring internals is confined to onvm_ring.h.
 * The UPF's rule tables will be declared the same way, in their own header
 * of this tree (upf_shm.h), with their own layout list.
 *
 * Buffers are not kept in a mempool ring: a process takes a free buffer by
 * CAS on its ownership word (ONVM_OWN), and frees it with one store. So a
 * process killed at any instant leaves each buffer free or marked with its
 * owner (which the manager reclaims), and no allocator state can be left
 * half-updated. The rx rings are DPDK rings: a process killed inside an
 * enqueue wedges one for good, which the manager's watchdog turns into an
 * X-IO restart (manager.c).
 *
 * Go's build cache does not hash headers outside a package's directory:
 * after editing this file or onvm_ops.h, rebuild with go build -a (or go
 * clean -cache), or package onvm and xio keep the old layout.
 *
 * Every process writes this memory, so every reader treats it as untrusted:
 * indices are bounds-checked, and ring entries are checked to be buffers
 * (in range, aligned, handed to the reader) before they are touched; see
 * onvm_ops.h.
 */
#ifndef ONVM_SHM_H
#define ONVM_SHM_H

#include <stdint.h>

#include "shm_layout.h"

#define ONVM_SHM_MAGIC 0x4c323547u /* "L25G" */
#define ONVM_SHM_VERSION 3 /* bump on any change of a struct below */

#define ONVM_MZ_SHM "l25gc_onvm_shm"
#define ONVM_MZ_BUFS "l25gc_onvm_bufs"
#define ONVM_RING_RX_FMT "l25gc_nf_rx_%u"

#define ONVM_MAX_NF 64       /* NF processes attached at once */
#define ONVM_MAX_SVC 1024    /* bound addresses (listeners, packet sockets) */
#define ONVM_MAX_CONN 16384  /* open stream connections */
#define ONVM_ADDR_LEN 64     /* "127.0.0.1:8000", "nrf", ... incl. NUL */

#define ONVM_MSG_SIZE 8192    /* one data buffer (a power of 2) */
#define ONVM_MSG_HEADER 64    /* struct onvm_msg, before its payload */
#define ONVM_MSG_PAYLOAD (ONVM_MSG_SIZE - ONVM_MSG_HEADER) /* payload bytes per buffer */
#define ONVM_CTL_SIZE ONVM_MSG_HEADER /* one control buffer: header only */
#define ONVM_CONN_WINDOW (256 * 1024) /* unread bytes a sender may have in flight */

/* A connection gets at most one FIN or RST, from its first close (the
 * second closer notifies nobody), so with one control buffer per conn they
 * do not run out; the spare covers WAKE and a slot reused while its old FIN
 * is still unread. */
#define ONVM_CTL_BUFS (ONVM_MAX_CONN + 1024)

/* An rx ring holds at most its NF's data quota (shm.nf_quota) plus every
 * control buffer, so an enqueue never fails for room. */
#define ONVM_RING_SIZE 32768
#define ONVM_QUOTA_MAX (ONVM_RING_SIZE - 1 - ONVM_CTL_BUFS)

/* Datagram sockets: a sender blocks while the receiving socket has this
 * much unread, each datagram charged its length plus ONVM_DGRAM_CHARGE. */
#define ONVM_DGRAM_WINDOW (1024 * 1024)
#define ONVM_DGRAM_CHARGE 64

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
 * a dead NF held. */
enum onvm_buf_state {
	ONVM_BUF_FREE = 0,
	ONVM_BUF_HELD = 1,   /* owned by NF 'owner' (being filled or read) */
	ONVM_BUF_INRING = 2, /* handed to NF 'owner' by NF 'src': in or entering its rx ring */
};

/* The ownership word onvm_msg.own packs state, owner and src into one
 * 32-bit atomic, so every transition is one store or CAS and the manager
 * never reads one transition's state with another's owner. Leaving
 * INRING is a CAS (receiver: -> HELD, manager: -> FREE) so exactly one
 * side takes a buffer both may see. ONVM_OWN_COUNTED marks a data buffer
 * counted in its receiver's nf.queued; whoever takes it out of INRING
 * uncounts it. */
#define ONVM_OWN(state, owner, src) \
	((uint32_t)(state) << 16 | (uint32_t)(src) << 8 | (uint32_t)(owner))
#define ONVM_OWN_STATE(w) ((w) >> 16 & 0xffu)
#define ONVM_OWN_OWNER(w) ((w) & 0xffu)
#define ONVM_OWN_SRC(w) ((w) >> 8 & 0xffu)
#define ONVM_OWN_COUNTED (1u << 24)

/* Header at the start of every buffer, data or control; ONVM_MSG_HEADER
 * bytes. */
struct onvm_msg {
	uint32_t own;     /* ownership word (ONVM_OWN) */
	uint16_t type;    /* enum onvm_msg_type */
	uint16_t src_nf;  /* sending NF slot (or ONVM_MAX_NF for the manager) */
	uint32_t conn;    /* conn index (SYN/DATA/FIN/RST) */
	uint32_t gen;     /* conn or service generation; stale ones are dropped */
	uint32_t svc;     /* service index (SYN, DGRAM) */
	uint32_t len;     /* payload bytes in data[] */
	uint32_t addrlen; /* DGRAM: source address bytes at the start of data[] */
	uint32_t side;    /* receiving side of conn: both may be in one process */
	uint8_t pad[32];
	uint8_t data[];
};

/* The manager sends (RSTs for a dead NF's peers) and takes control buffers
 * as a pseudo NF slot above the real ones, a different one per manager
 * epoch: a restarted manager can tell the buffers its killed predecessor
 * left HELD or half-delivered from its own. Owner and src are 8 bits. */
#define ONVM_MGR_EPOCHS 128
#define ONVM_MGR_SELF(epoch) (ONVM_MAX_NF + (uint32_t)(epoch) % ONVM_MGR_EPOCHS)
#define ONVM_IS_MGR_SELF(x) ((x) >= ONVM_MAX_NF && (x) < ONVM_MAX_NF + ONVM_MGR_EPOCHS)

/* DEAD: the manager is reclaiming it; senders treat it as gone. */
enum onvm_nf_state { ONVM_NF_FREE = 0, ONVM_NF_ACTIVE = 1, ONVM_NF_DEAD = 2 };

/* onvm_nf.sleeping: what a sender must do to wake the NF's poller. */
enum onvm_sleep { ONVM_SLEEP_FUTEX = 1, ONVM_SLEEP_EVENTFD = 2 };

/* One attached NF process. The doorbell is a futex word: a sender that finds
 * the NF's poller asleep bumps it and wakes the poller (FUTEX_WAKE, shared).
 * A poller that parks in Go's netpoller instead (xio/doorbell.go) sleeps
 * with 'sleeping' = ONVM_SLEEP_EVENTFD and publishes in efd the number of
 * its eventfd in its own process: senders fetch a copy with pidfd_getfd
 * (onvm_ops.h onvm_wake) and write it, the first of them clearing
 * 'sleeping' so that one write per sleep wakes it.
 * queued and delivering sit on their own cache lines: every sender to this
 * NF updates queued, and this NF's threads update delivering. */
struct onvm_nf {
	uint32_t state; /* enum onvm_nf_state */
	uint32_t gen;   /* bumped at each attach */
	int32_t pid;
	uint32_t sleeping; /* 0, or how the poller is (about to be) asleep: ONVM_SLEEP_* */
	uint32_t bell;     /* futex word */
	int32_t efd;       /* the poller's eventfd doorbell in process pid, or -1 */
	uint64_t rx_bad; /* malformed or foreign ring entries dropped */
	/* Counted data buffers in (or entering) this NF's rx ring: senders
	 * get EAGAIN past shm.nf_quota, so a stalled NF cannot take the
	 * whole pool. */
	uint32_t queued __attribute__((aligned(64)));
	/* delivering[d]: this NF's threads between checking NF d alive and
	 * finishing the enqueue. The manager waits for these to drain before
	 * it reclaims d's buffers, so it never frees one a live sender is
	 * about to enqueue. */
	uint32_t delivering[ONVM_MAX_NF] __attribute__((aligned(64)));
} __attribute__((aligned(64)));

enum onvm_svc_kind { ONVM_SVC_FREE = 0, ONVM_SVC_STREAM = 1, ONVM_SVC_PACKET = 2 };

/* One bound address: which NF serves it. For packet services, dg_sent and
 * dg_read are the datagram window (ONVM_DGRAM_WINDOW): senders add their
 * charge, the receiving application adds what it read. */
struct onvm_svc {
	uint32_t kind; /* enum onvm_svc_kind */
	uint32_t gen;
	uint32_t nf;
	uint32_t pad;
	char addr[ONVM_ADDR_LEN];
	uint64_t dg_sent;
	uint64_t dg_read;
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
	uint32_t pad;       /* the slot is freed once both sides closed */
	uint64_t sent[2];
	uint64_t acked[2];
};

/* The clean-up of one dead NF, in the steps of manager.c: BEGIN (slot
 * marked DEAD, its bindings dropped and its conns reset; RSTs being sent),
 * RECLAIM (waiting for live senders, then taking its buffers back),
 * ORPHANS (waiting for live peers to read past what it half-delivered),
 * FINISH (freeing the slot). Kept here, not in the manager's memory, so a
 * manager restarted in the middle goes on where its predecessor stopped. */
enum onvm_reap_phase {
	ONVM_REAP_NONE = 0,
	ONVM_REAP_BEGIN = 1,
	ONVM_REAP_RECLAIM = 2,
	ONVM_REAP_ORPHANS = 3,
	ONVM_REAP_FINISH = 4,
};

struct onvm_reap {
	uint32_t phase; /* enum onvm_reap_phase */
	int32_t pid;    /* the dead process */
	uint64_t orphan_mask;              /* live NFs it was delivering to */
	uint64_t freed;                    /* buffers taken back so far */
	uint32_t orphan_gen[ONVM_MAX_NF];  /* their attach generations */
	uint32_t orphan_head[ONVM_MAX_NF]; /* their rings' producer head after the death */
};

struct onvm_shm {
	uint32_t magic;
	uint32_t version;
	int32_t manager_pid;
	/* The table lock: 0, or the pid of the process holding it, so that
	 * anyone can tell a holder that died (even one killed while
	 * attaching, before it had a slot) and break its lock. */
	uint32_t lock;
	uint32_t nf_quota; /* counted data buffers an NF may have queued */
	uint32_t nbufs;    /* data buffers in ONVM_MZ_BUFS (control ones follow) */
	uint64_t reclaimed_bufs; /* buffers the manager took back from dead NFs */
	uint64_t reaped_nfs;     /* dead NF processes cleaned up */
	/* Bumped by each manager that adopts the tables after its
	 * predecessor died (0: the first manager); names its pseudo slot
	 * (ONVM_MGR_SELF). */
	uint32_t manager_epoch;
	uint32_t pad;
	struct onvm_nf nf[ONVM_MAX_NF];
	struct onvm_svc svc[ONVM_MAX_SVC];
	struct onvm_conn conn[ONVM_MAX_CONN];
	struct onvm_reap reap[ONVM_MAX_NF]; /* by NF slot; the manager's alone */
};

/* ---- pinned layout (shm_layout.h) -------------------------------------- */

/* Buffer indexing (onvm_buf_kind) masks offsets with the buffer sizes. */
_Static_assert((ONVM_MSG_SIZE & (ONVM_MSG_SIZE - 1)) == 0, "ONVM_MSG_SIZE is a power of 2");
_Static_assert((ONVM_CTL_SIZE & (ONVM_CTL_SIZE - 1)) == 0, "ONVM_CTL_SIZE is a power of 2");

#define ONVM_SHM_LAYOUT(S, F)                                                   \
	S(onvm_msg, ONVM_MSG_HEADER)                                            \
	F(onvm_msg, own, 0)                                                     \
	F(onvm_msg, type, 4)                                                    \
	F(onvm_msg, src_nf, 6)                                                  \
	F(onvm_msg, conn, 8)                                                    \
	F(onvm_msg, gen, 12)                                                    \
	F(onvm_msg, svc, 16)                                                    \
	F(onvm_msg, len, 20)                                                    \
	F(onvm_msg, addrlen, 24)                                                \
	F(onvm_msg, side, 28)                                                   \
	F(onvm_msg, pad, 32)                                                    \
	F(onvm_msg, data, ONVM_MSG_HEADER)                                      \
	S(onvm_nf, 384)                                                         \
	F(onvm_nf, state, 0)                                                    \
	F(onvm_nf, gen, 4)                                                      \
	F(onvm_nf, pid, 8)                                                      \
	F(onvm_nf, sleeping, 12)                                                \
	F(onvm_nf, bell, 16)                                                    \
	F(onvm_nf, efd, 20)                                                     \
	F(onvm_nf, rx_bad, 24)                                                  \
	F(onvm_nf, queued, 64)                                                  \
	F(onvm_nf, delivering, 128)                                             \
	S(onvm_svc, 96)                                                         \
	F(onvm_svc, kind, 0)                                                    \
	F(onvm_svc, gen, 4)                                                     \
	F(onvm_svc, nf, 8)                                                      \
	F(onvm_svc, pad, 12)                                                    \
	F(onvm_svc, addr, 16)                                                   \
	F(onvm_svc, dg_sent, 80)                                                \
	F(onvm_svc, dg_read, 88)                                                \
	S(onvm_conn, 72)                                                        \
	F(onvm_conn, state, 0)                                                  \
	F(onvm_conn, gen, 4)                                                    \
	F(onvm_conn, nf, 8)                                                     \
	F(onvm_conn, nfgen, 16)                                                 \
	F(onvm_conn, closed, 24)                                                \
	F(onvm_conn, reset, 32)                                                 \
	F(onvm_conn, pad, 36)                                                   \
	F(onvm_conn, sent, 40)                                                  \
	F(onvm_conn, acked, 56)                                                 \
	S(onvm_reap, 536)                                                       \
	F(onvm_reap, phase, 0)                                                  \
	F(onvm_reap, pid, 4)                                                    \
	F(onvm_reap, orphan_mask, 8)                                            \
	F(onvm_reap, freed, 16)                                                 \
	F(onvm_reap, orphan_gen, 24)                                            \
	F(onvm_reap, orphan_head, 24 + ONVM_MAX_NF * 4)                         \
	S(onvm_shm, ONVM_SHM_REAP_OFF + ONVM_MAX_NF * 536)                      \
	F(onvm_shm, magic, 0)                                                   \
	F(onvm_shm, version, 4)                                                 \
	F(onvm_shm, manager_pid, 8)                                             \
	F(onvm_shm, lock, 12)                                                   \
	F(onvm_shm, nf_quota, 16)                                               \
	F(onvm_shm, nbufs, 20)                                                  \
	F(onvm_shm, reclaimed_bufs, 24)                                         \
	F(onvm_shm, reaped_nfs, 32)                                             \
	F(onvm_shm, manager_epoch, 40)                                          \
	F(onvm_shm, pad, 44)                                                    \
	F(onvm_shm, nf, 64)                                                     \
	F(onvm_shm, svc, 64 + ONVM_MAX_NF * 384)                                \
	F(onvm_shm, conn, 64 + ONVM_MAX_NF * 384 + ONVM_MAX_SVC * 96)            \
	F(onvm_shm, reap, ONVM_SHM_REAP_OFF)

#define ONVM_SHM_REAP_OFF (64 + ONVM_MAX_NF * 384 + ONVM_MAX_SVC * 96 + ONVM_MAX_CONN * 72)

SHM_PIN_LAYOUT(ONVM_SHM_LAYOUT)

#endif /* ONVM_SHM_H */
