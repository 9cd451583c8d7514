package nasx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"net/netip"
)

// The 5GSM QoS information elements (TS 24.501 9.11.4.12 QoS flow
// descriptions, 9.11.4.13 QoS rules, 9.11.4.14 Session-AMBR): encoded by
// the SMF, parsed by the UE (and by tests, to check what the SMF built).

// QoS rule operation codes (TS 24.501 9.11.4.13, table 9.11.4.13.1).
const (
	RuleOpCreate uint8 = 1
	RuleOpDelete uint8 = 2
)

// QoS flow description operation codes (TS 24.501 9.11.4.12, table
// 9.11.4.12.1): create and delete share the rules' codes; modify existing
// is the flows' own.
const (
	FlowOpCreate uint8 = 1
	FlowOpDelete uint8 = 2
	FlowOpModify uint8 = 3
)

// Packet filter directions (TS 24.501 9.11.4.13).
const (
	FilterDownlink      uint8 = 1
	FilterUplink        uint8 = 2
	FilterBidirectional uint8 = 3
)

// Packet filter component types (TS 24.501 9.11.4.13, table 9.11.4.13.1).
const (
	componentMatchAll     uint8 = 0x01
	componentIPv4Remote   uint8 = 0x10
	componentIPv4Local    uint8 = 0x11
	componentProtocol     uint8 = 0x30
	componentLocalPort    uint8 = 0x40
	componentRemotePort   uint8 = 0x50
	maxPacketFiltersInIE  int   = 15 // four bits of the rule's filter count
	maxRuleOctets         int   = 0xFFFF
	qosFlowParam5QI       uint8 = 0x01
	qosFlowParamGFBRUp    uint8 = 0x02
	qosFlowParamGFBRDown  uint8 = 0x03
	qosFlowParamMFBRUp    uint8 = 0x04
	qosFlowParamMFBRDown  uint8 = 0x05
	flowDescEBitParamList uint8 = 0x40
)

// PacketFilter is one packet filter of a QoS rule. A zero filter (no
// component set) matches every packet (the match-all component). Remote is
// the data network side, Local the UE's.
type PacketFilter struct {
	ID         uint8 // 0..15
	Direction  uint8 // FilterDownlink, FilterUplink or FilterBidirectional
	Remote     netip.Prefix
	Local      netip.Prefix
	Protocol   uint8 // 0: any
	RemotePort uint16
	LocalPort  uint16
}

// MatchAll says the filter has no component but match-all.
func (f PacketFilter) MatchAll() bool {
	return !f.Remote.IsValid() && !f.Local.IsValid() && f.Protocol == 0 && f.RemotePort == 0 && f.LocalPort == 0
}

// QoSRule is one QoS rule (TS 24.501 9.11.4.13): which uplink packets go
// into the QoS flow QFI.
type QoSRule struct {
	ID         uint8
	Operation  uint8 // RuleOpCreate or RuleOpDelete
	Default    bool  // DQR: the session's default QoS rule
	Filters    []PacketFilter
	Precedence uint8
	QFI        uint8
}

// QoSFlow is one QoS flow description (TS 24.501 9.11.4.12); rates in
// bit/s, 0 = left out.
type QoSFlow struct {
	QFI       uint8
	Operation uint8 // FlowOpCreate (0 reads as create), FlowOpDelete or FlowOpModify
	FiveQI    uint8
	GFBRUp    uint64
	GFBRDown  uint64
	MFBRUp    uint64
	MFBRDown  uint64
}

// EncodeQoSRules gives the value part of a QoS rules IE.
func EncodeQoSRules(rules []QoSRule) ([]byte, error) {
	var out []byte
	for _, r := range rules {
		b, err := encodeQoSRule(r)
		if err != nil {
			return nil, fmt.Errorf("QoS rule %d: %w", r.ID, err)
		}
		out = append(out, b...)
	}
	if len(out) > maxRuleOctets {
		return nil, fmt.Errorf("QoS rules of %d octets: at most %d", len(out), maxRuleOctets)
	}
	return out, nil
}

