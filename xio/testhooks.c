//go:build l25gc_testhooks

/*
 * testhooks.c — test-only hooks (testhooks.h), built only with -tags
 * l25gc_testhooks. None runs unless a test calls it; their only trace in the
 * data path of a test build is xio_send_hook, xio_take_paused and
 * xio_sleep_hook, one predictable branch each, and none at all in a production build.
 */
#ifndef L25GC_TESTHOOKS
#error "testhooks.c belongs to test builds: testhooks.go (-tags l25gc_testhooks) defines L25GC_TESTHOOKS"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onvm_ops.h"
#include "stack.h"
#include "testhooks.h"

void (*xio_send_hook)(uint32_t c, uint32_t gen, uint32_t side, unsigned chunk);
int xio_take_paused;
void (*xio_sleep_hook)(void);
void (*xio_test_wedge_check_hook)(const struct rte_ring *r);

/* xio_test_hold_buffers takes n buffers and never returns them, as a
 * process that dies while filling buffers would; tests use it to check the
 * manager's reclaim. Returns how many it took. */
int xio_test_hold_buffers(int n)
{
	int k = 0;
	while (k < n && onvm_msg_alloc(xio_view()) != NULL)
		k++;
	return k;
}

/* xio_test_rx_bad is how many malformed or foreign ring entries NF slot
 * dropped. */
uint64_t xio_test_rx_bad(uint32_t slot)
{
	return slot < ONVM_MAX_NF
		       ? __atomic_load_n(&xio_view()->shm->nf[slot].rx_bad, __ATOMIC_RELAXED)
		       : 0;
}

enum { PARK_IDLE, PARK_ARMED, PARK_PARKED, PARK_RELEASED };
static int park_state;

/* park_hook plays a peer closing its side while our writer is between
 * chunks, then holds the writer there (at most 300 ms) so the test can
 * close our side and reuse the slot meanwhile. */
