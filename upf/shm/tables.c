/* tables.c — UPF-C's writer side of the UPF rule tables: the only code that
 * changes struct upf_sess and the lookup tables (one writer: package shm
 * holds a mutex around every call). */
#include "tables.h"

#include "upf_shm_ops.h"

struct upf_shm *upft_open(const char *path, uint32_t max_sessions, char *err, size_t n)
{
	return upf_shm_attach(path, max_sessions, err, n);
}

static int has_teid(const struct upf_sess *s, uint32_t teid)
{
	for (int i = 0; i < s->npdr && i < UPF_MAX_PDR; i++)
		if ((s->pdr[i].flags & UPF_PDR_FTEID) && s->pdr[i].teid == teid)
			return 1;
	return 0;
}

/* ue_addr is a session's UE address (every PDR that has one agrees; the Go
 * side checks), 0 for none. */
static uint32_t ue_addr(const struct upf_sess *s)
{
	for (int i = 0; i < s->npdr && i < UPF_MAX_PDR; i++)
		if (s->pdr[i].flags & UPF_PDR_UEIP)
			return s->pdr[i].ue_addr;
	return 0;
}

/* conflict says which key of s another slot already owns. */
static int conflict(struct upf_shm *h, uint32_t slot, const struct upf_sess *s, char *err, size_t n)
{
	for (int i = 0; i < s->npdr; i++) {
		if (!(s->pdr[i].flags & UPF_PDR_FTEID))
			continue;
		int64_t other = upf_hash_find(upf_teid_tab(h), h->teid_n, s->pdr[i].teid);
		if (other >= 0 && other != slot) {
			snprintf(err, n, "pdr %u: local TEID 0x%x belongs to another session", s->pdr[i].id,
				 s->pdr[i].teid);
			return 1;
		}
	}
	uint32_t ue = ue_addr(s);
	int64_t other = ue ? upf_hash_find(upf_ueip_tab(h), h->ueip_n, ue) : -1;
	if (other >= 0 && other != slot) {
		snprintf(err, n, "UE address %u.%u.%u.%u belongs to another session", ue >> 24,
			 ue >> 16 & 0xff, ue >> 8 & 0xff, ue & 0xff);
		return 1;
	}
	return 0;
}

/* unlink_keys drops the lookup entries of old that next does not keep. */
static void unlink_keys(struct upf_shm *h, uint32_t slot, const struct upf_sess *old,
			const struct upf_sess *next)
{
	for (int i = 0; i < old->npdr && i < UPF_MAX_PDR; i++) {
		const struct upf_pdr *p = &old->pdr[i];
		if ((p->flags & UPF_PDR_FTEID) && (next == NULL || !has_teid(next, p->teid)))
			upf_hash_del(upf_teid_tab(h), h->teid_n, p->teid, slot);
	}
	uint32_t ue = ue_addr(old);
	if (ue && (next == NULL || ue_addr(next) != ue))
		upf_hash_del(upf_ueip_tab(h), h->ueip_n, ue, slot);
}

static void link_keys(struct upf_shm *h, uint32_t slot, const struct upf_sess *s)
{
	for (int i = 0; i < s->npdr; i++)
		if (s->pdr[i].flags & UPF_PDR_FTEID)
			upf_hash_put(upf_teid_tab(h), h->teid_n, s->pdr[i].teid, slot);
	uint32_t ue = ue_addr(s);
	if (ue)
		upf_hash_put(upf_ueip_tab(h), h->ueip_n, ue, slot);
}

static void spin_ns(uint64_t ns)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)(b.tv_nsec - a.tv_nsec) < ns);
}

/* copy_rules writes everything but the seqlock word; pause_ns > 0 (tests
 * only) stops half way, so a reader can meet a half-written session. */
static void copy_rules(struct upf_sess *dst, const struct upf_sess *src, uint64_t pause_ns)
{
	size_t from = sizeof(dst->seq), half = offsetof(struct upf_sess, qer);
	memcpy((char *)dst + from, (const char *)src + from, half - from);
	if (pause_ns)
		spin_ns(pause_ns);
	memcpy((char *)dst + half, (const char *)src + half, sizeof(*dst) - half);
}

/* Order: rules first (seqlock), then the lookup entries. A packet that
 * follows an old entry meanwhile finds its key missing from the new rules
 * and misses; one that follows a new entry finds the new rules whole. */
