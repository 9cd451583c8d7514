/*
 * upf_shm_ops.h — the operations on the UPF rule tables (upf_shm.h) that
 * both sides share: attaching to the memzone, the lookup tables, and the
 * two halves of the per-session seqlock. Static inline, so UPF-C's cgo
 * package (upf/shm) and UPF-U (upf/u) compile the same code. Plain POSIX:
 * neither side needs DPDK to reach the tables.
 */
#ifndef UPF_SHM_OPS_H
#define UPF_SHM_OPS_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "upf_shm.h"

/* ---- layout --------------------------------------------------------------- */

static inline uint32_t upf_pow2_at_least(uint64_t n)
{
	uint64_t p = 16;
	while (p < n)
		p <<= 1;
	return (uint32_t)p;
}

/* upf_shm_plan fills the sizes and offsets of tables for max sessions: the
 * TEID table holds every PDR's TEID at most half full, the UE IP table one
 * address per session at most half full, so neither runs out of room. */
static inline void upf_shm_plan(struct upf_shm *h, uint32_t max)
{
	uint64_t off = (sizeof(struct upf_shm) + 63) & ~(uint64_t)63;
	h->max_sessions = max;
	h->teid_n = upf_pow2_at_least((uint64_t)max * UPF_MAX_PDR * 2);
	h->ueip_n = upf_pow2_at_least((uint64_t)max * 2);
	h->sess_off = off;
	off += (uint64_t)max * sizeof(struct upf_sess);
	h->dyn_off = off;
	off += (uint64_t)max * sizeof(struct upf_dyn);
	h->teid_off = off;
	off += (uint64_t)h->teid_n * 8;
	h->ueip_off = off;
	off += (uint64_t)h->ueip_n * 8;
	h->rings_off = (off + 63) & ~(uint64_t)63;
	off = h->rings_off + sizeof(struct upf_rings);
	h->size = off;
}

static inline struct upf_sess *upf_sess_at(struct upf_shm *h, uint32_t i)
{
	return (struct upf_sess *)((char *)h + h->sess_off) + i;
}

static inline struct upf_dyn *upf_dyn_at(struct upf_shm *h, uint32_t i)
{
	return (struct upf_dyn *)((char *)h + h->dyn_off) + i;
}

static inline uint64_t *upf_teid_tab(struct upf_shm *h)
{
	return (uint64_t *)((char *)h + h->teid_off);
}

static inline uint64_t *upf_ueip_tab(struct upf_shm *h)
{
	return (uint64_t *)((char *)h + h->ueip_off);
}

static inline struct upf_rings *upf_rings_of(struct upf_shm *h)
{
	return (struct upf_rings *)((char *)h + h->rings_off);
}

/* ---- attaching -------------------------------------------------------------- */

static inline void upf_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static inline struct upf_shm *upf_shm_map(int fd, uint64_t size, const char *path, char *err, size_t n)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		snprintf(err, n, "map UPF tables %s (%llu MB): %s (free hugepages?)", path,
			 (unsigned long long)(size >> 20), strerror(errno));
		return NULL;
	}
	return p;
}

/* upf_shm_check waits for the creator to publish the tables and checks
 * that they are the ones this process expects. */
static inline struct upf_shm *upf_shm_check(int fd, const char *path, uint32_t max, char *err, size_t n)
{
	struct stat st;
	for (int waited = 0;; waited++) {
		if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= sizeof(struct upf_shm))
			break;
		if (waited == 2000) {
			snprintf(err, n, "UPF tables %s were never sized: remove the file (no UPF runs)", path);
			return NULL;
		}
		upf_sleep_ms(1);
	}
	struct upf_shm *h = upf_shm_map(fd, (uint64_t)st.st_size, path, err, n);
	if (h == NULL)
		return NULL;
	for (int waited = 0; __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != UPF_SHM_MAGIC; waited++) {
		if (waited == 2000) { /* its creator died before publishing it */
			snprintf(err, n, "UPF tables %s were never initialised: remove the file (no UPF runs)", path);
			return NULL;
		}
		upf_sleep_ms(1);
	}
	if (h->version != UPF_SHM_VERSION || h->size > (uint64_t)st.st_size) {
		snprintf(err, n, "UPF tables %s have layout version %u, this binary %u: "
			 "stop upf-c and upf-u and remove the file", path, h->version, UPF_SHM_VERSION);
		return NULL;
	}
	if (max != 0 && h->max_sessions != max) {
		snprintf(err, n, "UPF tables %s hold %u sessions but upf.max_sessions is %u: use the same "
			 "config for upf-c and upf-u, or stop both and remove the file", path, h->max_sessions, max);
		return NULL;
	}
	return h;
}

