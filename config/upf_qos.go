package config

import "time"

// UPFQoS bounds UPF-U's QoS shaping (issue 13, DESIGN.md "QoS"): per
// session and direction a shaper enforces the Session-AMBR (TS 23.501
// 5.7.2.6) and shares it fairly among the session's QoS flows.
type UPFQoS struct {
	// MaxShapedSessions is how many sessions UPF-U shapes at once (a shaper
	// per direction, about 19 KB each, taken from a pool of this size); a
	// session beyond it is forwarded with its QERs' MBR buckets only and
	// counted (l25gc_upf_qos_packets_total{event="unshaped"}). 0 = no
	// shaping.
	MaxShapedSessions int `yaml:"max_shaped_sessions"`
	// Queue bounds each QoS flow's queue in time at the flow's fair share
	// (a packet beyond it is tail-dropped, counted by colour).
	Queue time.Duration `yaml:"queue"`
}

// defaultUPFQoS: 1024 shaped sessions cost at most 38 MB, touched only
// when used; 50 ms of queue absorbs a TCP window at the share without
// adding more delay than a 5QI 9 budget tolerates (TS 23.501 Table
// 5.7.4-1: 300 ms).
func defaultUPFQoS() UPFQoS {
	return UPFQoS{MaxShapedSessions: 1024, Queue: 50 * time.Millisecond}
}

// upfQoS checks upf.qos.
func (v *validator) upfQoS(q *UPFQoS) {
	v.rangeInt("upf.qos.max_shaped_sessions", q.MaxShapedSessions, 0, 1<<16)
	if q.Queue < time.Millisecond || q.Queue > time.Second {
		v.fail("upf.qos.queue", "must be a duration from 1ms to 1s such as 50ms, got %v", q.Queue)
	}
}
