package prov

import (
	"strings"
	"testing"
)

func TestQosFlowValidation(t *testing.T) {
	base := Subscriber{IMSI: "208930000000001", K: strings.Repeat("ab", 16), OPc: strings.Repeat("cd", 16)}.WithDefaults(defaults)
	good := QosFlow{Filter: "permit out ip from 10.200.0.2 to assigned", FiveQI: 2,
		MBR: &AMBR{Uplink: "5 Mbps", Downlink: "5 Mbps"}, GBR: &AMBR{Uplink: "2 Mbps", Downlink: "2 Mbps"}}
	s := base
	s.QosFlows = []QosFlow{good}
	if err := s.Validate(); err != nil {
		t.Fatalf("valid QoS flow refused: %v", err)
	}
	cases := map[string]func(f *QosFlow){
		"qosFlows[0].filter":       func(f *QosFlow) { f.Filter = "" },
		"qosFlows[0].precedence":   func(f *QosFlow) { f.Precedence = 300 },
		"qosFlows[0].5qi":          func(f *QosFlow) { f.FiveQI = 0 },
		"qosFlows[0].mbr.uplink":   func(f *QosFlow) { f.MBR = &AMBR{Uplink: "5", Downlink: "5 Mbps"} },
		"qosFlows[0].gbr.downlink": func(f *QosFlow) { f.GBR = &AMBR{Uplink: "1 Mbps", Downlink: "x"} },
		"qosFlows[0].gbr: 5QI 2":   func(f *QosFlow) { f.GBR = nil },
		"qosFlows[0].gbr: above":   func(f *QosFlow) { f.GBR = &AMBR{Uplink: "9 Mbps", Downlink: "1 Mbps"} },
		"qosFlows[0].dnn":          func(f *QosFlow) { f.DNN = "a..b" },
		"qosFlows[0].snssai":       func(f *QosFlow) { f.SNSSAI = &SNSSAI{SST: 256} },
	}
	for want, breakIt := range cases {
		f := good
		breakIt(&f)
		s := base
		s.QosFlows = []QosFlow{f}
		if err := s.Validate(); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("broken %s: %v", want, err)
		}
	}
}

// Each QoS flow becomes free5GC's flow rule and QoS flow for every slice
// and DNN it applies to, and reads back as it was given.
func TestQosFlowsRoundTrip(t *testing.T) {
	s := Subscriber{IMSI: "208930000000001", K: strings.Repeat("ab", 16), OPc: strings.Repeat("cd", 16), DNNs: []string{"internet", "ims"}}.WithDefaults(defaults)
	s.QosFlows = []QosFlow{
		{Filter: "10.200.0.2", FiveQI: 2, MBR: &AMBR{Uplink: "5 Mbps", Downlink: "5 Mbps"}, GBR: &AMBR{Uplink: "2 Mbps", Downlink: "2 Mbps"}},
		{Filter: "permit out ip from 10.200.0.0/24 to assigned", Precedence: 10, FiveQI: 7, DNN: "ims", SNSSAI: &SNSSAI{SST: 1, SD: "112233"}},
	}
	rec, err := ToRecord(s, "20893")
	if err != nil {
		t.Fatal(err)
	}
	// Flow 1: 2 slices x 2 DNNs; flow 2: one slice, one DNN.
	if len(rec.FlowRules) != 5 || len(rec.QosFlows) != 5 {
		t.Fatalf("%d flow rules, %d QoS flows; want 5 and 5", len(rec.FlowRules), len(rec.QosFlows))
	}
	last := rec.FlowRules[4]
	if last.QosRef != 2 || last.Snssai != "01112233" || last.Dnn != "ims" || last.Precedence != 10 || rec.FlowRules[0].Precedence != 128 {
		t.Fatalf("flow rules = %+v", rec.FlowRules)
	}
	if q := rec.QosFlows[0]; q.QosRef != 1 || q.FiveQI != 2 || q.GBRDL != "2 Mbps" || q.MBRUL != "5 Mbps" {
		t.Fatalf("QoS flow = %+v", q)
	}
	back := FromRecord(rec).QosFlows
	if len(back) != 2 || back[0].Filter != "10.200.0.2" || back[0].GBR.Uplink != "2 Mbps" || back[0].DNN != "" ||
		back[1].DNN != "ims" || back[1].FiveQI != 7 || back[1].MBR != nil || back[1].Precedence != 10 {
		t.Fatalf("read back = %+v", back)
	}
}
