package n2

import (
	"net"
	"net/netip"

	"golang.org/x/net/bpf"
	"golang.org/x/net/ipv4"
)

// A raw socket for IP protocol 132 receives every SCTP packet the host
// receives, and on loopback that includes the packets its own process sends
// to the peer: each message woke both ends' readers, one of them for a
// packet it then discarded. A socket filter (classic BPF, run by the kernel
// before the packet is queued) keeps only packets addressed to our SCTP
// port, so a reader wakes only for its own.

// filterSCTPPort attaches the filter to an IPv4 raw socket; an IPv6 raw
// socket's filter would see no IP header and is left without one (the
// user-space checks stay either way).
func filterSCTPPort(c *net.IPConn, ip netip.Addr, port uint16) error {
	if ip.IsValid() && ip.Is6() && !ip.Is4In6() {
		return nil
	}
	prog, err := sctpPortFilter(port)
	if err != nil {
		return err
	}
	return ipv4.NewPacketConn(c).SetBPF(prog)
}

// sctpPortFilter accepts an IPv4 packet whose SCTP destination port
// (RFC 4960 3.1, two octets past the IP header) is port.
func sctpPortFilter(port uint16) ([]bpf.RawInstruction, error) {
	return bpf.Assemble([]bpf.Instruction{
		bpf.LoadMemShift{Off: 0},          // X = IP header length (IHL x 4)
		bpf.LoadIndirect{Off: 2, Size: 2}, // A = SCTP destination port
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(port), SkipFalse: 1},
		bpf.RetConstant{Val: 1 << 18}, // keep: up to 256 KiB
		bpf.RetConstant{Val: 0},       // drop
	})
}
