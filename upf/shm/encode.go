package shm

/*
#include "tables.h"
*/
import "C"

import (
	"fmt"
	"net/netip"
	"unsafe"

	"github.com/l25gc/l25gc/upf/rules"
)

// encodeSession turns s into the slot form UPF-U matches. prev is what the
// slot holds now: the same session when replacing is true (URRs keep their
// index and epoch, so their counts carry on), an old one or nothing
// otherwise (every URR starts a new epoch, so UPF-U restarts its counts).
func encodeSession(s *rules.Session, prev *C.struct_upf_sess, replacing bool) (*C.struct_upf_sess, error) {
	if len(s.PDRs) > C.UPF_MAX_PDR || len(s.FARs) > C.UPF_MAX_FAR || len(s.QERs) > C.UPF_MAX_QER {
		return nil, fmt.Errorf("%d PDRs, %d FARs, %d QERs: at most %d, %d, %d per session",
			len(s.PDRs), len(s.FARs), len(s.QERs), C.UPF_MAX_PDR, C.UPF_MAX_FAR, C.UPF_MAX_QER)
	}
	cs := &C.struct_upf_sess{state: C.UPF_SESS_USED, up_seid: C.uint64_t(s.UPSEID), cp_seid: C.uint64_t(s.CPSEID)}
	if s.CPAddr.IsValid() {
		if !s.CPAddr.Is4() {
			return nil, fmt.Errorf("CP address %s: IPv4 only", s.CPAddr)
		}
		cs.cp_addr = C.uint32_t(v4(s.CPAddr))
	}
	nis := &niTable{cs: cs}
	farIdx, err := encodeFARs(cs, s.FARs, nis)
	if err != nil {
		return nil, err
	}
	qerIdx, err := encodeQERs(cs, s.QERs)
	if err != nil {
		return nil, err
	}
	urrIdx, err := encodeURRs(cs, s.URRs, prev, replacing)
	if err != nil {
		return nil, err
	}
	refs := ruleIndex{far: farIdx, qer: qerIdx, urr: urrIdx}
	if err := encodePDRs(cs, s.PDRs, refs, nis); err != nil {
		return nil, err
	}
	return cs, nil
}

func v4(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func addrOf(u C.uint32_t) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)})
}

// niTable holds a session's distinct network instances (UPF_MAX_NI).
type niTable struct {
	cs *C.struct_upf_sess
	n  int
}

func (t *niTable) index(ni string) (C.uint8_t, error) {
	if ni == "" {
		return C.UPF_NONE, nil
	}
	if len(ni) >= C.UPF_NI_LEN {
		return 0, fmt.Errorf("network instance %q: at most %d bytes", ni, C.UPF_NI_LEN-1)
	}
	for i := 0; i < t.n; i++ {
		if C.GoString(&t.cs.ni[i][0]) == ni {
			return C.uint8_t(i), nil
		}
	}
	if t.n == C.UPF_MAX_NI {
		return 0, fmt.Errorf("network instance %q: at most %d different ones per session", ni, C.UPF_MAX_NI)
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(&t.cs.ni[t.n][0])), C.UPF_NI_LEN)
	copy(dst, ni)
	t.n++
	return C.uint8_t(t.n - 1), nil
}

func encodeFARs(cs *C.struct_upf_sess, fars []rules.FAR, nis *niTable) (map[uint32]C.uint8_t, error) {
	idx := map[uint32]C.uint8_t{}
	for i, f := range fars {
		if _, dup := idx[f.ID]; dup {
			return nil, fmt.Errorf("far %d: ID used twice", f.ID)
		}
		c := &cs.far[i]
		c.id, c.action, c.dest = C.uint32_t(f.ID), C.uint16_t(f.Action), C.uint8_t(f.Destination)
		ni, err := nis.index(f.NetworkInstance)
		if err != nil {
			return nil, fmt.Errorf("far %d: %w", f.ID, err)
		}
		c.ni = ni
		if oh := f.OuterHeader; oh != nil {
			if !oh.PeerIPv4.Is4() {
				return nil, fmt.Errorf("far %d: outer header peer %v: want an IPv4 address", f.ID, oh.PeerIPv4)
			}
			c.flags |= C.UPF_FAR_OH
			c.oh_teid, c.oh_addr = C.uint32_t(oh.TEID), C.uint32_t(v4(oh.PeerIPv4))
		}
		idx[f.ID] = C.uint8_t(i)
	}
	cs.nfar = C.uint8_t(len(fars))
	return idx, nil
}

