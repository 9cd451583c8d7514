/* onvm_manager.h — the manager's C entry points, called from onvm.go. */
#ifndef ONVM_MANAGER_H
#define ONVM_MANAGER_H

#include <stddef.h>
#include <stdint.h>

struct onvm_stats {
	uint64_t pool_size;   /* data buffers */
	uint64_t pool_in_use; /* data buffers taken */
	uint64_t ctl_in_use;  /* control buffers taken */
	uint64_t nf_quota;
	uint64_t bad_msgs;
	uint64_t reclaimed_bufs;
	uint64_t reaped_nfs;
	uint64_t nfs;
	uint64_t conns;
	uint64_t services;
	uint64_t manager_epoch; /* managers that adopted the tables so far */
};

int onvm_init(int argc, char **argv, unsigned nbufs, int manage, char *err, size_t n);
int onvm_adopt(int argc, char **argv, char *err, size_t n);
int onvm_scan(char *err, size_t n);
void onvm_stats(struct onvm_stats *st);
void onvm_stop(void);

#endif
