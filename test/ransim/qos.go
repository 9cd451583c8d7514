package ransim

import (
	"encoding/binary"
	"net"
	"sort"

	"github.com/free5gc/nas/nasType"
)

// qosRules are a session's QoS rules (TS 24.501 9.11.4.13) as the UE
// applies them to uplink packets: the QFI of the first rule, in order of
// precedence, with an uplink packet filter that matches (TS 24.501 6.2.5.1.1.2,
// TS 23.501 5.7.1.5).
type qosRules []nasType.QoSRule

// apply merges rules a Modification Command sends into the UE's set
// (TS 24.501 6.4.2.3): create or replace by identifier, delete, or change
// the precedence and QFI while keeping the packet filters.
func (r qosRules) apply(changes nasType.QoSRules) qosRules {
	out := append(qosRules(nil), r...)
	for _, c := range changes {
		i := out.index(c.Identifier)
		switch {
		case c.Operation == nasType.OperationCodeDeleteExistingQoSRule:
			if i >= 0 {
				out = append(out[:i], out[i+1:]...)
			}
		case c.Operation == nasType.OperationCodeModifyExistingQoSRuleWithoutModifyingPacketFilters && i >= 0:
			out[i].Precedence, out[i].QFI, out[i].Segregation = c.Precedence, c.QFI, c.Segregation
		case c.Operation == nasType.OperationCodeModifyExistingQoSRuleAndAddPacketFilters && i >= 0:
			out[i].PacketFilterList = append(out[i].PacketFilterList, c.PacketFilterList...)
			out[i].Precedence, out[i].QFI = c.Precedence, c.QFI
		case i >= 0:
			out[i] = c
		default:
			out = append(out, c)
		}
	}
	return out
}

func (r qosRules) index(id uint8) int {
	for i, q := range r {
		if q.Identifier == id {
			return i
		}
	}
	return -1
}

// uplinkQFI is the QFI of the IPv4 packet pkt: the matching rule of
// highest precedence (lowest value), else the default rule's QFI.
func (r qosRules) uplinkQFI(pkt []byte) uint8 {
	sorted := append(qosRules(nil), r...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Precedence < sorted[j].Precedence })
	var def uint8
	for _, rule := range sorted {
		if rule.DQR {
			def = rule.QFI
		}
		for _, f := range rule.PacketFilterList {
			if f.Direction == nasType.PacketFilterDirectionDownlink {
				continue
			}
			if matches(f.Components, pkt) {
				return rule.QFI
			}
		}
	}
	if def == 0 && len(r) > 0 {
		def = r[0].QFI
	}
	return def
}

// matches says whether every component of a packet filter holds for an
// uplink IPv4 packet (TS 24.501 9.11.4.13: remote is the destination,
// local the UE's side). A component the UE cannot evaluate does not match.
func matches(components nasType.PacketFilterComponentList, pkt []byte) bool {
	if len(pkt) < 20 || pkt[0]>>4 != 4 {
		return false
	}
	src, dst, proto := net.IP(pkt[12:16]), net.IP(pkt[16:20]), pkt[9]
	sport, dport, ports := transportPorts(pkt)
	for _, c := range components {
		ok := false
		switch v := c.(type) {
		case *nasType.PacketFilterMatchAll:
			ok = true
		case *nasType.PacketFilterIPv4RemoteAddress:
			ok = dst.Mask(v.Mask).Equal(v.Address.Mask(v.Mask))
		case *nasType.PacketFilterIPv4LocalAddress:
			ok = src.Mask(v.Mask).Equal(v.Address.Mask(v.Mask))
		case *nasType.PacketFilterProtocolIdentifier:
			ok = proto == v.Value
		case *nasType.PacketFilterSingleRemotePort:
			ok = ports && dport == v.Value
		case *nasType.PacketFilterSingleLocalPort:
			ok = ports && sport == v.Value
		case *nasType.PacketFilterRemotePortRange:
			ok = ports && dport >= v.LowLimit && dport <= v.HighLimit
		case *nasType.PacketFilterLocalPortRange:
			ok = ports && sport >= v.LowLimit && sport <= v.HighLimit
		}
		if !ok {
			return false
		}
	}
	return len(components) > 0
}

// transportPorts reads the UDP/TCP ports of an IPv4 packet.
func transportPorts(pkt []byte) (src, dst uint16, ok bool) {
	ihl := int(pkt[0]&0x0F) * 4
	if (pkt[9] != 6 && pkt[9] != 17) || len(pkt) < ihl+4 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint16(pkt[ihl:]), binary.BigEndian.Uint16(pkt[ihl+2:]), true
}
