package config

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/upf/rules"
)

// SMF configures the session management function (TS 23.501 6.2.2).
type SMF struct {
	NF `yaml:",inline"`
	// DNNs are the data networks the SMF serves, each with the pool its
	// UEs' IPv4 addresses come from (TS 23.501 5.8.2.2) and the DNS
	// servers it tells them (TS 24.501 9.11.4.6, extended PCO).
	DNNs []SMFDNN `yaml:"dnns"`
	// UPF is the user plane the SMF sets sessions up in (N4, TS 29.244).
	UPF SMFUPF `yaml:"upf"`
	// QoS is how the SMF weighs a session's QoS flows.
	QoS SMFQoS `yaml:"qos,omitempty"`
}

// SMFQoS weighs QoS flows by their 5QI (TS 23.501 Table 5.7.4-1).
type SMFQoS struct {
	// Weights map a 5QI (its decimal value as the key) to its flows' share
	// of the Session-AMBR left once every GBR flow has its GBR: UPF-U
	// shares that rest max-min fairly by weight (issue 13), so {"1": 3,
	// "9": 1} gives a 5QI 1 flow three parts for each part of the default
	// flow (5QI 9). A 5QI not listed weighs 1; with none listed every flow
	// weighs 1 and N4 carries no weight (the vendor-specific QER IE of
	// protocol/pfcpx).
	Weights map[string]int `yaml:"weights,omitempty"`
}

// Weight is the weight of flows of 5QI fiveQI: 0 when no weights are
// configured (none is sent), else the configured one or 1.
func (q SMFQoS) Weight(fiveQI uint8) uint16 {
	if len(q.Weights) == 0 {
		return 0
	}
	for k, w := range q.Weights {
		if n, err := strconv.ParseUint(k, 10, 8); err == nil && uint8(n) == fiveQI {
			return uint16(w) // validated: 1..rules.MaxWeight
		}
	}
	return 1
}

// SMFDNN is one data network of the SMF.
type SMFDNN struct {
	DNN  string   `yaml:"dnn"`
	Pool string   `yaml:"pool"` // IPv4 CIDR, e.g. 10.60.0.0/16
	DNS  []string `yaml:"dns"`  // IPv4 addresses
}

// SMFUPF says where the SMF reaches its UPF.
type SMFUPF struct {
	// N4Addr is the UPF's N4 address, passed as it is to the PFCP client
	// (protocol/pfcpx: udp:IP:port, xio:NAME, or a bare IP:port over UDP);
	// "" = this node's UPF-C at upf.c.pfcp_addr (see SMFUPFAddr).
	N4Addr string `yaml:"n4_addr"`
}

// SMFUPFAddr is the N4 address of the SMF's UPF: smf.upf.n4_addr, else
// this node's UPF-C — over X-IO when the NFs of this node talk over X-IO
// and it runs UPF-C (N4 over shared memory on one node, like the SBI),
// else over UDP at upf.c.pfcp_addr.
func (c *Config) SMFUPFAddr() string {
	switch {
	case c.SMF.UPF.N4Addr != "":
		return c.SMF.UPF.N4Addr
	case (c.SBI.Transport == "xio" || c.SBI.Transport == "xio-socket") && c.Runs("upf-c"):
		return "xio:" + c.UPF.C.PFCPAddr
	}
	return "udp:" + c.UPF.C.PFCPAddr
}

// defaultSMF serves DNN internet from the lab's UE pool (DESIGN.md, the
// lab addresses) with public resolvers.
func defaultSMF() SMF {
	return SMF{DNNs: []SMFDNN{{DNN: "internet", Pool: "10.60.0.0/16", DNS: []string{"8.8.8.8", "1.1.1.1"}}}}
}

// smf: every DNN is named once, is a DNN, and has an IPv4 pool with room
// for a UE (at least a /30: the network and broadcast addresses are never
// handed out) that overlaps no other DNN's.
func (v *validator) smf(s *SMF) {
	v.smfQoS(&s.QoS)
	var pools []netip.Prefix
	seen := map[string]bool{}
	for i, d := range s.DNNs {
		f := fmt.Sprintf("smf.dnns[%d]", i)
		if _, err := domain.ParseDNN(d.DNN); err != nil {
			v.fail(f+".dnn", "%v", err)
		}
		if seen[strings.ToLower(d.DNN)] {
			v.fail(f+".dnn", "DNN %q is listed twice", d.DNN)
		}
		seen[strings.ToLower(d.DNN)] = true
		if p, ok := v.pool(f+".pool", d.Pool, pools); ok {
			pools = append(pools, p)
		}
		for j, a := range d.DNS {
			if ip := net.ParseIP(a); ip == nil || ip.To4() == nil {
				v.fail(fmt.Sprintf("%s.dns[%d]", f, j), "want an IPv4 address, got %q", a)
			}
		}
	}
}

func (v *validator) pool(field, s string, others []netip.Prefix) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil || !p.Addr().Is4():
		v.fail(field, "want an IPv4 prefix such as 10.60.0.0/16, got %q", s)
		return p, false
	case p.Bits() > 30:
		v.fail(field, "%s has no room for UEs: want /30 or wider", s)
		return p, false
	case p.Masked() != p:
		v.fail(field, "%s has host bits set: the prefix is %s", s, p.Masked())
		return p, false
	}
	for _, o := range others {
		if o.Overlaps(p) {
			v.fail(field, "%s overlaps the pool %s of another DNN", s, o)
			return p, false
		}
	}
	return p, true
}

// smfQoS: every key of smf.qos.weights is a 5QI, named once, and every
// weight is within 1..rules.MaxWeight.
func (v *validator) smfQoS(q *SMFQoS) {
	keys := slices.Sorted(maps.Keys(q.Weights))
	seen := map[uint64]string{}
	for _, k := range keys {
		f := "smf.qos.weights." + k
		n, err := strconv.ParseUint(k, 10, 8)
		if err != nil || n == 0 || n == 255 {
			v.fail(f, "%q is not a 5QI: want 1..254 (TS 23.501 Table 5.7.4-1; 0 and 255 are reserved, TS 24.501 9.11.4.12)", k)
			continue
		}
		if other, dup := seen[n]; dup {
			v.fail(f, "5QI %d is listed twice (%q and %q)", n, other, k)
		}
		seen[n] = k
		if w := q.Weights[k]; w < 1 || w > rules.MaxWeight {
			v.fail(f, "weight %d of 5QI %d: want 1..%d (the flow's share of the Session-AMBR beside the session's other flows)", w, n, rules.MaxWeight)
		}
	}
}