func encodeQERs(cs *C.struct_upf_sess, qers []rules.QER) (map[uint32]C.uint8_t, error) {
	idx := map[uint32]C.uint8_t{}
	for i, q := range qers {
		if _, dup := idx[q.ID]; dup {
			return nil, fmt.Errorf("qer %d: ID used twice", q.ID)
		}
		if q.QFI > 63 {
			return nil, fmt.Errorf("qer %d: QFI %d: want 0-63 (TS 38.415 5.5.3.3)", q.ID, q.QFI)
		}
		if q.Weight > rules.MaxWeight {
			return nil, fmt.Errorf("qer %d: weight %d: want 1-%d", q.ID, q.Weight, rules.MaxWeight)
		}
		c := &cs.qer[i]
		c.id, c.qfi, c.weight = C.uint32_t(q.ID), C.uint8_t(q.QFI), C.uint16_t(q.Weight)
		c.mbr_ul, c.mbr_dl = C.uint64_t(q.MBRUL), C.uint64_t(q.MBRDL)
		c.gbr_ul, c.gbr_dl = C.uint64_t(q.GBRUL), C.uint64_t(q.GBRDL)
		if q.GateULOpen {
			c.gates |= C.UPF_GATE_UL
		}
		if q.GateDLOpen {
			c.gates |= C.UPF_GATE_DL
		}
		idx[q.ID] = C.uint8_t(i)
	}
	cs.nqer = C.uint8_t(len(qers))
	return idx, nil
}

// encodeURRs places URRs so that one kept by a modification keeps its
// index and epoch (its counts carry on); a new one takes a free index with
// the next epoch. Epoch 0 marks an unused index.
func encodeURRs(cs *C.struct_upf_sess, urrs []rules.URR, prev *C.struct_upf_sess, replacing bool) (map[uint32]C.uint8_t, error) {
	kept := map[uint32]int{}
	if replacing {
		for i := 0; i < int(prev.nurr); i++ {
			if prev.urr[i].epoch != 0 {
				kept[uint32(prev.urr[i].id)] = i
			}
		}
	}
	idx := map[uint32]C.uint8_t{}
	taken := [C.UPF_MAX_URR]bool{}
	for _, u := range urrs {
		if _, dup := idx[u.ID]; dup {
			return nil, fmt.Errorf("urr %d: ID used twice", u.ID)
		}
		if i, ok := kept[u.ID]; ok {
			idx[u.ID], taken[i] = C.uint8_t(i), true
		} else {
			idx[u.ID] = C.UPF_NONE
		}
	}
	n := 0
	for _, u := range urrs {
		i := int(idx[u.ID])
		epoch := prev.urr[i%C.UPF_MAX_URR].epoch
		if idx[u.ID] == C.UPF_NONE {
			if i = firstFree(taken[:]); i < 0 {
				return nil, fmt.Errorf("urr %d: at most %d URRs per session", u.ID, C.UPF_MAX_URR)
			}
			taken[i] = true
			if epoch = prev.urr[i].epoch + 1; epoch == 0 {
				epoch = 1
			}
			idx[u.ID] = C.uint8_t(i)
		}
		cs.urr[i] = C.struct_upf_urr{id: C.uint32_t(u.ID), epoch: epoch, volume_threshold: C.uint64_t(u.VolumeThreshold)}
		n = max(n, i+1)
	}
	for i := 0; i < n; i++ {
		if !taken[i] { // a hole: keep its epoch for the next URR here, unused meanwhile
			cs.urr[i] = C.struct_upf_urr{}
		}
	}
	cs.nurr = C.uint8_t(n)
	return idx, nil
}

func firstFree(taken []bool) int {
	for i, t := range taken {
		if !t {
			return i
		}
	}
	return -1
}

// ruleIndex finds a rule's index in the slot by its ID.
type ruleIndex struct{ far, qer, urr map[uint32]C.uint8_t }

func encodePDRs(cs *C.struct_upf_sess, pdrs []rules.PDR, refs ruleIndex, nis *niTable) error {
	var ue netip.Addr
	seen := map[uint16]bool{}
	for i := range pdrs {
		p := &pdrs[i]
		if seen[p.ID] {
			return fmt.Errorf("pdr %d: ID used twice", p.ID)
		}
		seen[p.ID] = true
		if p.UEIPv4.IsValid() {
			if ue.IsValid() && ue != p.UEIPv4 {
				return fmt.Errorf("pdr %d: UE address %s, another PDR has %s: one per session", p.ID, p.UEIPv4, ue)
			}
			ue = p.UEIPv4
		}
		if err := encodePDR(&cs.pdr[i], p, refs, nis); err != nil {
			return fmt.Errorf("pdr %d: %w", p.ID, err)
		}
	}
	cs.npdr = C.uint8_t(len(pdrs))
	return nil
}

