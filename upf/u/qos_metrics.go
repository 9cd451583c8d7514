package u

/*
#include "upfu.h"
*/
import "C"

import "github.com/prometheus/client_golang/prometheus"

// QoSStats are what UPF-U's shapers did (shape.c): per colour, RFC 2698.
type QoSStats struct {
	SentGreen, SentYellow uint64 // released to the ports
	DroppedRed            uint64 // above the flow's MBR
	FullGreen, FullYellow uint64 // tail drops of full flow queues
	Flushed               uint64 // queued packets dropped when the flows changed or the session went
	Unshaped              uint64 // packets of sessions the shaper pool could not serve
	Shapers               uint64 // shapers in use now
	Rebalances            uint64 // shapers (re)configured from changed rules
}

// ReadQoSStats reads the running UPF-U's shaper counters.
func ReadQoSStats() QoSStats {
	var s C.struct_upfu_qos_stats
	C.upfu_qos_stats_read(&s)
	return QoSStats{
		SentGreen: uint64(s.sent[0]), SentYellow: uint64(s.sent[1]), DroppedRed: uint64(s.red),
		FullGreen: uint64(s.full[0]), FullYellow: uint64(s.full[1]), Flushed: uint64(s.flushed),
		Unshaped: uint64(s.unshaped), Shapers: uint64(s.shapers), Rebalances: uint64(s.rebalances),
	}
}

type qosCollector struct{ pkts, shapers *prometheus.Desc }

func newQoSCollector() *qosCollector {
	return &qosCollector{
		pkts: prometheus.NewDesc("l25gc_upf_qos_packets_total",
			"Packets of shaped sessions by event and colour (RFC 2698): sent, red (dropped above the MBR), queue_full (tail drop), flushed (dropped when the flows changed), unshaped (session beyond upf.qos.max_shaped_sessions: MBR buckets only).",
			[]string{"event", "colour"}, nil),
		shapers: prometheus.NewDesc("l25gc_upf_qos_shapers", "Session shapers (one per session and direction) in use.", nil, nil),
	}
}

func (c *qosCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.pkts; ch <- c.shapers }

func (c *qosCollector) Collect(ch chan<- prometheus.Metric) {
	s := ReadQoSStats()
	for _, e := range []struct {
		event, colour string
		v             uint64
	}{
		{"sent", "green", s.SentGreen}, {"sent", "yellow", s.SentYellow}, {"red", "red", s.DroppedRed},
		{"queue_full", "green", s.FullGreen}, {"queue_full", "yellow", s.FullYellow},
		{"flushed", "", s.Flushed}, {"unshaped", "", s.Unshaped},
	} {
		ch <- prometheus.MustNewConstMetric(c.pkts, prometheus.CounterValue, float64(e.v), e.event, e.colour)
	}
	ch <- prometheus.MustNewConstMetric(c.shapers, prometheus.GaugeValue, float64(s.Shapers))
}
