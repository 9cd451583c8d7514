/* testhooks.h — test-only entry points (testhooks.c) that put the stack in
 * the states a crash, a race or a hostile peer would: tests in package xio
 * drive them through testhooks.go.
 *
 * They exist only in test builds (go test -tags l25gc_testhooks): that tag
 * selects testhooks.go, whose cgo CFLAGS define L25GC_TESTHOOKS for every C
 * file of the package, and testhooks.c. Without it the two hooks in the data
 * path (stack.c) compile to nothing and no hook symbol reaches the binary;
 * TestProductionBuildCarriesNoHooks checks that of cmd/l25gc. */
#ifndef XIO_TESTHOOKS_H
#define XIO_TESTHOOKS_H

#include <stdint.h>

#ifdef L25GC_TESTHOOKS

struct onvm_view;

/* Run before each chunk a stream write sends (xio/shmops.go send); NULL
 * unless a test armed it. */
extern void (*xio_send_hook)(uint32_t c, uint32_t gen, uint32_t side, unsigned chunk);
/* While set, the poller takes nothing from its ring. */
extern int xio_take_paused;
/* Run by a poller that found its ring empty and is about to wait on its
 * doorbell (futex or eventfd); NULL unless a test armed it. */
extern void (*xio_sleep_hook)(void);

#define XIO_SEND_HOOK(c, gen, side, chunk)                          \
	do {                                                         \
		if (__builtin_expect(xio_send_hook != NULL, 0))      \
			xio_send_hook((c), (gen), (side), (chunk));  \
	} while (0)
#define XIO_TAKE_PAUSED() \
	__builtin_expect(__atomic_load_n(&xio_take_paused, __ATOMIC_ACQUIRE), 0)
#define XIO_SLEEP_HOOK()                                      \
	do {                                                  \
		if (__builtin_expect(xio_sleep_hook != NULL, 0)) \
			xio_sleep_hook();                     \
	} while (0)

/* stack.c's state, for testhooks.c. */
struct onvm_view *xio_view(void);
void xio_set_conn_hint(uint32_t c);

int xio_test_hold_buffers(int n);
uint64_t xio_test_rx_bad(uint32_t slot);
void xio_test_arm_send_race(void);
int xio_test_send_parked(void);
void xio_test_release_send(void);
void xio_test_set_conn_hint(uint32_t c);
int xio_test_hold_lock(void);
void xio_test_set_lock_timeout(uint32_t ms);
int xio_test_slot_of(const char *addr, uint32_t kind);
/* Forged ring entries (xio_test_forge). */
enum xio_forge_kind {
	XIO_FORGE_HUGE_LEN = 1,   /* DATA, len >= 2^31 */
	XIO_FORGE_LONG_LEN,       /* DATA, len one past the payload */
	XIO_FORGE_MISALIGNED,     /* pointer into the middle of a buffer */
	XIO_FORGE_OUTSIDE,        /* pointer outside the buffers */
	XIO_FORGE_ADDRLEN,        /* DGRAM, addrlen > len */
	XIO_FORGE_NOT_HANDED,     /* a free buffer nobody handed over */
	XIO_FORGE_BAD_TYPE,       /* unknown message type */
	XIO_FORGE_CTL_DATA,       /* DATA in a header-only control buffer */
};

int xio_test_forge(uint32_t slot, int kind, uint32_t conn, uint32_t gen);
void xio_test_pause_take(int on);
unsigned xio_test_ring_count(void);
unsigned xio_test_steal(unsigned n);
int xio_test_free_slot(void);
int xio_test_deliver_to(uint32_t slot);
int xio_test_wedge_own_ring(void);
int xio_test_reaps_pending(void);
uint32_t xio_test_quota(void);
int xio_test_half_deliver(uint32_t slot);
int xio_test_half_reap(uint32_t slot);
int xio_test_leak_as_manager(uint32_t slot, int n);
uint32_t xio_test_queued(uint32_t slot);
void xio_test_arm_overtake(void);
void xio_test_arm_sleep_park(void);
int xio_test_sleep_parked(void);
void xio_test_release_sleep(void);
/* Run the armed hooks for the Go data path (xio/testhooks.go). */
void xio_test_run_send_hook(uint32_t c, uint32_t gen, uint32_t side, unsigned chunk);
void xio_test_run_sleep_hook(void);
void xio_test_run_wedge_check_hook(const void *r);
/* A ring of the rx rings' kind in heap memory (the ring tests). */
void *xio_test_ring_new(unsigned count);
void xio_test_ring_free(void *r);
long xio_test_ring_memsize(unsigned count);
int xio_test_ring_enqueue(void *r, uintptr_t obj);
unsigned xio_test_ring_dequeue(void *r, uintptr_t *out, unsigned n);
void xio_test_ring_state(const void *r, uint32_t out[8]);
void xio_test_ring_set_pos(void *r, uint32_t pos);
void xio_test_ring_enqueue_seq(void *r, uintptr_t base, uintptr_t step, unsigned n);
struct rte_ring;
extern void (*xio_test_wedge_check_hook)(const struct rte_ring *r);

#else /* production: the data path carries no hook */

#define XIO_SEND_HOOK(c, gen, side, chunk) ((void)0)
#define XIO_TAKE_PAUSED() 0
#define XIO_SLEEP_HOOK() ((void)0)

#endif /* L25GC_TESTHOOKS */

#endif
