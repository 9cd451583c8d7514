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
void xio_close(uint32_t conn, uint32_t gen, uint32_t side, int reset);

int xio_sleep(int sleep_ms);
int xio_doorbell_eventfd(int fd);
uint64_t xio_sleep_timeouts(void);
struct onvm_view;
struct onvm_view *xio_nf_view(void);
void *xio_rx_ring(uint32_t i);
int xio_efd_fetch(uint32_t dst, uint32_t gen);

#endif
