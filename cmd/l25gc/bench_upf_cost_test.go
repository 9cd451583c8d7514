package main

import (
	"bytes"
	"strings"
	"testing"
)

// The table puts QoS's cost next to each +qos row: the rate it took
// against the same case with QoS off, the "at most 20 %".
func TestUPFTableShowsQoSCost(t *testing.T) {
	rs := []upfResult{
		{Path: "isolated", Direction: "uplink", PacketBytes: 64, Sessions: 1000, PPS: 8e6},
		{Path: "isolated", Direction: "uplink", PacketBytes: 64, Sessions: 1000, PPS: 6e6, QoS: true},
		{Path: "isolated", Direction: "uplink", PacketBytes: 64, Sessions: 10000, PPS: 5e6, QoS: true},
	}
	var out bytes.Buffer
	if err := writeUPFResults(&out, rs, ""); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.HasSuffix(lines[0], "qos cost") || !strings.HasSuffix(lines[2], " 25.0%") {
		t.Errorf("table:\n%s\nwant a qos cost column with 25.0%% on the +qos row", out.String())
	}
	if strings.HasSuffix(lines[1], "%") || strings.HasSuffix(lines[3], "%") {
		t.Errorf("a cost on a row without its QoS-off twin:\n%s", out.String())
	}
}
