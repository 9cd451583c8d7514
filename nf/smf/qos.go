package smf

// QoS flows of a PDU session (TS 23.501 5.7): what the SMF decided from
// the subscription and the PCF's policy, and its three renderings — the
// UE's QoS rules and flow descriptions (N1, TS 24.501 9.11.4.12-13), the
// gNB's QoS flow parameters (N2, TS 38.413 9.3.1.12) and the UPF's PDRs
// and QERs (N4, TS 29.244).

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// qosFlow is one QoS flow: the default one (no filters) or one for the
// traffic of a PCC rule's SDF filters.
type qosFlow struct {
	QFI        uint8
	FiveQI     uint8
	ARP        models.Arp
	GBR        bool
	MBRUp      uint64 // bit/s, 0 = none
	MBRDown    uint64
	GBRUp      uint64
	GBRDown    uint64
	RuleID     uint8    // QoS rule identifier (TS 24.501 9.11.4.13)
	Precedence uint8    // QoS rule precedence; 255 for the default rule
	Filters    []string // IPFilterRule flow descriptions (TS 29.212 5.4.2), downlink direction
	PCCRuleID  string
}

// defaultQFI and the default rule: the session's first flow.
const (
	defaultQFI        = 1
	defaultPrecedence = 255
	defaultFiveQI     = 9 // TS 23.501 table 5.7.4-1: non-GBR, the internet default
	defaultARP        = 8
)

// gbr5QIs are the standardized GBR and delay-critical GBR 5QIs (TS 23.501
// table 5.7.4-1).
var gbr5QIs = []uint8{1, 2, 3, 4, 65, 66, 67, 71, 72, 73, 74, 75, 76, 82, 83, 84, 85, 86, 87, 88, 89, 90}

func isGBR(fiveQI uint8) bool { return slices.Contains(gbr5QIs, fiveQI) }

// parseBitRate reads an openapi BitRate (TS 29.571 5.5.2: "<number>
// <unit>", units bps, Kbps, Mbps, Gbps, Tbps); "" is 0.
func parseBitRate(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	num, unit, ok := strings.Cut(strings.TrimSpace(s), " ")
	mult := map[string]float64{"bps": 1, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9, "Tbps": 1e12}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if !ok || mult == 0 || err != nil || v < 0 || v*mult > math.MaxInt64 {
		return 0, fmt.Errorf("bit rate %q: want e.g. \"100 Mbps\" (TS 29.571 BitRate)", s)
	}
	return uint64(v * mult), nil
}

// arpOrDefault fills a missing ARP (TS 23.501 5.7.2.2).
func arpOrDefault(a *models.Arp) models.Arp {
	if a == nil || a.PriorityLevel < 1 || a.PriorityLevel > 15 {
		return models.Arp{PriorityLevel: defaultARP, PreemptCap: models.PreemptionCapability_NOT_PREEMPT, PreemptVuln: models.PreemptionVulnerability_PREEMPTABLE}
	}
	return *a
}

// nasRule is the flow's QoS rule for the UE.
func (f qosFlow) nasRule() (nasx.QoSRule, error) {
	r := nasx.QoSRule{ID: f.RuleID, Operation: nasx.RuleOpCreate, Precedence: f.Precedence, QFI: f.QFI}
	if len(f.Filters) == 0 {
		r.Default = true // TS 24.501 6.2.5.1.1.2: the default QoS rule, match-all
		r.Filters = []nasx.PacketFilter{{ID: 1, Direction: nasx.FilterBidirectional}}
		return r, nil
	}
	for i, d := range f.Filters {
		pf, err := packetFilter(d)
		if err != nil {
			return r, err
		}
		pf.ID = uint8(i + 1)
		r.Filters = append(r.Filters, pf)
	}
	return r, nil
}

// nasFlow is the flow's QoS flow description for the UE.
func (f qosFlow) nasFlow() nasx.QoSFlow {
	d := nasx.QoSFlow{QFI: f.QFI, Operation: nasx.RuleOpCreate, FiveQI: f.FiveQI}
	if f.GBR {
		d.GFBRUp, d.GFBRDown, d.MFBRUp, d.MFBRDown = f.GBRUp, f.GBRDown, f.MBRUp, f.MBRDown
	}
	return d
}

