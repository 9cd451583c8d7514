/*
 * onvm_ops.h — the operations on the shared memory that both the manager
 * (package onvm) and the NF stack (package xio) perform, so both follow one
 * protocol: the table lock, buffer ownership, delivery with the doorbell and
 * the per-NF quota, and closing one side of a connection. Names live in
 * onvm_shm.h.
 *
 * Buffer life (the word onvm_msg.own, see ONVM_OWN):
 *
 *   FREE --take (CAS)--> HELD(p) --deliver--> INRING(d, src p) --CAS--> HELD(d)
 *     ^                    |                       |      (d's poller)     |
 *     +------ free --------+          manager: CAS to FREE                 |
 *     +----------------------------------------------------- free ---------+
 *
 * The manager frees HELD(x) and INRING(x) buffers only once NF x is dead,
 * has been marked DEAD (so deliveries to it are refused), and no live
 * process is still inside a delivery to it (nf.delivering); and INRING(d,
 * src x) buffers of a live d only once d has consumed past what x could
 * have enqueued before it died (manager.c). No live owner can race it.
 */
#ifndef ONVM_OPS_H
#define ONVM_OPS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_memzone.h>
#include <rte_ring.h>

#include "onvm_ring.h"
#include "onvm_shm.h"

/* The shared objects as one process sees them. */
struct onvm_view {
	struct onvm_shm *shm;
	uint8_t *data;   /* shm.nbufs data buffers of ONVM_MSG_SIZE */
	uint8_t *ctl;    /* ONVM_CTL_BUFS control buffers of ONVM_CTL_SIZE */
	uint32_t ndata;  /* shm.nbufs as read once at attach */
	struct rte_ring *rx[ONVM_MAX_NF];
	uint32_t self; /* this process's NF slot, or ONVM_MAX_NF for the manager */
	uint32_t pid;  /* this process's table-lock word */
	uint32_t *delivering;  /* this process's in-delivery counters, by destination */
	uint32_t data_next;    /* next-fit cursors of buffer allocation */
	uint32_t ctl_next;
	uint32_t lock_timeout_ms; /* give up on a live lock holder after this */
	/* Our copies of other NFs' eventfd doorbells (onvm_wake): efd[d] is
	 * the fd plus 1 (0: none yet; a zeroed view starts empty), fetched
	 * for NF d's attach generation efd_gen[d]. A slot's fd number never
	 * changes once taken: a newer copy replaces the file under it (dup3),
	 * so a sender that read the number just before still writes an
	 * eventfd, never a file that reused the number. efd_lock serializes
	 * fetching. */
	int32_t efd[ONVM_MAX_NF];
	uint32_t efd_gen[ONVM_MAX_NF];
	uint32_t efd_lock;
};

#define ONVM_LOCK_TIMEOUT_MS 2000
/* A data allocation probes at most this many buffers from its cursor: a
 * nearly empty pool costs a bounded scan per call, and the next call goes on
 * from where this one stopped. */
#define ONVM_ALLOC_PROBES 1024

static inline uint64_t onvm_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* onvm_pid_alive says whether pid runs. kill(pid, 0) alone also succeeds for
 * a zombie nobody reaped yet, so /proc/<pid>/stat's state is checked too.
 * Anything but a clear "gone" counts as alive: calling a live process dead
 * would break its lock or free its buffers. */
