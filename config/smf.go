package config

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/l25gc/l25gc/domain"
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
