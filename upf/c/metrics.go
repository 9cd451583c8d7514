package upfc

import (
	"strconv"

	"github.com/free5gc/pfcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/protocol/pfcpx"
)

// Metrics are UPF-C's counters on /metrics.
type Metrics struct {
	messages *prometheus.CounterVec
	sessions prometheus.Gauge
}

// NewMetrics registers UPF-C's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_upfc_pfcp_messages_total",
			Help: "PFCP messages UPF-C read (in) and sent (out), by type and the PFCP cause they carried (TS 29.244 8.2.1; none for messages without one); a message UPF-C could not read counts in with the cause it was refused with."},
			[]string{"direction", "type", "cause"}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{Name: "l25gc_upfc_sessions",
			Help: "PFCP sessions UPF-C serves (installed in UPF-U's rule tables)."}),
	}
	reg.MustRegister(m.messages, m.sessions)
	return m
}

// observe counts one message; a pfcpx.Node calls it.
func (m *Metrics) observe(in bool, t pfcp.MessageType, cause uint8) {
	if m == nil {
		return
	}
	dir := "out"
	if in {
		dir = "in"
	}
	c := "none"
	if cause != 0 {
		c = strconv.Itoa(int(cause))
	}
	m.messages.WithLabelValues(dir, pfcpx.TypeName(t), c).Inc()
}

func (m *Metrics) setSessions(n int) {
	if m != nil {
		m.sessions.Set(float64(n))
	}
}
