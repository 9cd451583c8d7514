package amf

// Overload control beyond the paper (TS 38.413 8.7.6, 8.7.7; TS 23.501
// 5.19.5.2): when the limiter's queue reaches amf.limiter.overload_high
// the AMF asks its gNBs to reject non-emergency mobile-originated
// signalling (NGAP Overload Start), and lifts it (Overload Stop) once the
// queue has drained to overload_low. Checked every monitor interval, so
// the hysteresis between the marks keeps it from flapping.

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// overloadState is touched only by checkOverload's caller (the monitor).
type overloadState struct {
	on    bool
	gauge prometheus.Gauge
}

func newOverloadState(reg prometheus.Registerer) *overloadState {
	o := &overloadState{gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "l25gc_amf_limiter_overloaded",
		Help: "1 while the AMF has asked its gNBs to shed signalling (NGAP Overload Start sent, no Overload Stop yet)."})}
	reg.MustRegister(o.gauge)
	return o
}

// checkOverload compares the queue with the water marks and tells the
// gNBs when the AMF enters or leaves overload.
func (n *NF) checkOverload() {
	c, o := n.cfg.AMF.Limiter, n.limiter.overload
	if c.OverloadHigh == 0 {
		return
	}
	q := n.limiter.State().Queue
	switch {
	case !o.on && q >= c.OverloadHigh:
		o.on = true
		n.log.Warn("overload: NGAP Overload Start to the gNBs", "queue", q, "high", c.OverloadHigh)
		// Reject RRC connection establishments for signalling (TS 38.413
		// 9.3.1.105): new registrations and Service Requests wait in the
		// gNB rather than at the AMF; paging answers (mt-Access) and
		// emergency still come.
		n.toAllGNBs(n.built("OverloadStart")(ngapx.BuildOverloadStart(ngapx.Overload{Action: ngapx.OverloadRejectRRCSignalling})))
	case o.on && q <= c.OverloadLow:
		o.on = false
		n.log.Info("overload over: NGAP Overload Stop to the gNBs", "queue", q, "low", c.OverloadLow)
		n.toAllGNBs(n.built("OverloadStop")(ngapx.BuildOverloadStop()))
	default:
		return
	}
	o.gauge.Set(map[bool]float64{false: 0, true: 1}[o.on])
}

// toAllGNBs sends a non-UE-associated message to every gNB past NG Setup.
func (n *NF) toAllGNBs(b []byte) {
	n.mu.Lock()
	list := make([]*gnb, 0, len(n.gnbs))
	for _, g := range n.gnbs {
		if g.ready.Load() {
			list = append(list, g)
		}
	}
	n.mu.Unlock()
	for _, g := range list {
		n.sendNonUE(g, b)
	}
}
