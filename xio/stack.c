/*
 * stack.c — the NF side of X-IO: a DPDK secondary process that moves message
 * buffers (onvm_shm.h) between NF processes through their rx rings.
 *
 * Streams: a connection is a slot in the shared conn table; each direction has
 * a byte window (ONVM_CONN_WINDOW) so a sender whose peer does not read
 * blocks instead of filling the pool. Datagrams go to a bound packet service.
 * One Go poller per process drains this NF's rx ring (xio_poll_nb while
 * traffic flows, then xio_sleep on the doorbell futex).
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
#include <rte_mempool.h>
#include <rte_ring.h>

#include "onvm_ops.h"
#include "stack.h"

static struct onvm_view nf;
static uint32_t conn_hint;

/* xio_primary_running says whether a DPDK primary holds its config file lock,
 * so a missing manager is reported without a failed rte_eal_init (which
 * cannot be retried in the same process). */
int xio_primary_running(const char *config_path)
{
	int fd = open(config_path, O_RDWR);
	if (fd < 0)
		return 0;
	struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	int r = fcntl(fd, F_GETLK, &lk);
	close(fd);
	return r == 0 && lk.l_type != F_UNLCK;
}

static int lookup_objects(char *err, size_t n)
{
	const struct rte_memzone *mz = rte_memzone_lookup(ONVM_MZ_SHM);
	if (mz == NULL) {
		snprintf(err, n, "memzone %s not found (is the primary the onvm manager?)", ONVM_MZ_SHM);
		return -1;
	}
	nf.shm = mz->addr;
	if (__atomic_load_n(&nf.shm->magic, __ATOMIC_ACQUIRE) != ONVM_SHM_MAGIC ||
	    nf.shm->version != ONVM_SHM_VERSION) {
		snprintf(err, n, "memzone %s is not ready or of another version", ONVM_MZ_SHM);
		return -1;
	}
	nf.pool = rte_mempool_lookup(ONVM_POOL_MSG);
	if (nf.pool == NULL) {
		snprintf(err, n, "mempool %s not found", ONVM_POOL_MSG);
		return -1;
	}
	char name[RTE_RING_NAMESIZE];
	for (unsigned i = 0; i < ONVM_MAX_NF; i++) {
		snprintf(name, sizeof(name), ONVM_RING_RX_FMT, i);
		nf.rx[i] = rte_ring_lookup(name);
		if (nf.rx[i] == NULL) {
			snprintf(err, n, "ring %s not found", name);
			return -1;
		}
	}
	return 0;
}

/* take_slot claims a free NF slot for this process. */
static int take_slot(char *err, size_t n)
{
	struct onvm_shm *shm = nf.shm;
	onvm_lock(shm, ONVM_LOCK_MANAGER + 1);
	for (uint32_t i = 0; i < ONVM_MAX_NF; i++) {
		if (shm->nf[i].state != ONVM_NF_FREE)
			continue;
		shm->nf[i].pid = getpid();
		shm->nf[i].gen++;
		shm->nf[i].sleeping = 0;
		__atomic_store_n(&shm->nf[i].state, ONVM_NF_ACTIVE, __ATOMIC_RELEASE);
		nf.self = i;
		onvm_unlock(shm);
		return 0;
	}
	onvm_unlock(shm);
	snprintf(err, n, "all %d NF slots are taken", ONVM_MAX_NF);
	return -1;
}

/* drain_stale frees what a previous holder of the slot left in its ring. */
static void drain_stale(void)
{
	void *obj;
	while (rte_ring_dequeue(nf.rx[nf.self], &obj) == 0)
		onvm_msg_free(&nf, obj);
}

int xio_attach(int argc, char **argv, char *err, size_t n)
{
	if (onvm_eal_init(argc, argv) < 0) {
		snprintf(err, n, "EAL init (secondary): %s", rte_strerror(rte_errno));
		return -1;
	}
	if (lookup_objects(err, n) < 0 || take_slot(err, n) < 0)
		return -1;
	drain_stale();
	return 0;
}

uint32_t xio_self(void) { return nf.self; }
uint64_t xio_pool_in_use(void) { return rte_mempool_in_use_count(nf.pool); }
uint64_t xio_pool_size(void) { return nf.pool->size; }

/* lock_owner is this NF's table-lock word (slot + 1). */
static uint32_t lock_owner(void) { return nf.self + 1; }

