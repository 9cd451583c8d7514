package u

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// /metrics carries the shapers' counters by event and colour (issue 13),
// read from UPF-U's C counters (all 0 in a process without UPF-U).
func TestQoSMetricsAreExported(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newQoSCollector())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, lp := range m.GetLabel() {
				key += "," + lp.GetName() + "=" + lp.GetValue()
			}
			seen[key] = true
		}
	}
	for _, want := range []string{
		"l25gc_upf_qos_packets_total,colour=green,event=sent", "l25gc_upf_qos_packets_total,colour=yellow,event=sent",
		"l25gc_upf_qos_packets_total,colour=red,event=red", "l25gc_upf_qos_packets_total,colour=green,event=queue_full",
		"l25gc_upf_qos_packets_total,colour=,event=unshaped", "l25gc_upf_qos_shapers",
	} {
		if !seen[want] {
			t.Errorf("missing %s in %v", want, seen)
		}
	}
}
