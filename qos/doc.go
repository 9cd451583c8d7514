// Package qos is the QoS of a PDU session (DESIGN.md "QoS", issue 13): the
// algorithms UPF-U runs per packet, in C, and a Go wrapper of the same C
// for tests, simulations and UPF-C's rate computation.
//
// # What it does
//
// Per QoS flow and direction, a two-rate three-colour marker (RFC 2698;
// committed rate = GBR, peak rate = MBR, TS 23.501 5.7.2.5), colour-blind
// or colour-aware. Red (above the MBR) is dropped; green and yellow are
// queued. Each flow has its own profile (qos_trtcm.h). GBR and MBR are the
// QER's names (TS 29.244 5.2.4) for the flow's GFBR and MFBR.
//
// Per session and direction, a fair share of the Session-AMBR (TS 23.501
// 5.7.2.6) among its flows (qos_fair.h): every active GBR flow first gets
// its GBR, then the rest is shared max-min fairly by weight among all
// active flows, QoS and non-QoS alike, each capped at its MBR. With one
// QoS flow and one non-QoS flow this is the paper's R_QoS = min(GBR +
// (AMBR − GBR)/2, MBR), R_nonQoS = AMBR − R_QoS: AMBR 10 Mbit/s, GBR 2,
// MBR 5 → 5/5; GBR 4, MBR 7 → 7/3. GBRs summing above the AMBR are each
// scaled by AMBR/ΣGBR (every GBR flow keeps the same fraction of its
// guarantee; the rules carry no priority to pick a victim by) and the
// result says so, for UPF-C to report. A GBR above its MBR is taken as the
// MBR. The shares are recomputed when the rules change and when a flow
// joins or leaves the active set (first packet; queue empty for the idle
// time), never per packet.
//
// Per session and direction, a shaper (qos_shaper.h): a bounded FIFO per
// flow (bytes, or time at the flow's share; tail drop counted per flow and
// colour), a bucket per flow filled at its share, and the session's AMBR
// bucket. The forwarding loop calls qos_dequeue every iteration with "now";
// it returns at most max packets, and no flow stalls another: first green
// heads on their share, then any head on its share (both round robin, one
// packet per flow per round), then — borrowing — the AMBR credit nobody's
// share used (a flow sending less than its share leaves it there), to
// green heads first, then by deficit round robin weighted like the
// shares, the turn kept across calls. So bandwidth a
// flow does not use goes to the others at once (work conserving), a
// flood into one flow takes only what the others leave, and nothing ever
// waits: a head without credit stays queued for a later call. Yellow is
// never dropped for being yellow; a flow is never reordered (one FIFO,
// TS 23.501 5.7.1.1).
//
// # Choices where the issue was silent
//
//   - Time is ticks of a caller's clock of hz ticks per second (TSC or ns);
//     nothing reads a clock. Credit is an integer in 1/(8·hz) byte, so a
//     tick at R bit/s adds exactly R: no rate is rounded, 1 kbit/s works,
//     tests are exact. A clock going back adds nothing.
//   - Bursts (CBS, PBS, share and AMBR buckets) not configured are the rate
//     over a window (10 ms; the meters' CBS and PBS 50 ms, see
//     QOS_DEFAULT_METER_NS: a forwarder that was descheduled meets bunched
//     arrivals, and a 10 ms peak bucket had overflowed meanwhile, which cost
//     MBR-limited flows 4-7 %), at least 2048 bytes. A bucket that is full may
//     pass a packet longer than itself (leaving a debt), so no rate is too
//     low to pass a frame.
//   - Share sends may take the AMBR bucket into debt by one bucket, borrowers
//     only spend what it holds: borrowers can never take a flow's share,
//     and the session stays within AMBR × t + 2 buckets (the shaper test
//     checks it at every step).
//   - A flow that wakes up starts with an empty share bucket: its first
//     packets go on the AMBR's spare credit, so many flows waking at once
//     cannot burst past the AMBR bucket.
//   - Idle flows get a share of 0 and their GBR is not reserved while idle.
//   - A packet is metered before the queue-full check (RFC 2698 marks
//     arrivals): the tail-drop counters then say which colour was lost.
//
// # The C API (qos.h, header-only)
//
// Everything is static inline in headers: UPF-U inlines it into its burst
// loop, and since UPF-U's cgo package and this package both link into the
// one l25gc binary, non-static C would clash. State is plain fixed-size
// structs with no pointers (a queued packet is the caller's uint64 handle:
// an mbuf pointer or a pool index) and nothing allocates or locks:
//
//	qos_shaper_init / qos_shaper_configure(s, conf, now)  rules → shaper
//	qos_enqueue(s, flow, now, handle, len, in_colour)     per packet
//	qos_submit(s, flow, now, handle, len, in_colour, out) per packet, with the
//	                                                      fast path: nothing
//	                                                      queued and credit →
//	                                                      send it now
//	qos_submit_straight(hot, flow, now, handle, len, in,  qos_submit's common
//	                    out)                              case on the hot part
//	                                                      alone (a green packet
//	                                                      everything pays for)
//	qos_dequeue(s, now, out, max)                         per loop iteration
//	qos_flush(s, flow, out, max)                          packets back, unsent
//	qos_backlog(s)                                        keep polling while != 0
//	qos_trtcm_*                                           the marker alone
//	qos_fair_share(ambr, flows, n, result)                the rates alone
//
// A shaper is two parts: struct qos_shaper_hot (1152 bytes, what a packet
// sent at once touches: the AMBR line and two lines per flow) and struct
// qos_shaper_cold (configuration, counters, queues). struct qos_shaper
// holds both in one piece; a caller that keeps them apart (UPF-U: the hot
// parts in one dense array, so thousands of sessions' per-packet state
// shares pages) calls the qos_ref_* twins of the functions above with a
// struct qos_ref naming the two parts.
//
// # How UPF-U uses it (upf/u/shape.c)
//
// Done as sketched below, with these differences: red and tail drops are
// freed by UPF-U and counted (l25gc_upf_qos_packets_total); a session the
// pool cannot serve keeps its QERs' MBR buckets (counted "unshaped")
// rather than being refused; the rules are re-read when the session's
// seqlock value moves; an End Marker first sends what the session's
// downlink shaper holds; packets go in by qos_submit, so a session with
// nothing queued costs no queue and no dequeue, and only sessions with a
// backlog are listed for qos_dequeue, 64 of them per loop in turn; each
// pool entry's hot part sits in a dense array of its own. The
// MBR and AMBR count the T-PDU: the UE's IP packet (TS 23.501 5.7.2.5,
// 5.7.2.6), not the GTP-U/UDP/IP outer header.
//
// Add -I${SRCDIR}/../../qos to upf/u's cgo CFLAGS and include "qos.h". Give
// each session one struct qos_shaper per direction (UPF-U writes it,
// nothing else reads it, so it can live in UPF-U's memory or in upf_dyn).
// One is 18.9 KB with QOS_QUEUE_SLOTS 128 (16 KB of it queue slots; 6.6 KB
// built with -DQOS_QUEUE_SLOTS=32): for upf.max_sessions 65536 in both
// directions that is 2.5 GB, so take shapers from a pool of its own size
// (a config bound) for the sessions whose QERs carry rates, rather than one
// per session slot, and answer a session the pool cannot serve with PFCP
// cause "No resources available". Map the session's QERs to
// flows: the QER all of the session's PDRs share is the Session-AMBR, each
// other QER (GBR/MBR) a flow, and PDRs without a flow QER the non-QoS flow.
// At a burst boundary where a session's rules changed (its seqlock epoch),
// call qos_shaper_configure (flush removed flows first). Per packet, after
// the FAR says forward: qos_enqueue(shaper, flow, rte_rdtsc(), (uintptr_t)
// mbuf, T-PDU length, QOS_GREEN) — a drop verdict leaves the mbuf to free
// and count (red as UPF_DROP_MBR). Each loop iteration: qos_dequeue for the
// sessions with a backlog, then encapsulate and transmit what it returns;
// do not sleep while any session has a backlog. BenchmarkPathC measures the
// per-packet cost of meter + enqueue + dequeue in C.
//
// The Go side (FairShare, NewMeter, NewShaper) calls the same C; UPF-C can
// show a session's rates with FairShare (`l25gc session show`).
package qos