static int find_svc(const char *addr, uint32_t kind)
{
	for (int i = 0; i < ONVM_MAX_SVC; i++) {
		struct onvm_svc *s = &nf.shm->svc[i];
		if (s->kind == kind && strncmp(s->addr, addr, ONVM_ADDR_LEN) == 0)
			return i;
	}
	return -1;
}

/* holder_alive says whether the NF bound to s still runs. An NF restarted
 * right after a crash must not get EADDRINUSE for its own address until the
 * manager's next liveness scan. */
static int holder_alive(const struct onvm_svc *s)
{
	const struct onvm_nf *h = &nf.shm->nf[s->nf];
	if (h->state != ONVM_NF_ACTIVE)
		return 0;
	return !(kill(h->pid, 0) != 0 && errno == ESRCH);
}

int xio_bind(const char *addr, uint32_t kind, uint32_t *svc, uint32_t *gen)
{
	if (strlen(addr) >= ONVM_ADDR_LEN)
		return -ENAMETOOLONG;
	struct onvm_shm *shm = nf.shm;
	onvm_lock(shm, lock_owner());
	int r = -ENOSPC;
	int held = find_svc(addr, kind);
	if (held >= 0 && holder_alive(&shm->svc[held])) {
		r = -EADDRINUSE;
		goto out;
	}
	if (held >= 0) { /* its NF died and awaits the manager: take it over */
		shm->svc[held].kind = ONVM_SVC_FREE;
		shm->svc[held].gen++;
	}
	for (uint32_t i = 0; i < ONVM_MAX_SVC; i++) {
		struct onvm_svc *s = &shm->svc[i];
		if (s->kind != ONVM_SVC_FREE)
			continue;
		strncpy(s->addr, addr, ONVM_ADDR_LEN - 1);
		s->nf = nf.self;
		s->gen++;
		s->kind = kind;
		*svc = i;
		*gen = s->gen;
		r = 0;
		break;
	}
out:
	onvm_unlock(shm);
	return r;
}

void xio_unbind(uint32_t svc, uint32_t gen)
{
	if (svc >= ONVM_MAX_SVC)
		return;
	onvm_lock(nf.shm, lock_owner());
	struct onvm_svc *s = &nf.shm->svc[svc];
	if (s->gen == gen && s->nf == nf.self) {
		s->kind = ONVM_SVC_FREE;
		s->gen++;
	}
	onvm_unlock(nf.shm);
}

