/*
 * stack.c — the NF side of X-IO: a DPDK secondary process that moves message
 * buffers (onvm_shm.h) between NF processes through their rx rings.
 *
 * Streams: a connection is a slot in the shared conn table; each direction has
 * a byte window (ONVM_CONN_WINDOW) so a sender whose peer does not read
 * blocks instead of filling the pool. Datagrams go to a bound packet service
 * and have a window per socket (ONVM_DGRAM_WINDOW). Every destination NF has
 * a quota of queued buffers, so one that stalls cannot take the whole pool.
 * One Go poller per process drains this NF's rx ring while traffic flows,
 * then sleeps on its doorbell (here, xio_sleep on the futex, or parked in
 * Go's netpoller on an eventfd); a goroutine waiting for a reply may drain
 * it instead while the poller sleeps (xio/reply.go).
 *
 * What is done per request (taking from the ring, taking a buffer, sending
 * a stream's bytes or a datagram, delivering and waking, the window
 * counters) the Go side
 * does itself on the shared memory, by the same protocol (xio/shmops.go,
 * xio/ring.go): a cgo call on that path wakes Go's sysmon (xio/doorbell.go).
 * This file keeps set-up, the tables under the lock, closing and the
 * futex sleep.
 *
 * Everything read from shared memory was written by another process, which
 * may have been buggy, killed half-way, or hostile: ring entries are checked
 * to be buffers handed to us before we touch them, descriptors are checked
 * before the Go side reads them, and table indices are bounds-checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memzone.h>
#include <rte_ring.h>

#include "onvm_ops.h"
#include "stack.h"
#include "testhooks.h"

static struct onvm_view nf;
static uint32_t conn_hint;
static uint64_t sleep_timeouts; /* futex sleeps that ran out their time */

/* xio_primary_running says whether a DPDK primary holds its config file lock,
 * so a missing manager is reported without a failed rte_eal_init (which
 * cannot be retried in the same process). */
int xio_primary_running(const char *config_path) { return onvm_primary_running(config_path); }

/* take_slot claims a free NF slot for this process. The lock word is our
 * pid, so if we are killed in here anyone can tell and break it. */
static int take_slot(char *err, size_t n)
{
	struct onvm_shm *shm = nf.shm;
	if (onvm_lock(&nf) < 0) {
		snprintf(err, n, "table lock held by live pid %u for %u ms", shm->lock,
			 nf.lock_timeout_ms);
		return -1;
	}
	for (uint32_t i = 0; i < ONVM_MAX_NF; i++) {
		struct onvm_nf *s = &shm->nf[i];
		if (s->state != ONVM_NF_FREE)
			continue;
		__atomic_store_n(&s->efd, -1, __ATOMIC_RELAXED); /* before gen: see onvm_efd_fetch */
		s->pid = (int32_t)nf.pid;
		__atomic_add_fetch(&s->gen, 1, __ATOMIC_RELEASE);
		s->sleeping = 0;
		/* Before ACTIVE: senders count only once they see us active. */
		__atomic_store_n(&s->queued, 0, __ATOMIC_RELAXED);
		for (uint32_t d = 0; d < ONVM_MAX_NF; d++)
			__atomic_store_n(&s->delivering[d], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->state, ONVM_NF_ACTIVE, __ATOMIC_RELEASE);
		nf.self = i;
		nf.delivering = s->delivering;
		onvm_unlock(&nf);
		return 0;
	}
	onvm_unlock(&nf);
	snprintf(err, n, "all %d NF slots are taken", ONVM_MAX_NF);
	return -1;
}

int xio_attach(int argc, char **argv, char *err, size_t n)
{
	if (onvm_eal_init(argc, argv) < 0) {
		snprintf(err, n, "EAL init (secondary): %s", rte_strerror(rte_errno));
		return -1;
	}
	nf.pid = (uint32_t)getpid();
	nf.lock_timeout_ms = ONVM_LOCK_TIMEOUT_MS;
	nf.self = ONVM_MAX_NF;
	/* What a previous holder of the slot left in its ring the manager
	 * drained when it reaped it; the Go side drains it once more before
	 * its poller starts (xio/stack.go newStack). */
	if (onvm_view_lookup(&nf, err, n) < 0 || take_slot(err, n) < 0)
		return -1;
	return 0;
}