int upft_write_paused(struct upf_shm *h, uint32_t slot, const struct upf_sess *s, uint64_t pause_ns,
		      char *err, size_t n)
{
	if (slot >= h->max_sessions || s->npdr > UPF_MAX_PDR) {
		snprintf(err, n, "slot %u or %u PDRs out of range", slot, s->npdr);
		return -1;
	}
	if (conflict(h, slot, s, err, n))
		return -1;
	struct upf_sess *cur = upf_sess_at(h, slot);
	struct upf_sess old = *cur;
	upf_write_begin(cur);
	copy_rules(cur, s, pause_ns);
	upf_write_end(cur);
	if (old.state == UPF_SESS_USED)
		unlink_keys(h, slot, &old, s);
	link_keys(h, slot, s);
	return 0;
}

int upft_write(struct upf_shm *h, uint32_t slot, const struct upf_sess *s, char *err, size_t n)
{
	return upft_write_paused(h, slot, s, 0, err, n);
}

/* The rules stay behind a free slot's state (URR epochs too: the next
 * session in the slot starts new ones, so UPF-U restarts their counters). */
void upft_free(struct upf_shm *h, uint32_t slot)
{
	if (slot >= h->max_sessions)
		return;
	struct upf_sess *cur = upf_sess_at(h, slot);
	unlink_keys(h, slot, cur, NULL);
	upf_write_begin(cur);
	cur->state = UPF_SESS_FREE;
	upf_write_end(cur);
}

void upft_read(struct upf_shm *h, uint32_t slot, struct upf_sess *out)
{
	/* This process is the only writer: no concurrent change to wait out. */
	*out = *upf_sess_at(h, slot);
}

void upft_count(struct upf_shm *h, uint32_t slot, uint32_t i, struct upf_count *out)
{
	struct upf_count *c = &upf_dyn_at(h, slot)->urr[i];
	out->epoch = __atomic_load_n(&c->epoch, __ATOMIC_ACQUIRE);
	out->ul_bytes = __atomic_load_n(&c->ul_bytes, __ATOMIC_RELAXED);
	out->dl_bytes = __atomic_load_n(&c->dl_bytes, __ATOMIC_RELAXED);
	out->ul_pkts = __atomic_load_n(&c->ul_pkts, __ATOMIC_RELAXED);
	out->dl_pkts = __atomic_load_n(&c->dl_pkts, __ATOMIC_RELAXED);
}

void upft_stats(struct upf_shm *h, struct upf_stats *out)
{
	const uint64_t *src = (const uint64_t *)&h->stats;
	uint64_t *dst = (uint64_t *)out;
	for (size_t i = 0; i < sizeof(*out) / 8; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* A writer killed inside the seqlock leaves its slot odd: UPF-U would wait
 * on it for every packet (rule_busy). Nobody can tell how far the write
 * got, so the session goes: its keys are unlinked and the slot made free
 * and even again. The SMF's next request for it gets "session not found"
 * (TS 29.244 cause 65) and it sets the session up again. */
int upft_recover(struct upf_shm *h, uint32_t slot)
{
	struct upf_sess *cur = upf_sess_at(h, slot);
	uint32_t seq = __atomic_load_n(&cur->seq, __ATOMIC_ACQUIRE);
	if (!(seq & 1))
		return 0;
	unlink_keys(h, slot, cur, NULL);
	cur->state = UPF_SESS_FREE;
	__atomic_store_n(&cur->seq, seq + 1, __ATOMIC_RELEASE);
	return 1;
}

void upft_set_sessions(struct upf_shm *h, uint32_t n) { __atomic_store_n(&h->sessions, n, __ATOMIC_RELAXED); }

uint32_t upft_sessions(struct upf_shm *h) { return __atomic_load_n(&h->sessions, __ATOMIC_RELAXED); }

int upft_command(struct upf_shm *h, const struct upf_cmd *c)
{
	struct upf_rings *r = upf_rings_of(h);
	int64_t i = upf_ring_reserve(&r->cmd_idx);
	if (i < 0)
		return -1;
	r->cmd[i] = *c;
	upf_ring_publish(&r->cmd_idx);
	return 0;
}

int upft_note(struct upf_shm *h, struct upf_note *out)
{
	struct upf_rings *r = upf_rings_of(h);
	int64_t i = upf_ring_next(&r->note_idx);
	if (i < 0)
		return 0;
	*out = r->note[i];
	upf_ring_consume(&r->note_idx);
	return 1;
}

int upft_fars_differ(const struct upf_sess *a, const struct upf_sess *b)
{
	return a->nfar != b->nfar || memcmp(a->far, b->far, sizeof(a->far)) != 0;
}

int upft_drops_buffer(const struct upf_sess *prev, const struct upf_sess *next)
{
	for (int i = 0; i < prev->nfar && i < UPF_MAX_FAR; i++) {
		if (!(prev->far[i].action & UPF_BUFF))
			continue;
		for (int j = 0; j < next->nfar && j < UPF_MAX_FAR; j++)
			if (next->far[j].id == prev->far[i].id && (next->far[j].action & UPF_DROP))
				return 1;
	}
	return 0;
}