int xio_lookup(const char *addr, uint32_t kind, uint32_t *svc, uint32_t *gen)
{
	onvm_lock(nf.shm, lock_owner());
	int i = find_svc(addr, kind);
	if (i >= 0) {
		*svc = i;
		*gen = nf.shm->svc[i].gen;
	}
	onvm_unlock(nf.shm);
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

static void open_conn(uint32_t c, uint32_t peer)
{
	struct onvm_conn *cn = &nf.shm->conn[c];
	cn->gen++;
	cn->nf[0] = nf.self;
	cn->nf[1] = peer;
	cn->nfgen[0] = nf.shm->nf[nf.self].gen;
	cn->nfgen[1] = nf.shm->nf[peer].gen;
	cn->closed[0] = cn->closed[1] = 0;
	cn->reset = 0;
	cn->refs = 2;
	cn->sent[0] = cn->sent[1] = cn->acked[0] = cn->acked[1] = 0;
	cn->state = ONVM_CONN_OPEN;
}

/* xio_dial opens a conn to the stream service at addr and sends the SYN.
 * Data may follow at once: the listener's poller registers the conn when it
 * dequeues the SYN, before any later message from the same ring. */
int xio_dial(const char *addr, uint32_t *conn, uint32_t *gen)
{
	struct onvm_msg *syn = onvm_msg_alloc(&nf);
	if (syn == NULL)
		return -ENOBUFS;
	struct onvm_shm *shm = nf.shm;
	onvm_lock(shm, lock_owner());
	int s = find_svc(addr, ONVM_SVC_STREAM);
	int c = s < 0 ? -1 : alloc_conn();
	if (s < 0 || c < 0) {
		onvm_unlock(shm);
		onvm_msg_free(&nf, syn);
		return s < 0 ? -ECONNREFUSED : -EMFILE;
	}
	uint32_t peer = shm->svc[s].nf;
	open_conn(c, peer);
	syn->type = ONVM_MSG_SYN;
	syn->conn = c;
	syn->gen = shm->conn[c].gen;
	syn->svc = s;
	syn->side = 1;
	*conn = c;
	*gen = syn->gen;
	int r = onvm_deliver(&nf, peer, syn);
	if (r < 0) {
		shm->conn[c].state = ONVM_CONN_FREE;
		onvm_msg_free(&nf, syn);
	}
	onvm_unlock(shm);
	return r;
}

/* conn_of returns conn c if it is still generation gen, else NULL. */
static struct onvm_conn *conn_of(uint32_t c, uint32_t gen)
{
	if (c >= ONVM_MAX_CONN)
		return NULL;
	struct onvm_conn *cn = &nf.shm->conn[c];
	if (__atomic_load_n(&cn->gen, __ATOMIC_ACQUIRE) != gen || cn->state != ONVM_CONN_OPEN)
		return NULL;
	return cn;
}

int xio_conn_status(uint32_t c, uint32_t gen, uint32_t side)
{
	struct onvm_conn *cn = conn_of(c, gen);
	if (cn == NULL || side > 1)
		return -EPIPE;
	if (__atomic_load_n(&cn->reset, __ATOMIC_ACQUIRE))
		return -ECONNRESET;
	if (__atomic_load_n(&cn->closed[1 - side], __ATOMIC_ACQUIRE))
		return -EPIPE;
	struct onvm_nf *peer = &nf.shm->nf[cn->nf[1 - side]];
	if (peer->state != ONVM_NF_ACTIVE || peer->gen != cn->nfgen[1 - side])
		return -ECONNRESET;
	return 0;
}

/* send_chunk copies one buffer's worth of p and delivers it. */
static int send_chunk(struct onvm_conn *cn, uint32_t c, uint32_t side, const uint8_t *p, uint32_t len)
{
	struct onvm_msg *m = onvm_msg_alloc(&nf);
	if (m == NULL)
		return -EAGAIN;
	m->type = ONVM_MSG_DATA;
	m->conn = c;
	m->gen = cn->gen;
	m->side = 1 - side;
	m->len = len;
	memcpy(m->data, p, len);
	/* Count the bytes before the peer can see (and ack) them. */
	__atomic_add_fetch(&cn->sent[side], len, __ATOMIC_RELEASE);
	if (onvm_deliver(&nf, cn->nf[1 - side], m) != 0) {
		__atomic_sub_fetch(&cn->sent[side], len, __ATOMIC_RELEASE);
		onvm_msg_free(&nf, m);
		return -EAGAIN;
	}
	return 0;
}

/* xio_send sends as much of p as the window and the pool allow; -EAGAIN when
 * nothing could go (the caller waits and retries). One writer per side. */
long xio_send(uint32_t c, uint32_t gen, uint32_t side, const void *p, size_t n)
{
	int st = xio_conn_status(c, gen, side);
	if (st < 0)
		return st;
	struct onvm_conn *cn = &nf.shm->conn[c];
	int64_t inflight = (int64_t)(__atomic_load_n(&cn->sent[side], __ATOMIC_ACQUIRE) -
				     __atomic_load_n(&cn->acked[side], __ATOMIC_ACQUIRE));
	int64_t room = ONVM_CONN_WINDOW - inflight;
	size_t done = 0;
	while (done < n && room > 0) {
		size_t len = n - done;
		if (len > ONVM_MSG_PAYLOAD)
			len = ONVM_MSG_PAYLOAD;
		if ((int64_t)len > room)
			len = room;
		if (send_chunk(cn, c, side, (const uint8_t *)p + done, len) < 0)
			break;
		done += len;
		room -= len;
	}
	return done > 0 ? (long)done : -EAGAIN;
}

/* xio_ack tells side 1-side's sender that side's application read n bytes. */
void xio_ack(uint32_t c, uint32_t gen, uint32_t side, uint64_t n)
{
	struct onvm_conn *cn = conn_of(c, gen);
	if (cn != NULL && side <= 1)
		__atomic_add_fetch(&cn->acked[1 - side], n, __ATOMIC_RELEASE);
}

void xio_close(uint32_t c, uint32_t gen, uint32_t side, int reset)
{
	if (side > 1)
		return;
	struct onvm_ctl ctl;
	int notify = 0;
	onvm_lock(nf.shm, lock_owner());
	if (conn_of(c, gen) != NULL)
		notify = onvm_conn_close_side(&nf, c, side, reset, &ctl);
	onvm_unlock(nf.shm);
	if (notify)
		onvm_send_ctl_msg(&nf, &ctl);
}

/* xio_sendto sends one datagram to packet service svc: the source address,
 * then the payload, in one buffer. */
long xio_sendto(uint32_t svc, uint32_t gen, const char *src, const void *p, size_t n)
{
	size_t alen = strlen(src);
	if (svc >= ONVM_MAX_SVC || alen >= ONVM_ADDR_LEN)
		return -EINVAL;
	if (alen + n > ONVM_MSG_PAYLOAD)
		return -EMSGSIZE;
	struct onvm_svc *s = &nf.shm->svc[svc];
	uint32_t dst = s->nf;
	if (__atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) != gen || s->kind != ONVM_SVC_PACKET)
		return -ECONNREFUSED;
	struct onvm_msg *m = onvm_msg_alloc(&nf);
	if (m == NULL)
		return -EAGAIN;
	m->type = ONVM_MSG_DGRAM;
	m->svc = svc;
	m->gen = gen;
	m->addrlen = alen;
	m->len = alen + n;
	memcpy(m->data, src, alen);
	memcpy(m->data + alen, p, n);
	if (onvm_deliver(&nf, dst, m) != 0) {
		onvm_msg_free(&nf, m);
		return -EAGAIN;
	}
	return n;
}

