package config

import (
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
	// Initial, Min and Max bound E_max in adaptive mode.
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
}

// DefaultLimiter is amf.limiter's default. The threshold, 1 ms of mean
// scheduler latency, comes from a closed-loop measurement on this 2-core
// machine under load (README, amf.limiter rows): 50 µs (the published
// code) starved the AMF at E_max 2-4, 50 ms (the paper's text) never
// stopped E_max from growing, 1 ms settled it near 20 at the best rate.
func DefaultLimiter() Limiter {
	return Limiter{Mode: "adaptive", Interval: 500 * time.Millisecond, EWMAWeight: 0.3,
		Threshold: time.Millisecond, Statistic: "mean", Initial: 8, Min: 1, Max: 64,
		Queue: 4096, ProcedureTimeout: time.Minute, OverloadHigh: 1024, OverloadLow: 256}
}

// Settings turns a validated section into the limiter's own config.
func (l Limiter) Settings() (ratelimit.LimiterConfig, ratelimit.Statistic) {
	if l.Mode == "" {
		l = DefaultLimiter() // a Config built in code without the section
	}
	mode, n, _ := ratelimit.ParseMode(l.Mode)
	stat, _ := ratelimit.ParseStatistic(l.Statistic)
	c := ratelimit.LimiterConfig{Mode: mode, Initial: l.Initial, Min: l.Min, Max: l.Max, Queue: l.Queue,
		EWMAWeight: l.EWMAWeight, Threshold: l.Threshold, MaxAge: l.ProcedureTimeout}
	if mode == ratelimit.ModeFixed {
		c.Initial, c.Min, c.Max = n, n, n
	}
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
	v.rangeInt("amf.limiter.initial", l.Initial, max(l.Min, 1), max(l.Max, 1))
	v.rangeInt("amf.limiter.queue", l.Queue, 1, 1<<20)
	if l.OverloadHigh != 0 {
		v.rangeInt("amf.limiter.overload_high", l.OverloadHigh, 1, max(l.Queue, 1))
		v.rangeInt("amf.limiter.overload_low", l.OverloadLow, 0, max(l.OverloadHigh-1, 0))
	}
	if l.ProcedureTimeout <= 0 || l.ProcedureTimeout > time.Hour {
		v.fail("amf.limiter.procedure_timeout", "must be a positive duration up to 1h such as 1m, got %v", l.ProcedureTimeout)
	}
}
