package amf

// The AMF's procedure limiter (the paper's Algorithm 1; DESIGN.md "AMF
// limiter and overload"; ratelimit/limiter.go): built from amf.limiter,
// its monitor started with the AMF, its state on /metrics.

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/ratelimit"
)

// procLimiter is the limiter with its monitor's lifetime.
type procLimiter struct {
	*ratelimit.Limiter
	stat     ratelimit.Statistic
	interval time.Duration
	ramp     time.Duration // the slow start's look between intervals, 0: none
	stop     context.CancelFunc
	done     chan struct{}
	dropped  *prometheus.CounterVec // initiating messages refused with the queue full, by kind
	overload *overloadState         // NGAP Overload Start/Stop (limiter_overload.go)
}

// newProcLimiter builds the limiter of amf.limiter and publishes its state.
func newProcLimiter(n *NF, reg prometheus.Registerer) *procLimiter {
	cfg, stat := n.cfg.AMF.Limiter.Settings()
	l := &procLimiter{Limiter: ratelimit.NewLimiter(cfg, nil), stat: stat, interval: n.cfg.AMF.Limiter.Interval}
	if n.cfg.AMF.Limiter.Ramps() {
		l.ramp = n.cfg.AMF.Limiter.RampInterval
	}
	l.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_amf_limiter_dropped_total",
		Help: "Event-initiating messages dropped because the limiter's queue was full (the UE's NAS timer retransmits), by procedure."},
		[]string{"procedure"})
	reg.MustRegister(l.dropped)
	l.overload = newOverloadState(reg)
	publishLimiter(reg, l.Limiter)
	return l
}

// publishLimiter exports E_max, E_current, the queue, the EWMA and the
// raw interval latency, read from one snapshot each.
func publishLimiter(reg prometheus.Registerer, l *ratelimit.Limiter) {
	gauge := func(name, help string, read func(ratelimit.LimiterState) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "l25gc_amf_limiter_" + name, Help: help},
			func() float64 { return read(l.State()) })
	}
	counter := func(name, help string, read func(ratelimit.LimiterState) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "l25gc_amf_limiter_" + name, Help: help},
			func() float64 { return float64(read(l.State())) })
	}
	reg.MustRegister(
		gauge("emax", "E_max: procedures allowed in progress at once.", func(s ratelimit.LimiterState) float64 { return float64(s.EMax) }),
		gauge("ecurrent", "E_current: procedures in progress.", func(s ratelimit.LimiterState) float64 { return float64(s.ECurrent) }),
		gauge("queue_length", "Event-initiating messages waiting for E_current < E_max.", func(s ratelimit.LimiterState) float64 { return float64(s.Queue) }),
		gauge("ewma_seconds", "EWMA of the Go scheduler latency the limiter compares with its threshold.", func(s ratelimit.LimiterState) float64 { return s.EWMA }),
		gauge("interval_latency_seconds", "Go scheduler latency of the last monitor interval (its statistic of /sched/latencies:seconds).", func(s ratelimit.LimiterState) float64 { return s.Latency }),
		counter("started_total", "Procedures counted in.", func(s ratelimit.LimiterState) uint64 { return s.Started }),
		counter("queued_total", "Event-initiating messages that waited for a slot.", func(s ratelimit.LimiterState) uint64 { return s.Queued }),
		counter("held_total", "Slow intervals that kept E_max because the last cut had not brought the scheduler latency down (the cut guard).", func(s ratelimit.LimiterState) uint64 { return s.Held }),
		gauge("hold_ratio", "The hold-time rule's last round at low load: mean procedure hold time over the shortest recent one of its kind.", func(s ratelimit.LimiterState) float64 { return s.HoldRatio }),
		counter("hold_cuts_total", "Rounds at low load whose hold times lowered E_max (procedures only queued inside the AMF).", func(s ratelimit.LimiterState) uint64 { return s.HoldCuts }),
		counter("hold_raises_total", "Rounds at low load whose hold times raised E_max by one.", func(s ratelimit.LimiterState) uint64 { return s.HoldRaises }),
		gauge("goodput_per_second", "The goodput rule's last window above low load: successful procedure completions per second.", func(s ratelimit.LimiterState) float64 { return s.GoodputRate }),
		counter("goodput_cuts_total", "Probes above low load that lowered E_max by a quarter and kept the goodput (within 5 %).", func(s ratelimit.LimiterState) uint64 { return s.GoodputCuts }),
		counter("goodput_raises_total", "Probes above low load that doubled E_max and raised the goodput (by 10 % or more).", func(s ratelimit.LimiterState) uint64 { return s.GoodputRaises }),
		counter("expired_total", "Procedures still counted after amf.limiter.procedure_timeout, ended by the limiter.", func(s ratelimit.LimiterState) uint64 { return s.Expired }),
	)
}

// start runs the monitor every interval until stop.
func (l *procLimiter) start(n *NF) {
	ctx, cancel := context.WithCancel(context.Background())
	l.stop, l.done = cancel, make(chan struct{})
	src := ratelimit.NewSchedLatency(l.stat)
	var ramp sync.WaitGroup
	if l.ramp > 0 {
		ramp.Add(1)
		go l.runRamp(ctx, n, &ramp)
	}
	go func() {
		defer close(l.done)
		defer ramp.Wait()
		t := time.NewTicker(l.interval)
		defer t.Stop()
		l.Monitor(ctx, src, t.C, func(d ratelimit.Decision) {
			n.checkOverload()
			if d.Change != 0 || d.Expired > 0 || d.Held {
				n.log.Debug("limiter", "emax", d.EMax, "ecurrent", d.ECurrent, "ewma", d.EWMA, "latency", d.Latency, "expired", d.Expired, "held", d.Held)
			}
		})
	}()
}

// runRamp looks at the scheduler every ramp interval for the slow start
// (ratelimit.Limiter.Ramp), with a latency source of its own.
func (l *procLimiter) runRamp(ctx context.Context, n *NF, wg *sync.WaitGroup) {
	defer wg.Done()
	t := time.NewTicker(l.ramp)
	defer t.Stop()
	l.RampMonitor(ctx, ratelimit.NewSchedLatency(l.stat), t.C, func(d ratelimit.Decision) {
		if d.Change != 0 {
			n.log.Debug("limiter ramp", "emax", d.EMax, "ecurrent", d.ECurrent, "latency", d.Latency)
		}
	})
}

// halt stops the monitor (Stop; a limiter never started has none).
func (l *procLimiter) halt() {
	if l.stop != nil {
		l.stop()
		<-l.done
	}
}
