/* verdict_cache.c — the per-slot verdict cache of verdict.h: where it
 * lives. Process memory, not the shared tables: only UPF-U reads it, and a
 * restarted UPF-U starts empty, which is always correct. */
#include <sys/mman.h>

#include "priv.h"

int upfu_vcache_init(struct upfu *u, char *err, size_t n)
{
	if (u->vcache != NULL)
		munmap(u->vcache, u->vcache_len);
	u->vcache = NULL;
	size_t entries = (size_t)u->t->max_sessions * 2, len = 0;
	/* A packet of another session each time: 4 KB pages would cost a TLB
	 * miss per packet on top of the cache miss. 2 MB aligned: 10,000
	 * sessions' entries (1.3 MB) in an unaligned mapping got no huge page. */
	void *p = upfu_huge_map(entries * sizeof(struct vcache), &len);
	if (p == NULL) {
		snprintf(err, n, "verdict cache for %u sessions (%zu MB): out of memory", u->t->max_sessions,
			 (entries * sizeof(struct vcache)) >> 20);
		return -1;
	}
	u->vcache = p;
	u->vcache_len = len;
	for (size_t i = 0; i < entries; i++)
		u->vcache[i].seq = VC_EMPTY;
	return 0;
}