uint32_t xio_self(void) { return nf.self; }

/* Buffers taken, data and control; a scan, for tests and statistics. */
uint64_t xio_pool_in_use(void)
{
	return onvm_count_in_use(nf.data, nf.ndata, ONVM_MSG_SIZE) +
	       onvm_count_in_use(nf.ctl, ONVM_CTL_BUFS, ONVM_CTL_SIZE);
}

uint64_t xio_pool_size(void) { return (uint64_t)nf.ndata + ONVM_CTL_BUFS; }

static int find_svc(const char *addr, uint32_t kind)
{
	for (int i = 0; i < ONVM_MAX_SVC; i++) {
		struct onvm_svc *s = &nf.shm->svc[i];
		if (s->kind == kind && strncmp(s->addr, addr, ONVM_ADDR_LEN) == 0)
			return i;
	}
	return -1;
}

/* holder_alive says whether the NF bound to s still runs. Dialing or
 * sending to an NF that died but is not reaped yet must fail as refused
 * at once, and an NF restarted right after a crash must not get
 * EADDRINUSE for its own address until the manager's next liveness scan. */
static int holder_alive(const struct onvm_svc *s)
{
	uint32_t i = s->nf;
	if (i >= ONVM_MAX_NF)
		return 0;
	const struct onvm_nf *h = &nf.shm->nf[i];
	int32_t pid = h->pid;
	if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != ONVM_NF_ACTIVE || pid <= 0)
		return 0; /* kill(0 or -n, 0) would ask about process groups */
	return !(kill(pid, 0) != 0 && errno == ESRCH);
}

