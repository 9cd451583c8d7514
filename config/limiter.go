package config

import (
	"cmp"
	"runtime"
	"time"

	"github.com/l25gc/l25gc/ratelimit"
)

// Limiter configures the AMF's procedure limiter (the paper's Algorithm 1,
// ratelimit.Limiter): at most E_max procedures in progress, E_max moved
// every Interval from the EWMA of the Go scheduler's latency.
type Limiter struct {
	// Mode is adaptive (E_max moves within [Min, Max]), fixed:N (E_max is
	// N) or off (no procedure waits; they are still counted).
	Mode string `yaml:"mode"`
	// Interval is the monitor's period (the paper: 500 ms).
	Interval time.Duration `yaml:"interval"`
	// EWMAWeight is w of EWMA_t = w·EWMA_{t−1} + (1−w)·latency_t (0.3).
	EWMAWeight float64 `yaml:"ewma_weight"`
	// Threshold: an EWMA above it lowers E_max, at or below it raises it.
	Threshold time.Duration `yaml:"threshold"`
	// Statistic reduces an interval's latency histogram: mean or pNN.
	Statistic string `yaml:"statistic"`
	// Initial, Min and Max bound E_max in adaptive mode. Initial 0 is
	// InitialPerCPU × the machine's CPUs (clamped to [Min, Max]).
	Initial int `yaml:"initial"`
	Min     int `yaml:"min"`
	Max     int `yaml:"max"`
	// Queue bounds the initiating messages waiting for a slot; one beyond
	// it is turned away (counted): an initial Registration Request gets #22
	// with T3346, anything else is dropped and the UE retransmits it.
	Queue int `yaml:"queue"`
	// ProcedureTimeout ends a procedure still counted after it, whatever
	// path forgot it: a lost answer costs capacity for a bounded time.
	ProcedureTimeout time.Duration `yaml:"procedure_timeout"`
	// OverloadHigh and OverloadLow are the queue's water marks: at
	// OverloadHigh waiting messages the AMF sends NGAP Overload Start to
	// its gNBs, at OverloadLow or fewer Overload Stop (TS 38.413 8.7.6,
	// 8.7.7). OverloadHigh 0: never.
	OverloadHigh int `yaml:"overload_high"`
	OverloadLow  int `yaml:"overload_low"`
	// Growth is E_max's factor per interval in a slow start: while
	// initiating messages wait and the EWMA has stayed at or below the
	// threshold since the queue last emptied (ratelimit.Limiter). 1 is the
	// paper's exact Algorithm 1 (+1 per interval).
	Growth float64 `yaml:"growth"`
	// RampInterval is how often a slow start looks at the scheduler
	// between two intervals and, while it is fast and messages wait,
	// multiplies E_max by Growth (ratelimit.Limiter.Ramp); 0, or not
	// shorter than Interval: only once per Interval. It never lowers
	// E_max: that stays with the interval.
	RampInterval time.Duration `yaml:"ramp_interval"`
	// HoldRule (with Growth > 1): at low load, a demand within Initial,
	// E_max follows the procedures' hold times (a Vegas-like rule,
	// ratelimit/limiter_holdtime.go) instead of the scheduler latency,
	// which stays far under the threshold there.
	HoldRule bool `yaml:"hold_rule"`
	// HoldAlphaPerCPU and HoldBetaPerCPU are the hold-time rule's bounds
	// per CPU of the machine (the consts below are the defaults; 0 takes
	// them).
	HoldAlphaPerCPU int `yaml:"hold_alpha_per_cpu"`
	HoldBetaPerCPU  int `yaml:"hold_beta_per_cpu"`
	// HoldLoad is how far the hold-time rule reaches: while procedures in
	// progress plus the queue stay within HoldLoad × initial E_max (0: 2).
	HoldLoad int `yaml:"hold_load"`
	// GoodputRule (with Growth > 1): above that low load E_max follows
	// the goodput it buys, a hill climb on completions per second
	// (ratelimit/limiter_goodput.go), instead of the latency rule's slow
	// start to the demand; a slow EWMA still cuts.
	GoodputRule bool `yaml:"goodput_rule"`
}

