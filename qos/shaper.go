package qos

/*
#include "qos.h"
*/
import "C"

import (
	"fmt"
	"time"
)

// FlowConfig is one flow of a shaper. Rates are bit/s, sizes bytes.
type FlowConfig struct {
	GBR, MBR   uint64        // the meter's CIR and PIR; 0 = non-GBR / no MBR
	CBS, PBS   uint64        // meter bursts; 0 = rate over the shaper's Burst
	QueueBytes uint64        // queue bound; 0 = QueueTime at the flow's share
	QueueTime  time.Duration // 0 = 50 ms
	Weight     uint32        // share of the excess; 0 = 1
	Removed    bool          // no such flow (keeps the others' indexes)
}

// ShaperConfig is one session's shaper in one direction.
type ShaperConfig struct {
	AMBR  uint64        // Session-AMBR of this direction, bit/s
	Hz    uint64        // ticks per second of the clock "now" is read from
	Burst time.Duration // window of derived bursts; 0 = 10 ms
	Meter time.Duration // window of the meters' derived CBS/PBS; 0 = 50 ms
	Idle  time.Duration // empty this long: out of the fair share; 0 = 100 ms
	Flows []FlowConfig
}

// Verdict is what Enqueue did with a packet.
type Verdict uint8

const (
	QueuedGreen  Verdict = C.QOS_QUEUED_GREEN
	QueuedYellow Verdict = C.QOS_QUEUED_YELLOW
	DropRed      Verdict = C.QOS_DROP_RED
	DropFull     Verdict = C.QOS_DROP_FULL
	DropNoFlow   Verdict = C.QOS_DROP_NO_FLOW
	DropLength   Verdict = C.QOS_DROP_LEN
	SentGreen    Verdict = C.QOS_SENT_GREEN // Submit: not queued, send it now
	SentYellow   Verdict = C.QOS_SENT_YELLOW
)

// Queued says the shaper kept the packet (it comes back from Dequeue).
func (v Verdict) Queued() bool { return v == QueuedGreen || v == QueuedYellow }

// Sent says Submit let the packet through at once.
func (v Verdict) Sent() bool { return v == SentGreen || v == SentYellow }

func (v Verdict) String() string {
	switch v {
	case QueuedGreen:
		return "queued green"
	case QueuedYellow:
		return "queued yellow"
	case DropRed:
		return "dropped red"
	case DropFull:
		return "dropped: queue full"
	case DropNoFlow:
		return "dropped: no such flow"
	case DropLength:
		return "dropped: bad length"
	case SentGreen:
		return "sent green"
	case SentYellow:
		return "sent yellow"
	}
	return fmt.Sprintf("verdict(%d)", uint8(v))
}

// Packet is a packet the shaper hands back.
type Packet struct {
	Handle   uint64
	Bytes    uint32
	Flow     int
	Colour   Colour
	Borrowed bool // sent on the AMBR's spare, beyond the flow's share
}

// FlowStats are one flow's counters.
type FlowStats struct {
	InPackets, InBytes     [3]uint64 // metered, by colour (red ones dropped)
	OutPackets, OutBytes   [2]uint64 // sent, green and yellow
	FullPackets, FullBytes [2]uint64 // tail drops, green and yellow
	BorrowedBytes          uint64
}

// Shaper is one session's shaper in one direction (qos_shaper.h), for
// tests and simulations; UPF-U runs the same C in place.
type Shaper struct {
	s   *C.struct_qos_shaper // Go memory: it holds no pointers
	out []C.struct_qos_out
}

// NewShaper starts a shaper at now.
func NewShaper(c ShaperConfig, now uint64) (*Shaper, error) {
	s := &Shaper{s: new(C.struct_qos_shaper)}
	cc, err := c.toC()
	if err != nil {
		return nil, err
	}
	if err := errFrom(C.qos_shaper_init(s.s, &cc, C.uint64_t(now))); err != nil {
		return nil, err
	}
	return s, nil
}

// Configure applies changed rules at now; a flow keeps its queue, meter
// credit and counters.
func (s *Shaper) Configure(c ShaperConfig, now uint64) error {
	cc, err := c.toC()
	if err != nil {
		return err
	}
	return errFrom(C.qos_shaper_configure(s.s, &cc, C.uint64_t(now)))
}

func (c ShaperConfig) toC() (C.struct_qos_shaper_conf, error) {
	var cc C.struct_qos_shaper_conf
	if len(c.Flows) > MaxFlows {
		return cc, ErrFlows
	}
	cc.ambr_bps = C.uint64_t(c.AMBR)
	cc.hz = C.uint64_t(c.Hz)
	cc.burst_ns = C.uint64_t(c.Burst.Nanoseconds())
	cc.meter_ns = C.uint64_t(c.Meter.Nanoseconds())
	cc.idle_ns = C.uint64_t(c.Idle.Nanoseconds())
	cc.nflows = C.uint32_t(len(c.Flows))
	for i, f := range c.Flows {
		cc.flow[i] = C.struct_qos_flow_conf{
			gbr_bps: C.uint64_t(f.GBR), mbr_bps: C.uint64_t(f.MBR),
			cbs_bytes: C.uint64_t(f.CBS), pbs_bytes: C.uint64_t(f.PBS),
			queue_bytes: C.uint64_t(f.QueueBytes), queue_ns: C.uint64_t(f.QueueTime.Nanoseconds()),
			weight: C.uint32_t(f.Weight), in_use: boolC(!f.Removed),
		}
	}
	return cc, nil
}

