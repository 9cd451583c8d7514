/* testhooks.h — test-only entry points (testhooks.c) that put the stack in
 * the states a crash, a race or a hostile peer would: tests in package xio
 * drive them through testhooks.go. */
#ifndef XIO_TESTHOOKS_H
#define XIO_TESTHOOKS_H

#include <stdint.h>

void xio_test_arm_send_race(void);
int xio_test_send_parked(void);
void xio_test_release_send(void);
void xio_test_set_conn_hint(uint32_t c);
int xio_test_hold_lock(void);
void xio_test_set_lock_timeout(uint32_t ms);
int xio_test_slot_of(const char *addr, uint32_t kind);
int xio_test_forge(uint32_t slot, int kind, uint32_t conn, uint32_t gen);
void xio_test_pause_take(int on);
unsigned xio_test_ring_count(void);
unsigned xio_test_steal(unsigned n);
int xio_test_free_slot(void);
int xio_test_deliver_to(uint32_t slot);
int xio_test_wedge_own_ring(void);
uint32_t xio_test_quota(void);
int xio_test_half_deliver(uint32_t slot);
uint32_t xio_test_queued(uint32_t slot);

#endif
