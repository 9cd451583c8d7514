/* verdict_cache.c — the per-slot verdict cache of verdict.h: where it
 * lives. Process memory, not the shared tables: only UPF-U reads it, and a
 * restarted UPF-U starts empty, which is always correct. */
#include <sys/mman.h>

#include "priv.h"

#define HUGE_2M (2u << 20)

int upfu_vcache_init(struct upfu *u, char *err, size_t n)
{
	if (u->vcache != NULL)
		munmap(u->vcache, u->vcache_len);
	u->vcache = NULL;
	size_t entries = (size_t)u->t->max_sessions * 2;
	size_t len = (entries * sizeof(struct vcache) + HUGE_2M - 1) & ~(size_t)(HUGE_2M - 1);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(err, n, "verdict cache for %u sessions (%zu MB): out of memory", u->t->max_sessions, len >> 20);
		return -1;
	}
	/* A packet of another session each time: 4 KB pages would cost a TLB
	 * miss per packet on top of the cache miss. A hint: THP off works. */
	(void)madvise(p, len, MADV_HUGEPAGE);
	u->vcache = p;
	u->vcache_len = len;
	for (size_t i = 0; i < entries; i++)
		u->vcache[i].seq = VC_EMPTY;
	return 0;
}