func encodeQoSRule(r QoSRule) ([]byte, error) {
	if r.ID == 0 {
		return nil, errors.New("QoS rule identifier 0 is reserved")
	}
	if len(r.Filters) > maxPacketFiltersInIE {
		return nil, fmt.Errorf("%d packet filters: at most %d", len(r.Filters), maxPacketFiltersInIE)
	}
	if r.Operation == RuleOpDelete {
		// TS 24.501 9.11.4.13: a delete carries no filters, precedence or QFI.
		return ruleWithHeader(r.ID, []byte{r.Operation << 5}), nil
	}
	if r.QFI == 0 || r.QFI > 63 {
		return nil, fmt.Errorf("QFI %d: want 1..63", r.QFI)
	}
	body := []byte{r.Operation<<5 | boolBit(r.Default)<<4 | uint8(len(r.Filters))}
	for _, f := range r.Filters {
		fb, err := encodePacketFilter(f)
		if err != nil {
			return nil, err
		}
		body = append(body, fb...)
	}
	body = append(body, r.Precedence, r.QFI&0x3F)
	return ruleWithHeader(r.ID, body), nil
}

func ruleWithHeader(id uint8, body []byte) []byte {
	out := []byte{id, 0, 0}
	binary.BigEndian.PutUint16(out[1:], uint16(len(body)))
	return append(out, body...)
}

func boolBit(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func encodePacketFilter(f PacketFilter) ([]byte, error) {
	if f.ID > 15 || f.Direction == 0 || f.Direction > 3 {
		return nil, fmt.Errorf("packet filter %d direction %d: want id 0..15, direction 1..3", f.ID, f.Direction)
	}
	var c []byte
	if f.MatchAll() {
		c = []byte{componentMatchAll}
	}
	for _, a := range []struct {
		typ uint8
		p   netip.Prefix
	}{{componentIPv4Remote, f.Remote}, {componentIPv4Local, f.Local}} {
		if !a.p.IsValid() {
			continue
		}
		if !a.p.Addr().Is4() {
			return nil, fmt.Errorf("packet filter %d: %v is not IPv4", f.ID, a.p)
		}
		c = append(c, a.typ)
		c = append(c, a.p.Masked().Addr().AsSlice()...)
		c = append(c, mask4(a.p.Bits())...)
	}
	if f.Protocol != 0 {
		c = append(c, componentProtocol, f.Protocol)
	}
	if f.LocalPort != 0 {
		c = append(c, componentLocalPort, byte(f.LocalPort>>8), byte(f.LocalPort))
	}
	if f.RemotePort != 0 {
		c = append(c, componentRemotePort, byte(f.RemotePort>>8), byte(f.RemotePort))
	}
	return append([]byte{f.Direction<<4 | f.ID, byte(len(c))}, c...), nil
}

func mask4(bits int) []byte {
	m := uint32(0xFFFFFFFF) << (32 - bits)
	if bits == 0 {
		m = 0
	}
	return binary.BigEndian.AppendUint32(nil, m)
}

// ParseQoSRules reads the value part of a QoS rules IE (create and delete
// operations; the others are reported as errors).
func ParseQoSRules(b []byte) ([]QoSRule, error) {
	var out []QoSRule
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("QoS rule header of %d octets", len(b))
		}
		n := int(binary.BigEndian.Uint16(b[1:3]))
		if n < 1 || 3+n > len(b) {
			return nil, fmt.Errorf("QoS rule %d: length %d past the IE", b[0], n)
		}
		r, err := parseQoSRule(b[0], b[3:3+n])
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		b = b[3+n:]
	}
	return out, nil
}