// HoldAlphaPerCPU and HoldBetaPerCPU bound, per CPU, how many
// procedures the hold-time rule lets wait inside the AMF at low load:
// under Alpha E_max rises, over Beta it falls. A few per CPU keep every
// CPU busy, which is all that more procedures at once can buy (TCP
// Vegas's α and β, counted in procedures instead of packets).
//
// β is also the rule's floor, and on this machine the rule sits there:
// the hold times of a batch of 32 PDU session establishments stretch
// 1.6-7× over the shortest one whatever E_max is (the AMF shares two CPUs
// with the other NFs, ransim and the neighbours' load), so it always
// cuts, and β is the limit at batch 32. Interleaved rounds (bench pdu
// --batch 32 --rounds 40 --batches 2, stop 13), adaptive over the best
// fixed limit and over off, per-round ratio medians, average completion
// time / batch makespan: β 4 per CPU (E_max 8) 1.24 of the best fixed
// makespan (20 rounds); β 8 per CPU (E_max 16), three runs, 1.03, 1.03,
// 0.91 / 1.14, 1.06, 0.93 of the best fixed limit and 0.93, 0.95, 0.82 /
// 1.12, 1.17, 1.05 of off; β 12 per CPU (E_max 24), two runs, 1.06, 1.07 /
// 1.04, 1.02 and 0.80, 0.87 / 0.93, 0.97. Only 12 keeps both goals
// (within 10 % of the best fixed limit, within 5 % of off) on both
// figures: a limit under the batch shortens the average completion (first
// come, first served instead of all sharing the CPUs) but stretches the
// makespan, where off is best. So 6 and 12 per CPU.
const (
	HoldAlphaPerCPU = 6
	HoldBetaPerCPU  = 12
)

// InitialPerCPU is E_max's start per CPU when amf.limiter.initial
// is 0: on this 2-core machine under a registration burst, 32 procedures
// in progress kept the AMF's mean scheduler latency at 0.2-1.1 ms, far
// under the threshold, so starting there costs no thrashing and saves
// the slow start two doublings from the paper's 8.
const InitialPerCPU = 16

// DefaultLimiter is amf.limiter's default, chosen from registration
// bursts on this loaded 2-core machine (README, amf.limiter rows). The
// AMF's mean scheduler latency there follows the machine's load more than
// its own goroutines: 0.2-1.1 ms at 32 procedures in progress, 1-6 ms at
// 64-128, 7-36 ms with the limiter off at 1000. With the paper's +1 from
// 8 and a 1 ms threshold E_max reached 25 in an 11 s burst of 3000 and
// the goodput was about half of off's; a 10 ms threshold with a slow
// start (growth 2) from 16 per CPU lets E_max reach the burst's demand in
// about 2 s and still cuts it back when the AMF's goroutines wait 10 ms
// on average to run. Max 1024: a fixed limit of 256 or 1000 was never
// worse than a smaller one there.
func DefaultLimiter() Limiter {
	return Limiter{Mode: "adaptive", Interval: 500 * time.Millisecond, EWMAWeight: 0.3,
		Threshold: 10 * time.Millisecond, Statistic: "mean", Initial: 0, Min: 1, Max: 1024,
		Queue: 4096, ProcedureTimeout: time.Minute, OverloadHigh: 1024, OverloadLow: 256, Growth: 2,
		RampInterval: DefaultRampInterval, HoldRule: true, GoodputRule: true}
}

// DefaultRampInterval lets a slow start double E_max five times per
// 500 ms interval: from 32 to a burst's demand of 1000 in 0.5 s instead of
// 2.5 s, while /sched/latencies still gets hundreds of samples per look
// under a burst (one goroutine in eight is sampled).
const DefaultRampInterval = 100 * time.Millisecond

// Ramps says whether the slow start looks between intervals.
func (l Limiter) Ramps() bool { return l.RampInterval > 0 && l.RampInterval < l.Interval }

