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

// Kinds of retransmission on the own data path (RFC 4960 6.3.3, 7.2.4).
const (
	RetransmitFast = "fast" // three miss indications: a loss event answered at once
	RetransmitT3   = "t3"   // a T3-rtx expiry: the RTO passed without a SACK
)

// Metrics counts what the transports drop. A nil *Metrics counts nothing.
type Metrics struct {
	discarded   *prometheus.CounterVec
	retransmits *prometheus.CounterVec
}

// NewMetrics registers the N2 transport counters with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{discarded: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "l25gc_n2_discarded_total",
		Help: "Received SCTP DATA chunks not handed up as NGAP, by reason.",
	}, []string{"reason"}), retransmits: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "l25gc_n2_retransmissions_total",
		Help: "Retransmission events of the own SCTP data path, by kind (fast retransmit, T3-rtx expiry).",
	}, []string{"kind"})}
	reg.MustRegister(m.discarded, m.retransmits)
	return m
}

func (m *Metrics) discard(reason string) {
	if m != nil {
		m.discarded.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) retransmit(kind string) {
	if m != nil {
		m.retransmits.WithLabelValues(kind).Inc()
	}
}