// Enqueue meters a packet of flow and queues it unless it is red or the
// queue is full. Colour-blind callers pass Green.
func (s *Shaper) Enqueue(flow int, now, handle uint64, bytes uint32, in Colour) Verdict {
	if flow < 0 || flow >= MaxFlows {
		return DropNoFlow
	}
	return Verdict(C.qos_enqueue(s.s, C.uint32_t(flow), C.uint64_t(now), C.uint64_t(handle), C.uint32_t(bytes), C.enum_qos_colour(in)))
}

// Submit is Enqueue with the fast path of qos_submit: when the session
// has nothing queued and the flow's share or the AMBR's spare pays for the
// packet, it is not queued: the verdict is SentGreen or SentYellow and the
// Packet is what Dequeue would have handed back for it. On DropFull the
// Packet says only the colour the meter gave (which guarantee was lost).
func (s *Shaper) Submit(flow int, now, handle uint64, bytes uint32, in Colour) (Verdict, Packet) {
	if flow < 0 || flow >= MaxFlows {
		return DropNoFlow, Packet{}
	}
	var o C.struct_qos_out
	v := Verdict(C.qos_submit(s.s, C.uint32_t(flow), C.uint64_t(now), C.uint64_t(handle), C.uint32_t(bytes), C.enum_qos_colour(in), &o))
	if v == DropFull {
		return v, Packet{Colour: Colour(o.colour)}
	}
	if !v.Sent() {
		return v, Packet{}
	}
	return v, appendOut(nil, []C.struct_qos_out{o})[0]
}

// Dequeue appends to into the packets (at most max) to send at now.
func (s *Shaper) Dequeue(now uint64, max int, into []Packet) []Packet {
	if max <= 0 {
		return into
	}
	if cap(s.out) < max {
		s.out = make([]C.struct_qos_out, max)
	}
	n := int(C.qos_dequeue(s.s, C.uint64_t(now), &s.out[0], C.unsigned(max)))
	return appendOut(into, s.out[:n])
}

// Flush takes flow's queued packets back, unsent.
func (s *Shaper) Flush(flow int) []Packet {
	if flow < 0 || flow >= MaxFlows {
		return nil
	}
	if cap(s.out) < QueueSlots {
		s.out = make([]C.struct_qos_out, QueueSlots)
	}
	n := int(C.qos_flush(s.s, C.uint32_t(flow), &s.out[0], C.unsigned(QueueSlots)))
	return appendOut(nil, s.out[:n])
}

func appendOut(into []Packet, out []C.struct_qos_out) []Packet {
	for _, o := range out {
		into = append(into, Packet{
			Handle: uint64(o.handle), Bytes: uint32(o.len), Flow: int(o.flow),
			Colour: Colour(o.colour), Borrowed: o.borrowed != 0,
		})
	}
	return into
}

// Backlog is the set of flows (bit i = flow i) with queued packets.
func (s *Shaper) Backlog() uint32 { return uint32(C.qos_backlog(s.s)) }

// Rates are the flows' current shares, bit/s.
func (s *Shaper) Rates() []uint64 {
	out := make([]uint64, s.s.cold.nflows)
	for i := range out {
		out[i] = uint64(s.s.hot.flow[i].share.rate)
	}
	return out
}

// Active is the set of flows (bit i = flow i) in the fair share now.
func (s *Shaper) Active() uint32 { return uint32(s.s.hot.active) }

// Rebalances counts how often the shares were recomputed.
func (s *Shaper) Rebalances() uint64 { return uint64(s.s.cold.rebalances) }

// GBRScaled says the last fair share scaled GBRs down to fit the AMBR.
func (s *Shaper) GBRScaled() bool { return s.s.cold.flags&C.QOS_FAIR_GBR_SCALED != 0 }

// Stats are flow's counters.
func (s *Shaper) Stats(flow int) FlowStats {
	var out FlowStats
	if flow < 0 || flow >= MaxFlows {
		return out
	}
	st := C.qos_flow_stats_read(s.s, C.uint32_t(flow))
	for c := 0; c < 3; c++ {
		out.InPackets[c] = uint64(st.in_pkts[c])
		out.InBytes[c] = uint64(st.in_bytes[c])
	}
	for c := 0; c < 2; c++ {
		out.OutPackets[c] = uint64(st.out_pkts[c])
		out.OutBytes[c] = uint64(st.out_bytes[c])
		out.FullPackets[c] = uint64(st.full_pkts[c])
		out.FullBytes[c] = uint64(st.full_bytes[c])
	}
	out.BorrowedBytes = uint64(st.borrowed_bytes)
	return out
}