/* upf_shm_attach maps the tables file at path, or creates, sizes and
 * initialises it when this process is the first (max = upf.max_sessions;
 * 0 = only find). The file is rounded up to 2 MB, so it may live on
 * hugetlbfs; the mapping outlives the descriptor. */
static inline struct upf_shm *upf_shm_attach(const char *path, uint32_t max, char *err, size_t n)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
			snprintf(err, n, "open UPF tables %s: %s", path, strerror(errno));
			return NULL;
		}
		struct upf_shm *h = upf_shm_check(fd, path, max, err, n);
		close(fd);
		return h;
	}
	if (fd < 0 || max == 0) {
		snprintf(err, n, "create UPF tables %s: %s", path, fd < 0 ? strerror(errno) : "no upf.max_sessions");
		if (fd >= 0) {
			unlink(path);
			close(fd);
		}
		return NULL;
	}
	struct upf_shm plan;
	memset(&plan, 0, sizeof(plan));
	upf_shm_plan(&plan, max);
	uint64_t size = (plan.size + (2u << 20) - 1) & ~(uint64_t)((2u << 20) - 1);
	struct upf_shm *h = NULL;
	if (ftruncate(fd, (off_t)size) != 0)
		snprintf(err, n, "size UPF tables %s to %llu MB: %s", path, (unsigned long long)(size >> 20), strerror(errno));
	else
		h = upf_shm_map(fd, size, path, err, n);
	if (h == NULL) {
		unlink(path);
		close(fd);
		return NULL;
	}
	close(fd);
	*h = plan; /* a new file reads as zeros: every slot free, tables empty */
	h->version = UPF_SHM_VERSION;
	__atomic_store_n(&h->magic, UPF_SHM_MAGIC, __ATOMIC_RELEASE);
	return h;
}

/* ---- lookup tables ---------------------------------------------------------- */

static inline uint32_t upf_hash(uint32_t key, uint32_t n)
{
	return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 32) & (n - 1);
}

static inline uint64_t upf_entry(uint32_t key, uint32_t slot)
{
	return (uint64_t)key << 32 | (uint64_t)(slot + 1);
}

/* upf_hash_find returns the slot a key points at, or -1. */
static inline int64_t upf_hash_find(const uint64_t *tab, uint32_t n, uint32_t key)
{
	uint32_t i = upf_hash(key, n);
	for (uint32_t probes = 0; probes < n; probes++, i = (i + 1) & (n - 1)) {
		uint64_t e = __atomic_load_n(&tab[i], __ATOMIC_ACQUIRE);
		uint32_t v = (uint32_t)e;
		if (v == 0)
			return -1;
		if (v != UPF_HASH_TOMB && (uint32_t)(e >> 32) == key)
			return (int64_t)v - 1;
	}
	return -1;
}

/* upf_hash_put points key at slot (the writer only): replaces the key's
 * entry, or takes the first deleted or empty entry on its probe path. */
