/*
 * onvm_ring.h — the only code that reads or writes DPDK's private rte_ring
 * fields (struct rte_ring's prod/cons and rts_prod head/tail). Nothing else
 * in the manager, the NF stack or the tests may touch them: call these.
 * The one exception is its Go mirror, xio/ring.go: the NF stack enqueues
 * and dequeues in Go, without a cgo call per message (why: xio/doorbell.go),
 * by DPDK's own protocol for these rings, with the field offsets taken
 * from DPDK's header (offsetof) and pinned by xio/ring_test.go against
 * DPDK's enqueue and dequeue. A change of DPDK release re-checks both.
 *
 * Why reach inside at all: DPDK's public ring API has no call that tells a
 * ring's head from its tail, and X-IO must survive a process killed inside
 * a ring operation (onvm_shm.h), which is exactly a head that moved and a
 * tail that never will:
 *   - onvm_ring_wedged: a sender refuses a ring whose producer head ran
 *     ahead of its tail (an enqueuer died) instead of spinning in DPDK;
 *   - onvm_ring_prod_head / onvm_ring_cons_tail: the manager frees what a
 *     dead sender left half-delivered once the receiver has consumed past
 *     the producer head at the death (manager.c reap_orphans);
 *   - onvm_ring_cons_publish_head: the manager, the only consumer of a dead
 *     NF's ring, completes a dequeue the NF died inside (drain_ring);
 *   - onvm_ring_prod / onvm_ring_cons: the manager's watchdog;
 *   - onvm_ring_prod_advance_head (tests only): what a killed enqueuer
 *     leaves behind.
 *
 * Checked against DPDK 22.11.11 (`pkg-config --modversion libdpdk`),
 * rte_ring_core.h: the producer side of an RING_F_MP_RTS_ENQ ring is
 * struct rte_ring_rts_headtail (tail, sync_type, htd_max, head; head and
 * tail are union __rte_ring_rts_poscnt {raw; {cnt, pos}}), the consumer
 * side of an RING_F_SC_DEQ ring is struct rte_ring_headtail (head, tail).
 * onvm_ring_sync_ok checks at attach that a ring is of that kind. On any
 * other DPDK release, re-read rte_ring_core.h and rte_ring_rts_elem_pvt.h
 * (the RTS enqueue: head CAS first, tail last), then update the version
 * below; the build warns until then.
 */
#ifndef ONVM_RING_H
#define ONVM_RING_H

#include <stddef.h>
#include <stdint.h>

#include <rte_ring.h>
#include <rte_version.h>

#if RTE_VER_YEAR != 22 || RTE_VER_MONTH != 11
#warning "onvm_ring.h reads rte_ring internals checked against DPDK 22.11 only: re-check it for this DPDK"
#endif

_Static_assert(sizeof(union __rte_ring_rts_poscnt) == sizeof(uint64_t),
	       "DPDK's RTS head/tail is no longer one 64-bit word: re-check onvm_ring.h");
_Static_assert(offsetof(struct rte_ring, rts_prod) == offsetof(struct rte_ring, prod),
	       "DPDK's rts_prod no longer overlays prod: re-check onvm_ring.h");
/* xio/ring.go splits the RTS word into its two halves by these offsets. */
_Static_assert(offsetof(union __rte_ring_rts_poscnt, val.cnt) == 0 &&
		       offsetof(union __rte_ring_rts_poscnt, val.pos) == 4,
	       "DPDK's RTS word is no longer {cnt, pos}: re-check xio/ring.go");

/* A ring side's head and tail positions. */
struct onvm_ring_pos {
	uint32_t head, tail;
};

/* onvm_ring_sync_ok says whether r is the kind every accessor here assumes:
 * MP RTS enqueue, SC dequeue (public API; the manager creates them so). */
static inline int onvm_ring_sync_ok(const struct rte_ring *r)
{
	return rte_ring_get_prod_sync_type(r) == RTE_RING_SYNC_MT_RTS &&
	       rte_ring_get_cons_sync_type(r) == RTE_RING_SYNC_ST;
}