static inline int onvm_pid_alive(int pid)
{
	if (pid <= 0)
		return 0;
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return 0;
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT;
	ssize_t r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return 1;
	buf[r] = 0;
	char *p = strrchr(buf, ')');
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/* onvm_break_dead_lock frees the table lock if the process holding it is
 * gone; 1 if it did. The tables stay consistent because every critical
 * section publishes its change with its last store (slot state, svc kind,
 * conn state) and a conn whose sides are both closed is freed by the next
 * reap (manager.c). */
static inline int onvm_break_dead_lock(struct onvm_shm *shm)
{
	uint32_t holder = __atomic_load_n(&shm->lock, __ATOMIC_ACQUIRE);
	if (holder == 0 || onvm_pid_alive((int)holder))
		return 0;
	return __atomic_compare_exchange_n(&shm->lock, &holder, 0, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED);
}

/* onvm_lock takes the table lock; -EBUSY if a live process held it for
 * lock_timeout_ms. Critical sections are a few table scans, so yielding
 * covers a holder that is merely preempted; a long wait checks whether the
 * holder died (then breaks its lock) instead of spinning on it forever.
 * The wait counts from the first failed try, and the yields look at the
 * clock too: on a loaded node each yield can cost a whole time slice, and
 * 200 of them alone once outlasted a 200 ms timeout tenfold. */
static inline int onvm_lock(struct onvm_view *v)
{
	struct onvm_shm *shm = v->shm;
	uint64_t since = 0;
	for (unsigned spins = 0;; spins++) {
		uint32_t free_word = 0;
		if (__atomic_compare_exchange_n(&shm->lock, &free_word, v->pid, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return 0;
		if (spins == 0)
			since = onvm_now_ms();
		if (spins < 200 &&
		    (spins % 32 != 31 || onvm_now_ms() - since < v->lock_timeout_ms)) {
			sched_yield();
			continue;
		}
		if (onvm_break_dead_lock(shm))
			continue;
		if (onvm_now_ms() - since >= v->lock_timeout_ms)
			return -EBUSY;
		usleep(200);
	}
}

static inline void onvm_unlock(struct onvm_view *v)
{
	__atomic_store_n(&v->shm->lock, 0, __ATOMIC_RELEASE);
}

/* Where a pointer from a ring points. */
enum onvm_buf_kind { ONVM_BUF_BAD = 0, ONVM_BUF_DATA = 1, ONVM_BUF_CTL = 2 };

/* onvm_buf_kind checks that p is the start of one of the buffers (ring
 * entries are written by other processes; nothing is touched before this). */
static inline int onvm_buf_kind(const struct onvm_view *v, const void *p)
{
	uintptr_t d = (uintptr_t)p - (uintptr_t)v->data;
	if (d < (uintptr_t)v->ndata * ONVM_MSG_SIZE)
		return (d & (ONVM_MSG_SIZE - 1)) == 0 ? ONVM_BUF_DATA : ONVM_BUF_BAD;
	uintptr_t c = (uintptr_t)p - (uintptr_t)v->ctl;
	if (c < (uintptr_t)ONVM_CTL_BUFS * ONVM_CTL_SIZE)
		return (c & (ONVM_CTL_SIZE - 1)) == 0 ? ONVM_BUF_CTL : ONVM_BUF_BAD;
	return ONVM_BUF_BAD;
}

static inline struct onvm_msg *onvm_data_buf(const struct onvm_view *v, uint32_t i)
{
	return (struct onvm_msg *)(v->data + (size_t)i * ONVM_MSG_SIZE);
}

static inline struct onvm_msg *onvm_ctl_buf(const struct onvm_view *v, uint32_t i)
{
	return (struct onvm_msg *)(v->ctl + (size_t)i * ONVM_CTL_SIZE);
}

/* onvm_count_in_use counts the taken buffers of an array of n buffers of
 * size bytes at base (data or control); a scan, for tests and statistics. */
static inline uint64_t onvm_count_in_use(const uint8_t *base, uint32_t n, size_t size)
{
	uint64_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		k += __atomic_load_n(&((const struct onvm_msg *)(base + (size_t)i * size))->own,
				     __ATOMIC_RELAXED) != 0;
	return k;
}

/* onvm_buf_take claims a free buffer by CAS FREE -> HELD(self), probing at
 * most probes buffers from *cursor. Claiming and marking are one atomic
 * step, so a process killed at any point leaves no buffer unaccounted for. */
static inline struct onvm_msg *onvm_buf_take(struct onvm_view *v, uint8_t *base, uint32_t n,
					     size_t size, uint32_t *cursor, uint32_t probes)
{
	if (n == 0)
		return NULL;
	uint32_t i = __atomic_load_n(cursor, __ATOMIC_RELAXED);
	if (i >= n)
		i = 0;
	if (probes > n)
		probes = n;
	uint32_t mine = ONVM_OWN(ONVM_BUF_HELD, v->self, v->self);
	for (uint32_t k = 0; k < probes; k++) {
		struct onvm_msg *m = (struct onvm_msg *)(base + (size_t)i * size);
		if (++i == n)
			i = 0;
		uint32_t o = __atomic_load_n(&m->own, __ATOMIC_RELAXED);
		/* Acquire: the previous owner's use of the buffer happens before ours. */
		if (o == 0 && __atomic_compare_exchange_n(&m->own, &o, mine, 0, __ATOMIC_ACQUIRE,
							  __ATOMIC_RELAXED)) {
			__atomic_store_n(cursor, i, __ATOMIC_RELAXED);
			memset((uint8_t *)m + sizeof(m->own), 0, sizeof(*m) - sizeof(m->own));
			m->src_nf = (uint16_t)v->self;
			return m;
		}
	}
	__atomic_store_n(cursor, i, __ATOMIC_RELAXED);
	return NULL;
}

/* onvm_msg_alloc takes a data buffer; NULL when none is free. */
static inline struct onvm_msg *onvm_msg_alloc(struct onvm_view *v)
{
	return onvm_buf_take(v, v->data, v->ndata, ONVM_MSG_SIZE, &v->data_next, ONVM_ALLOC_PROBES);
}

/* onvm_ctl_alloc takes a control buffer, looking at all of them: there is
 * one per connection, so one is free unless something leaks. */
static inline struct onvm_msg *onvm_ctl_alloc(struct onvm_view *v)
{
	return onvm_buf_take(v, v->ctl, ONVM_CTL_BUFS, ONVM_CTL_SIZE, &v->ctl_next, ONVM_CTL_BUFS);
}

/* onvm_msg_free gives back a buffer the caller holds (HELD(self)). Release:
 * our last use of it happens before the next owner's CAS. */
static inline void onvm_msg_free(struct onvm_view *v, struct onvm_msg *m)
{
	(void)v;
	__atomic_store_n(&m->own, ONVM_OWN(ONVM_BUF_FREE, 0, 0), __ATOMIC_RELEASE);
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

/* onvm_efd_fetch copies NF dst's eventfd doorbell into this process
 * (pidfd_getfd, Linux 5.6+, which needs ptrace rights over dst: the same
 * user without a Yama restriction, or root) and caches it for attach
 * generation gen. -1 if it cannot: dst gone, no eventfd published, or no
 * right to it. The generation is re-read after the copy: were the slot
 * reused meanwhile, the copy may be the previous holder's, so it is kept
 * under the slot's number but not marked valid. Copies are rare (once per
 * peer attach), so a mutex-free spin on efd_lock is enough. */
static inline int onvm_efd_fetch(struct onvm_view *v, uint32_t dst, uint32_t gen)
{
	struct onvm_nf *d = &v->shm->nf[dst];
	while (__atomic_exchange_n(&v->efd_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	int fd = __atomic_load_n(&v->efd[dst], __ATOMIC_RELAXED) - 1;
	if (fd >= 0 && __atomic_load_n(&v->efd_gen[dst], __ATOMIC_RELAXED) == gen)
		goto out;
	int32_t pid = __atomic_load_n(&d->pid, __ATOMIC_ACQUIRE);
	int32_t rfd = __atomic_load_n(&d->efd, __ATOMIC_ACQUIRE);
	int got = -1;
	if (pid > 0 && rfd >= 0) {
		int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (pfd >= 0) {
			got = (int)syscall(SYS_pidfd_getfd, pfd, rfd, 0); /* O_CLOEXEC */
			close(pfd);
		}
	}
	if (got < 0) {
		fd = -1;
		goto out;
	}
	if (fd < 0) {
		fd = got;
	} else {
		dup3(got, fd, O_CLOEXEC);
		close(got);
	}
	int valid = __atomic_load_n(&d->gen, __ATOMIC_ACQUIRE) == gen;
	__atomic_store_n(&v->efd_gen[dst], valid ? gen : 0, __ATOMIC_RELEASE);
	__atomic_store_n(&v->efd[dst], fd + 1, __ATOMIC_RELEASE);
	if (!valid)
		fd = -1;
out:
	__atomic_store_n(&v->efd_lock, 0, __ATOMIC_RELEASE);
	return fd;
}

/* onvm_efd_ring writes NF dst's eventfd doorbell: 0 if it did. */
static inline int onvm_efd_ring(struct onvm_view *v, uint32_t dst)
{
	uint32_t gen = __atomic_load_n(&v->shm->nf[dst].gen, __ATOMIC_ACQUIRE);
	int fd = __atomic_load_n(&v->efd[dst], __ATOMIC_ACQUIRE) - 1;
	if (fd < 0 || __atomic_load_n(&v->efd_gen[dst], __ATOMIC_ACQUIRE) != gen)
		fd = onvm_efd_fetch(v, dst, gen);
	uint64_t one = 1;
	return fd >= 0 && write(fd, &one, sizeof(one)) == sizeof(one) ? 0 : -1;
}

/* onvm_wake wakes NF dst's poller if it sleeps, the way it sleeps: on its
 * futex, or parked in Go's netpoller on its eventfd. The ordering is
 * onvm_ring_bell's. Should the eventfd not be ours to write, the futex is
 * rung anyway, for a poller that went back to it; one parked on its
 * eventfd then wakes at its sleep's bound (xio/doorbell.go checks at
 * start-up that pidfd_getfd works, so that is a misconfiguration such as
 * NFs run as different users). */
static inline void onvm_wake(struct onvm_view *v, uint32_t dst)
{
	struct onvm_nf *d = &v->shm->nf[dst];
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint32_t how = __atomic_load_n(&d->sleeping, __ATOMIC_ACQUIRE);
	if (how == 0)
		return;
	if (how == ONVM_SLEEP_EVENTFD) {
		/* The first sender to see the poller parked claims the wake-up
		 * by clearing 'sleeping' (as the poller does on waking): one
		 * write wakes it and it drains the whole ring, so later senders
		 * skip the system call (xio/shmops.go wake). */
		if (!__atomic_compare_exchange_n(&d->sleeping, &how, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			return;
		if (onvm_efd_ring(v, dst) == 0)
			return;
	}
	__atomic_add_fetch(&d->bell, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &d->bell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* onvm_deliver hands m (HELD by us) to NF dst. counted data buffers count
 * against dst's quota. On failure the caller still holds m: -ECONNREFUSED
 * dst is not an attached NF (any more), -EAGAIN dst has its quota queued,
 * -ENOTRECOVERABLE dst's ring is wedged, -ESHUTDOWN the manager stopped
 * (its watchdog, or a shutdown: writers fail now instead of waiting for
 * room that will not come before the node restarts them), -ENOBUFS the
 * ring is full, -EINVAL no such slot.
 *
 * delivering[dst] brackets the check that dst is ACTIVE and the enqueue: the
 * manager marks a dead dst DEAD and then waits for every live process's
 * counter to drop to 0 before reclaiming dst's buffers, so a buffer we are
 * about to enqueue is never freed under us, and none lands in a reaped ring
 * (the seq_cst add and load pair with the manager's DEAD store and load). */
static inline int onvm_deliver(struct onvm_view *v, uint32_t dst, struct onvm_msg *m, int counted)
{
	if (dst >= ONVM_MAX_NF || v->rx[dst] == NULL)
		return -EINVAL;
	if (__atomic_load_n(&v->shm->magic, __ATOMIC_RELAXED) != ONVM_SHM_MAGIC)
		return -ESHUTDOWN;
	struct onvm_nf *d = &v->shm->nf[dst];
	uint32_t held = __atomic_load_n(&m->own, __ATOMIC_RELAXED);
	uint32_t own = ONVM_OWN(ONVM_BUF_INRING, dst, v->self);
	int r = 0;
	__atomic_add_fetch(&v->delivering[dst], 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&d->state, __ATOMIC_SEQ_CST) != ONVM_NF_ACTIVE) {
		r = -ECONNREFUSED;
		goto out;
	}
	if (counted) {
		int32_t quota = (int32_t)__atomic_load_n(&v->shm->nf_quota, __ATOMIC_RELAXED);
		if ((int32_t)__atomic_add_fetch(&d->queued, 1, __ATOMIC_RELAXED) > quota) {
			__atomic_sub_fetch(&d->queued, 1, __ATOMIC_RELAXED);
			r = -EAGAIN;
			goto out;
		}
		own |= ONVM_OWN_COUNTED;
	}
	if (onvm_ring_wedged(v->rx[dst])) {
		r = -ENOTRECOVERABLE;
		goto undo;
	}
	/* Hand over before the enqueue: once in the ring, dst may take it. */
	__atomic_store_n(&m->own, own, __ATOMIC_RELEASE);
	if (rte_ring_enqueue(v->rx[dst], m) != 0) {
		__atomic_store_n(&m->own, held, __ATOMIC_RELAXED);
		r = -ENOBUFS;
		goto undo;
	}
	onvm_wake(v, dst);
	goto out;
undo:
	if (counted)
		__atomic_sub_fetch(&d->queued, 1, __ATOMIC_RELAXED);
out:
	__atomic_sub_fetch(&v->delivering[dst], 1, __ATOMIC_RELEASE);
	return r;
}

/* onvm_send_ctl sends a payload-less control message (FIN, RST, WAKE) from
 * the control buffers, which data never uses, so it is not lost to a full
 * pool. It retries briefly only if no control buffer is free (they are
 * sized to never run out); a destination that is gone or wedged ends it.
 * Never call it with the table lock held. */
static inline int onvm_send_ctl(struct onvm_view *v, uint32_t dst, uint16_t type,
				uint32_t conn, uint32_t gen, uint32_t side)
{
	int r = -ENOBUFS;
	for (int tries = 0; tries < 2000; tries++) {
		struct onvm_msg *m = onvm_ctl_alloc(v);
		if (m != NULL) {
			m->type = type;
			m->conn = conn;
			m->gen = gen;
			m->side = side;
			r = onvm_deliver(v, dst, m, 0);
			if (r == 0)
				return 0;
			onvm_msg_free(v, m);
			if (r != -ENOBUFS)
				return r;
		}
		if (tries < 100)
			sched_yield();
		else
			usleep(500);
	}
	return r;
}

/* A control message decided under the table lock, sent after it. */
struct onvm_ctl {
	uint32_t dst, conn, gen, side;
	uint16_t type;
};

/* onvm_conn_close_side closes side s of conn c (table lock held). If the
 * other side is still open it fills *ctl with the FIN (orderly) or RST
 * (reset != 0: s died) to send once the lock is released, and returns 1.
 * The slot is freed when both sides have closed; that is decided from the
 * closed flags alone, so a closer that died half-way leaves a state the
 * other side's close (or the manager) completes. */
static inline int onvm_conn_close_side(struct onvm_view *v, uint32_t c, uint32_t s, int reset,
				       struct onvm_ctl *ctl)
{
	if (c >= ONVM_MAX_CONN || s > 1)
		return 0;
	struct onvm_conn *cn = &v->shm->conn[c];
	if (cn->state != ONVM_CONN_OPEN || cn->closed[s])
		return 0;
	__atomic_store_n(&cn->closed[s], 1, __ATOMIC_RELEASE);
	if (reset)
		__atomic_store_n(&cn->reset, 1, __ATOMIC_RELEASE);
	uint32_t o = 1 - s;
	if (!cn->closed[o]) {
		*ctl = (struct onvm_ctl){.dst = cn->nf[o], .conn = c, .gen = cn->gen, .side = o,
					 .type = reset ? ONVM_MSG_RST : ONVM_MSG_FIN};
		return 1;
	}
	cn->state = ONVM_CONN_FREE;
	__atomic_add_fetch(&cn->gen, 1, __ATOMIC_RELEASE);
	return 0;
}

static inline void onvm_send_ctl_msg(struct onvm_view *v, const struct onvm_ctl *ctl)
{
	onvm_send_ctl(v, ctl->dst, ctl->type, ctl->conn, ctl->gen, ctl->side);
}

/* onvm_primary_running says whether a DPDK primary holds the lock on its
 * config file (EAL's runtime dir of the file prefix): secondaries can map
 * the memory of a dead primary, but nothing would hold it for the next. */
static inline int onvm_primary_running(const char *config_path)
{
	int fd = open(config_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	int r = fcntl(fd, F_GETLK, &lk);
	close(fd);
	return r == 0 && lk.l_type != F_UNLCK;
}

/* onvm_view_lookup finds the shared objects the primary created (onvm_shm.h)
 * and checks them: an NF attaching, or a manager adopting the tables after
 * its predecessor died. -1 with err set when they are missing, not ready,
 * or of another layout. */
static inline int onvm_view_lookup(struct onvm_view *v, char *err, size_t n)
{
	const struct rte_memzone *mz = rte_memzone_lookup(ONVM_MZ_SHM);
	if (mz == NULL) {
		snprintf(err, n, "memzone %s not found (is the primary the onvm manager?)", ONVM_MZ_SHM);
		return -1;
	}
	v->shm = mz->addr;
	if (__atomic_load_n(&v->shm->magic, __ATOMIC_ACQUIRE) != ONVM_SHM_MAGIC ||
	    v->shm->version != ONVM_SHM_VERSION) {
		snprintf(err, n, "memzone %s is not ready or of another version", ONVM_MZ_SHM);
		return -1;
	}
	mz = rte_memzone_lookup(ONVM_MZ_BUFS);
	if (mz == NULL) {
		snprintf(err, n, "memzone %s not found", ONVM_MZ_BUFS);
		return -1;
	}
	uint32_t nbufs = v->shm->nbufs;
	size_t want = (size_t)nbufs * ONVM_MSG_SIZE + (size_t)ONVM_CTL_BUFS * ONVM_CTL_SIZE;
	if (nbufs == 0 || mz->len < want) {
		snprintf(err, n, "memzone %s holds %zu bytes, not %u buffers", ONVM_MZ_BUFS,
			 (size_t)mz->len, nbufs);
		return -1;
	}
	v->data = mz->addr;
	v->ndata = nbufs;
	v->ctl = v->data + (size_t)nbufs * ONVM_MSG_SIZE;
	char name[RTE_RING_NAMESIZE];
	for (unsigned i = 0; i < ONVM_MAX_NF; i++) {
		snprintf(name, sizeof(name), ONVM_RING_RX_FMT, i);
		struct rte_ring *r = rte_ring_lookup(name);
		if (r == NULL) {
			snprintf(err, n, "ring %s not found", name);
			return -1;
		}
		/* The wedge check and the manager's reap read the RTS head/tail. */
		if (!onvm_ring_sync_ok(r)) {
			snprintf(err, n, "ring %s is not MP-RTS/SC (another manager version?)", name);
			return -1;
		}
		v->rx[i] = r;
	}
	return 0;
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
