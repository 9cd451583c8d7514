package bench

import (
	"encoding/json"
	"testing"
)

// The paper's numbers (issue 13): case 1 gives the QoS flow 5 and the
// non-QoS flow 5 Mbit/s, case 2 gives 7 and 3.
func TestQoSPaperCasesExpected(t *testing.T) {
	for name, want := range map[string][2]uint64{"1": {5 * mbps, 5 * mbps}, "2": {7 * mbps, 3 * mbps}} {
		c, err := QoSCaseNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Expected()
		if err != nil || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("case %s: %v %v, want %v", name, got, err, want)
		}
	}
	if _, err := QoSCaseNamed("3"); err == nil {
		t.Error("case 3 accepted")
	}
}

// A flow offering less than its share leaves the rest to the others.
func TestQoSExpectedHonoursOfferedRate(t *testing.T) {
	c, _ := QoSCaseNamed("1")
	c.Flows[1].Offered = 1 * mbps
	got, err := c.Expected()
	if err != nil || got[0] != 5*mbps || got[1] != 1*mbps {
		t.Fatalf("non-QoS offering 1: %v %v, want QoS at its MBR 5 and non-QoS 1", got, err)
	}
	c.Flows[0].Offered = 0
	c.Flows[1].Offered = 10 * mbps
	if got, _ = c.Expected(); got[0] != 0 || got[1] != 10*mbps {
		t.Fatalf("non-QoS alone: %v, want the whole AMBR", got)
	}
}

// --flows N: the shares never exceed the AMBR nor a flow's MBR or offer.
func TestQoSFlowsCaseWithinLimits(t *testing.T) {
	c, err := QoSCaseFlows(8)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Expected()
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for i, r := range got {
		f := c.Flows[i]
		if r > f.Offered || (f.MBR != 0 && r > f.MBR) || r < f.GBR {
			t.Errorf("flow %d %+v gets %d", i, f, r)
		}
		sum += r
	}
	if sum != c.AMBR {
		t.Errorf("shares add up to %d, want the AMBR %d (the flows offer more)", sum, c.AMBR)
	}
	if _, err := QoSCaseFlows(1); err == nil {
		t.Error("--flows 1 accepted")
	}
}

// The JSON is one object per flow and direction with exactly the issue's
// keys and values.
func TestQoSResultJSONShape(t *testing.T) {
	c, _ := QoSCaseNamed("1")
	rs, err := c.QoSResults("downlink", [][]uint64{{5 * mbps, 4 * mbps}, {5 * mbps, 6 * mbps}})
	if err != nil || len(rs) != 2 {
		t.Fatal(rs, err)
	}
	b, _ := json.Marshal(rs[0])
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"procedure": "qos", "case": "1", "flow": "qos", "qos": true, "direction": "downlink",
		"gbr_mbps": 2.0, "mbr_mbps": 5.0, "ambr_mbps": 10.0, "offered_mbps": 10.0, "mbps": 4.5, "expected_mbps": 5.0}
	if len(m) != len(want) {
		t.Fatalf("keys %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if _, err := c.QoSResults("uplink", [][]uint64{{1}}); err == nil {
		t.Error("one measured flow for two accepted")
	}
}

// A case with weights reports each flow's weight; without, the object
// stays the (no weight key, checked above).
func TestQoSResultWeights(t *testing.T) {
	c, _ := QoSCaseNamed("1")
	c.Weights = map[string]int{"1": 3}
	if w := c.Weight(c.Flows[0]); w != 3 {
		t.Errorf("the 5QI 1 flow weighs %d, want 3", w)
	}
	if w := c.Weight(c.Flows[1]); w != 1 {
		t.Errorf("the default flow (5QI 9, not listed) weighs %d, want 1", w)
	}
	// AMBR 10, GBR 2, MBR 5: the QoS flow reaches its MBR either way.
	c.Flows[0].MBR = 10 * mbps
	rs, err := c.QoSResults("downlink", [][]uint64{{8 * mbps}, {2 * mbps}})
	if err != nil || rs[0].Weight != 3 || rs[1].Weight != 1 || rs[0].ExpectedMbps != 8 || rs[1].ExpectedMbps != 2 {
		t.Fatalf("results %+v (%v), want weights 3 and 1, expected 8 and 2", rs, err)
	}
}
