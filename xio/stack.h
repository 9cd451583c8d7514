/* stack.h — the NF-side X-IO stack's C entry points, called from Go. Every
 * call returns 0/positive or a negative errno; nothing here exits. */
#ifndef XIO_STACK_H
#define XIO_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "onvm_shm.h"

int xio_primary_running(const char *config_path);
int xio_attach(int argc, char **argv, char *err, size_t n);
uint32_t xio_self(void);
uint64_t xio_pool_in_use(void);
uint64_t xio_pool_size(void);

int xio_bind(const char *addr, uint32_t kind, uint32_t *svc, uint32_t *gen);
void xio_unbind(uint32_t svc, uint32_t gen);
int xio_lookup(const char *addr, uint32_t kind, uint32_t *svc, uint32_t *gen);

int xio_dial(const char *addr, uint32_t *conn, uint32_t *gen);
long xio_send(uint32_t conn, uint32_t gen, uint32_t side, const void *p, size_t n);
void xio_ack(uint32_t conn, uint32_t gen, uint32_t side, uint64_t n);
int xio_conn_status(uint32_t conn, uint32_t gen, uint32_t side);
void xio_close(uint32_t conn, uint32_t gen, uint32_t side, int reset);

long xio_sendto(uint32_t svc, uint32_t gen, const char *src, const void *p, size_t n);
void xio_dgram_ack(uint32_t svc, uint32_t gen, uint32_t len);

int xio_poll_nb(struct onvm_msg **out, struct onvm_msg *hdr, unsigned max, int yield);
int xio_sleep(int sleep_ms);
void xio_bell_quiet(void);
void xio_bell_arm(void);
void xio_bell_self(void);
int xio_doorbell_eventfd(int fd);
int xio_efd_arm(void);
uint32_t *xio_sleeping_word(void);
void xio_count_sleep_timeout(void);
uint64_t xio_sleep_timeouts(void);
void xio_free_batch(struct onvm_msg **bufs, unsigned n);

#endif
