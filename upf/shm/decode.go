package shm

/*
#include "tables.h"
*/
import "C"

import (
	"net/netip"

	"github.com/l25gc/l25gc/upf/rules"
)

// decodeSession reads a slot back as the session Install was given, up to
// form: SDF filters come back in canonical IPFilterRule spelling.
func decodeSession(cs *C.struct_upf_sess) rules.Session {
	s := rules.Session{UPSEID: uint64(cs.up_seid), CPSEID: uint64(cs.cp_seid)}
	if cs.cp_addr != 0 {
		s.CPAddr = addrOf(cs.cp_addr)
	}
	for i := 0; i < int(cs.nfar); i++ {
		s.FARs = append(s.FARs, decodeFAR(cs, &cs.far[i]))
	}
	for i := 0; i < int(cs.nqer); i++ {
		s.QERs = append(s.QERs, decodeQER(&cs.qer[i]))
	}
	for i := 0; i < int(cs.nurr); i++ {
		if u := cs.urr[i]; u.epoch != 0 {
			s.URRs = append(s.URRs, rules.URR{ID: uint32(u.id), VolumeThreshold: uint64(u.volume_threshold)})
		}
	}
	for i := 0; i < int(cs.npdr); i++ {
		s.PDRs = append(s.PDRs, decodePDR(cs, &cs.pdr[i]))
	}
	return s
}

func niName(cs *C.struct_upf_sess, i C.uint8_t) string {
	if i == C.UPF_NONE || int(i) >= C.UPF_MAX_NI {
		return ""
	}
	return C.GoString(&cs.ni[i][0])
}

func decodeFAR(cs *C.struct_upf_sess, c *C.struct_upf_far) rules.FAR {
	f := rules.FAR{ID: uint32(c.id), Action: rules.ApplyAction(c.action),
		Destination: rules.Interface(c.dest), NetworkInstance: niName(cs, c.ni)}
	if c.flags&C.UPF_FAR_OH != 0 {
		f.OuterHeader = &rules.OuterHeader{TEID: uint32(c.oh_teid), PeerIPv4: addrOf(c.oh_addr)}
	}
	return f
}

func decodeQER(c *C.struct_upf_qer) rules.QER {
	return rules.QER{ID: uint32(c.id), QFI: uint8(c.qfi), Weight: uint16(c.weight),
		GateULOpen: c.gates&C.UPF_GATE_UL != 0, GateDLOpen: c.gates&C.UPF_GATE_DL != 0,
		MBRUL: uint64(c.mbr_ul), MBRDL: uint64(c.mbr_dl), GBRUL: uint64(c.gbr_ul), GBRDL: uint64(c.gbr_dl)}
}

func decodePDR(cs *C.struct_upf_sess, c *C.struct_upf_pdr) rules.PDR {
	p := rules.PDR{ID: uint16(c.id), Precedence: uint32(c.precedence), Source: rules.Interface(c.source),
		QFI: uint8(c.qfi), NetworkInstance: niName(cs, c.ni), OuterHeaderRemoval: c.flags&C.UPF_PDR_OHR != 0}
	if c.flags&C.UPF_PDR_FTEID != 0 {
		p.LocalFTEID = &rules.FTEID{TEID: uint32(c.teid)}
		if c.teid_addr != 0 {
			p.LocalFTEID.IPv4 = addrOf(c.teid_addr)
		}
	}
	if c.flags&C.UPF_PDR_UEIP != 0 {
		p.UEIPv4 = addrOf(c.ue_addr)
	}
	if c.far != C.UPF_NONE {
		p.FARID = uint32(cs.far[c.far].id)
	}
	for _, q := range c.qer {
		if q != C.UPF_NONE {
			p.QERIDs = append(p.QERIDs, uint32(cs.qer[q].id))
		}
	}
	for _, u := range c.urr {
		if u != C.UPF_NONE {
			p.URRIDs = append(p.URRIDs, uint32(cs.urr[u].id))
		}
	}
	for i := 0; i < int(c.nsdf); i++ {
		p.SDFFilters = append(p.SDFFilters, decodeSDF(&c.sdf[i]).String())
	}
	return p
}

func decodeSDF(c *C.struct_upf_sdf) SDF {
	return SDF{Proto: uint8(c.proto),
		Remote:      netip.PrefixFrom(addrOf(c.remote_addr), bitsOf(c.remote_mask)),
		RemotePorts: [2]uint16{uint16(c.remote_port_lo), uint16(c.remote_port_hi)},
		UE:          netip.PrefixFrom(addrOf(c.ue_addr), bitsOf(c.ue_mask)),
		UEAssigned:  c.flags&C.UPF_SDF_UE_ASSIGNED != 0,
		UEPorts:     [2]uint16{uint16(c.ue_port_lo), uint16(c.ue_port_hi)}}
}
