/*
 * manager.c — the onvm NF manager: DPDK primary process that creates the
 * X-IO shared memory (onvm_shm.h) and reclaims what dead NF processes held.
 *
 * It has no polling core: Go calls onvm_scan() a few times a second, which
 * checks every attached NF's pid and cleans up after the dead ones. Set-up
 * and tear-down of connections are done by the NFs themselves under the
 * table lock (one shared-memory transaction, no manager wake-up on the
 * request path); the manager owns the tables, breaks the lock of a process
 * that died holding it, closes a dead NF's connections with RST, and takes
 * back its buffers (see the buffer life in onvm_ops.h). A watchdog turns a
 * ring wedged by a process killed mid-enqueue into an exit, so the node
 * restarts X-IO instead of hanging.
 *
 * Three ways to run (onvm.go): create the shared memory and manage it (one
 * process, tests); create it and only hold it (the node's long-lived
 * primary, onvm_init with manage 0); or adopt it as a DPDK secondary and
 * manage it (the node's manager, onvm_adopt). NFs never wait for the
 * manager, so while it is down they keep working; only deaths go unreaped
 * until a new manager adopts the tables. Everything a reap in progress
 * needs lives in shared memory (onvm_shm.h struct onvm_reap), so the new
 * manager finishes what its predecessor began.
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
#include <rte_ring.h>

#include "onvm_manager.h"
#include "onvm_ops.h"

static struct onvm_view mgr;
static uint32_t mgr_delivering[ONVM_MAX_NF]; /* the manager's own RST deliveries */
static int eal_up;
static int adopted; /* a secondary: the primary holds the memory */

static void set_err(char *err, size_t n, const char *what, int code)
{
	snprintf(err, n, "%s: %s", what, rte_strerror(code));
}

