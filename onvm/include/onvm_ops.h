/*
 * onvm_ops.h — the few operations on the shared tables that both the manager
 * (package onvm) and the NF stack (package xio) perform, so both follow one
 * protocol: the table lock, buffer ownership, delivery with the doorbell, and
 * closing one side of a connection. Names live in onvm_shm.h.
 */
#ifndef ONVM_OPS_H
#define ONVM_OPS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "onvm_shm.h"

/* The shared objects as one process sees them. */
struct onvm_view {
	struct onvm_shm *shm;
	struct rte_mempool *pool;
	struct rte_ring *rx[ONVM_MAX_NF];
	uint32_t self; /* this process's NF slot, or ONVM_MAX_NF for the manager */
};

/* onvm_lock takes the table lock for owner (slot+1). Critical sections are a
 * few table scans, so yielding while waiting is enough. */
static inline void onvm_lock(struct onvm_shm *shm, uint32_t owner)
{
	uint32_t free_word = 0;
	while (!__atomic_compare_exchange_n(&shm->lock, &free_word, owner, 0,
					    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		free_word = 0;
		sched_yield();
	}
}

static inline void onvm_unlock(struct onvm_shm *shm)
{
	__atomic_store_n(&shm->lock, 0, __ATOMIC_RELEASE);
}

static inline struct onvm_msg *onvm_msg_alloc(struct onvm_view *v)
{
	void *obj = NULL;
	if (rte_mempool_get(v->pool, &obj) != 0)
		return NULL;
	struct onvm_msg *m = obj;
	memset(m, 0, sizeof(*m));
	m->state = ONVM_BUF_HELD;
	m->owner = v->self;
	m->src_nf = (uint16_t)v->self;
	return m;
}

static inline void onvm_msg_free(struct onvm_view *v, struct onvm_msg *m)
{
	m->state = ONVM_BUF_FREE;
	rte_mempool_put(v->pool, m);
}

/* onvm_ring_bell wakes NF nf's poller if it sleeps. The fence orders our ring
 * enqueue before reading 'sleeping'; the poller orders its 'sleeping' store
 * before re-checking the ring, so one of the two always sees the other. */
static inline void onvm_ring_bell(struct onvm_nf *nf)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&nf->sleeping, __ATOMIC_ACQUIRE) == 0)
		return;
	__atomic_add_fetch(&nf->bell, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &nf->bell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* onvm_deliver hands m to NF dst. On failure the caller still owns m. */
static inline int onvm_deliver(struct onvm_view *v, uint32_t dst, struct onvm_msg *m)
{
	if (dst >= ONVM_MAX_NF || v->rx[dst] == NULL)
		return -EINVAL;
	m->state = ONVM_BUF_INRING;
	m->owner = dst;
	if (rte_ring_enqueue(v->rx[dst], m) != 0) {
		m->state = ONVM_BUF_HELD;
		m->owner = v->self;
		return -ENOBUFS;
	}
	onvm_ring_bell(&v->shm->nf[dst]);
	return 0;
}

/* onvm_send_ctl sends a payload-less control message (FIN, RST, ...). It
 * retries for a while when the pool is empty or the ring full: control
 * messages should not be lost, and the pool drains as soon as pollers run.
 * Never call it with the table lock held: a full pool would then wait on
 * the manager, which needs the lock to reclaim. */
static inline int onvm_send_ctl(struct onvm_view *v, uint32_t dst, uint16_t type,
				uint32_t conn, uint32_t gen, uint32_t side)
{
	for (int tries = 0; tries < 20000; tries++) {
		struct onvm_msg *m = onvm_msg_alloc(v);
		if (m != NULL) {
			m->type = type;
			m->conn = conn;
			m->gen = gen;
			m->side = side;
			if (onvm_deliver(v, dst, m) == 0)
				return 0;
			onvm_msg_free(v, m);
		}
		if (tries < 100)
			sched_yield();
		else
			usleep(50);
	}
	return -ENOBUFS;
}

/* A control message decided under the table lock, sent after it. */
struct onvm_ctl {
	uint32_t dst, conn, gen, side;
	uint16_t type;
};

/* onvm_conn_close_side closes side s of conn c (table lock held). If the
 * other side is still open it fills *ctl with the FIN (orderly) or RST
 * (reset != 0: s died) to send once the lock is released, and returns 1.
 * The slot is freed when both sides have closed. */
static inline int onvm_conn_close_side(struct onvm_view *v, uint32_t c, uint32_t s, int reset,
				       struct onvm_ctl *ctl)
{
	struct onvm_conn *cn = &v->shm->conn[c];
	if (cn->state != ONVM_CONN_OPEN || cn->closed[s])
		return 0;
	cn->closed[s] = 1;
	if (reset)
		__atomic_store_n(&cn->reset, 1, __ATOMIC_RELEASE);
	uint32_t o = 1 - s;
	int notify = !cn->closed[o];
	if (notify)
		*ctl = (struct onvm_ctl){.dst = cn->nf[o], .conn = c, .gen = cn->gen, .side = o,
					 .type = reset ? ONVM_MSG_RST : ONVM_MSG_FIN};
	if (--cn->refs == 0) {
		cn->state = ONVM_CONN_FREE;
		cn->gen++;
	}
	return notify;
}

static inline void onvm_send_ctl_msg(struct onvm_view *v, const struct onvm_ctl *ctl)
{
	onvm_send_ctl(v, ctl->dst, ctl->type, ctl->conn, ctl->gen, ctl->side);
}

/* onvm_eal_init runs rte_eal_init without leaving the calling thread pinned:
 * EAL pins its main thread to one core, but in a Go process that thread runs
 * any goroutine later, and on a 2-core machine it must be free to move. */
static inline int onvm_eal_init(int argc, char **argv)
{
	cpu_set_t saved;
	int have = sched_getaffinity(0, sizeof(saved), &saved) == 0;
	int r = rte_eal_init(argc, argv);
	if (have)
		sched_setaffinity(0, sizeof(saved), &saved);
	return r;
}

#endif /* ONVM_OPS_H */