// ngapFlow is the flow's QoS parameters for the gNB.
func (f qosFlow) ngapFlow() ngapx.FlowQoS {
	return ngapx.FlowQoS{QFI: f.QFI, FiveQI: f.FiveQI, ARPPriority: uint8(f.ARP.PriorityLevel),
		PreemptionCapability:    f.ARP.PreemptCap == models.PreemptionCapability_MAY_PREEMPT,
		PreemptionVulnerability: f.ARP.PreemptVuln == models.PreemptionVulnerability_PREEMPTABLE,
		GBR:                     f.GBR, MFBRUp: f.MBRUp, MFBRDown: f.MBRDown, GFBRUp: f.GBRUp, GFBRDown: f.GBRDown}
}

// packetFilter turns an IPFilterRule flow description (TS 29.212 5.4.2,
// RFC 6733 4.3 "permit out <proto> from <src> [port] to <dst> [port]",
// written for downlink: from the data network to the UE) into a
// bidirectional NAS packet filter: the source is the remote side, the
// destination the UE ("assigned").
func packetFilter(desc string) (nasx.PacketFilter, error) {
	rule, err := parseFlowDescription(desc)
	if err != nil {
		return nasx.PacketFilter{}, err
	}
	return nasx.PacketFilter{Direction: nasx.FilterBidirectional, Protocol: rule.proto,
		Remote: rule.src, RemotePort: rule.srcPort, Local: rule.dst, LocalPort: rule.dstPort}, nil
}

type flowRule struct {
	proto            uint8
	src, dst         netip.Prefix // invalid: any (or, for dst, the UE's address)
	srcPort, dstPort uint16
}

func parseFlowDescription(desc string) (flowRule, error) {
	var r flowRule
	f := strings.Fields(desc)
	bad := func(why string) (flowRule, error) {
		return r, fmt.Errorf("flow description %q: %s (want \"permit out <proto> from <addr> [port] to <addr> [port]\")", desc, why)
	}
	if len(f) < 7 || f[0] != "permit" || f[1] != "out" || f[3] != "from" {
		return bad("not an IPFilterRule")
	}
	if f[2] != "ip" {
		p, err := strconv.ParseUint(f[2], 10, 8)
		if err != nil {
			return bad("protocol " + f[2])
		}
		r.proto = uint8(p)
	}
	rest := f[4:]
	var err error
	if r.src, r.srcPort, rest, err = endpoint(rest); err != nil {
		return bad(err.Error())
	}
	if len(rest) < 2 || rest[0] != "to" {
		return bad("no \"to\"")
	}
	if r.dst, r.dstPort, rest, err = endpoint(rest[1:]); err != nil {
		return bad(err.Error())
	}
	if len(rest) != 0 {
		return bad("options after the destination are not supported")
	}
	return r, nil
}

// endpoint reads "<addr> [port]" off the fields.
func endpoint(f []string) (netip.Prefix, uint16, []string, error) {
	var p netip.Prefix
	if len(f) == 0 {
		return p, 0, nil, fmt.Errorf("address missing")
	}
	switch a := f[0]; {
	case a == "any" || a == "assigned":
	case strings.Contains(a, "/"):
		q, err := netip.ParsePrefix(a)
		if err != nil || !q.Addr().Is4() {
			return p, 0, nil, fmt.Errorf("address %q is not IPv4", a)
		}
		p = q.Masked()
	default:
		ip, err := netip.ParseAddr(a)
		if err != nil || !ip.Is4() {
			return p, 0, nil, fmt.Errorf("address %q is not IPv4", a)
		}
		p = netip.PrefixFrom(ip, 32)
	}
	f = f[1:]
	if len(f) > 0 && f[0] != "to" {
		port, err := strconv.ParseUint(f[0], 10, 16)
		if err != nil || port == 0 {
			return p, 0, nil, fmt.Errorf("port %q: one port 1..65535 (ranges are not supported)", f[0])
		}
		return p, uint16(port), f[1:], nil
	}
	return p, 0, f, nil
}