/* create_bufs reserves the buffers (all FREE: own word 0). */
static int create_bufs(unsigned nbufs, char *err, size_t n)
{
	size_t len = (size_t)nbufs * ONVM_MSG_SIZE + (size_t)ONVM_CTL_BUFS * ONVM_CTL_SIZE;
	const struct rte_memzone *mz =
		rte_memzone_reserve_aligned(ONVM_MZ_BUFS, len, SOCKET_ID_ANY, 0, ONVM_MSG_SIZE);
	if (mz == NULL) {
		set_err(err, n, "reserve memzone " ONVM_MZ_BUFS, rte_errno);
		return -1;
	}
	memset(mz->addr, 0, len);
	mgr.data = mz->addr;
	mgr.ndata = nbufs;
	mgr.ctl = mgr.data + (size_t)nbufs * ONVM_MSG_SIZE;
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

/* quota_for gives each NF an eighth of the data buffers: one stalled NF
 * (the usual failure: a hung process whose peers keep writing) then holds
 * at most 1/8 of the pool, 32 full conn windows by default, and it takes
 * several stalled at once to starve the rest. A busy but live NF drains its
 * ring within microseconds, far from the quota. */
static uint32_t quota_for(unsigned nbufs)
{
	uint32_t q = nbufs / 8;
	if (q < ONVM_CONN_WINDOW / ONVM_MSG_PAYLOAD + 1)
		q = ONVM_CONN_WINDOW / ONVM_MSG_PAYLOAD + 1;
	return q > ONVM_QUOTA_MAX ? ONVM_QUOTA_MAX : q;
}

static int create_shm(unsigned nbufs, int manage, char *err, size_t n)
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
	/* A primary that only holds the memory is no manager: one may adopt. */
	mgr.shm->manager_pid = manage ? getpid() : 0;
	mgr.shm->nbufs = nbufs;
	mgr.shm->nf_quota = quota_for(nbufs);
	/* Publish the magic last: an NF that sees it sees a ready table. */
	__atomic_store_n(&mgr.shm->magic, ONVM_SHM_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

/* onvm_init brings up EAL as primary and creates the shared objects; with
 * manage 0 it only holds them for a manager that adopts them. */
int onvm_init(int argc, char **argv, unsigned nbufs, int manage, char *err, size_t n)
{
	if (onvm_eal_init(argc, argv) < 0) {
		set_err(err, n, "EAL init (primary)", rte_errno);
		return -1;
	}
	eal_up = 1;
	mgr.self = ONVM_MGR_SELF(0);
	mgr.pid = (uint32_t)getpid();
	mgr.delivering = mgr_delivering;
	mgr.lock_timeout_ms = ONVM_LOCK_TIMEOUT_MS;
	if (nbufs == 0 || nbufs > (1u << 20)) {
		snprintf(err, n, "%u buffers: want 1..%u", nbufs, 1u << 20);
		return -1;
	}
	if (create_bufs(nbufs, err, n) < 0 || create_rings(err, n) < 0 ||
	    create_shm(nbufs, manage, err, n) < 0)
		return -1;
	return 0;
}

/* ---- reaping a dead NF ---------------------------------------------------
 *
 * reap_begin (on death): mark the slot DEAD (deliveries to it are refused
 * from then on), drop its bindings, reset its conns and send the RSTs.
 * reap_reclaim (the same scan or a later one): once no live process is in
 * the middle of a delivery to it, drain its ring and free every buffer it
 * held or that was handed to it (HELD/INRING with owner = it). If it died
 * in the middle of a delivery to a live NF d, the buffer it was enqueueing
 * may sit INRING(d, src it) without being in d's ring: reap_orphans frees
 * such buffers once d has consumed everything enqueued before the death.
 * Until then the slot stays DEAD, so no new process can be a src of the
 * same number. Each step that cannot finish now is retried next scan.
 */

static struct onvm_reap *reap_of(uint32_t nf) { return &mgr.shm->reap[nf]; }
static uint64_t last_death_ms; /* for the watchdog */
static int32_t last_death_pid;
static uint32_t last_death_slot;

/* Control messages the manager owes peers of a dead NF. */
static struct onvm_ctl pending[ONVM_MAX_CONN];

/* resend_reset: side s of conn c was reset by a manager that may have died
 * before its RST reached the other side; send it again (a duplicate is
 * dropped by the receiver: its side is closed, or the gen moved on). */
static int resend_reset(const struct onvm_conn *cn, uint32_t c, uint32_t s, struct onvm_ctl *ctl)
{
	uint32_t o = 1 - s;
	if (cn->state != ONVM_CONN_OPEN || !cn->closed[s] || !cn->reset || cn->closed[o] ||
	    cn->nf[o] == cn->nf[s])
		return 0;
	*ctl = (struct onvm_ctl){.dst = cn->nf[o], .conn = c, .gen = cn->gen, .side = o,
				 .type = ONVM_MSG_RST};
	return 1;
}

/* close_dead_tables drops nf's bindings and resets its connections (table
 * lock held); it returns how many RSTs to send once the lock is released.
 * It also frees conns whose two sides are closed but which a closer killed
 * inside its critical section left open. */
static unsigned close_dead_tables(uint32_t nf, int resume)
{
	struct onvm_shm *shm = mgr.shm;
	uint32_t gen = shm->nf[nf].gen;
	unsigned n = 0;
	for (unsigned i = 0; i < ONVM_MAX_SVC; i++) {
		if (shm->svc[i].kind != ONVM_SVC_FREE && shm->svc[i].nf == nf) {
			shm->svc[i].kind = ONVM_SVC_FREE;
			__atomic_add_fetch(&shm->svc[i].gen, 1, __ATOMIC_RELEASE);
		}
	}
	for (unsigned c = 0; c < ONVM_MAX_CONN; c++) {
		struct onvm_conn *cn = &shm->conn[c];
		if (cn->state != ONVM_CONN_OPEN)
			continue;
		for (uint32_t s = 0; s < 2; s++) {
			if (cn->nf[s] != nf || cn->nfgen[s] != gen)
				continue;
			if (onvm_conn_close_side(&mgr, c, s, 1, &pending[n]) && pending[n].dst != nf)
				n++;
			else if (resume && resend_reset(cn, c, s, &pending[n]))
				n++;
		}
		if (cn->state == ONVM_CONN_OPEN && cn->closed[0] && cn->closed[1]) {
			cn->state = ONVM_CONN_FREE;
			__atomic_add_fetch(&cn->gen, 1, __ATOMIC_RELEASE);
		}
	}
	return n;
}

/* reap_begin marks nf DEAD, drops its bindings, resets its conns and sends
 * the RSTs. The record says BEGIN until the RSTs are out: a manager that
 * adopts the tables then runs it again with resume set (every step is
 * idempotent, and RSTs already sent are sent again). */
static int reap_begin(uint32_t nf, int resume)
{
	struct onvm_shm *shm = mgr.shm;
	if (onvm_lock(&mgr) < 0)
		return -1; /* a live process holds it; next scan */
	struct onvm_reap *r = reap_of(nf);
	if (!resume)
		*r = (struct onvm_reap){.phase = ONVM_REAP_BEGIN, .pid = shm->nf[nf].pid};
	/* seq_cst: pairs with the senders' delivering add + state load. */
	__atomic_store_n(&shm->nf[nf].state, ONVM_NF_DEAD, __ATOMIC_SEQ_CST);
	unsigned resets = close_dead_tables(nf, resume);
	onvm_unlock(&mgr);
	last_death_ms = onvm_now_ms();
	last_death_pid = r->pid;
	last_death_slot = nf;
	for (unsigned i = 0; i < resets; i++)
		onvm_send_ctl_msg(&mgr, &pending[i]);
	__atomic_store_n(&r->phase, ONVM_REAP_RECLAIM, __ATOMIC_RELEASE);
	return 0;
}

/* senders_done says whether no live process is inside a delivery to nf. */
static int senders_done(uint32_t nf)
{
	for (uint32_t s = 0; s < ONVM_MAX_NF; s++) {
		if (s == nf || __atomic_load_n(&mgr.shm->nf[s].state, __ATOMIC_SEQ_CST) != ONVM_NF_ACTIVE)
			continue; /* free, or dead: a dead process enqueues nothing more */
		if (__atomic_load_n(&mgr.shm->nf[s].delivering[nf], __ATOMIC_SEQ_CST) != 0)
			return 0;
	}
	return 1;
}

/* free_if takes buffer m back if its word still is o (CAS: the receiver
 * may take an INRING one at the same moment; one of us wins). */
static int free_if(struct onvm_msg *m, uint32_t o)
{
	if (!__atomic_compare_exchange_n(&m->own, &o, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return 0;
	if ((o & ONVM_OWN_COUNTED) && ONVM_OWN_STATE(o) == ONVM_BUF_INRING) {
		uint32_t d = ONVM_OWN_OWNER(o);
		if (d < ONVM_MAX_NF)
			__atomic_sub_fetch(&mgr.shm->nf[d].queued, 1, __ATOMIC_RELAXED);
	}
	return 1;
}

/* drain_ring empties dead nf's ring, freeing what was handed to it. */
static uint64_t drain_ring(uint32_t nf)
{
	struct rte_ring *r = mgr.rx[nf];
	/* A consumer killed mid-dequeue moved the head but not the tail; we
	 * are the only consumer now, so publish its head. What it skipped
	 * is INRING(nf) outside the ring, and the scan frees it. */
	onvm_ring_cons_publish_head(r);
	void *obj;
	uint64_t n = 0;
	while (rte_ring_dequeue(r, &obj) == 0) {
		if (onvm_buf_kind(&mgr, obj) == ONVM_BUF_BAD)
			continue; /* forged: not ours to touch */
		struct onvm_msg *m = obj;
		uint32_t o = __atomic_load_n(&m->own, __ATOMIC_ACQUIRE);
		if (ONVM_OWN_STATE(o) == ONVM_BUF_INRING && ONVM_OWN_OWNER(o) == nf)
			n += free_if(m, o);
	}
	return n;
}

typedef int (*buf_pred)(uint32_t own, uint32_t nf, uint32_t peer);

/* held_by: buffers dead nf held, or that were handed to it. */
static int held_by(uint32_t o, uint32_t nf, uint32_t peer)
{
	(void)peer;
	uint32_t st = ONVM_OWN_STATE(o);
	return (st == ONVM_BUF_HELD || st == ONVM_BUF_INRING) && ONVM_OWN_OWNER(o) == nf;
}

/* orphaned_by: buffers dead nf handed to live peer. */
static int orphaned_by(uint32_t o, uint32_t nf, uint32_t peer)
{
	return ONVM_OWN_STATE(o) == ONVM_BUF_INRING && ONVM_OWN_OWNER(o) == peer &&
	       ONVM_OWN_SRC(o) == nf;
}

static uint64_t free_matching(buf_pred pred, uint32_t nf, uint32_t peer)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < mgr.ndata; i++) {
		struct onvm_msg *m = onvm_data_buf(&mgr, i);
		uint32_t o = __atomic_load_n(&m->own, __ATOMIC_ACQUIRE);
		if (o != 0 && pred(o, nf, peer))
			n += free_if(m, o);
	}
	for (uint32_t i = 0; i < ONVM_CTL_BUFS; i++) {
		struct onvm_msg *m = onvm_ctl_buf(&mgr, i);
		uint32_t o = __atomic_load_n(&m->own, __ATOMIC_ACQUIRE);
		if (o != 0 && pred(o, nf, peer))
			n += free_if(m, o);
	}
	return n;
}

static void reap_reclaim(uint32_t nf)
{
	struct onvm_reap *r = reap_of(nf);
	if (!senders_done(nf))
		return;
	r->freed += drain_ring(nf);
	r->freed += free_matching(held_by, nf, 0);
	/* It may have died between handing a buffer to d and enqueueing it. */
	struct onvm_nf *me = &mgr.shm->nf[nf];
	for (uint32_t d = 0; d < ONVM_MAX_NF; d++) {
		struct onvm_nf *peer = &mgr.shm->nf[d];
		if (d == nf || __atomic_load_n(&me->delivering[d], __ATOMIC_ACQUIRE) == 0 ||
		    __atomic_load_n(&peer->state, __ATOMIC_ACQUIRE) != ONVM_NF_ACTIVE)
			continue; /* a dead d's own reap frees all INRING(d) */
		/* The head, not the tail: an enqueue it finished may be
		 * unpublished while live ones are in flight (RTS). */
		r->orphan_mask |= 1ull << d;
		r->orphan_gen[d] = peer->gen;
		r->orphan_head[d] = onvm_ring_prod_head(mgr.rx[d]);
	}
	r->phase = r->orphan_mask ? ONVM_REAP_ORPHANS : ONVM_REAP_FINISH;
}

static void reap_orphans(uint32_t nf)
{
	struct onvm_reap *r = reap_of(nf);
	for (uint32_t d = 0; d < ONVM_MAX_NF; d++) {
		if (!(r->orphan_mask & (1ull << d)))
			continue;
		struct onvm_nf *peer = &mgr.shm->nf[d];
		if (__atomic_load_n(&peer->state, __ATOMIC_ACQUIRE) == ONVM_NF_ACTIVE &&
		    peer->gen == r->orphan_gen[d]) {
			uint32_t consumed = onvm_ring_cons_tail(mgr.rx[d]);
			if ((int32_t)(consumed - r->orphan_head[d]) < 0)
				continue; /* d has not read up to the death yet */
			r->freed += free_matching(orphaned_by, nf, d);
		}
		r->orphan_mask &= ~(1ull << d);
	}
	if (r->orphan_mask == 0)
		r->phase = ONVM_REAP_FINISH;
}

/* reap_finish frees the slot. The record is closed first, inside the lock:
 * a manager killed here leaves a DEAD slot with no reap in progress, which
 * its successor finishes (adopt_reaps), never a FREE slot with a FINISH
 * record that would free a new NF's slot under it. */
static void reap_finish(uint32_t nf)
{
	struct onvm_shm *shm = mgr.shm;
	if (onvm_lock(&mgr) < 0)
		return;
	struct onvm_nf *me = &shm->nf[nf];
	shm->reclaimed_bufs += reap_of(nf)->freed;
	shm->reaped_nfs++;
	__atomic_store_n(&reap_of(nf)->phase, ONVM_REAP_NONE, __ATOMIC_RELEASE);
	me->pid = 0;
	me->sleeping = 0;
	me->efd = -1;
	__atomic_store_n(&me->queued, 0, __ATOMIC_RELAXED);
	for (uint32_t d = 0; d < ONVM_MAX_NF; d++)
		__atomic_store_n(&me->delivering[d], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&me->state, ONVM_NF_FREE, __ATOMIC_RELEASE);
	onvm_unlock(&mgr);
}

static void reap_step(uint32_t nf)
{
	/* Adopted from a dead manager, and the lock was busy then. */
	if (reap_of(nf)->phase == ONVM_REAP_BEGIN)
		reap_begin(nf, 1);
	if (reap_of(nf)->phase == ONVM_REAP_RECLAIM)
		reap_reclaim(nf);
	if (reap_of(nf)->phase == ONVM_REAP_ORPHANS)
		reap_orphans(nf);
	if (reap_of(nf)->phase == ONVM_REAP_FINISH)
		reap_finish(nf);
}

/* ---- adopting the tables from a manager that died ----------------------
 *
 * The NFs went on without a manager; what the dead one left undone is in
 * shared memory: reaps in progress (their records), control buffers it had
 * taken (HELD by its pseudo slot) or was delivering (INRING(d) from its
 * pseudo slot, maybe outside d's ring), and maybe the table lock. The new
 * manager takes a pseudo slot of its own (ONVM_MGR_SELF of the next epoch)
 * so it can tell those buffers from its own.
 */

/* Control buffers a dead manager may have left half-delivered to live NFs:
 * freed once each such NF has consumed past its ring's producer head at
 * the adoption (like reap_orphans, for the manager). */
static struct {
	uint64_t mask;
	uint32_t gen[ONVM_MAX_NF];
	uint32_t head[ONVM_MAX_NF];
} old_mgr;

static int held_by_old_mgr(uint32_t o, uint32_t self, uint32_t peer)
{
	(void)peer;
	uint32_t owner = ONVM_OWN_OWNER(o);
	return ONVM_OWN_STATE(o) == ONVM_BUF_HELD && ONVM_IS_MGR_SELF(owner) && owner != self;
}

static int sent_by_old_mgr(uint32_t o, uint32_t self, uint32_t peer)
{
	uint32_t src = ONVM_OWN_SRC(o);
	return ONVM_OWN_STATE(o) == ONVM_BUF_INRING && ONVM_OWN_OWNER(o) == peer &&
	       ONVM_IS_MGR_SELF(src) && src != self;
}

static void old_mgr_orphans_begin(void)
{
	for (uint32_t d = 0; d < ONVM_MAX_NF; d++) {
		struct onvm_nf *peer = &mgr.shm->nf[d];
		if (__atomic_load_n(&peer->state, __ATOMIC_ACQUIRE) != ONVM_NF_ACTIVE)
			continue; /* a dead d's reap frees all INRING(d) */
		old_mgr.mask |= 1ull << d;
		old_mgr.gen[d] = peer->gen;
		old_mgr.head[d] = onvm_ring_prod_head(mgr.rx[d]);
	}
}

static void old_mgr_orphans_step(void)
{
	for (uint32_t d = 0; d < ONVM_MAX_NF && old_mgr.mask != 0; d++) {
		if (!(old_mgr.mask & (1ull << d)))
			continue;
		struct onvm_nf *peer = &mgr.shm->nf[d];
		if (__atomic_load_n(&peer->state, __ATOMIC_ACQUIRE) == ONVM_NF_ACTIVE &&
		    peer->gen == old_mgr.gen[d]) {
			if ((int32_t)(onvm_ring_cons_tail(mgr.rx[d]) - old_mgr.head[d]) < 0)
				continue;
			mgr.shm->reclaimed_bufs += free_matching(sent_by_old_mgr, mgr.self, d);
		}
		old_mgr.mask &= ~(1ull << d);
	}
}

/* adopt_reaps picks up every reap the dead manager left unfinished. */
static void adopt_reaps(void)
{
	for (uint32_t i = 0; i < ONVM_MAX_NF; i++) {
		struct onvm_nf *nf = &mgr.shm->nf[i];
		struct onvm_reap *r = reap_of(i);
		uint32_t st = __atomic_load_n(&nf->state, __ATOMIC_ACQUIRE);
		switch (r->phase) {
		case ONVM_REAP_NONE:
			if (st == ONVM_NF_DEAD) /* killed inside reap_finish */
				r->phase = ONVM_REAP_FINISH;
			break;
		case ONVM_REAP_BEGIN:
			/* Killed before (ACTIVE) or after marking it DEAD. */
			if (st == ONVM_NF_DEAD || (st == ONVM_NF_ACTIVE && nf->pid == r->pid))
				reap_begin(i, 1);
			else
				r->phase = ONVM_REAP_NONE;
			break;
		}
	}
}

/* take_over makes this process the manager, unless a live one is. */
static int take_over(char *err, size_t n)
{
	struct onvm_shm *shm = mgr.shm;
	if (onvm_lock(&mgr) < 0) {
		snprintf(err, n, "table lock held by live pid %u", shm->lock);
		return -1;
	}
	int32_t prev = shm->manager_pid;
	if (prev != 0 && prev != (int32_t)mgr.pid && onvm_pid_alive(prev)) {
		onvm_unlock(&mgr);
		snprintf(err, n, "another onvm manager (pid %d) manages this shared memory", prev);
		return -1;
	}
	shm->manager_epoch++;
	shm->manager_pid = (int32_t)mgr.pid;
	mgr.self = ONVM_MGR_SELF(shm->manager_epoch);
	onvm_unlock(&mgr);
	/* The predecessor may have died inside an enqueue: the watchdog
	 * counts its death like an NF's. */
	last_death_ms = onvm_now_ms();
	last_death_pid = prev;
	last_death_slot = ONVM_MAX_NF;
	return 0;
}

/* onvm_adopt attaches as a DPDK secondary to the shared memory a primary
 * holds and takes over the manager's duties, finishing what a manager that
 * died left undone. */
int onvm_adopt(int argc, char **argv, char *err, size_t n)
{
	if (onvm_eal_init(argc, argv) < 0) {
		set_err(err, n, "EAL init (secondary)", rte_errno);
		return -1;
	}
	eal_up = 1;
	adopted = 1;
	mgr.pid = (uint32_t)getpid();
	mgr.delivering = mgr_delivering;
	mgr.lock_timeout_ms = ONVM_LOCK_TIMEOUT_MS;
	mgr.self = ONVM_MAX_NF;
	if (onvm_view_lookup(&mgr, err, n) < 0 || take_over(err, n) < 0) {
		mgr.shm = NULL;
		return -1;
	}
	mgr.shm->reclaimed_bufs += free_matching(held_by_old_mgr, mgr.self, 0);
	old_mgr_orphans_begin();
	adopt_reaps();
	return 0;
}

/* ---- watchdog --------------------------------------------------------- */

/* A ring side whose tail has not moved while its head is ahead. */
struct stall {
	int on;
	uint32_t tail;
	uint64_t since;
	int warned;
};

static struct stall prod_stall[ONVM_MAX_NF], cons_stall[ONVM_MAX_NF];

#define WEDGE_MS 200        /* a tail frozen this long behind its head... */
#define WEDGE_DEATH_MS 1000 /* ...with a process death since shortly before */
#define STALL_WARN_MS 5000

/* stalled tracks one ring side; 1 if it is wedged by a dead process. */
static int stalled(struct stall *s, uint32_t head, uint32_t tail, uint64_t now)
{
	if (head == tail) {
		s->on = 0;
		return 0;
	}
	if (!s->on || tail != s->tail) {
		*s = (struct stall){.on = 1, .tail = tail, .since = now};
		return 0;
	}
	if (now - s->since < WEDGE_MS)
		return 0;
	if (last_death_ms != 0 && last_death_ms + WEDGE_DEATH_MS >= s->since)
		return 1;
	return 0;
}

static int wedged_msg(const char *side, uint32_t i, uint32_t head, uint32_t tail,
		      const struct stall *s, uint64_t now, char *err, size_t n)
{
	const struct onvm_nf *owner = &mgr.shm->nf[i];
	char whose[64] = "now free";
	if (__atomic_load_n(&owner->state, __ATOMIC_ACQUIRE) == ONVM_NF_ACTIVE)
		snprintf(whose, sizeof(whose), "pid %d", owner->pid);
	snprintf(err, n,
		 "ring " ONVM_RING_RX_FMT " (rx of NF slot %u, %s) is wedged: %s head %u, "
		 "tail %u, tail frozen for %llu ms since NF pid %d (slot %u) died; a process "
		 "killed inside a ring operation cannot be undone from outside, so the "
		 "manager exits and X-IO must be restarted with its NFs",
		 i, i, whose, side, head, tail, (unsigned long long)(now - s->since),
		 last_death_pid, last_death_slot);
	return -1;
}

static void warn_stall(struct stall *s, const char *side, uint32_t i, uint64_t now)
{
	if (!s->on || s->warned || now - s->since < STALL_WARN_MS)
		return;
	s->warned = 1;
	fprintf(stderr,
		"onvm: ring " ONVM_RING_RX_FMT " %s stalled for %llu ms with no process death: "
		"a process stopped (SIGSTOP, debugger) inside a ring operation?\n",
		i, side, (unsigned long long)(now - s->since));
}

/* watchdog checks every rx ring's producer (RTS) and consumer (single)
 * side; -1 with err set when one is wedged by a process that died. */
static int watchdog(uint64_t now, char *err, size_t n)
{
	for (uint32_t i = 0; i < ONVM_MAX_NF; i++) {
		struct rte_ring *r = mgr.rx[i];
		struct onvm_ring_pos p = onvm_ring_prod(r);
		if (stalled(&prod_stall[i], p.head, p.tail, now))
			return wedged_msg("producer", i, p.head, p.tail, &prod_stall[i], now, err, n);
		warn_stall(&prod_stall[i], "producer", i, now);
		/* A dead NF's consumer side belongs to its reap, which may wait. */
		if (__atomic_load_n(&mgr.shm->nf[i].state, __ATOMIC_ACQUIRE) != ONVM_NF_ACTIVE) {
			cons_stall[i].on = 0;
			continue;
		}
		struct onvm_ring_pos c = onvm_ring_cons(r);
		if (stalled(&cons_stall[i], c.head, c.tail, now))
			return wedged_msg("consumer", i, c.head, c.tail, &cons_stall[i], now, err, n);
		warn_stall(&cons_stall[i], "consumer", i, now);
	}
	return 0;
}

/* onvm_scan breaks the lock of a dead holder, reaps every attached NF whose
 * process is gone and advances unfinished reaps; then the watchdog. It
 * returns how many NFs it found dead, or -1 with err set when X-IO cannot
 * go on. */
int onvm_scan(char *err, size_t n)
{
	struct onvm_shm *shm = mgr.shm;
	int dead = 0;
	/* A process killed while attaching holds no slot, only the lock. */
	if (onvm_break_dead_lock(shm))
		last_death_ms = onvm_now_ms();
	for (uint32_t i = 0; i < ONVM_MAX_NF; i++) {
		struct onvm_nf *nf = &shm->nf[i];
		uint32_t st = __atomic_load_n(&nf->state, __ATOMIC_ACQUIRE);
		if (st == ONVM_NF_ACTIVE && !onvm_pid_alive(nf->pid) && reap_begin(i, 0) == 0)
			dead++;
		if (reap_of(i)->phase != ONVM_REAP_NONE)
			reap_step(i);
	}
	old_mgr_orphans_step();
	return watchdog(onvm_now_ms(), err, n) < 0 ? -1 : dead;
}

void onvm_stats(struct onvm_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (mgr.shm == NULL)
		return;
	st->pool_size = mgr.ndata;
	st->pool_in_use = onvm_count_in_use(mgr.data, mgr.ndata, ONVM_MSG_SIZE);
	st->ctl_in_use = onvm_count_in_use(mgr.ctl, ONVM_CTL_BUFS, ONVM_CTL_SIZE);
	st->reclaimed_bufs = mgr.shm->reclaimed_bufs;
	st->reaped_nfs = mgr.shm->reaped_nfs;
	st->nf_quota = mgr.shm->nf_quota;
	st->manager_epoch = mgr.shm->manager_epoch;
	for (unsigned i = 0; i < ONVM_MAX_NF; i++) {
		st->nfs += mgr.shm->nf[i].state == ONVM_NF_ACTIVE;
		st->bad_msgs += mgr.shm->nf[i].rx_bad;
	}
	for (unsigned i = 0; i < ONVM_MAX_CONN; i++)
		st->conns += mgr.shm->conn[i].state == ONVM_CONN_OPEN;
	for (unsigned i = 0; i < ONVM_MAX_SVC; i++)
		st->services += mgr.shm->svc[i].kind != ONVM_SVC_FREE;
}

/* onvm_stop marks the tables gone so NFs that look stop using them, and
 * releases EAL. A manager that adopted them leaves them to their holder
 * (the primary): it may be stopped and started again under running NFs. */
void onvm_stop(void)
{
	if (mgr.shm != NULL && !adopted)
		__atomic_store_n(&mgr.shm->magic, 0, __ATOMIC_RELEASE);
	if (mgr.shm != NULL && adopted) {
		int32_t me = (int32_t)mgr.pid;
		__atomic_compare_exchange_n(&mgr.shm->manager_pid, &me, 0, 0, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
	}
	if (eal_up)
		rte_eal_cleanup();
	eal_up = 0;
	mgr.shm = NULL;
}
