/* huge_map.c — process memory for the tables UPF-U reads once per packet
 * of any session (the verdict cache, the shapers' hot parts, the pool). */
#include <stdint.h>
#include <sys/mman.h>

#include "priv.h"

#define HUGE_2M ((size_t)2 << 20)

/* upfu_huge_map: anonymous (zero pages: memory costs once used), with a
 * packet of another session each time 4 KB pages cost a TLB miss per
 * packet, while the rule tables sit in hugepages already. THP backs only
 * whole aligned 2 MB ranges, so the mapping is aligned by trimming a
 * larger one. MADV_HUGEPAGE is a hint: THP off still works. */
void *upfu_huge_map(size_t len, size_t *mapped)
{
	len = (len + HUGE_2M - 1) & ~(HUGE_2M - 1);
	size_t over = len + HUGE_2M;
	char *p = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	char *a = (char *)(((uintptr_t)p + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + len < p + over)
		munmap(a + len, (size_t)(p + over - (a + len)));
	(void)madvise(a, len, MADV_HUGEPAGE);
	*mapped = len;
	return a;
}
