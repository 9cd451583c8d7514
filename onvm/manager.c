/*
 * manager.c — the onvm NF manager: DPDK primary process that creates the
 * X-IO shared memory (onvm_shm.h) and reclaims what dead NF processes held.
 *
 * It has no polling core: Go calls onvm_scan() a few times a second, which
 * checks every attached NF's pid and cleans up after the dead ones. Set-up
 * and tear-down of connections are done by the NFs themselves under the
 * table lock (one shared-memory transaction, no manager wake-up on the
 * request path); the manager owns the tables, breaks the lock of a process
 * that died holding it, and closes a dead NF's connections with RST.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memzone.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "onvm_manager.h"
#include "onvm_ops.h"

static struct onvm_view mgr;
static int eal_up;

static void set_err(char *err, size_t n, const char *what, int code)
{
	snprintf(err, n, "%s: %s", what, rte_strerror(code));
}

static int create_pool(unsigned nbufs, char *err, size_t n)
{
	/* No per-lcore cache: every buffer is either in the pool's ring or
	 * marked with its owner, so a dead NF's buffers can be found. */
	mgr.pool = rte_mempool_create_empty(ONVM_POOL_MSG, nbufs, ONVM_MSG_SIZE, 0, 0, SOCKET_ID_ANY, 0);
	if (mgr.pool == NULL) {
		set_err(err, n, "create mempool " ONVM_POOL_MSG, rte_errno);
		return -1;
	}
	/* Relaxed tail sync instead of the default MP/MC ring: there, a thread
	 * preempted between moving the head and the tail makes every other
	 * get/put spin until it runs again. With dozens of NF threads on two
	 * shared cores that stalled the whole core for seconds; with RTS the
	 * last thread out publishes the tail and nobody waits on a sleeper. */
	int rc = rte_mempool_set_ops_byname(mgr.pool, "ring_mt_rts", NULL);
	if (rc != 0) {
		set_err(err, n, "mempool ops ring_mt_rts", -rc);
		rte_mempool_free(mgr.pool);
		mgr.pool = NULL;
		return -1;
	}
	int got = rte_mempool_populate_default(mgr.pool);
	if (got < 0) {
		set_err(err, n, "populate mempool " ONVM_POOL_MSG, -got);
		rte_mempool_free(mgr.pool);
		mgr.pool = NULL;
		return -1;
	}
	return 0;
}

static int create_rings(char *err, size_t n)
{
	char name[RTE_RING_NAMESIZE];
	for (unsigned i = 0; i < ONVM_MAX_NF; i++) {
		snprintf(name, sizeof(name), ONVM_RING_RX_FMT, i);
		/* Many senders, one poller. RTS enqueue keeps producers from
		 * waiting on a preempted one's tail update (2 shared cores). */
		mgr.rx[i] = rte_ring_create(name, ONVM_RING_SIZE, SOCKET_ID_ANY,
					    RING_F_MP_RTS_ENQ | RING_F_SC_DEQ);
		if (mgr.rx[i] == NULL) {
			set_err(err, n, "create ring", rte_errno);
			return -1;
		}
	}
	return 0;
}