static unsigned take(struct onvm_msg **out, unsigned max)
{
	unsigned n = rte_ring_dequeue_burst(nf.rx[nf.self], (void **)out, max, NULL);
	for (unsigned i = 0; i < n; i++) {
		out[i]->state = ONVM_BUF_HELD;
		out[i]->owner = nf.self;
	}
	return n;
}

/* sleep_on_bell sleeps until a sender rings or sleep_ms pass. 'sleeping' is
 * published and the bell read before the last ring check (see onvm_ring_bell):
 * a sender that enqueued after that check has changed the bell, so the futex
 * wait returns at once instead of missing it. */
static unsigned sleep_on_bell(struct onvm_msg **out, unsigned max, int sleep_ms)
{
	struct onvm_nf *me = &nf.shm->nf[nf.self];
	__atomic_store_n(&me->sleeping, 1, __ATOMIC_SEQ_CST);
	uint32_t v = __atomic_load_n(&me->bell, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	unsigned n = take(out, max);
	if (n == 0) {
		struct timespec ts = {.tv_sec = sleep_ms / 1000, .tv_nsec = (sleep_ms % 1000) * 1000000L};
		syscall(SYS_futex, &me->bell, FUTEX_WAIT, v, &ts, NULL, 0);
		n = take(out, max);
	}
	__atomic_store_n(&me->sleeping, 0, __ATOMIC_RELEASE);
	return n;
}

/* xio_poll_nb returns what is in the rx ring without blocking. With
 * nothing there and yield set it gives up the core once (sched_yield): a
 * poller that never yields can starve, on two shared cores, the very thread
 * it waits for; one that always yields loses a whole time slice to any
 * busy process on every empty poll. The Go poller yields now and then. */
int xio_poll_nb(struct onvm_msg **out, unsigned max, int yield)
{
	unsigned n = take(out, max);
	if (n == 0 && yield)
		sched_yield();
	return n;
}

/* xio_sleep waits on the doorbell for at most sleep_ms and returns what
 * arrived. The Go poller calls it once its spin budget is spent. */
int xio_sleep(struct onvm_msg **out, unsigned max, int sleep_ms)
{
	return sleep_on_bell(out, max, sleep_ms);
}

void xio_free_batch(struct onvm_msg **bufs, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		onvm_msg_free(&nf, bufs[i]);
}

/* xio_wake wakes this process's own poller (used at shutdown). */
void xio_wake(void)
{
	onvm_send_ctl(&nf, nf.self, ONVM_MSG_WAKE, 0, 0, 0);
}

/* xio_hold_buffers takes n buffers and never returns them, as a process that
 * dies while filling buffers would; tests use it to check the manager's
 * reclaim. Returns how many it took. */
int xio_hold_buffers(int n)
{
	int k = 0;
	while (k < n && onvm_msg_alloc(&nf) != NULL)
		k++;
	return k;
}
