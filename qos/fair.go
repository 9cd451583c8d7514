package qos

/*
#include "qos.h"
*/
import "C"

// FairFlow is one flow of a session as the fair share sees it. Rates are
// bit/s.
type FairFlow struct {
	GBR    uint64 // 0 = non-GBR
	MBR    uint64 // 0 = no MBR: the AMBR caps it
	Weight uint32 // share of the excess; 0 = 1
	Active bool   // an idle flow gets 0 and leaves its share to the others
}

// Share is the result of FairShare.
type Share struct {
	Rates      []uint64 // bit/s, one per flow
	Unassigned uint64   // AMBR no flow could take: all active flows at their MBR
	// GBRScaled: the active flows' GBRs summed above the AMBR, and each
	// was scaled by AMBR/ΣGBR (qos_fair.h says why).
	GBRScaled bool
	// GBRClamped: a GBR above its flow's MBR was taken as the MBR.
	GBRClamped bool
}

// FairShare gives each active flow its GBR and shares the rest of the
// session AMBR max-min fairly by weight, each capped at its MBR (TS 23.501
// 5.7.2.6 Session-AMBR, 5.7.2.5 GBR/MBR); see qos_fair.h. UPF-C calls it
// to show a session's rates; the shaper calls the same C.
func FairShare(ambr uint64, flows []FairFlow) (Share, error) {
	if len(flows) > MaxFlows {
		return Share{}, ErrFlows
	}
	var in [MaxFlows]C.struct_qos_fair_flow
	for i, f := range flows {
		in[i] = C.struct_qos_fair_flow{
			gbr_bps: C.uint64_t(f.GBR), mbr_bps: C.uint64_t(f.MBR),
			weight: C.uint32_t(f.Weight), active: boolC(f.Active),
		}
	}
	var r C.struct_qos_fair_result
	if err := errFrom(C.qos_fair_share(C.uint64_t(ambr), &in[0], C.unsigned(len(flows)), &r)); err != nil {
		return Share{}, err
	}
	out := Share{
		Rates:      make([]uint64, len(flows)),
		Unassigned: uint64(r.unassigned_bps),
		GBRScaled:  r.flags&C.QOS_FAIR_GBR_SCALED != 0,
		GBRClamped: r.flags&C.QOS_FAIR_GBR_CLAMPED != 0,
	}
	for i := range flows {
		out.Rates[i] = uint64(r.rate_bps[i])
	}
	return out, nil
}

func boolC(b bool) C.uint32_t {
	if b {
		return 1
	}
	return 0
}