func encodePDR(c *C.struct_upf_pdr, p *rules.PDR, refs ruleIndex, nis *niTable) error {
	c.id, c.precedence, c.source = C.uint16_t(p.ID), C.uint32_t(p.Precedence), C.uint8_t(p.Source)
	if p.QFI > 63 {
		return fmt.Errorf("QFI %d: want 0-63", p.QFI)
	}
	c.qfi = C.uint8_t(p.QFI)
	if err := encodePDI(c, p); err != nil {
		return err
	}
	ni, err := nis.index(p.NetworkInstance)
	if err != nil {
		return err
	}
	c.ni = ni
	if p.OuterHeaderRemoval {
		c.flags |= C.UPF_PDR_OHR
	}
	far, ok := refs.far[p.FARID]
	if !ok {
		return fmt.Errorf("far %d is not in the session", p.FARID)
	}
	c.far = far
	if err := refList(c.qer[:], p.QERIDs, refs.qer, "qer"); err != nil {
		return err
	}
	if err := refList(c.urr[:], p.URRIDs, refs.urr, "urr"); err != nil {
		return err
	}
	if len(p.SDFFilters) > C.UPF_MAX_SDF {
		return fmt.Errorf("%d SDF filters: at most %d per PDR", len(p.SDFFilters), C.UPF_MAX_SDF)
	}
	for i, rule := range p.SDFFilters {
		f, err := ParseSDF(rule, p.UEIPv4)
		if err != nil {
			return fmt.Errorf("sdf filter %d: %w", i+1, err)
		}
		c.sdf[i] = encodeSDF(f)
	}
	c.nsdf = C.uint8_t(len(p.SDFFilters))
	return nil
}

// encodePDI checks that the PDR can be found: an Access-side PDR by its
// local F-TEID, a Core-side one by the UE address (TS 29.244 5.2.1).
func encodePDI(c *C.struct_upf_pdr, p *rules.PDR) error {
	if f := p.LocalFTEID; f != nil {
		if f.TEID == 0 {
			return fmt.Errorf("local F-TEID: TEID 0 (a CHOOSE F-TEID is allocated before Install)")
		}
		c.flags |= C.UPF_PDR_FTEID
		c.teid = C.uint32_t(f.TEID)
		if f.IPv4.Is4() {
			c.teid_addr = C.uint32_t(v4(f.IPv4))
		}
	}
	if p.UEIPv4.IsValid() {
		if !p.UEIPv4.Is4() {
			return fmt.Errorf("UE address %s: IPv4 only", p.UEIPv4)
		}
		c.flags |= C.UPF_PDR_UEIP
		c.ue_addr = C.uint32_t(v4(p.UEIPv4))
	}
	switch {
	case p.Source == rules.Access && p.LocalFTEID == nil:
		return fmt.Errorf("source access without a local F-TEID")
	case p.Source != rules.Access && !p.UEIPv4.IsValid():
		return fmt.Errorf("source %d without a UE address", p.Source)
	}
	return nil
}

func refList(dst []C.uint8_t, ids []uint32, idx map[uint32]C.uint8_t, what string) error {
	if len(ids) > len(dst) {
		return fmt.Errorf("%d %ss: at most %d per PDR", len(ids), what, len(dst))
	}
	for i := range dst {
		dst[i] = C.UPF_NONE
	}
	for i, id := range ids {
		j, ok := idx[id]
		if !ok {
			return fmt.Errorf("%s %d is not in the session", what, id)
		}
		dst[i] = j
	}
	return nil
}

func encodeSDF(f SDF) C.struct_upf_sdf {
	c := C.struct_upf_sdf{
		proto:       C.uint8_t(f.Proto),
		remote_addr: C.uint32_t(v4(f.Remote.Addr())), remote_mask: C.uint32_t(mask(f.Remote.Bits())),
		ue_addr: C.uint32_t(v4(f.UE.Addr())), ue_mask: C.uint32_t(mask(f.UE.Bits())),
		remote_port_lo: C.uint16_t(f.RemotePorts[0]), remote_port_hi: C.uint16_t(f.RemotePorts[1]),
		ue_port_lo: C.uint16_t(f.UEPorts[0]), ue_port_hi: C.uint16_t(f.UEPorts[1]),
	}
	if f.UEAssigned {
		c.flags |= C.UPF_SDF_UE_ASSIGNED
	}
	return c
}

func mask(bits int) uint32 {
	if bits == 0 {
		return 0
	}
	return ^uint32(0) << (32 - bits)
}

func bitsOf(m C.uint32_t) int {
	n := 0
	for v := uint32(m); v&(1<<31) != 0; v <<= 1 {
		n++
	}
	return n
}
