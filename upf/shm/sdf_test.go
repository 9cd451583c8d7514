package shm

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseSDF(t *testing.T) {
	ue := netip.MustParseAddr("10.60.0.1")
	for rule, want := range map[string]SDF{
		"permit out ip from any to assigned": {Remote: anyV4, RemotePorts: anyPorts,
			UE: netip.MustParsePrefix("10.60.0.1/32"), UEAssigned: true, UEPorts: anyPorts},
		"permit out 17 from 10.200.0.2 5201 to assigned": {Proto: 17, Remote: netip.MustParsePrefix("10.200.0.2/32"),
			RemotePorts: [2]uint16{5201, 5201}, UE: netip.MustParsePrefix("10.60.0.1/32"), UEAssigned: true, UEPorts: anyPorts},
		"permit out 6 from 10.0.0.0/8 to 10.60.0.0/16 1000-2000": {Proto: 6, Remote: netip.MustParsePrefix("10.0.0.0/8"),
			RemotePorts: anyPorts, UE: netip.MustParsePrefix("10.60.0.0/16"), UEPorts: [2]uint16{1000, 2000}},
		"permit out 1 from 192.168.1.77/24 to any": {Proto: 1, Remote: netip.MustParsePrefix("192.168.1.0/24"),
			RemotePorts: anyPorts, UE: anyV4, UEPorts: anyPorts},
	} {
		got, err := ParseSDF(rule, ue)
		if err != nil || got != want {
			t.Errorf("%q: got %+v, %v\nwant %+v", rule, got, err, want)
			continue
		}
		again, err := ParseSDF(got.String(), ue)
		if err != nil || again != got {
			t.Errorf("%q written as %q reads back as %+v, %v", rule, got.String(), again, err)
		}
	}
}

func TestParseSDFNamesTheBadPart(t *testing.T) {
	ue := netip.MustParseAddr("10.60.0.1")
	for rule, want := range map[string]string{
		"permit out 17 from any":                                "want \"permit out PROTO",
		"deny out ip from any to assigned":                      `action "deny"`,
		"permit in ip from any to assigned":                     `direction "in"`,
		"permit out udp from any to assigned":                   `protocol "udp"`,
		"permit out 17 from 10.0.0.300 to assigned":             `from address "10.0.0.300"`,
		"permit out 17 from any 80,443 to assigned":             `from ports "80,443": port lists not supported`,
		"permit out 17 from any 90-80 to assigned":              "runs backwards",
		"permit out 17 from any 70000 to assigned":              `port "70000"`,
		"permit out 17 from assigned to any":                    `from "assigned"`,
		"permit out 17 from !10.0.0.1 to assigned":              "negation not supported",
		"permit out 17 from any to assigned frag":               `option "frag"`,
		"permit out 17 from 2001:db8::1 to assigned":            "not an IPv4 address",
		"permit out 17 from any via 10.0.0.1 to assigned extra": `missing "to"`,
	} {
		_, err := ParseSDF(rule, ue)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want it to contain %q", rule, err, want)
		}
	}
	if _, err := ParseSDF("permit out ip from any to assigned", netip.Addr{}); err == nil || !strings.Contains(err.Error(), "no UE IPv4") {
		t.Errorf("assigned without a UE address: %v", err)
	}
}

func FuzzParseSDF(f *testing.F) {
	f.Add("permit out 17 from 10.200.0.2 5201 to assigned")
	f.Add("permit out ip from 10.0.0.0/8 1-2 to any 3-4")
	ue := netip.MustParseAddr("10.60.0.1")
	f.Fuzz(func(t *testing.T, rule string) {
		s, err := ParseSDF(rule, ue)
		if err != nil {
			return
		}
		again, err := ParseSDF(s.String(), ue)
		if err != nil || again != s {
			t.Fatalf("%q -> %q -> %+v, %v", rule, s.String(), again, err)
		}
	})
}
