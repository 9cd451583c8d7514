package bench

// The cases of `l25gc bench qos` (issue 13, the paper's Fig. 10) and the
// JSON objects it reports: one per flow and direction, with the rate the
// fair share (qos.FairShare, what UPF-U's shapers run) says the flow
// should get.

import (
	"fmt"
	"strconv"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/qos"
)

// QoSFlowSpec is one flow of a case; rates in bit/s, 0 = none.
type QoSFlowSpec struct {
	Name    string // "qos", "non-qos", "flow3", …
	QoS     bool   // a GBR QoS flow of its own (else the default flow)
	GBR     uint64
	MBR     uint64
	Offered uint64
}

// QoSCase is a session's Session-AMBR (both directions) and its flows.
type QoSCase struct {
	Name  string
	AMBR  uint64
	Flows []QoSFlowSpec
	// Weights is the smf.qos.weights the case's core runs with (5QI →
	// weight; nil: every flow weighs 1). The QoS flows are 5QI 1 (GBR,
	// conversational voice), the non-QoS one the default flow's 5QI 9.
	Weights map[string]int
}

// 5QIs of the case's flows (applyCase; TS 23.501 Table 5.7.4-1).
const qosFlow5QI, defaultFlow5QI = 1, 9

// Weight is flow f's weight in the fair share: that of its 5QI in
// Weights, 1 when not listed.
func (c QoSCase) Weight(f QoSFlowSpec) uint32 {
	q := config.SMFQoS{Weights: c.Weights}
	fiveQI := uint8(defaultFlow5QI)
	if f.QoS {
		fiveQI = qosFlow5QI
	}
	return uint32(max(q.Weight(fiveQI), 1))
}

const mbps = 1_000_000

// QoSCaseNamed is one of the paper's cases: AMBR 10 Mbit/s, both flows
// offering 10; case 1: the QoS flow GBR 2 / MBR 5, case 2: GBR 4 / MBR 7.
func QoSCaseNamed(name string) (QoSCase, error) {
	rates, ok := map[string][2]uint64{"1": {2, 5}, "2": {4, 7}}[name]
	gbr, mbr := rates[0], rates[1]
	if !ok {
		return QoSCase{}, fmt.Errorf("qos case %q: want 1, 2 or custom", name)
	}
	return QoSCase{Name: name, AMBR: 10 * mbps, Flows: []QoSFlowSpec{
		{Name: "qos", QoS: true, GBR: gbr * mbps, MBR: mbr * mbps, Offered: 10 * mbps},
		{Name: "non-qos", Offered: 10 * mbps}}}, nil
}

// QoSCaseFlows is `--flows N`: the default flow and N-1 QoS flows with
// mixed GBR/MBR under an AMBR of 10 Mbit/s per flow, each offering 30
// Mbit/s, so the AMBR binds: the GBRs first, the excess shared max-min
// fairly, some flows capped by their MBR.
func QoSCaseFlows(n int) (QoSCase, error) {
	if n < 2 || n > qos.MaxFlows {
		return QoSCase{}, fmt.Errorf("--flows %d: want 2..%d", n, qos.MaxFlows)
	}
	c := QoSCase{Name: "flows" + strconv.Itoa(n), AMBR: uint64(n) * 10 * mbps}
	c.Flows = append(c.Flows, QoSFlowSpec{Name: "non-qos", Offered: 30 * mbps})
	for i := 1; i < n; i++ {
		f := QoSFlowSpec{Name: "qos", QoS: true, GBR: uint64(i%3+1) * 2 * mbps, MBR: uint64(i%4+2) * 4 * mbps, Offered: 30 * mbps}
		if i > 1 {
			f.Name = "flow" + strconv.Itoa(i+1)
		}
		c.Flows = append(c.Flows, f)
	}
	return c, nil
}

// Expected is each flow's fair share when all offer their rates: the
// offered rate caps a flow as its MBR does (it cannot use more), so what
// it leaves goes to the others (work conserving).
func (c QoSCase) Expected() ([]uint64, error) {
	in := make([]qos.FairFlow, len(c.Flows))
	for i, f := range c.Flows {
		mbr := f.MBR
		if mbr == 0 || (f.Offered != 0 && f.Offered < mbr) {
			mbr = f.Offered
		}
		in[i] = qos.FairFlow{GBR: min(f.GBR, mbr), MBR: mbr, Weight: c.Weight(f), Active: f.Offered > 0}
	}
	s, err := qos.FairShare(c.AMBR, in)
	if err != nil {
		return nil, err
	}
	return s.Rates, nil
}

// QoSResult is one flow in one direction, as the issue fixes the JSON;
// Mbps is the measured average.
type QoSResult struct {
	Procedure    string  `json:"procedure"`
	Case         string  `json:"case"`
	Flow         string  `json:"flow"`
	QoS          bool    `json:"qos"`
	Direction    string  `json:"direction"`
	GBRMbps      float64 `json:"gbr_mbps"`
	MBRMbps      float64 `json:"mbr_mbps"`
	AMBRMbps     float64 `json:"ambr_mbps"`
	OfferedMbps  float64 `json:"offered_mbps"`
	Mbps         float64 `json:"mbps"`
	ExpectedMbps float64 `json:"expected_mbps"`
	// Weight is the flow's weight when the case gives weights (else 1,
	// left out: the object as it was).
	Weight uint32 `json:"weight,omitempty"`
	// PerSecondMbps is the throughput of each second, for the chart; not
	// in the object, so left out of the JSON.
	PerSecondMbps []float64 `json:"-"`
}

// QoSResults are the case's objects for one direction given each flow's
// per-second throughput (bit/s).
func (c QoSCase) QoSResults(direction string, perSecond [][]uint64) ([]QoSResult, error) {
	want, err := c.Expected()
	if err != nil {
		return nil, err
	}
	if len(perSecond) != len(c.Flows) {
		return nil, fmt.Errorf("qos results: %d flows measured, the case has %d", len(perSecond), len(c.Flows))
	}
	out := make([]QoSResult, len(c.Flows))
	for i, f := range c.Flows {
		r := QoSResult{Procedure: "qos", Case: c.Name, Flow: f.Name, QoS: f.QoS, Direction: direction,
			GBRMbps: toMbps(f.GBR), MBRMbps: toMbps(f.MBR), AMBRMbps: toMbps(c.AMBR), OfferedMbps: toMbps(f.Offered),
			ExpectedMbps: toMbps(want[i])}
		if len(c.Weights) > 0 {
			r.Weight = c.Weight(f)
		}
		var sum uint64
		for _, b := range perSecond[i] {
			sum += b
			r.PerSecondMbps = append(r.PerSecondMbps, toMbps(b))
		}
		if n := len(perSecond[i]); n > 0 {
			r.Mbps = toMbps(sum / uint64(n))
		}
		out[i] = r
	}
	return out, nil
}

func toMbps(bps uint64) float64 { return float64(bps) / mbps }
