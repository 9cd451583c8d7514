package n2

import "github.com/prometheus/client_golang/prometheus"

// Reasons a received DATA chunk is dropped instead of handed up as NGAP.
const (
	// DiscardPPID: the chunk's payload protocol identifier is not 60, so it
	// is not NGAP (TS 38.412 7) and is not parsed as such.
	DiscardPPID = "ppid"
	// DiscardTooBig: the message is larger than Options.MaxMessageSize.
	DiscardTooBig = "too_big"
)

// Metrics counts what the transports drop. A nil *Metrics counts nothing.
type Metrics struct {
	discarded *prometheus.CounterVec
}

// NewMetrics registers the N2 transport counters with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{discarded: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "l25gc_n2_discarded_total",
		Help: "Received SCTP DATA chunks not handed up as NGAP, by reason.",
	}, []string{"reason"})}
	reg.MustRegister(m.discarded)
	return m
}

func (m *Metrics) discard(reason string) {
	if m != nil {
		m.discarded.WithLabelValues(reason).Inc()
	}
}