// Settings turns a validated section into the limiter's own config.
func (l Limiter) Settings() (ratelimit.LimiterConfig, ratelimit.Statistic) {
	if l.Mode == "" {
		l = DefaultLimiter() // a Config built in code without the section
	}
	mode, n, _ := ratelimit.ParseMode(l.Mode)
	stat, _ := ratelimit.ParseStatistic(l.Statistic)
	// Per CPU of the machine, not per P of the AMF: a procedure in
	// progress runs in every NF behind the AMF, which share the machine's
	// CPUs, and the AMF runs on one P by default (tuning.procs) while the
	// values below were measured with two (stop 16: the hold rule's β
	// halved to 12 made Fig. 3's batch-32 makespan 1.19 × off's).
	cpus := runtime.NumCPU()
	if l.Initial == 0 {
		l.Initial = InitialPerCPU * cpus
	}
	c := ratelimit.LimiterConfig{Mode: mode, Initial: l.Initial, Min: l.Min, Max: l.Max, Queue: l.Queue,
		EWMAWeight: l.EWMAWeight, Threshold: l.Threshold, MaxAge: l.ProcedureTimeout}
	// fixed:N's limit stays apart from the adaptive bounds, which a switch
	// to adaptive at run time needs (ratelimit.Limiter.SetMode).
	c.Fixed = n
	c.Growth = l.Growth
	c.HoldRule = l.HoldRule
	alpha, beta := cmp.Or(l.HoldAlphaPerCPU, HoldAlphaPerCPU), cmp.Or(l.HoldBetaPerCPU, HoldBetaPerCPU)
	c.HoldAlpha, c.HoldBeta = alpha*cpus, beta*cpus
	c.HoldLoad = l.HoldLoad
	c.GoodputRule = l.GoodputRule
	return c, stat
}

// limiter checks amf.limiter.
func (v *validator) limiter(l *Limiter) {
	_, _, err := ratelimit.ParseMode(l.Mode)
	v.check("amf.limiter.mode", err)
	_, err = ratelimit.ParseStatistic(l.Statistic)
	v.check("amf.limiter.statistic", err)
	if l.Interval < 10*time.Millisecond || l.Interval > time.Minute {
		v.fail("amf.limiter.interval", "must be a duration from 10ms to 1m such as 500ms, got %v", l.Interval)
	}
	if l.EWMAWeight < 0 || l.EWMAWeight >= 1 {
		v.fail("amf.limiter.ewma_weight", "must be in [0, 1) (the weight of the previous EWMA), got %g", l.EWMAWeight)
	}
	if l.Threshold <= 0 || l.Threshold > time.Second {
		v.fail("amf.limiter.threshold", "must be a positive duration up to 1s such as 50us, got %v", l.Threshold)
	}
	v.rangeInt("amf.limiter.min", l.Min, 1, 1<<16)
	v.rangeInt("amf.limiter.max", l.Max, max(l.Min, 1), 1<<16)
	if l.Initial != 0 {
		v.rangeInt("amf.limiter.initial", l.Initial, max(l.Min, 1), max(l.Max, 1))
	}
	v.rangeInt("amf.limiter.queue", l.Queue, 1, 1<<20)
	if l.OverloadHigh != 0 {
		v.rangeInt("amf.limiter.overload_high", l.OverloadHigh, 1, max(l.Queue, 1))
		v.rangeInt("amf.limiter.overload_low", l.OverloadLow, 0, max(l.OverloadHigh-1, 0))
	}
	if l.Growth < 1 || l.Growth > 16 {
		v.fail("amf.limiter.growth", "must be from 1 (the paper's +1 per interval) to 16, such as 2, got %g", l.Growth)
	}
	if l.RampInterval != 0 && (l.RampInterval < 10*time.Millisecond || l.RampInterval > time.Minute) {
		v.fail("amf.limiter.ramp_interval", "must be 0 (off) or a duration from 10ms to 1m such as 100ms, got %v", l.RampInterval)
	}
	v.rangeInt("amf.limiter.hold_alpha_per_cpu", l.HoldAlphaPerCPU, 0, 1024)
	v.rangeInt("amf.limiter.hold_beta_per_cpu", l.HoldBetaPerCPU, 0, 1024)
	if a, b := cmp.Or(l.HoldAlphaPerCPU, HoldAlphaPerCPU), cmp.Or(l.HoldBetaPerCPU, HoldBetaPerCPU); a > b {
		v.fail("amf.limiter.hold_beta_per_cpu", "must not be below hold_alpha_per_cpu (%d), got %d", a, b)
	}
	v.rangeInt("amf.limiter.hold_load", l.HoldLoad, 0, 1<<16)
	if l.ProcedureTimeout <= 0 || l.ProcedureTimeout > time.Hour {
		v.fail("amf.limiter.procedure_timeout", "must be a positive duration up to 1h such as 1m, got %v", l.ProcedureTimeout)
	}
}
