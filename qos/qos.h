/*
 * qos.h — the QoS of a PDU session (DESIGN.md "QoS", issue 13): a two-rate
 * three-colour marker per QoS flow (RFC 2698, committed rate = GBR, peak
 * rate = MBR), the max-min fair share of the Session-AMBR (TS 23.501
 * 5.7.2.6) among a session's flows, and a shaper per session and direction
 * that queues each flow and releases it at its share.
 *
 *   qos_trtcm.h   the marker (RFC 2698), colour-blind and colour-aware
 *   qos_fair.h    the fair share: GBR first, the rest max-min by weight
 *   qos_shaper.h  per-flow queues + buckets, the session AMBR bucket, the
 *                 dequeue the forwarding loop calls every iteration
 *
 * Header-only (static inline): UPF-U calls the marker and the shaper per
 * packet and inlines them into its burst loop, and both UPF-U's cgo package
 * and package qos link into the one l25gc binary, where a second copy of
 * non-static C functions would clash. Include this header only.
 *
 * Shapes fit UPF-U's shared tables: plain fixed-size structs, no pointers
 * (a queued packet is the caller's 64-bit handle, e.g. an mbuf pointer or a
 * pool index), no allocation, no locks. The caller passes "now" in ticks of
 * a clock of hz ticks per second (TSC with rte_get_tsc_hz(), or ns with
 * hz = 1e9); nothing here reads a clock, so tests are exact.
 *
 * Arithmetic is integer and exact: a bucket counts credit in units of
 * 1/(8·hz) byte, so that one tick at rate R bit/s adds exactly R units; no
 * rate is rounded (1 kbit/s works) and no fraction is lost between packets.
 */
#ifndef L25GC_QOS_H
#define L25GC_QOS_H

#include <stdint.h>
#include <string.h>

#define QOS_MAX_FLOWS 8          /* QoS flows (incl. non-QoS) per session and direction */
#ifndef QOS_QUEUE_SLOTS
#define QOS_QUEUE_SLOTS 128      /* packets a flow's queue holds at most (power of 2) */
#endif
#define QOS_MAX_PKT_BYTES 65536  /* longer "packets" are refused, never metered */
#define QOS_MIN_BURST_BYTES 2048 /* a derived burst holds at least one full frame */
#define QOS_QUANTUM_BYTES 1600   /* DRR quantum per unit of weight when borrowing */

#define QOS_NS 1000000000ull
#define QOS_DEFAULT_BURST_NS (10 * 1000000ull)  /* burst = rate × 10 ms */
/* A shaper's meters hold more: rate × 50 ms, what a flow's queue holds at
 * its share. The forwarder meets packets when it runs, not when they
 * arrive: after it was descheduled (or napped) for longer than a peak
 * bucket's worth, the bucket had overflowed and the bunched arrivals
 * found less credit than the MBR earned meanwhile, so an MBR-limited flow
 * got 4-7 % below its MBR on a loaded machine (and a 2048-byte floor is
 * under two packets at 1-2 Mbit/s). The shaper behind the meter still
 * releases the flow at its share, so a longer meter window adds no burst
 * beyond the session's AMBR bucket; a borrowing flow can pass its MBR by
 * at most one PBS (TS 23.501 5.7.3.6 measures MBR over an averaging
 * window, 2000 ms by default). */
#define QOS_DEFAULT_METER_NS (50 * 1000000ull)
#define QOS_DEFAULT_QUEUE_NS (50 * 1000000ull)  /* queue = 50 ms at the flow's share */
#define QOS_DEFAULT_IDLE_NS (100 * 1000000ull)  /* no packet for 100 ms: inactive */

/* Credit must stay below 2^62 units so that signed buckets never overflow. */
#define QOS_MAX_CREDIT (1ull << 62)

enum qos_colour { QOS_GREEN = 0, QOS_YELLOW = 1, QOS_RED = 2, QOS_COLOURS = 3 };

enum qos_err {
	QOS_OK = 0,
	QOS_ERR_HZ,        /* clock rate 0 or above 1e11 ticks/s */
	QOS_ERR_AMBR,      /* Session-AMBR 0: every PDU session has one (TS 23.501 5.7.2.6) */
	QOS_ERR_NFLOWS,    /* more than QOS_MAX_FLOWS flows */
	QOS_ERR_BURST,     /* a configured burst or queue is too large for exact credit */
	QOS_ERR_BUSY,      /* a flow being removed still has packets: qos_flush it first */
	QOS_ERR_GBR_MBR,   /* a configured CIR above its PIR (RFC 2698 requires PIR >= CIR) */
};

static inline const char *qos_strerror(int e)
{
	switch (e) {
	case QOS_OK: return "ok";
	case QOS_ERR_HZ: return "clock rate must be 1..1e11 ticks per second";
	case QOS_ERR_AMBR: return "session AMBR must be above 0 bit/s";
	case QOS_ERR_NFLOWS: return "too many QoS flows for one session";
	case QOS_ERR_BURST: return "burst or queue size too large";
	case QOS_ERR_BUSY: return "a removed flow still has queued packets";
	case QOS_ERR_GBR_MBR: return "committed rate above peak rate";
	}
	return "unknown QoS error";
}

/* ---- exact credit arithmetic --------------------------------------------- */

/* 128-bit products: rate × ticks overflows 64 bits after seconds at Gbit/s
 * (GCC and Clang on 64-bit targets; __extension__ keeps -pedantic quiet). */
__extension__ typedef unsigned __int128 qos_u128;

/* qos_unit is the credit of one byte: 8 bits × hz ticks. */
static inline uint64_t qos_unit(uint64_t hz) { return 8 * hz; }

/* qos_ticks converts ns to ticks (exact for hz = 1e9). */
static inline uint64_t qos_ticks(uint64_t ns, uint64_t hz)
{
	return (uint64_t)((qos_u128)ns * hz / QOS_NS);
}

/* qos_window_bytes is what rate bit/s sends in ns nanoseconds. */
static inline uint64_t qos_window_bytes(uint64_t rate_bps, uint64_t ns)
{
	qos_u128 b = (qos_u128)rate_bps * ns / (8 * QOS_NS);
	return b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

/* qos_credit is bytes in credit units, or 0 with *ok = 0 when it does not
 * fit below QOS_MAX_CREDIT. */
static inline uint64_t qos_credit(uint64_t bytes, uint64_t unit, int *ok)
{
	qos_u128 c = (qos_u128)bytes * unit;
	if (c >= QOS_MAX_CREDIT) {
		*ok = 0;
		return 0;
	}
	return (uint64_t)c;
}

/* qos_fill adds rate × dt credit to tok, saturating at cap. Exact without
 * 128-bit arithmetic (issue 13: per packet, GCC kept the 128-bit sums of
 * UPF-U's burst loop on the stack): a product beyond 64 bits, or beyond
 * the room left, fills the bucket. */
static inline uint64_t qos_fill(uint64_t tok, uint64_t cap, uint64_t rate, uint64_t dt)
{
	uint64_t add;
	if (tok >= cap || __builtin_mul_overflow(rate, dt, &add) || add >= cap - tok)
		return cap;
	return tok + add;
}

#include "qos_trtcm.h"
#include "qos_fair.h"
#include "qos_shaper.h"

#endif
