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
