package amf

// Reachability of a CM-IDLE UE (TS 24.501 5.3.7; TS 23.502 4.2.2.3.3
// implicit deregistration): when the AN release parks a registered UE, the
// mobile reachable timer starts (amf.nas.mobile_reachable, by default T3512
// + 4 min). A UE that neither registers periodically nor asks for service
// before it expires is taken as out of reach: it is no longer paged (an
// N1N2MessageTransfer gets 504 UE_NOT_REACHABLE), and the implicit
// deregistration timer starts. When that expires too, the UE is
// deregistered implicitly, as the network would deregister it: its SM
// contexts released, the UDM registration purged, the AM policy association
// deleted, its record deleted from the UE store. Its 5G-TMSI is remembered
// for a while, so that a late Service Request hears #10 implicitly
// deregistered (TS 24.501 5.6.1.5) rather than #9.

import (
	"sync"
	"time"

	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"
)

// idleState is what runs for a parked UE; it changes only under the UE
// table's lock.
type idleState struct {
	timer       *time.Timer // mobile reachable, then implicit deregistration
	unreachable bool        // the mobile reachable timer expired
	paging      *paging     // paging.go
}

func (s *idleState) stopTimer() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// editIdleTMSI changes the parked context of tmsi in place under the
// table's lock (edit must not block); false when there is none.
func (t *ueTable) editIdleTMSI(tmsi uint32, edit func(*ueContext)) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	ue, ok := t.idle[tmsi]
	if ok {
		edit(ue)
	}
	return ok
}

// startReachability arms the mobile reachable timer of a context just
// parked (or restored parked).
func (n *NF) startReachability(ue *ueContext) {
	d := n.cfg.AMF.NAS.MobileReachableTimer()
	if d <= 0 || ue.guti == nil {
		return // T3512 deactivated: the UE is not expected back periodically
	}
	tmsi := ue.guti.TMSI
	n.ues.editIdleTMSI(tmsi, func(p *ueContext) {
		if p == ue {
			p.idle = idleState{timer: time.AfterFunc(d, func() { n.onMobileReachableExpiry(ue, tmsi) })}
		}
	})
}

// onMobileReachableExpiry: TS 24.501 5.3.7 — stop paging the UE (a running
// paging fails) and start the implicit deregistration timer.
func (n *NF) onMobileReachableExpiry(ue *ueContext, tmsi uint32) {
	if n.stopped() {
		return
	}
	var failed []pendingTransfer
	live := false
	n.ues.editIdleTMSI(tmsi, func(p *ueContext) {
		if p != ue || p.idle.unreachable {
			return
		}
		live = true
		p.idle.unreachable = true
		failed = p.idle.endPaging()
		d := max(n.cfg.AMF.NAS.ImplicitDeregistration, 0)
		p.idle.timer = time.AfterFunc(d, func() { n.onImplicitDeregistration(ue, tmsi) })
	})
	if !live {
		return
	}
	n.metrics.unreachable.Inc()
	n.log.Info("mobile reachable timer expired", "supi", ue.supi)
	n.failTransfers(ue.supi, failed, models.N1N2MessageTransferCause_UE_NOT_RESPONDING)
}

// onImplicitDeregistration ends the parked UE's context (TS 23.502
// 4.2.2.3.3 step 2 ff., without the NAS part: the UE is out of reach).
func (n *NF) onImplicitDeregistration(ue *ueContext, tmsi uint32) {
	if n.stopped() {
		return // the UE's record stays for the next process
	}
	old, _ := n.ues.takeIdleIf(tmsi, func(p *ueContext) bool { return p == ue })
	if old == nil {
		return // adopted or ended meanwhile
	}
	old.idle.stopTimer()
	n.failTransfers(old.supi, old.idle.endPaging(), models.N1N2MessageTransferCause_UE_NOT_RESPONDING)
	n.ues.deregistered.add(tmsi)
	n.metrics.implicitDeregistrations.Inc()
	n.log.Info("implicit deregistration", "supi", old.supi)
	n.endContext(old)
}

// recentTMSIs remembers the 5G-TMSIs of implicitly deregistered UEs, at
// most recentTMSIsMax (the oldest half goes when full): memory stays
// bounded whatever the churn, and a UE long gone hears #9 instead.
type recentTMSIs struct {
	mu    sync.Mutex
	order []uint32
	set   map[uint32]struct{}
}

const recentTMSIsMax = 1 << 16

func (r *recentTMSIs) add(tmsi uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.set == nil {
		r.set = map[uint32]struct{}{}
	}
	if _, ok := r.set[tmsi]; ok {
		return
	}
	if len(r.order) >= recentTMSIsMax {
		for _, old := range r.order[:len(r.order)/2] {
			delete(r.set, old)
		}
		r.order = append([]uint32(nil), r.order[len(r.order)/2:]...)
	}
	r.order = append(r.order, tmsi)
	r.set[tmsi] = struct{}{}
}

func (r *recentTMSIs) has(tmsi uint32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.set[tmsi]
	return ok
}

// countIdle publishes the parked (CM-IDLE) UEs, read from the table itself.
func countIdle(reg prometheus.Registerer, t *ueTable) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "l25gc_amf_idle_ues",
		Help: "Registered UEs in CM-IDLE (no N2 connection)."},
		func() float64 { t.mu.Lock(); defer t.mu.Unlock(); return float64(len(t.idle)) }))
}

// endIdle ends what ran for a context that was parked and is ending now
// (taken out of the table by its new owner): its timers, and its paging,
// whose transfers fail (TS 23.502 4.2.3.3: the UE deregistered meanwhile).
func (n *NF) endIdle(ue *ueContext) {
	ue.idle.stopTimer()
	n.failTransfers(ue.supi, ue.idle.endPaging(), models.N1N2MessageTransferCause_UE_NOT_RESPONDING)
	n.failPaged(ue, models.N1N2MessageTransferCause_UE_NOT_RESPONDING)
}

// idleMetrics count paging and reachability.
type idleMetrics struct {
	pagingStarted           prometheus.Counter
	pagingRetransmissions   prometheus.Counter
	pagingMessages          prometheus.Counter
	pagingDone              *prometheus.CounterVec
	unreachable             prometheus.Counter
	implicitDeregistrations prometheus.Counter
}

func newIdleMetrics(reg prometheus.Registerer) idleMetrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	m := idleMetrics{
		pagingStarted:         c("l25gc_amf_paging_attempts_total", "Pagings started: a CM-IDLE UE with downlink data (several transfers page once)."),
		pagingRetransmissions: c("l25gc_amf_paging_retransmissions_total", "Paging sent again on T3513 expiry."),
		pagingMessages:        c("l25gc_amf_paging_messages_total", "NGAP Paging messages written, one per gNB per (re)transmission."),
		pagingDone: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_amf_paging_total",
			Help: "Pagings ended, by result: success (the UE answered with a Service Request) or failure."}, []string{"result"}),
		unreachable:             c("l25gc_amf_mobile_reachable_expiries_total", "CM-IDLE UEs whose mobile reachable timer expired."),
		implicitDeregistrations: c("l25gc_amf_implicit_deregistrations_total", "UEs deregistered implicitly (TS 24.501 5.3.7)."),
	}
	reg.MustRegister(m.pagingStarted, m.pagingRetransmissions, m.pagingMessages, m.pagingDone, m.unreachable, m.implicitDeregistrations)
	return m
}

// stopped says whether Stop ran: a parked UE's timer that fires later
// changes nothing (the next process restores the UE and starts anew).
func (n *NF) stopped() bool { return n.calls.Err() != nil }
