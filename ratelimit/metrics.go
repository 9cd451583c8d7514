package ratelimit

import "github.com/prometheus/client_golang/prometheus"

// Gauges publish the dispatcher's state: the adaptive limiter and operators
// read queue length, in-flight events and the current limit.
type Gauges struct {
	queue    prometheus.Gauge
	inflight prometheus.Gauge
	limit    prometheus.Gauge
	panics   prometheus.Counter
}

// NewGauges registers the dispatcher gauges of one NF (prefix e.g. "l25gc_amf").
func NewGauges(reg prometheus.Registerer, prefix string) *Gauges {
	g := &Gauges{
		queue: prometheus.NewGauge(prometheus.GaugeOpts{Name: prefix + "_dispatcher_queue_length",
			Help: "Events waiting in the dispatcher."}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{Name: prefix + "_dispatcher_inflight",
			Help: "Events running now."}),
		limit: prometheus.NewGauge(prometheus.GaugeOpts{Name: prefix + "_dispatcher_limit",
			Help: "Maximum events (messages) running at once: worker goroutines; the procedure limit E_max is l25gc_amf_limiter_emax."}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{Name: prefix + "_dispatcher_panics_total",
			Help: "Events that panicked and were recovered."}),
	}
	reg.MustRegister(g.queue, g.inflight, g.limit, g.panics)
	return g
}

func (g *Gauges) set(queued, inflight int) {
	if g == nil {
		return
	}
	g.queue.Set(float64(queued))
	g.inflight.Set(float64(inflight))
}

func (g *Gauges) setLimit(n int) {
	if g != nil {
		g.limit.Set(float64(n))
	}
}

func (g *Gauges) panicked() {
	if g != nil {
		g.panics.Inc()
	}
}
