package u

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/upf/shm"
)

// RunNF is `l25gc nf upf-u`: UPF-U with the node's config, its counters on
// /metrics (and /healthz for the supervisor) at upf.u.metrics_port, until
// ctx ends.
func RunNF(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	c, err := FromConfig(cfg)
	if err != nil {
		return err
	}
	p, err := Start(c)
	if err != nil {
		return err
	}
	log.Info("UPF-U forwarding", "n3", c.N3.Dev, "n3_ip", c.N3.IP, "n6", c.N6.Dev, "n6_ip", c.N6.IP,
		"tables", c.Tables.Path(), "max_sessions", c.MaxSessions)
	if port := cfg.UPF.U.MetricsPort; port != 0 {
		table, err := p.Table()
		if err != nil {
			return err
		}
		srv, err := serveMetrics(net.JoinHostPort(cfg.SBI.BindIP, strconv.Itoa(port)), table)
		if err != nil {
			return err
		}
		defer srv.Close()
	}
	return p.Run(ctx)
}

func serveMetrics(addr string, t *shm.Table) (*http.Server, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(t))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("upf-u metrics listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener closed under us: nothing left to serve
		}
	}()
	return srv, nil
}

// Collector exports UPF-U's counters (ports, drop reasons, sessions) from
// the shared tables; UPF-C can register one too.
type Collector struct {
	t                    *shm.Table
	pkts, bytes, replies *prometheus.Desc
	drops, sessions      *prometheus.Desc
}

// NewCollector reads t's counters at each scrape.
func NewCollector(t *shm.Table) *Collector {
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
	for name, p := range map[string]shm.PortStats{"n3": s.N3, "n6": s.N6} {
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
	ch <- prometheus.MustNewConstMetric(c.sessions, prometheus.GaugeValue, float64(c.t.Len()))
}
