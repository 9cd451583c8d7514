/* onvm_manager.h — the manager's C entry points, called from manager.go. */
#ifndef ONVM_MANAGER_H
#define ONVM_MANAGER_H

#include <stddef.h>
#include <stdint.h>

struct onvm_stats {
	uint64_t pool_size;
	uint64_t pool_in_use;
	uint64_t reclaimed_bufs;
	uint64_t reaped_nfs;
	uint64_t nfs;
	uint64_t conns;
	uint64_t services;
};

int onvm_init(int argc, char **argv, unsigned nbufs, char *err, size_t n);
int onvm_scan(void);
void onvm_stats(struct onvm_stats *st);
void onvm_stop(void);

#endif
