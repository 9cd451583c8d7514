package shm

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// SDF is one SDF filter (TS 29.244 8.2.5) in the form UPF-U matches: an
// IPFilterRule (RFC 6733 4.3) "permit out PROTO from REMOTE [PORTS] to UE
// [PORTS]". "from" is the remote end and "to" the UE, as for a downlink
// packet; uplink packets match with source and destination swapped (TS
// 29.212 5.4.2).
type SDF struct {
	Proto       uint8        // IP protocol; 0 = any ("ip")
	Remote      netip.Prefix // the "from" side; /0 = any
	RemotePorts [2]uint16    // inclusive range; {0, 65535} = any
	UE          netip.Prefix // the "to" side; /0 = any
	UEAssigned  bool         // UE written "assigned": the session's UE address
	UEPorts     [2]uint16
}

var anyPorts = [2]uint16{0, 65535}
var anyV4 = netip.PrefixFrom(netip.IPv4Unspecified(), 0)

// ParseSDF reads an IPFilterRule; ue is the session's UE address, which
// "assigned" stands for (TS 29.244 8.2.5). Errors name the part that is
// wrong. Supported: permit out, protocol "ip" or a number, IPv4 addresses
// and prefixes, "any", "assigned", one port or one range per side.
func ParseSDF(rule string, ue netip.Addr) (SDF, error) {
	f := strings.Fields(rule)
	if len(f) < 6 {
		return SDF{}, fmt.Errorf("flow description %q: want \"permit out PROTO from SRC [PORTS] to DST [PORTS]\"", rule)
	}
	if f[0] != "permit" {
		return SDF{}, fmt.Errorf("flow description %q: action %q: only permit (TS 29.244 8.2.5)", rule, f[0])
	}
	if f[1] != "out" {
		return SDF{}, fmt.Errorf("flow description %q: direction %q: only out (TS 29.212 5.4.2)", rule, f[1])
	}
	var s SDF
	var err error
	if s.Proto, err = parseProto(f[2]); err != nil {
		return SDF{}, fmt.Errorf("flow description %q: %w", rule, err)
	}
	rest := f[3:]
	if rest[0] != "from" {
		return SDF{}, fmt.Errorf("flow description %q: %q where \"from\" belongs", rule, rest[0])
	}
	var assigned bool
	if s.Remote, s.RemotePorts, assigned, rest, err = parseEnd("from", rest[1:], ue); err != nil {
		return SDF{}, fmt.Errorf("flow description %q: %w", rule, err)
	}
	if assigned {
		return SDF{}, fmt.Errorf("flow description %q: from \"assigned\": the UE is the \"to\" side of an out rule", rule)
	}
	if len(rest) == 0 || rest[0] != "to" {
		return SDF{}, fmt.Errorf("flow description %q: missing \"to\"", rule)
	}
	if s.UE, s.UEPorts, s.UEAssigned, rest, err = parseEnd("to", rest[1:], ue); err != nil {
		return SDF{}, fmt.Errorf("flow description %q: %w", rule, err)
	}
	if len(rest) > 0 {
		return SDF{}, fmt.Errorf("flow description %q: option %q not supported", rule, rest[0])
	}
	return s, nil
}

func parseProto(p string) (uint8, error) {
	if p == "ip" {
		return 0, nil
	}
	n, err := strconv.ParseUint(p, 10, 8)
	if err != nil {
		return 0, fmt.Errorf("protocol %q: want ip or a number 0-255", p)
	}
	return uint8(n), nil
}

// parseEnd reads "ADDR [PORTS]" of the side named side and returns the
// tokens after it.
func parseEnd(side string, f []string, ue netip.Addr) (netip.Prefix, [2]uint16, bool, []string, error) {
	if len(f) == 0 {
		return netip.Prefix{}, anyPorts, false, nil, fmt.Errorf("%s: missing address", side)
	}
	pfx, assigned, err := parseAddr(f[0], ue)
	if err != nil {
		return netip.Prefix{}, anyPorts, false, nil, fmt.Errorf("%s address %q: %w", side, f[0], err)
	}
	f = f[1:]
	ports := anyPorts
	if len(f) > 0 && f[0] != "to" && startsWithDigit(f[0]) {
		if ports, err = parsePorts(f[0]); err != nil {
			return netip.Prefix{}, anyPorts, false, nil, fmt.Errorf("%s ports %q: %w", side, f[0], err)
		}
		f = f[1:]
	}
	return pfx, ports, assigned, f, nil
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

func parseAddr(a string, ue netip.Addr) (netip.Prefix, bool, error) {
	switch {
	case a == "any":
		return anyV4, false, nil
	case a == "assigned":
		if !ue.Is4() {
			return netip.Prefix{}, false, fmt.Errorf("\"assigned\" but the PDR has no UE IPv4 address")
		}
		return netip.PrefixFrom(ue, 32), true, nil
	case strings.HasPrefix(a, "!"):
		return netip.Prefix{}, false, fmt.Errorf("negation not supported")
	}
	if !strings.Contains(a, "/") {
		ip, err := netip.ParseAddr(a)
		if err != nil || !ip.Is4() {
			return netip.Prefix{}, false, fmt.Errorf("not an IPv4 address")
		}
		return netip.PrefixFrom(ip, 32), false, nil
	}
	p, err := netip.ParsePrefix(a)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, false, fmt.Errorf("not an IPv4 prefix")
	}
	return p.Masked(), false, nil
}

func parsePorts(p string) ([2]uint16, error) {
	if strings.Contains(p, ",") {
		return anyPorts, fmt.Errorf("port lists not supported: one port or one range")
	}
	lo, hi, isRange := strings.Cut(p, "-")
	l, err := strconv.ParseUint(lo, 10, 16)
	if err != nil {
		return anyPorts, fmt.Errorf("port %q: want 0-65535", lo)
	}
	h := l
	if isRange {
		if h, err = strconv.ParseUint(hi, 10, 16); err != nil {
			return anyPorts, fmt.Errorf("port %q: want 0-65535", hi)
		}
	}
	if h < l {
		return anyPorts, fmt.Errorf("range %d-%d runs backwards", l, h)
	}
	return [2]uint16{uint16(l), uint16(h)}, nil
}

// String writes s back as an IPFilterRule that ParseSDF reads to s again.
func (s SDF) String() string {
	proto := "ip"
	if s.Proto != 0 {
		proto = strconv.Itoa(int(s.Proto))
	}
	ue := formatAddr(s.UE)
	if s.UEAssigned {
		ue = "assigned"
	}
	return fmt.Sprintf("permit out %s from %s%s to %s%s", proto,
		formatAddr(s.Remote), formatPorts(s.RemotePorts), ue, formatPorts(s.UEPorts))
}

func formatAddr(p netip.Prefix) string {
	switch {
	case p.Bits() == 0:
		return "any"
	case p.Bits() == 32:
		return p.Addr().String()
	}
	return p.String()
}

func formatPorts(p [2]uint16) string {
	switch {
	case p == anyPorts:
		return ""
	case p[0] == p[1]:
		return " " + strconv.Itoa(int(p[0]))
	}
	return fmt.Sprintf(" %d-%d", p[0], p[1])
}
