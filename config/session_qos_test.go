package config

import (
	"strings"
	"testing"
)

// A subscriber range's session QoS is optional; given, each field is
// checked where it is written.
func TestSubscriberSessionQoS(t *testing.T) {
	bad := []struct{ name, extra, want string }{
		{"GBR 5QI as the default", "    5qi: 1\n", "node.yaml:8: subscribers[0].5qi: 5QI 1: a default QoS flow needs a non-GBR 5QI"},
		{"ARP priority 16", "    arp_priority: 16\n", "node.yaml:8: subscribers[0].arp_priority: ARP priority level 16: must be 1 (highest) to 15"},
		{"bit rate without a unit", "    session_ambr:\n      uplink: \"100\"\n      downlink: 2 Gbps\n", `node.yaml:9: subscribers[0].session_ambr.uplink: bit rate "100"`},
		{"bit rate in lower case", "    session_ambr:\n      uplink: 1 Gbps\n      downlink: 2 gbps\n", `node.yaml:10: subscribers[0].session_ambr.downlink: bit rate "2 gbps"`},
	}
	for _, tc := range bad {
		_, err := Parse("node.yaml", []byte(subscriberRange("208930000000001", 1)+tc.extra))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	good := subscriberRange("208930000000001", 1) + "    session_ambr: {uplink: 100 Mbps, downlink: 300 Mbps}\n    5qi: 8\n    arp_priority: 2\n"
	c, err := Parse("node.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Subscribers[0]
	if r.SessionAMBR == nil || r.SessionAMBR.Downlink != "300 Mbps" || r.FiveQI != 8 || r.ARPPriority != 2 {
		t.Fatalf("range = %+v %+v", r, r.SessionAMBR)
	}
	c, err = Parse("node.yaml", []byte(subscriberRange("208930000000001", 1)))
	if err != nil || c.Subscribers[0].SessionAMBR != nil || c.Subscribers[0].FiveQI != 0 {
		t.Fatalf("a range without session QoS: %v %+v, want it left to the UDR's defaults", err, c.Subscribers[0])
	}
	if d := Default().Subscribers[0]; d.SessionAMBR == nil || d.SessionAMBR.Uplink != "1 Gbps" || d.SessionAMBR.Downlink != "2 Gbps" || d.FiveQI != 9 || d.ARPPriority != 8 {
		t.Fatalf("default range = %+v %+v, want 1 Gbps / 2 Gbps, 5QI 9, ARP 8", d, d.SessionAMBR)
	}
}