/* onvm_ring_prod reads the RTS producer head and tail. */
static inline struct onvm_ring_pos onvm_ring_prod(const struct rte_ring *r)
{
	union __rte_ring_rts_poscnt h, t;
	h.raw = __atomic_load_n(&r->rts_prod.head.raw, __ATOMIC_ACQUIRE);
	t.raw = __atomic_load_n(&r->rts_prod.tail.raw, __ATOMIC_ACQUIRE);
	return (struct onvm_ring_pos){.head = h.val.pos, .tail = t.val.pos};
}

/* onvm_ring_prod_head is where the next enqueue will start: past every
 * enqueue begun so far, finished or not (RTS publishes tails late). */
static inline uint32_t onvm_ring_prod_head(const struct rte_ring *r)
{
	return onvm_ring_prod(r).head;
}

/* onvm_ring_cons reads the single consumer's head and tail. */
static inline struct onvm_ring_pos onvm_ring_cons(const struct rte_ring *r)
{
	return (struct onvm_ring_pos){
		.head = __atomic_load_n(&r->cons.head, __ATOMIC_ACQUIRE),
		.tail = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE),
	};
}

/* onvm_ring_cons_tail is how far the consumer has finished dequeuing. */
static inline uint32_t onvm_ring_cons_tail(const struct rte_ring *r)
{
	return __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
}

/* onvm_ring_cons_publish_head finishes a dequeue whose consumer died
 * between moving the head and the tail. Only the sole remaining consumer
 * may call it (the manager, on a dead NF's ring): the entries it skips are
 * lost to the ring, and the caller frees them by scanning the buffers. */
static inline void onvm_ring_cons_publish_head(struct rte_ring *r)
{
	__atomic_store_n(&r->cons.tail, __atomic_load_n(&r->cons.head, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

#ifdef L25GC_TESTHOOKS
/* Run between onvm_ring_wedged's reads of the head and of the tail; NULL
 * unless a test armed it (xio/testhooks.c). Test builds only. */
extern void (*xio_test_wedge_check_hook)(const struct rte_ring *r);
#define ONVM_WEDGE_CHECK_HOOK(r)                                        \
	do {                                                            \
		if (__builtin_expect(xio_test_wedge_check_hook != NULL, 0)) \
			xio_test_wedge_check_hook(r);                   \
	} while (0)
#else
#define ONVM_WEDGE_CHECK_HOOK(r) ((void)0)
#endif

/* onvm_ring_wedged says whether r's producers are stuck behind an enqueue
 * that never finished (its process died between moving the head and the
 * tail): then the head runs ahead of the tail, and past htd_max every
 * enqueue would spin inside DPDK forever. Half of htd_max is far beyond what
 * concurrent live enqueues reach, so an error is returned instead.
 *
 * The two words are not read at one instant: other senders may begin and
 * finish whole enqueues between the reads (this thread preempted there on a
 * busy node), so the tail read can be past the head read. The head is read
 * first (acquire: the tail is read after it) and the distance is signed, so
 * it is never more than the true distance when the head was read, and a
 * tail ahead is a live ring, not a wrapped unsigned distance of ~2^32. */
static inline int onvm_ring_wedged(const struct rte_ring *r)
{
	union __rte_ring_rts_poscnt h, t;
	h.raw = __atomic_load_n(&r->rts_prod.head.raw, __ATOMIC_ACQUIRE);
	ONVM_WEDGE_CHECK_HOOK(r);
	t.raw = __atomic_load_n(&r->rts_prod.tail.raw, __ATOMIC_RELAXED);
	return (int32_t)(h.val.pos - t.val.pos) > (int32_t)(r->rts_prod.htd_max / 2);
}

#ifdef L25GC_TESTHOOKS
/* onvm_ring_prod_advance_head moves r's producer head by one as an RTS
 * enqueue does first, and never finishes: a sender killed inside
 * rte_ring_enqueue. Test builds only (xio/testhooks.c). */
static inline void onvm_ring_prod_advance_head(struct rte_ring *r)
{
	union __rte_ring_rts_poscnt oh, nh;
	oh.raw = __atomic_load_n(&r->rts_prod.head.raw, __ATOMIC_ACQUIRE);
	do {
		nh.val.pos = oh.val.pos + 1;
		nh.val.cnt = oh.val.cnt + 1;
	} while (!__atomic_compare_exchange_n(&r->rts_prod.head.raw, &oh.raw, nh.raw, 0,
					      __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
}
#endif

#endif /* ONVM_RING_H */