int xio_bind(const char *addr, uint32_t kind, uint32_t *svc, uint32_t *gen)
{
	if (strlen(addr) >= ONVM_ADDR_LEN)
		return -ENAMETOOLONG;
	struct onvm_shm *shm = nf.shm;
	if (onvm_lock(&nf) < 0)
		return -EBUSY;
	int r = -ENOSPC;
	int held = find_svc(addr, kind);
	if (held >= 0 && holder_alive(&shm->svc[held])) {
		r = -EADDRINUSE;
		goto out;
	}
	if (held >= 0) { /* its NF died and awaits the manager: take it over */
		shm->svc[held].kind = ONVM_SVC_FREE;
		__atomic_add_fetch(&shm->svc[held].gen, 1, __ATOMIC_RELEASE);
	}
	for (uint32_t i = 0; i < ONVM_MAX_SVC; i++) {
		struct onvm_svc *s = &shm->svc[i];
		if (s->kind != ONVM_SVC_FREE)
			continue;
		memset(s->addr, 0, ONVM_ADDR_LEN);
		memcpy(s->addr, addr, strlen(addr));
		s->nf = nf.self;
		/* A fresh datagram window; stray charges of a previous binding's
		 * senders are absorbed by the signed window check. */
		__atomic_store_n(&s->dg_read, __atomic_load_n(&s->dg_sent, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		__atomic_add_fetch(&s->gen, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&s->kind, kind, __ATOMIC_RELEASE); /* published last */
		*svc = i;
		*gen = s->gen;
		r = 0;
		break;
	}
out:
	onvm_unlock(&nf);
	return r;
}

/* xio_unbind frees our binding. If the lock cannot be had (a live process
 * holds it for seconds) the binding stays until we exit; a later Listen on
 * the address elsewhere then gets EADDRINUSE, which says what is wrong. */
void xio_unbind(uint32_t svc, uint32_t gen)
{
	if (svc >= ONVM_MAX_SVC || onvm_lock(&nf) < 0)
		return;
	struct onvm_svc *s = &nf.shm->svc[svc];
	if (s->gen == gen && s->nf == nf.self) {
		s->kind = ONVM_SVC_FREE;
		__atomic_add_fetch(&s->gen, 1, __ATOMIC_RELEASE);
	}
	onvm_unlock(&nf);
}

int xio_lookup(const char *addr, uint32_t kind, uint32_t *svc, uint32_t *gen)
{
	if (onvm_lock(&nf) < 0)
		return -EBUSY;
	int i = find_svc(addr, kind);
	if (i >= 0 && holder_alive(&nf.shm->svc[i])) {
		*svc = i;
		*gen = nf.shm->svc[i].gen;
	} else {
		i = -1;
	}
	onvm_unlock(&nf);
	return i >= 0 ? 0 : -ECONNREFUSED;
}

/* alloc_conn claims a free conn slot (table lock held). */
static int alloc_conn(void)
{
	for (uint32_t k = 0; k < ONVM_MAX_CONN; k++) {
		uint32_t c = (conn_hint + k) % ONVM_MAX_CONN;
		if (nf.shm->conn[c].state == ONVM_CONN_FREE) {
			conn_hint = c + 1;
			return c;
		}
	}
	return -1;
}

/* open_conn fills conn c (table lock held; peer < ONVM_MAX_NF). The state is
 * written last, so a dialer killed half-way leaves a free slot. */
static void open_conn(uint32_t c, uint32_t peer)
{
	struct onvm_conn *cn = &nf.shm->conn[c];
	__atomic_add_fetch(&cn->gen, 1, __ATOMIC_RELEASE);
	cn->nf[0] = nf.self;
	cn->nf[1] = peer;
	cn->nfgen[0] = nf.shm->nf[nf.self].gen;
	cn->nfgen[1] = nf.shm->nf[peer].gen;
	cn->closed[0] = cn->closed[1] = 0;
	cn->reset = 0;
	cn->sent[0] = cn->sent[1] = cn->acked[0] = cn->acked[1] = 0;
	__atomic_store_n(&cn->state, ONVM_CONN_OPEN, __ATOMIC_RELEASE);
}

/* xio_dial opens a conn to the stream service at addr and sends the SYN.
 * Data may follow at once: the listener's poller registers the conn when it
 * dequeues the SYN, before any later message from the same ring. -EAGAIN:
 * the listener's NF has its quota queued (retry); -ENOBUFS: no buffer. */
int xio_dial(const char *addr, uint32_t *conn, uint32_t *gen)
{
	struct onvm_msg *syn = onvm_msg_alloc(&nf);
	if (syn == NULL)
		return -ENOBUFS;
	struct onvm_shm *shm = nf.shm;
	if (onvm_lock(&nf) < 0) {
		onvm_msg_free(&nf, syn);
		return -EBUSY;
	}
	int r;
	int s = find_svc(addr, ONVM_SVC_STREAM);
	uint32_t peer = s < 0 ? ONVM_MAX_NF : shm->svc[s].nf;
	if (s < 0 || peer >= ONVM_MAX_NF || !holder_alive(&shm->svc[s])) {
		r = -ECONNREFUSED;
		goto fail;
	}
	int c = alloc_conn();
	if (c < 0) {
		r = -EMFILE;
		goto fail;
	}
	open_conn(c, peer);
	syn->type = ONVM_MSG_SYN;
	syn->conn = c;
	syn->gen = shm->conn[c].gen;
	syn->svc = s;
	syn->side = 1;
	*conn = c;
	*gen = syn->gen;
	r = onvm_deliver(&nf, peer, syn, 1);
	if (r < 0) {
		__atomic_store_n(&shm->conn[c].state, ONVM_CONN_FREE, __ATOMIC_RELEASE);
		__atomic_add_fetch(&shm->conn[c].gen, 1, __ATOMIC_RELEASE);
		goto fail;
	}
	onvm_unlock(&nf);
	return 0;
fail:
	onvm_unlock(&nf);
	onvm_msg_free(&nf, syn);
	return r == -EINVAL ? -ECONNREFUSED : r;
}

/* conn_of returns conn c if it is still generation gen, else NULL. */
static struct onvm_conn *conn_of(uint32_t c, uint32_t gen)
{
	if (c >= ONVM_MAX_CONN)
		return NULL;
	struct onvm_conn *cn = &nf.shm->conn[c];
	if (__atomic_load_n(&cn->gen, __ATOMIC_ACQUIRE) != gen ||
	    __atomic_load_n(&cn->state, __ATOMIC_ACQUIRE) != ONVM_CONN_OPEN)
		return NULL;
	return cn;
}

/* xio_close closes our side. If the table lock cannot be had (a live
 * process holds it for seconds) the side stays open in the table: the peer
 * learns of it when we exit. */
void xio_close(uint32_t c, uint32_t gen, uint32_t side, int reset)
{
	if (side > 1)
		return;
	struct onvm_ctl ctl;
	int notify = 0;
	/* Already closed (or freed): no lock needed. The poller calls this for
	 * every FIN of a conn it no longer knows. */
	struct onvm_conn *cn = conn_of(c, gen);
	if (cn == NULL || __atomic_load_n(&cn->closed[side], __ATOMIC_ACQUIRE))
		return;
	if (onvm_lock(&nf) < 0)
		return;
	if (conn_of(c, gen) != NULL)
		notify = onvm_conn_close_side(&nf, c, side, reset, &ctl);
	onvm_unlock(&nf);
	if (notify)
		onvm_send_ctl_msg(&nf, &ctl);
}

/* ring_waiting says whether our rx ring holds something to take (while a
 * test pauses taking, nothing counts: the poller then waits as if empty). */
static int ring_waiting(void)
{
	return !XIO_TAKE_PAUSED() && rte_ring_count(nf.rx[nf.self]) > 0;
}

/* xio_sleep waits on the doorbell until a sender rings or sleep_ms pass. It
 * takes nothing: the Go side takes only under its consumer token, which the
 * poller gives up to sleep, so that a goroutine waiting for a reply can take
 * meanwhile. 'sleeping' is published and the bell read before the last ring
 * check (see onvm_ring_bell): a sender that enqueued after that check has
 * changed the bell, so the futex wait returns at once instead of missing it.
 * Returns 1 if the ring was found non-empty before waiting, else 0. */
int xio_sleep(int sleep_ms)
{
	struct onvm_nf *me = &nf.shm->nf[nf.self];
	__atomic_store_n(&me->sleeping, 1, __ATOMIC_SEQ_CST);
	uint32_t v = __atomic_load_n(&me->bell, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	int ready = ring_waiting();
	if (!ready) {
		XIO_SLEEP_HOOK();
		struct timespec ts = {.tv_sec = sleep_ms / 1000, .tv_nsec = (sleep_ms % 1000) * 1000000L};
		if (syscall(SYS_futex, &me->bell, FUTEX_WAIT, v, &ts, NULL, 0) < 0 && errno == ETIMEDOUT)
			__atomic_add_fetch(&sleep_timeouts, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&me->sleeping, 0, __ATOMIC_RELEASE);
	return ready;
}

/* xio_doorbell_eventfd makes fd (a non-blocking eventfd the Go side parks
 * on) our doorbell: published in our slot for senders to copy with
 * pidfd_getfd. It first copies it once itself, so a kernel without pidfd
 * (< 5.6) or a sandbox that forbids it is found here, and the caller keeps
 * the futex, instead of every wake-up being lost to the sleep's bound.
 * Call before the poller first sleeps. 0 or a negative errno. */
int xio_doorbell_eventfd(int fd)
{
	int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (pfd < 0)
		return -errno;
	int got = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	int err = errno;
	close(pfd);
	if (got < 0)
		return -err;
	close(got);
	__atomic_store_n(&nf.shm->nf[nf.self].efd, fd, __ATOMIC_RELEASE);
	return 0;
}

/* xio_sleep_timeouts is how many doorbell sleeps ran out their time: a
 * message served only after one would be a lost wake-up. */
uint64_t xio_sleep_timeouts(void) { return __atomic_load_n(&sleep_timeouts, __ATOMIC_RELAXED); }

/* xio_nf_view is this process's view of the shared memory, which the Go
 * side reads once at attach for the operations it performs itself on it
 * (xio/shmview.go). */
struct onvm_view *xio_nf_view(void) { return &nf; }

/* xio_rx_ring is NF slot i's rx ring (set-up, for xio/ring.go). */
void *xio_rx_ring(uint32_t i) { return i < ONVM_MAX_NF ? nf.rx[i] : NULL; }

/* xio_efd_fetch copies NF dst's eventfd doorbell for attach generation
 * gen (onvm_efd_fetch): once per peer attach, off the per-request path. */
int xio_efd_fetch(uint32_t dst, uint32_t gen)
{
	return dst < ONVM_MAX_NF ? onvm_efd_fetch(&nf, dst, gen) : -1;
}

#ifdef L25GC_TESTHOOKS
/* What testhooks.c needs of this file's state; test builds only. */
struct onvm_view *xio_view(void) { return &nf; }

void xio_set_conn_hint(uint32_t c) { conn_hint = c; }
#endif
