package main

import "testing"

// bench qos flags pick the paper's cases, --flows N, or a custom case
// whose four rates must all be given.
func TestBenchQoSCaseFlags(t *testing.T) {
	c, err := qosBenchFlags{name: "2"}.qosCase()
	if err != nil || c.Flows[0].GBR != 4e6 || c.Flows[0].MBR != 7e6 || c.AMBR != 10e6 {
		t.Fatalf("case 2: %+v %v", c, err)
	}
	c, err = qosBenchFlags{name: "custom", ambr: "20 Mbps", gbr: "5 Mbps", mbr: "12 Mbps", offered: "20 Mbps"}.qosCase()
	if err != nil || c.AMBR != 20e6 || c.Flows[0].GBR != 5e6 || c.Flows[0].MBR != 12e6 || c.Flows[1].Offered != 20e6 || c.Flows[1].QoS {
		t.Fatalf("custom: %+v %v", c, err)
	}
	if c, err = (qosBenchFlags{name: "1", flows: 4}).qosCase(); err != nil || len(c.Flows) != 4 {
		t.Fatalf("--flows 4: %+v %v", c, err)
	}
	for _, bad := range []qosBenchFlags{{name: "3"}, {name: "custom", ambr: "20 Mbps"}, {name: "custom", ambr: "x", gbr: "1 Mbps", mbr: "2 Mbps", offered: "3 Mbps"}, {flows: 1}} {
		if _, err := bad.qosCase(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// --weights gives the core's smf.qos.weights; the expected rates share
// the excess by them (AMBR 10, GBR 1: 9 left, 3:1 → 1 + 6.75 and 2.25).
func TestBenchQoSWeightsFlag(t *testing.T) {
	f := qosBenchFlags{name: "custom", ambr: "10 Mbps", gbr: "1 Mbps", mbr: "10 Mbps", offered: "10 Mbps", weights: "1=3, 9=1"}
	c, err := f.qosCase()
	if err != nil || c.Weights["1"] != 3 || c.Weights["9"] != 1 {
		t.Fatalf("--weights: %+v %v", c, err)
	}
	want, err := c.Expected()
	if err != nil || want[0] != 7_750_000 || want[1] != 2_250_000 {
		t.Fatalf("expected %v (%v), want 7.75 and 2.25 Mbit/s", want, err)
	}
	for _, bad := range []string{"1", "1=x", "=3,9"} {
		f.weights = bad
		if _, err := f.qosCase(); err == nil {
			t.Errorf("--weights %q accepted", bad)
		}
	}
}