static void park_hook(uint32_t c, uint32_t gen, uint32_t side, unsigned chunk)
{
	int armed = PARK_ARMED;
	if (chunk != 0 || !__atomic_compare_exchange_n(&park_state, &armed, PARK_PARKED, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	xio_close(c, gen, 1 - side, 0);
	for (int i = 0; i < 3000 && __atomic_load_n(&park_state, __ATOMIC_ACQUIRE) != PARK_RELEASED; i++)
		usleep(100);
	__atomic_store_n(&park_state, PARK_IDLE, __ATOMIC_RELEASE);
}

void xio_test_arm_send_race(void)
{
	__atomic_store_n(&park_state, PARK_ARMED, __ATOMIC_RELEASE);
	xio_send_hook = park_hook;
}

int xio_test_send_parked(void) { return __atomic_load_n(&park_state, __ATOMIC_ACQUIRE) == PARK_PARKED; }

void xio_test_release_send(void)
{
	int parked = PARK_PARKED;
	__atomic_compare_exchange_n(&park_state, &parked, PARK_RELEASED, 0, __ATOMIC_ACQ_REL,
				    __ATOMIC_RELAXED);
}

void xio_test_set_conn_hint(uint32_t c) { xio_set_conn_hint(c); }

/* xio_test_hold_lock takes the table lock the way attaching does, and
 * never releases it: the process is then killed "inside" attach. */
int xio_test_hold_lock(void) { return onvm_lock(xio_view()); }

void xio_test_set_lock_timeout(uint32_t ms) { xio_view()->lock_timeout_ms = ms; }

int xio_test_slot_of(const char *addr, uint32_t kind)
{
	struct onvm_view *v = xio_view();
	for (int i = 0; i < ONVM_MAX_SVC; i++) {
		struct onvm_svc *s = &v->shm->svc[i];
		if (s->kind == kind && strncmp(s->addr, addr, ONVM_ADDR_LEN) == 0)
			return (int)s->nf;
	}
	return -1;
}

static int outside_word;

/* xio_test_forge enqueues one forged entry into NF slot's ring, bypassing
 * every check a sender makes, as a buggy or hostile process could. */
int xio_test_forge(uint32_t slot, int kind, uint32_t conn, uint32_t gen)
{
	struct onvm_view *v = xio_view();
	if (slot >= ONVM_MAX_NF)
		return -EINVAL;
	void *entry;
	struct onvm_msg *m = kind == XIO_FORGE_CTL_DATA ? onvm_ctl_alloc(v) : onvm_msg_alloc(v);
	if (m == NULL)
		return -ENOBUFS;
	m->type = ONVM_MSG_DATA;
	m->conn = conn;
	m->gen = gen;
	m->side = 1;
	m->len = 16;
	entry = m;
	switch (kind) {
	case XIO_FORGE_HUGE_LEN:
		m->len = 0x80000000u;
		break;
	case XIO_FORGE_LONG_LEN:
		m->len = ONVM_MSG_PAYLOAD + 1;
		break;
	case XIO_FORGE_ADDRLEN:
		m->type = ONVM_MSG_DGRAM;
		m->addrlen = 32;
		break;
	case XIO_FORGE_BAD_TYPE:
		m->type = 99;
		break;
	case XIO_FORGE_CTL_DATA:
		m->len = 0;
		break;
	case XIO_FORGE_MISALIGNED:
		entry = (uint8_t *)m + 8;
		break;
	case XIO_FORGE_OUTSIDE:
		entry = &outside_word;
		break;
	case XIO_FORGE_NOT_HANDED:
		break;
	default:
		onvm_msg_free(v, m);
		return -EINVAL;
	}
	if (entry == (void *)m && kind != XIO_FORGE_NOT_HANDED)
		__atomic_store_n(&m->own, ONVM_OWN(ONVM_BUF_INRING, slot, v->self), __ATOMIC_RELEASE);
	else
		onvm_msg_free(v, m); /* the entry points at something not handed over */
	if (rte_ring_enqueue(v->rx[slot], entry) != 0)
		return -ENOBUFS;
	onvm_wake(v, slot);
	return 0;
}

void xio_test_pause_take(int on) { __atomic_store_n(&xio_take_paused, on, __ATOMIC_RELEASE); }

unsigned xio_test_ring_count(void)
{
	struct onvm_view *v = xio_view();
	return rte_ring_count(v->rx[v->self]);
}

/* xio_test_steal dequeues up to n entries of our ring and drops them on the
 * floor, as a poller killed between its dequeue and taking the buffers. */
unsigned xio_test_steal(unsigned n)
{
	struct onvm_view *v = xio_view();
	void *objs[64];
	if (n > 64)
		n = 64;
	return rte_ring_dequeue_burst(v->rx[v->self], objs, n, NULL);
}

int xio_test_free_slot(void)
{
	struct onvm_view *v = xio_view();
	for (int i = ONVM_MAX_NF - 1; i >= 0; i--)
		if (__atomic_load_n(&v->shm->nf[i].state, __ATOMIC_ACQUIRE) == ONVM_NF_FREE)
			return i;
	return -1;
}

/* xio_test_deliver_to delivers a WAKE to slot; the errno of the delivery. */
int xio_test_deliver_to(uint32_t slot)
{
	struct onvm_view *v = xio_view();
	struct onvm_msg *m = onvm_ctl_alloc(v);
	if (m == NULL)
		return -ENOBUFS;
	m->type = ONVM_MSG_WAKE;
	int r = onvm_deliver(v, slot, m, 0);
	if (r != 0)
		onvm_msg_free(v, m);
	return r;
}

/* xio_test_wedge_own_ring moves our ring's producer head by one as an
 * enqueue does first, and never finishes it: what a sender killed inside
 * rte_ring_enqueue leaves behind. */
int xio_test_wedge_own_ring(void)
{
	struct onvm_view *v = xio_view();
	onvm_ring_prod_advance_head(v->rx[v->self]);
	return 0;
}

uint32_t xio_test_quota(void) { return xio_view()->shm->nf_quota; }

/* xio_test_half_deliver does the first half of onvm_deliver to slot (a
 * counted data buffer handed over, delivering[slot] raised) and stops short
 * of the enqueue: a sender killed then leaves an INRING buffer in no ring. */
int xio_test_half_deliver(uint32_t slot)
{
	struct onvm_view *v = xio_view();
	if (slot >= ONVM_MAX_NF)
		return -EINVAL;
	struct onvm_msg *m = onvm_msg_alloc(v);
	if (m == NULL)
		return -ENOBUFS;
	__atomic_add_fetch(&v->delivering[slot], 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&v->shm->nf[slot].queued, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&m->own, ONVM_OWN(ONVM_BUF_INRING, slot, v->self) | ONVM_OWN_COUNTED,
			 __ATOMIC_RELEASE);
	return 0;
}

uint32_t xio_test_queued(uint32_t slot)
{
	return slot < ONVM_MAX_NF ? __atomic_load_n(&xio_view()->shm->nf[slot].queued, __ATOMIC_RELAXED) : 0;
}

static const struct rte_ring *overtaken;

/* overtake_hook plays, once, another sender whose whole delivery to the
 * armed ring (a WAKE, enqueued and published) runs between a wedge check's
 * read of the head and its read of the tail, as when the checking thread
 * is preempted there on a busy machine. */
static void overtake_hook(const struct rte_ring *r)
{
	const struct rte_ring *want = r;
	if (r == NULL || !__atomic_compare_exchange_n(&overtaken, &want, NULL, 0, __ATOMIC_ACQ_REL,
						      __ATOMIC_RELAXED))
		return;
	struct onvm_view *v = xio_view();
	struct onvm_msg *m = onvm_ctl_alloc(v);
	if (m == NULL)
		return;
	m->type = ONVM_MSG_WAKE;
	__atomic_store_n(&m->own, ONVM_OWN(ONVM_BUF_INRING, v->self, v->self), __ATOMIC_RELEASE);
	if (rte_ring_enqueue(v->rx[v->self], m) != 0)
		onvm_msg_free(v, m);
}

void xio_test_arm_overtake(void)
{
	struct onvm_view *v = xio_view();
	xio_test_wedge_check_hook = overtake_hook;
	__atomic_store_n(&overtaken, v->rx[v->self], __ATOMIC_RELEASE);
}

/* xio_test_half_reap leaves NF slot as a manager killed inside its reap
 * would: the record says BEGIN, the slot is DEAD, its bindings are dropped
 * and its conns closed with reset, but none of the RSTs was sent. */
int xio_test_half_reap(uint32_t slot)
{
	struct onvm_view *v = xio_view();
	if (slot >= ONVM_MAX_NF)
		return -EINVAL;
	if (onvm_lock(v) < 0)
		return -EBUSY;
	struct onvm_shm *shm = v->shm;
	struct onvm_nf *dead = &shm->nf[slot];
	shm->reap[slot] = (struct onvm_reap){.phase = ONVM_REAP_BEGIN, .pid = dead->pid};
	__atomic_store_n(&dead->state, ONVM_NF_DEAD, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < ONVM_MAX_SVC; i++) {
		if (shm->svc[i].kind != ONVM_SVC_FREE && shm->svc[i].nf == slot) {
			shm->svc[i].kind = ONVM_SVC_FREE;
			__atomic_add_fetch(&shm->svc[i].gen, 1, __ATOMIC_RELEASE);
		}
	}
	struct onvm_ctl lost;
	for (uint32_t c = 0; c < ONVM_MAX_CONN; c++)
		for (uint32_t s = 0; s < 2; s++)
			if (shm->conn[c].state == ONVM_CONN_OPEN && shm->conn[c].nf[s] == slot &&
			    shm->conn[c].nfgen[s] == dead->gen)
				onvm_conn_close_side(v, c, s, 1, &lost);
	onvm_unlock(v);
	return 0;
}

/* xio_test_leak_as_manager leaves control buffers as the current manager
 * would if killed while sending RSTs: n taken (HELD by its pseudo slot) and
 * one handed to NF slot but never enqueued. Returns how many it took. */
int xio_test_leak_as_manager(uint32_t slot, int n)
{
	struct onvm_view *v = xio_view();
	if (slot >= ONVM_MAX_NF)
		return -EINVAL;
	uint32_t mgr = ONVM_MGR_SELF(__atomic_load_n(&v->shm->manager_epoch, __ATOMIC_ACQUIRE));
	int k = 0;
	for (uint32_t i = 0; i < ONVM_CTL_BUFS && k <= n; i++) {
		struct onvm_msg *m = onvm_ctl_buf(v, i);
		uint32_t o = 0;
		uint32_t w = k < n ? ONVM_OWN(ONVM_BUF_HELD, mgr, mgr) : ONVM_OWN(ONVM_BUF_INRING, slot, mgr);
		if (__atomic_compare_exchange_n(&m->own, &o, w, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			k++;
	}
	return k;
}

static int sleep_park_state;

/* sleep_park_hook holds the poller (once) where it has found its ring
 * empty, has told senders it sleeps, and has not yet waited on the futex:
 * the moment a message that arrives now must not be missed. At most 2 s,
 * so a test that never releases it does not hang the process. */
static void sleep_park_hook(void)
{
	int armed = PARK_ARMED;
	if (!__atomic_compare_exchange_n(&sleep_park_state, &armed, PARK_PARKED, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	for (int i = 0; i < 20000 && __atomic_load_n(&sleep_park_state, __ATOMIC_ACQUIRE) != PARK_RELEASED;
	     i++)
		usleep(100);
	__atomic_store_n(&sleep_park_state, PARK_IDLE, __ATOMIC_RELEASE);
}

void xio_test_arm_sleep_park(void)
{
	__atomic_store_n(&sleep_park_state, PARK_ARMED, __ATOMIC_RELEASE);
	xio_sleep_hook = sleep_park_hook;
}

int xio_test_sleep_parked(void)
{
	return __atomic_load_n(&sleep_park_state, __ATOMIC_ACQUIRE) == PARK_PARKED;
}

void xio_test_release_sleep(void)
{
	int parked = PARK_PARKED;
	__atomic_compare_exchange_n(&sleep_park_state, &parked, PARK_RELEASED, 0, __ATOMIC_ACQ_REL,
				    __ATOMIC_RELAXED);
}

/* xio_test_reaps_pending is how many NF slots wait for the manager to reap
 * them: attached to a process that is gone, marked dead, or with a reap
 * under way. Until it is 0 their buffers still count as in use. */
int xio_test_reaps_pending(void)
{
	struct onvm_shm *shm = xio_view()->shm;
	int n = 0;
	for (uint32_t i = 0; i < ONVM_MAX_NF; i++) {
		uint32_t st = __atomic_load_n(&shm->nf[i].state, __ATOMIC_ACQUIRE);
		int gone = st == ONVM_NF_ACTIVE && !onvm_pid_alive(shm->nf[i].pid);
		if (gone || st == ONVM_NF_DEAD || shm->reap[i].phase != ONVM_REAP_NONE)
			n++;
	}
	return n;
}

void xio_test_run_send_hook(uint32_t c, uint32_t gen, uint32_t side, unsigned chunk)
{
	XIO_SEND_HOOK(c, gen, side, chunk);
}

void xio_test_run_sleep_hook(void) { XIO_SLEEP_HOOK(); }

void xio_test_run_wedge_check_hook(const void *r) { ONVM_WEDGE_CHECK_HOOK((const struct rte_ring *)r); }

/* ---- a ring of the rx rings' kind, for the tests that pin the Go ring
 * (xio/ring.go) to DPDK's: in heap memory, so no memzone is needed and
 * nothing else ever touches it. */

void *xio_test_ring_new(unsigned count)
{
	ssize_t sz = rte_ring_get_memsize(count);
	if (sz < 0)
		return NULL;
	size_t n = ((size_t)sz + RTE_CACHE_LINE_SIZE - 1) & ~(size_t)(RTE_CACHE_LINE_SIZE - 1);
	void *p = aligned_alloc(RTE_CACHE_LINE_SIZE, n);
	if (p == NULL)
		return NULL;
	if (rte_ring_init(p, "xio_test_ring", count, RING_F_MP_RTS_ENQ | RING_F_SC_DEQ) != 0) {
		free(p);
		return NULL;
	}
	/* DPDK's default htd_max is an eighth of the capacity: on a ring as
	 * small as these, a few live producers in flight would pass the
	 * wedge check's half of it. The rx rings (32768) allow 4095. */
	rte_ring_set_prod_htd_max(p, rte_ring_get_capacity(p));
	return p;
}

void xio_test_ring_free(void *r) { free(r); }

long xio_test_ring_memsize(unsigned count) { return (long)rte_ring_get_memsize(count); }

int xio_test_ring_enqueue(void *r, uintptr_t obj) { return rte_ring_enqueue(r, (void *)obj); }

unsigned xio_test_ring_dequeue(void *r, uintptr_t *out, unsigned n)
{
	return rte_ring_dequeue_burst(r, (void **)out, n, NULL);
}

/* The ring's geometry and positions as DPDK's API and onvm_ring.h read
 * them: size, capacity, htd_max, count, prod head, prod tail, cons head,
 * cons tail. */
void xio_test_ring_state(const void *r, uint32_t out[8])
{
	struct onvm_ring_pos p = onvm_ring_prod(r), c = onvm_ring_cons(r);
	out[0] = rte_ring_get_size(r);
	out[1] = rte_ring_get_capacity(r);
	out[2] = rte_ring_get_prod_htd_max(r);
	out[3] = rte_ring_count(r);
	out[4] = p.head;
	out[5] = p.tail;
	out[6] = c.head;
	out[7] = c.tail;
}

/* xio_test_ring_set_pos moves an empty, idle ring's positions to pos, so
 * a test can run its 32-bit counters across their wrap. */
void xio_test_ring_set_pos(void *v, uint32_t pos)
{
	struct rte_ring *r = v;
	union __rte_ring_rts_poscnt pc = {.val = {.cnt = 0, .pos = pos}};
	__atomic_store_n(&r->rts_prod.head.raw, pc.raw, __ATOMIC_RELEASE);
	__atomic_store_n(&r->rts_prod.tail.raw, pc.raw, __ATOMIC_RELEASE);
	__atomic_store_n(&r->cons.head, pos, __ATOMIC_RELEASE);
	__atomic_store_n(&r->cons.tail, pos, __ATOMIC_RELEASE);
}

/* xio_test_ring_enqueue_seq enqueues base, base+step, ... (n objects) in
 * order with DPDK's enqueue, waiting for room: a C producer racing Go's. */
void xio_test_ring_enqueue_seq(void *r, uintptr_t base, uintptr_t step, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		while (rte_ring_enqueue(r, (void *)(base + i * step)) != 0)
			rte_pause();
}
