package pfcpx

import (
	"fmt"
	"net"
	"strings"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/xio"
)

// Networks N4 runs over.
const (
	NetUDP = "udp"
	NetXIO = "xio"
)

// ParseAddr splits an N4 address: "udp:IP:port", "xio:NAME" (an X-IO
// datagram socket's name, any string, e.g. "127.0.0.1:8805"), or a bare
// "IP:port", which is UDP.
func ParseAddr(s string) (network string, addr net.Addr, err error) {
	network, rest, ok := strings.Cut(s, ":")
	if !ok || (network != NetUDP && network != NetXIO) {
		network, rest = NetUDP, s
	}
	if network == NetXIO {
		if rest == "" {
			return "", nil, fmt.Errorf("N4 address %q: no X-IO socket name after xio:", s)
		}
		return network, xio.Addr(rest), nil
	}
	host, _, err := net.SplitHostPort(rest)
	if err != nil {
		return "", nil, fmt.Errorf("N4 address %q: want udp:IP:port or xio:NAME: %v", s, err)
	}
	if net.ParseIP(host) == nil {
		return "", nil, fmt.Errorf("N4 address %q: %q is not an IP address", s, host)
	}
	u, err := net.ResolveUDPAddr("udp", rest)
	if err != nil {
		return "", nil, fmt.Errorf("N4 address %q: %v", s, err)
	}
	return NetUDP, u, nil
}

// Listen opens a PFCP socket at addr over network (NetUDP or NetXIO; X-IO
// needs xio.Init first).
func Listen(network, addr string) (net.PacketConn, error) {
	switch network {
	case NetUDP:
		return net.ListenPacket("udp", addr)
	case NetXIO:
		return xio.ListenPacket(addr)
	}
	return nil, fmt.Errorf("pfcp: unknown network %q (want udp or xio)", network)
}

// OverXIO reports whether N4 runs over X-IO on a node of cfg: when its
// SBI does (sbi.transport xio or xio-socket, both attach to the onvm
// manager), as DESIGN.md's hybrid asks; UDP otherwise.
func OverXIO(cfg *config.Config) bool {
	return cfg.SBI.Transport == "xio" || cfg.SBI.Transport == "xio-socket"
}

// Addr is the N4 address at which an SMF on this node reaches the node's
// UPF-C: its upf.c.pfcp_addr over X-IO when OverXIO, over UDP otherwise.
// (UPF-C serves UDP at that address in both cases, for SMFs elsewhere.)
func Addr(cfg *config.Config) string {
	if OverXIO(cfg) {
		return NetXIO + ":" + cfg.UPF.C.PFCPAddr
	}
	return NetUDP + ":" + cfg.UPF.C.PFCPAddr
}