static inline int upf_hash_put(uint64_t *tab, uint32_t n, uint32_t key, uint32_t slot)
{
	uint32_t i = upf_hash(key, n);
	int64_t reuse = -1;
	for (uint32_t probes = 0; probes < n; probes++, i = (i + 1) & (n - 1)) {
		uint64_t e = tab[i];
		uint32_t v = (uint32_t)e;
		if (v == UPF_HASH_TOMB) {
			if (reuse < 0)
				reuse = i;
			continue;
		}
		if (v == 0) {
			if (reuse < 0)
				reuse = i;
			break;
		}
		if ((uint32_t)(e >> 32) == key) {
			__atomic_store_n(&tab[i], upf_entry(key, slot), __ATOMIC_RELEASE);
			return 0;
		}
	}
	if (reuse < 0)
		return -1;
	__atomic_store_n(&tab[reuse], upf_entry(key, slot), __ATOMIC_RELEASE);
	return 0;
}

/* upf_hash_del removes key if it points at slot (the writer only). A
 * deleted entry becomes a tombstone, so readers probing past it still find
 * what follows; tombstones that end a probe chain become empty again, so
 * churn does not lengthen every miss for good. */
static inline void upf_hash_del(uint64_t *tab, uint32_t n, uint32_t key, uint32_t slot)
{
	uint32_t i = upf_hash(key, n), probes;
	for (probes = 0; probes < n; probes++, i = (i + 1) & (n - 1)) {
		uint64_t e = tab[i];
		uint32_t v = (uint32_t)e;
		if (v == 0)
			return;
		if (v != UPF_HASH_TOMB && (uint32_t)(e >> 32) == key) {
			if (v != slot + 1)
				return;
			break;
		}
	}
	if (probes == n)
		return;
	uint64_t tomb = (uint64_t)UPF_HASH_TOMB;
	__atomic_store_n(&tab[i], tomb, __ATOMIC_RELEASE);
	if (tab[(i + 1) & (n - 1)] != 0)
		return;
	while ((uint32_t)tab[i] == UPF_HASH_TOMB) {
		__atomic_store_n(&tab[i], 0, __ATOMIC_RELEASE);
		i = (i - 1) & (n - 1);
	}
}

/* ---- the session seqlock ---------------------------------------------------- */

/* Writer (UPF-C): begin makes seq odd before any rule changes, end makes it
 * even after all of them; the fences keep the rule stores inside. */
static inline void upf_write_begin(struct upf_sess *s)
{
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void upf_write_end(struct upf_sess *s)
{
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

/* Reader (UPF-U): begin returns the sequence (odd = being written: do not
 * use what you read); valid says whether what was read since begin is
 * whole. */
static inline uint32_t upf_read_begin(const struct upf_sess *s)
{
	return __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
}

static inline int upf_read_valid(const struct upf_sess *s, uint32_t seq)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return (seq & 1) == 0 && __atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq;
}

/* ---- the rings (upf_shm.h) ------------------------------------------------- */

/* upf_ring_reserve is where the producer writes the next entry, or -1 when
 * the ring is full; upf_ring_publish makes it visible. */
static inline int64_t upf_ring_reserve(const struct upf_ring_idx *x)
{
	uint32_t head = x->head, tail = __atomic_load_n(&x->tail, __ATOMIC_ACQUIRE);
	if (head - tail >= UPF_RING_N)
		return -1;
	return head & (UPF_RING_N - 1);
}

static inline void upf_ring_publish(struct upf_ring_idx *x)
{
	__atomic_store_n(&x->head, x->head + 1, __ATOMIC_RELEASE);
}

/* upf_ring_next is the consumer's next entry, or -1 when none is queued;
 * upf_ring_consume frees it for the producer. */
static inline int64_t upf_ring_next(const struct upf_ring_idx *x)
{
	uint32_t tail = x->tail;
	if (__atomic_load_n(&x->head, __ATOMIC_ACQUIRE) == tail)
		return -1;
	return tail & (UPF_RING_N - 1);
}

static inline void upf_ring_consume(struct upf_ring_idx *x)
{
	__atomic_store_n(&x->tail, x->tail + 1, __ATOMIC_RELEASE);
}

#endif /* UPF_SHM_OPS_H */
