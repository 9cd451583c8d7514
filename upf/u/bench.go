package u

/*
#include "upfu.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"

	"github.com/l25gc/l25gc/upf/rules"
)

// BenchPlan is one isolated-path measurement: Packets of one direction,
// spread over Sessions installed for it, each PacketBytes long as an
// Ethernet frame of the UE's packet on N6.
type BenchPlan struct {
	Downlink    bool
	Sessions    int
	PacketBytes int
	Packets     uint64
	// QoS gives every session a session-level QER (a Session-AMBR) and a
	// flow QER with a GBR, both far above the rate: each packet is metered,
	// queued and released by the session's shaper (shape.c). UPF-U must be
	// started with a shaper pool (Config.QoS) as large as Sessions.
	QoS bool
}

// BenchResult is what one plan measured on one core. The per-packet cost
// is taken from the thread's CPU time, not the wall clock, so other work
// on a shared machine does not count against UPF-U; WallPPS is the wall
// clock's view.
type BenchResult struct {
	Forwarded       uint64
	Cycles          uint64 // TSC cycles of wall clock
	CPUNs           uint64 // the forwarding thread's CPU time
	HZ              uint64
	NsPerPacket     float64 // CPU time per packet
	CyclesPerPacket float64 // the same in TSC cycles
	PPS             float64 // packets per second of CPU time: one core's rate
	WallPPS         float64
}

var (
	benchGNB = netip.MustParseAddr("10.100.0.2")
	benchDN  = netip.MustParseAddr("10.200.0.2")
	benchUE  = netip.MustParseAddr("10.60.0.1")
)

const benchTEID, benchQFI = 0x100000, 9

// Bench installs the plan's sessions (full rule set: PDR, FAR, QER with a
// gate and an MBR far above the rate, URR) and runs the plan through the
// pipeline on this thread; Run must not be running. The ports should be
// net_null: they drop what they are given.
func (u *UPF) Bench(p BenchPlan) (BenchResult, error) {
	if p.Sessions <= 0 || p.Packets == 0 {
		return BenchResult{}, errors.New("bench: want sessions and packets > 0")
	}
	t, err := u.Table()
	if err != nil {
		return BenchResult{}, err
	}
	for i := 0; i < p.Sessions; i++ {
		if err := t.Install(benchSession(uint32(i), p.QoS)); err != nil {
			return BenchResult{}, fmt.Errorf("bench: install session %d: %w", i, err)
		}
	}
	defer func() {
		for i := 0; i < p.Sessions; i++ {
			t.Remove(uint64(i) + 1)
		}
	}()
	plan := C.struct_upfu_bench_plan{sessions: C.uint32_t(p.Sessions), pkt_bytes: C.uint32_t(p.PacketBytes),
		teid_base: benchTEID, ue_base: C.uint32_t(v4(benchUE)), gnb: C.uint32_t(v4(benchGNB)), dn: C.uint32_t(v4(benchDN)),
		qfi: benchQFI, packets: C.uint64_t(p.Packets)}
	if p.Downlink {
		plan.downlink = 1
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var hz, fwd, cpu C.uint64_t
	cycles := uint64(C.upfu_bench(&plan, &hz, &fwd, &cpu))
	r := BenchResult{Forwarded: uint64(fwd), Cycles: cycles, CPUNs: uint64(cpu), HZ: uint64(hz)}
	if r.Forwarded > 0 && r.HZ > 0 && r.CPUNs > 0 {
		r.NsPerPacket = float64(r.CPUNs) / float64(p.Packets)
		r.CyclesPerPacket = r.NsPerPacket * float64(r.HZ) / 1e9
		r.PPS = float64(r.Forwarded) / (float64(r.CPUNs) / 1e9)
		r.WallPPS = float64(r.Forwarded) / (float64(cycles) / float64(r.HZ))
	}
	return r, nil
}

func benchSession(i uint32, qos bool) *rules.Session {
	ue := netip.AddrFrom4([4]byte{byte((v4(benchUE) + i) >> 24), byte((v4(benchUE) + i) >> 16), byte((v4(benchUE) + i) >> 8), byte(v4(benchUE) + i)})
	s := &rules.Session{UPSEID: uint64(i) + 1, Rules: rules.Rules{
		PDRs: []rules.PDR{
			{ID: 1, Precedence: 255, Source: rules.Access, LocalFTEID: &rules.FTEID{TEID: benchTEID + i},
				UEIPv4: ue, OuterHeaderRemoval: true, FARID: 1, QERIDs: []uint32{1}, URRIDs: []uint32{1}},
			{ID: 2, Precedence: 255, Source: rules.Core, UEIPv4: ue, FARID: 2, QERIDs: []uint32{1}, URRIDs: []uint32{1}},
		},
		FARs: []rules.FAR{
			{ID: 1, Action: rules.ActionForward, Destination: rules.Core},
			{ID: 2, Action: rules.ActionForward, Destination: rules.Access,
				OuterHeader: &rules.OuterHeader{TEID: 0x200000 + i, PeerIPv4: benchGNB}},
		},
		QERs: []rules.QER{{ID: 1, QFI: benchQFI, GateULOpen: true, GateDLOpen: true, MBRUL: 1e12, MBRDL: 1e12}},
		URRs: []rules.URR{{ID: 1}},
	}}
	if qos {
		s.QERs[0].MBRUL, s.QERs[0].MBRDL = 1e11, 1e11
		s.QERs[0].GBRUL, s.QERs[0].GBRDL = 5e10, 5e10
		s.QERs = append(s.QERs, rules.QER{ID: 2, GateULOpen: true, GateDLOpen: true, MBRUL: 1e11, MBRDL: 1e11})
		for j := range s.PDRs {
			s.PDRs[j].QERIDs = []uint32{1, 2} // flow QER first, the session's last
		}
	}
	return s
}
