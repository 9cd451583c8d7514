/* tables.h — UPF-C's writer side of the UPF rule tables (upf_shm.h). */
#ifndef UPF_TABLES_H
#define UPF_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "upf_shm.h"

/* upft_open maps the tables file, creating it when this process is first. */
struct upf_shm *upft_open(const char *path, uint32_t max_sessions, char *err, size_t n);

/* upft_write replaces slot's rules with s whole (seqlock) and points the
 * lookup tables at it; -1 with err when a TEID or UE address belongs to
 * another slot (nothing changed then). */
int upft_write(struct upf_shm *h, uint32_t slot, const struct upf_sess *s, char *err, size_t n);

/* upft_write_paused is upft_write pausing pause_ns half way through the
 * rules (tests: a reader must never act on the half-written session). */
int upft_write_paused(struct upf_shm *h, uint32_t slot, const struct upf_sess *s, uint64_t pause_ns,
		      char *err, size_t n);

/* upft_free removes slot's lookup entries and marks it free. */
void upft_free(struct upf_shm *h, uint32_t slot);

/* upft_recover frees slot if a writer died inside its seqlock (1 = it
 * did). */
int upft_recover(struct upf_shm *h, uint32_t slot);

/* upft_read copies slot's rules as one version. */
void upft_read(struct upf_shm *h, uint32_t slot, struct upf_sess *out);

/* upft_count copies the counters of URR index i of slot. */
void upft_count(struct upf_shm *h, uint32_t slot, uint32_t i, struct upf_count *out);

/* The session count UPF-C publishes for other processes. */
void upft_set_sessions(struct upf_shm *h, uint32_t n);
uint32_t upft_sessions(struct upf_shm *h);

/* upft_stats copies UPF-U's counters. */
void upft_stats(struct upf_shm *h, struct upf_stats *out);

/* upft_command queues c for UPF-U: -1 when the ring is full (UPF-U gone). */
int upft_command(struct upf_shm *h, const struct upf_cmd *c);

/* upft_note takes UPF-U's next note into out: 0 when there is none. */
int upft_note(struct upf_shm *h, struct upf_note *out);

/* upft_drops_buffer says whether a FAR of prev that buffered drops in
 * next (1): what UPF-U holds for the session must go, even if a later
 * rewrite buffers again before UPF-U looks. */
int upft_drops_buffer(const struct upf_sess *prev, const struct upf_sess *next);

/* upft_fars_differ says whether a and b have other FARs (1). */
int upft_fars_differ(const struct upf_sess *a, const struct upf_sess *b);

#endif