static int create_shm(char *err, size_t n)
{
	const struct rte_memzone *mz = rte_memzone_reserve(
		ONVM_MZ_SHM, sizeof(struct onvm_shm), SOCKET_ID_ANY, 0);
	if (mz == NULL) {
		set_err(err, n, "reserve memzone " ONVM_MZ_SHM, rte_errno);
		return -1;
	}
	mgr.shm = mz->addr;
	memset(mgr.shm, 0, sizeof(*mgr.shm));
	mgr.shm->version = ONVM_SHM_VERSION;
	mgr.shm->manager_pid = getpid();
	/* Publish the magic last: an NF that sees it sees a ready table. */
	__atomic_store_n(&mgr.shm->magic, ONVM_SHM_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

/* onvm_init brings up EAL as primary and creates the shared objects. The
 * caller restores its thread's CPU affinity afterwards (EAL pins it). */
int onvm_init(int argc, char **argv, unsigned nbufs, char *err, size_t n)
{
	if (onvm_eal_init(argc, argv) < 0) {
		set_err(err, n, "EAL init (primary)", rte_errno);
		return -1;
	}
	eal_up = 1;
	mgr.self = ONVM_MAX_NF;
	if (create_pool(nbufs, err, n) < 0 || create_rings(err, n) < 0 ||
	    create_shm(err, n) < 0)
		return -1;
	return 0;
}

/* pid_alive says whether pid runs. kill(pid, 0) alone also succeeds for a
 * zombie nobody reaped yet, so /proc/<pid>/stat's state is checked too. */
static int pid_alive(int pid)
{
	if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH))
		return 0;
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return 0;
	buf[r] = 0;
	char *p = strrchr(buf, ')');
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/* Control messages the manager owes peers of a dead NF. */
static struct onvm_ctl pending[ONVM_MAX_CONN];

/* close_dead_tables drops nf's bindings and resets its connections (table
 * lock held); it returns how many RSTs to send once the lock is released. */
static unsigned close_dead_tables(uint32_t nf)
{
	struct onvm_shm *shm = mgr.shm;
	uint32_t gen = shm->nf[nf].gen;
	unsigned n = 0;
	for (unsigned i = 0; i < ONVM_MAX_SVC; i++) {
		if (shm->svc[i].kind != ONVM_SVC_FREE && shm->svc[i].nf == nf) {
			shm->svc[i].kind = ONVM_SVC_FREE;
			shm->svc[i].gen++;
		}
	}
	for (unsigned c = 0; c < ONVM_MAX_CONN; c++) {
		struct onvm_conn *cn = &shm->conn[c];
		if (cn->state != ONVM_CONN_OPEN)
			continue;
		for (uint32_t s = 0; s < 2; s++)
			if (cn->nf[s] == nf && cn->nfgen[s] == gen &&
			    onvm_conn_close_side(&mgr, c, s, 1, &pending[n]) && pending[n].dst != nf)
				n++;
	}
	return n;
}

static unsigned drain_ring(uint32_t nf)
{
	void *obj;
	unsigned n = 0;
	while (rte_ring_dequeue(mgr.rx[nf], &obj) == 0) {
		onvm_msg_free(&mgr, obj);
		n++;
	}
	return n;
}

struct reclaim_arg {
	uint32_t nf;
	unsigned freed;
};

static void reclaim_held(struct rte_mempool *mp, void *opaque, void *obj, unsigned idx)
{
	(void)mp;
	(void)idx;
	struct reclaim_arg *a = opaque;
	struct onvm_msg *m = obj;
	if (m->state == ONVM_BUF_HELD && m->owner == a->nf) {
		onvm_msg_free(&mgr, m);
		a->freed++;
	}
}

/* reap cleans up after dead NF slot nf and frees the slot. */
static void reap(uint32_t nf)
{
	struct onvm_shm *shm = mgr.shm;
	uint32_t lk = __atomic_load_n(&shm->lock, __ATOMIC_ACQUIRE);
	if (lk == nf + 1) /* it died holding the lock */
		__atomic_compare_exchange_n(&shm->lock, &lk, 0, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED);
	onvm_lock(shm, ONVM_LOCK_MANAGER);
	shm->nf[nf].state = ONVM_NF_DEAD;
	unsigned resets = close_dead_tables(nf);
	onvm_unlock(shm);
	for (unsigned i = 0; i < resets; i++)
		onvm_send_ctl_msg(&mgr, &pending[i]);

	struct reclaim_arg a = {.nf = nf};
	a.freed = drain_ring(nf);
	rte_mempool_obj_iter(mgr.pool, reclaim_held, &a);
	a.freed += drain_ring(nf); /* a sender that raced the first drain */

	onvm_lock(shm, ONVM_LOCK_MANAGER);
	shm->nf[nf].state = ONVM_NF_FREE;
	shm->nf[nf].pid = 0;
	shm->reclaimed_bufs += a.freed;
	shm->reaped_nfs++;
	onvm_unlock(shm);
}

/* onvm_scan reaps every attached NF whose process is gone; returns how many. */
int onvm_scan(void)
{
	int n = 0;
	for (uint32_t i = 0; i < ONVM_MAX_NF; i++) {
		struct onvm_nf *nf = &mgr.shm->nf[i];
		if (__atomic_load_n(&nf->state, __ATOMIC_ACQUIRE) != ONVM_NF_ACTIVE)
			continue;
		if (!pid_alive(nf->pid)) {
			reap(i);
			n++;
		}
	}
	return n;
}

void onvm_stats(struct onvm_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (mgr.shm == NULL)
		return;
	st->pool_size = mgr.pool->size;
	st->pool_in_use = rte_mempool_in_use_count(mgr.pool);
	st->reclaimed_bufs = mgr.shm->reclaimed_bufs;
	st->reaped_nfs = mgr.shm->reaped_nfs;
	for (unsigned i = 0; i < ONVM_MAX_NF; i++)
		st->nfs += mgr.shm->nf[i].state == ONVM_NF_ACTIVE;
	for (unsigned i = 0; i < ONVM_MAX_CONN; i++)
		st->conns += mgr.shm->conn[i].state == ONVM_CONN_OPEN;
	for (unsigned i = 0; i < ONVM_MAX_SVC; i++)
		st->services += mgr.shm->svc[i].kind != ONVM_SVC_FREE;
}

/* onvm_stop marks the tables gone so NFs that look stop using them, and
 * releases EAL. */
void onvm_stop(void)
{
	if (mgr.shm != NULL)
		__atomic_store_n(&mgr.shm->magic, 0, __ATOMIC_RELEASE);
	if (eal_up)
		rte_eal_cleanup();
	eal_up = 0;
	mgr.shm = NULL;
}
