package shm

/*
#include "tables.h"
*/
import "C"

// DropReasons name UPF-U's drop counters (enum upf_drop), by index; index
// 0 is no drop.
var DropReasons = []string{
	"", "malformed", "not_ipv4", "not_ours", "not_gtpu", "gtpu_type", "unknown_teid",
	"no_pdr", "far_drop", "buffered", "gate_closed", "mbr", "ttl", "fragment",
	"no_arp", "no_route", "tx_full", "rule_busy", "unsupported",
}

// PortStats are one UPF-U port's counters.
type PortStats struct {
	RxPackets, RxBytes, TxPackets, TxBytes uint64
	ARPReplies, ICMPReplies, GTPUEcho      uint64
	ErrorIndications                       uint64
}

// Stats are UPF-U's counters as it last wrote them.
type Stats struct {
	UPFUPID int    // the running UPF-U (0 = none)
	Bursts  uint64 // bursts handled: moves while UPF-U forwards
	N3, N6  PortStats
	Drops   map[string]uint64 // by reason (DropReasons)
	Buffer  BufferStats
	// Naps are the idle naps UPF-U took (upf.sleep); NapsByPacket those a
	// packet on a port ended early (Rx interrupt or af_packet side socket),
	// so it did not wait the nap out (issue 12: paging's first packet).
	Naps, NapsByPacket uint64
}

// BufferStats are UPF-U's downlink buffering counters (TS 29.244 5.2.3
// BUFF), its notes to UPF-C and the End Markers it sent.
type BufferStats struct {
	Now        uint64 // packets held now
	Buffered   uint64 // packets ever held
	Flushed    uint64 // sent after their FAR turned to FORW
	Overflow   uint64 // dropped: a full session's oldest, or past upf.buffer.total
	Discarded  uint64 // dropped: FAR DROP, session removed, unknown to the SMF
	Notes      uint64 // Downlink Data notes queued for UPF-C (its Session Reports)
	NotesLost  uint64 // notes the full ring refused (retried with the next packet)
	EndMarkers uint64 // GTP-U End Markers sent (TS 29.281 7.3.2)
}

// Stats reads UPF-U's counters.
func (t *Table) Stats() Stats {
	var s C.struct_upf_stats
	C.upft_stats(t.h, &s)
	out := Stats{UPFUPID: int(s.upfu_pid), Bursts: uint64(s.bursts), Drops: map[string]uint64{}}
	out.N3, out.N6 = portStats(&s.port[C.UPF_N3]), portStats(&s.port[C.UPF_N6])
	for i, name := range DropReasons[1:] {
		out.Drops[name] = uint64(s.drop[i+1])
	}
	out.Buffer = BufferStats{Now: uint64(s.buf_now), Buffered: uint64(s.buf_total), Flushed: uint64(s.buf_flushed),
		Overflow: uint64(s.buf_overflow), Discarded: uint64(s.buf_discarded), Notes: uint64(s.notes),
		NotesLost: uint64(s.notes_lost), EndMarkers: uint64(s.end_markers)}
	out.Naps, out.NapsByPacket = uint64(s.naps), uint64(s.naps_rx)
	return out
}

func portStats(p *C.struct_upf_port_stats) PortStats {
	return PortStats{
		RxPackets: uint64(p.rx_pkts), RxBytes: uint64(p.rx_bytes),
		TxPackets: uint64(p.tx_pkts), TxBytes: uint64(p.tx_bytes),
		ARPReplies: uint64(p.arp_replies), ICMPReplies: uint64(p.icmp_replies),
		GTPUEcho: uint64(p.gtpu_echo), ErrorIndications: uint64(p.err_ind),
	}
}

// dropKinds is how many names DropReasons must have.
const dropKinds = int(C.UPF_DROP_UNSUPPORTED) + 1
