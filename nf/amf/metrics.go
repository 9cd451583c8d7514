package amf

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Procedure names used as metric labels.
const (
	procNGSetup        = "ng_setup"
	procRegistration   = "registration"
	procDeregistration = "deregistration"
)

// Results used as metric labels.
const (
	resultSuccess = "success"
	resultReject  = "reject"
	resultTimeout = "timeout"
	resultFailure = "failure"
)

type metrics struct {
	procedures      *prometheus.CounterVec
	latency         *prometheus.HistogramVec
	gnbs            prometheus.Gauge
	registered      prometheus.Gauge
	retransmissions *prometheus.CounterVec
	discarded       *prometheus.CounterVec
	notForwarded    *prometheus.CounterVec
	ngapErrors      *prometheus.CounterVec
	internalErrors  *prometheus.CounterVec
	refused         *prometheus.CounterVec // InitialUEMessages that left no UE context (ue_admission.go)
	guardExpiries   *prometheus.CounterVec // UE contexts released by their guard (timers.go)
	idleMetrics                            // paging and reachability (paging.go, mobile_reachable.go)
	handovers       *prometheus.CounterVec // Xn and N2 handovers (ngap_handover_common.go)
	releaseWaits    *prometheus.CounterVec // messages that waited for an AN release to end (an_release_window.go)
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		procedures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_amf_procedures_total",
			Help: "AMF procedures by result."}, []string{"procedure", "result"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "l25gc_amf_procedure_duration_seconds",
			Help:    "Duration of successful AMF procedures.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"procedure"}),
		gnbs: prometheus.NewGauge(prometheus.GaugeOpts{Name: "l25gc_amf_connected_gnbs",
			Help: "gNBs with a successful NG Setup."}),
		registered: prometheus.NewGauge(prometheus.GaugeOpts{Name: "l25gc_amf_registered_ues",
			Help: "UEs in 5GMM-REGISTERED."}),
		retransmissions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_amf_nas_retransmissions_total",
			Help: "NAS messages retransmitted on timer expiry."}, []string{"timer"}),
		discarded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_amf_nas_discarded_total",
			Help: "Uplink NAS messages discarded (TS 24.501 4.4.4.3)."}, []string{"reason"}),
		notForwarded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_amf_nas_payloads_not_forwarded_total",
			Help: "UL NAS Transport payloads the AMF had no peer to forward to (TS 24.501 5.4.5.2.5), by payload container type."},
			[]string{"payload"}),
		ngapErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_amf_ngap_errors_total",
			Help: "Malformed or unexpected NGAP input answered with Error Indication."}, []string{"cause"}),
		internalErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_amf_internal_errors_total",
			Help: "Answers the AMF could not build or send; the association and the other UEs carry on."}, []string{"where"}),
	}
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_amf_initial_ue_refused_total",
		Help: "InitialUEMessages that left no UE context, by reason (a cap, a NAS message that is no initial one, none started)."},
		[]string{"reason"})
	m.guardExpiries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_amf_ue_guard_expiries_total",
		Help: "UE contexts released because they stayed unauthenticated, or a release was never completed, too long."},
		[]string{"guard"})
	m.idleMetrics = newIdleMetrics(reg)
	m.handovers = newHandoverCounter()
	m.releaseWaits = newReleaseWaits(reg)
	reg.MustRegister(m.handovers)
	reg.MustRegister(m.procedures, m.latency, m.gnbs, m.registered, m.retransmissions, m.discarded, m.notForwarded,
		m.ngapErrors, m.internalErrors, m.refused, m.guardExpiries)
	return m
}

// countUEs publishes the UE contexts with an N2 connection, read from the
// table itself so that the gauge cannot drift from it.
func countUEs(reg prometheus.Registerer, t *ueTable) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "l25gc_amf_ue_contexts",
		Help: "UE contexts with an N2 connection (amf.ngap.max_ues caps them)."},
		func() float64 { all, _ := t.connected(0); return float64(all) }))
}

func (m *metrics) done(procedure, result string, started time.Time) {
	m.procedures.WithLabelValues(procedure, result).Inc()
	if result == resultSuccess && !started.IsZero() {
		m.latency.WithLabelValues(procedure).Observe(time.Since(started).Seconds())
	}
}