func parseQoSRule(id uint8, b []byte) (QoSRule, error) {
	r := QoSRule{ID: id, Operation: b[0] >> 5, Default: b[0]&0x10 != 0}
	count := int(b[0] & 0x0F)
	if r.Operation == RuleOpDelete {
		return r, nil
	}
	if r.Operation != RuleOpCreate {
		return r, fmt.Errorf("QoS rule %d: operation %d not supported", id, r.Operation)
	}
	rest := b[1:]
	for i := 0; i < count; i++ {
		if len(rest) < 2 || int(rest[1])+2 > len(rest) {
			return r, fmt.Errorf("QoS rule %d: packet filter %d cut short", id, i)
		}
		f, err := parsePacketFilter(rest[0], rest[2:2+int(rest[1])])
		if err != nil {
			return r, fmt.Errorf("QoS rule %d: %w", id, err)
		}
		r.Filters = append(r.Filters, f)
		rest = rest[2+int(rest[1]):]
	}
	if len(rest) != 2 {
		return r, fmt.Errorf("QoS rule %d: %d octets after the filters, want precedence and QFI", id, len(rest))
	}
	r.Precedence, r.QFI = rest[0], rest[1]&0x3F
	return r, nil
}

func parsePacketFilter(head uint8, c []byte) (PacketFilter, error) {
	f := PacketFilter{ID: head & 0x0F, Direction: head >> 4 & 0x03}
	for len(c) > 0 {
		need := map[uint8]int{componentMatchAll: 0, componentIPv4Remote: 8, componentIPv4Local: 8,
			componentProtocol: 1, componentLocalPort: 2, componentRemotePort: 2}
		n, ok := need[c[0]]
		if !ok {
			return f, fmt.Errorf("packet filter %d: component type %#x not supported", f.ID, c[0])
		}
		if len(c) < 1+n {
			return f, fmt.Errorf("packet filter %d: component %#x cut short", f.ID, c[0])
		}
		v := c[1 : 1+n]
		switch c[0] {
		case componentIPv4Remote, componentIPv4Local:
			p, err := prefixOf(v)
			if err != nil {
				return f, err
			}
			if c[0] == componentIPv4Remote {
				f.Remote = p
			} else {
				f.Local = p
			}
		case componentProtocol:
			f.Protocol = v[0]
		case componentLocalPort:
			f.LocalPort = binary.BigEndian.Uint16(v)
		case componentRemotePort:
			f.RemotePort = binary.BigEndian.Uint16(v)
		}
		c = c[1+n:]
	}
	return f, nil
}

func prefixOf(v []byte) (netip.Prefix, error) {
	addr := netip.AddrFrom4([4]byte(v[:4]))
	m := binary.BigEndian.Uint32(v[4:8])
	bits := 0
	for m&0x80000000 != 0 {
		bits++
		m <<= 1
	}
	if m != 0 {
		return netip.Prefix{}, fmt.Errorf("address mask %x is not contiguous", v[4:8])
	}
	return netip.PrefixFrom(addr, bits), nil
}

