package shm

import "github.com/prometheus/client_golang/prometheus"

// Collector exports UPF-U's counters (ports, drop reasons, sessions) from
// the shared tables; UPF-C can register one too.
type Collector struct {
	t                    *Table
	pkts, bytes, replies *prometheus.Desc
	drops, sessions      *prometheus.Desc
	buffered, bufferTot  *prometheus.Desc
	reports, endMarkers  *prometheus.Desc
	naps                 *prometheus.Desc
}

// NewCollector reads t's counters at each scrape.
func NewCollector(t *Table) *Collector {
	return &Collector{t: t,
		pkts:     prometheus.NewDesc("l25gc_upf_port_packets_total", "Packets per UPF-U port and direction.", []string{"port", "dir"}, nil),
		bytes:    prometheus.NewDesc("l25gc_upf_port_bytes_total", "Bytes per UPF-U port and direction.", []string{"port", "dir"}, nil),
		replies:  prometheus.NewDesc("l25gc_upf_replies_total", "Packets UPF-U answered itself, by kind.", []string{"port", "kind"}, nil),
		drops:    prometheus.NewDesc("l25gc_upf_drops_total", "Packets UPF-U dropped, by reason.", []string{"reason"}, nil),
		sessions: prometheus.NewDesc("l25gc_upf_sessions", "PFCP sessions in the rule tables.", nil, nil),
		buffered: prometheus.NewDesc("l25gc_upf_buffered_packets", "Downlink packets UPF-U holds now for sessions whose FAR buffers (idle UEs being paged).", nil, nil),
		bufferTot: prometheus.NewDesc("l25gc_upf_buffer_packets_total",
			"Downlink buffer events: buffered, flushed (sent in order once the FAR forwards), overflow (dropped: oldest of a full session or past upf.buffer.total), discarded (FAR DROP, session gone).",
			[]string{"event"}, nil),
		reports:    prometheus.NewDesc("l25gc_upf_downlink_data_reports_total", "Downlink Data notes UPF-U queued for UPF-C's Session Reports (one per session until served).", nil, nil),
		endMarkers: prometheus.NewDesc("l25gc_upf_end_markers_total", "GTP-U End Markers sent into old tunnels (TS 29.281 7.3.2).", nil, nil),
		naps: prometheus.NewDesc("l25gc_upf_naps_total",
			"Idle naps UPF-U took (upf.sleep), by what ended them: packet (a port received before the timeout) or other (timeout, UPF-C's doorbell).",
			[]string{"ended_by"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.pkts, c.bytes, c.replies, c.drops, c.sessions, c.buffered, c.bufferTot, c.reports, c.endMarkers, c.naps} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.t.Stats()
	for name, p := range map[string]PortStats{"n3": s.N3, "n6": s.N6} {
		counter := func(d *prometheus.Desc, v uint64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
		}
		counter(c.pkts, p.RxPackets, name, "rx")
		counter(c.pkts, p.TxPackets, name, "tx")
		counter(c.bytes, p.RxBytes, name, "rx")
		counter(c.bytes, p.TxBytes, name, "tx")
		counter(c.replies, p.ARPReplies, name, "arp")
		counter(c.replies, p.ICMPReplies, name, "icmp_echo")
		counter(c.replies, p.GTPUEcho, name, "gtpu_echo")
		counter(c.replies, p.ErrorIndications, name, "error_indication")
	}
	for reason, v := range s.Drops {
		ch <- prometheus.MustNewConstMetric(c.drops, prometheus.CounterValue, float64(v), reason)
	}
	ch <- prometheus.MustNewConstMetric(c.sessions, prometheus.GaugeValue, float64(c.t.Installed()))
	b := s.Buffer
	ch <- prometheus.MustNewConstMetric(c.buffered, prometheus.GaugeValue, float64(b.Now))
	for event, v := range map[string]uint64{"buffered": b.Buffered, "flushed": b.Flushed, "overflow": b.Overflow, "discarded": b.Discarded} {
		ch <- prometheus.MustNewConstMetric(c.bufferTot, prometheus.CounterValue, float64(v), event)
	}
	ch <- prometheus.MustNewConstMetric(c.reports, prometheus.CounterValue, float64(b.Notes))
	ch <- prometheus.MustNewConstMetric(c.endMarkers, prometheus.CounterValue, float64(b.EndMarkers))
	ch <- prometheus.MustNewConstMetric(c.naps, prometheus.CounterValue, float64(s.NapsByPacket), "packet")
	ch <- prometheus.MustNewConstMetric(c.naps, prometheus.CounterValue, float64(s.Naps-min(s.Naps, s.NapsByPacket)), "other")
}
