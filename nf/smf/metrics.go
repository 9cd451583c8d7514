package smf

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the SMF's own series on /metrics: sessions and addresses in
// use, and establishments by outcome (5GSM cause of the rejects).
type metrics struct {
	establishments *prometheus.CounterVec
	pagings        *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, n *NF) *metrics {
	m := &metrics{establishments: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_smf_pdu_session_establishments_total",
		Help: "PDU session establishments by result: accepted, or the 5GSM cause of the Reject (TS 24.501 9.11.4.2)."}, []string{"result"}),
		pagings: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_smf_downlink_data_reports_total",
			Help: "Downlink Data Reports by what they did: reported (N1N2MessageTransfer sent), suppressed (paging already under way or user plane active), failed (the UE was not reached: buffer discarded)."},
			[]string{"result"})}
	if reg == nil {
		return m
	}
	reg.MustRegister(m.establishments, m.pagings, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "l25gc_smf_sm_contexts",
		Help: "SM contexts (PDU sessions) the SMF holds."}, func() float64 { return float64(n.ctxs.count()) }))
	for dnn, p := range n.pools {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "l25gc_smf_ue_addresses_in_use",
			Help: "UE IPv4 addresses leased from the DNN's pool.", ConstLabels: prometheus.Labels{"dnn": dnn}},
			func() float64 { return float64(p.inUse()) }))
	}
	return m
}

func (m *metrics) accepted() { m.establishments.WithLabelValues("accepted").Inc() }

func (m *metrics) rejected(cause uint8) {
	m.establishments.WithLabelValues("cause_" + strconv.Itoa(int(cause))).Inc()
}

func (m *metrics) paging(result string) { m.pagings.WithLabelValues(result).Inc() }