// EncodeQoSFlows gives the value part of a QoS flow descriptions IE.
func EncodeQoSFlows(flows []QoSFlow) ([]byte, error) {
	var out []byte
	for _, f := range flows {
		b, err := encodeQoSFlow(f)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

// encodeQoSFlow writes one description. A create or a modify carries its
// whole parameter list with the E bit set (TS 24.501 9.11.4.12: for
// "modify existing", E = 1 replaces the parameters the UE had, so the UE
// never keeps a stale GFBR or MFBR); a delete carries none (E = 0).
func encodeQoSFlow(f QoSFlow) ([]byte, error) {
	if f.QFI == 0 || f.QFI > 63 {
		return nil, fmt.Errorf("QoS flow QFI %d: want 1..63", f.QFI)
	}
	op := f.Operation
	switch op {
	case FlowOpDelete:
		return []byte{f.QFI, FlowOpDelete << 5, 0}, nil
	case 0:
		op = FlowOpCreate
	case FlowOpCreate, FlowOpModify:
	default:
		return nil, fmt.Errorf("QoS flow %d: operation code %d not supported", f.QFI, op)
	}
	params := [][]byte{{qosFlowParam5QI, 1, f.FiveQI}}
	for _, p := range []struct {
		id   uint8
		rate uint64
	}{{qosFlowParamGFBRUp, f.GFBRUp}, {qosFlowParamGFBRDown, f.GFBRDown}, {qosFlowParamMFBRUp, f.MFBRUp}, {qosFlowParamMFBRDown, f.MFBRDown}} {
		if p.rate != 0 {
			unit, v := BitRateUnits(p.rate)
			params = append(params, []byte{p.id, 3, unit, byte(v >> 8), byte(v)})
		}
	}
	out := []byte{f.QFI, op << 5, flowDescEBitParamList | uint8(len(params))}
	for _, p := range params {
		out = append(out, p...)
	}
	return out, nil
}

// ParseQoSFlows reads the value part of a QoS flow descriptions IE.
func ParseQoSFlows(b []byte) ([]QoSFlow, error) {
	var out []QoSFlow
	for len(b) > 0 {
		if len(b) < 3 {
			return nil, fmt.Errorf("QoS flow description of %d octets", len(b))
		}
		f := QoSFlow{QFI: b[0] & 0x3F, Operation: b[1] >> 5}
		n := int(b[2] & 0x3F)
		b = b[3:]
		for i := 0; i < n; i++ {
			if len(b) < 2 || len(b) < 2+int(b[1]) {
				return nil, fmt.Errorf("QoS flow %d: parameter %d cut short", f.QFI, i)
			}
			readFlowParam(&f, b[0], b[2:2+int(b[1])])
			b = b[2+int(b[1]):]
		}
		out = append(out, f)
	}
	return out, nil
}

func readFlowParam(f *QoSFlow, id uint8, v []byte) {
	if id == qosFlowParam5QI && len(v) == 1 {
		f.FiveQI = v[0]
		return
	}
	if len(v) != 3 {
		return
	}
	rate := BitRate(v[0], binary.BigEndian.Uint16(v[1:]))
	switch id {
	case qosFlowParamGFBRUp:
		f.GFBRUp = rate
	case qosFlowParamGFBRDown:
		f.GFBRDown = rate
	case qosFlowParamMFBRUp:
		f.MFBRUp = rate
	case qosFlowParamMFBRDown:
		f.MFBRDown = rate
	}
}

// unitKbps is the bit rate of one step of unit u (TS 24.501 9.11.4.14:
// 1 = 1 Kbps, each next unit ×4, and 6 = 1 Mbps, 11 = 1 Gbps, … so every
// fifth unit is ×1000).
func unitKbps(u uint8) uint64 {
	k := uint64(u - 1)
	v := uint64(1)
	for range k % 5 {
		v *= 4
	}
	for range k / 5 {
		v *= 1000
	}
	return v
}

// BitRateUnits gives the smallest unit of TS 24.501 9.11.4.14 in which
// bps (rounded up to whole Kbps) fits 16 bits, and the value in it.
func BitRateUnits(bps uint64) (unit uint8, value uint16) {
	kbps := (bps + 999) / 1000
	for u := uint8(1); u <= 25; u++ {
		step := unitKbps(u)
		if v := (kbps + step - 1) / step; v <= 0xFFFF {
			return u, uint16(v)
		}
	}
	return 25, 0xFFFF
}

// BitRate is the rate in bit/s of value in unit (TS 24.501 9.11.4.14);
// 0 and units above 25 are not used and read as 0, and rates beyond what
// 64 bits hold (units 24-25 with large values) saturate.
func BitRate(unit uint8, value uint16) uint64 {
	if unit == 0 || unit > 25 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(value), unitKbps(unit)*1000)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// EncodeSessionAMBR gives the 6 value octets of Session-AMBR (TS 24.501
// 9.11.4.14): downlink unit and value, then uplink.
func EncodeSessionAMBR(downlink, uplink uint64) [6]byte {
	du, dv := BitRateUnits(downlink)
	uu, uv := BitRateUnits(uplink)
	return [6]byte{du, byte(dv >> 8), byte(dv), uu, byte(uv >> 8), byte(uv)}
}
