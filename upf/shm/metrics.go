package shm

import "github.com/prometheus/client_golang/prometheus"

// Collector exports UPF-U's counters (ports, drop reasons, sessions) from
// the shared tables; UPF-C can register one too.
type Collector struct {
	t                    *Table
	pkts, bytes, replies *prometheus.Desc
	drops, sessions      *prometheus.Desc
}

// NewCollector reads t's counters at each scrape.
func NewCollector(t *Table) *Collector {
	return &Collector{t: t,
		pkts:     prometheus.NewDesc("l25gc_upf_port_packets_total", "Packets per UPF-U port and direction.", []string{"port", "dir"}, nil),
		bytes:    prometheus.NewDesc("l25gc_upf_port_bytes_total", "Bytes per UPF-U port and direction.", []string{"port", "dir"}, nil),
		replies:  prometheus.NewDesc("l25gc_upf_replies_total", "Packets UPF-U answered itself, by kind.", []string{"port", "kind"}, nil),
		drops:    prometheus.NewDesc("l25gc_upf_drops_total", "Packets UPF-U dropped, by reason.", []string{"reason"}, nil),
		sessions: prometheus.NewDesc("l25gc_upf_sessions", "PFCP sessions in the rule tables.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.pkts, c.bytes, c.replies, c.drops, c.sessions} {
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
}
