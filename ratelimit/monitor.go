package ratelimit

// The limiter's monitor: the Go scheduler's latency over the last interval
// (runtime/metrics /sched/latencies:seconds, the time goroutines spent
// runnable before running) feeds Limiter.Step every interval.

import (
	"context"
	"fmt"
	"math"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// SchedLatencyMetric is the runtime/metrics name the monitor reads.
const SchedLatencyMetric = "/sched/latencies:seconds"

// Statistic reduces one interval's latency histogram to one number.
type Statistic struct {
	// Percentile in (0, 100]; 0 means the mean.
	Percentile float64
}

// ParseStatistic reads "mean" or "pNN" (e.g. p50, p99, p99.9).
func ParseStatistic(s string) (Statistic, error) {
	if s == "mean" {
		return Statistic{}, nil
	}
	if p, ok := strings.CutPrefix(s, "p"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err == nil && v > 0 && v <= 100 {
			return Statistic{Percentile: v}, nil
		}
	}
	return Statistic{}, fmt.Errorf("want mean or a percentile such as p50, p99, got %q", s)
}

func (s Statistic) String() string {
	if s.Percentile == 0 {
		return "mean"
	}
	return "p" + strconv.FormatFloat(s.Percentile, 'f', -1, 64)
}

// Of reduces h. An empty histogram (no goroutine was scheduled in the
// interval, so none waited) is 0.
func (s Statistic) Of(h *metrics.Float64Histogram) float64 {
	if s.Percentile == 0 {
		return histMean(h)
	}
	return histPercentile(h, s.Percentile)
}

// HistDelta is cur − prev bucket by bucket: the samples of the interval
// between two reads of a cumulative histogram. A prev of another shape
// (nil: the first read) gives cur itself.
func HistDelta(cur, prev *metrics.Float64Histogram) *metrics.Float64Histogram {
	d := &metrics.Float64Histogram{Buckets: cur.Buckets, Counts: make([]uint64, len(cur.Counts))}
	same := prev != nil && len(prev.Counts) == len(cur.Counts)
	for i, c := range cur.Counts {
		if same && c >= prev.Counts[i] {
			c -= prev.Counts[i]
		}
		d.Counts[i] = c
	}
	return d
}

// bucketValue stands for the samples of bucket i: its midpoint, or its
// finite edge when the other one is infinite.
func bucketValue(h *metrics.Float64Histogram, i int) float64 {
	lo, hi := h.Buckets[i], h.Buckets[i+1]
	switch {
	case math.IsInf(lo, -1):
		return max(hi, 0)
	case math.IsInf(hi, 1):
		return lo
	}
	return (lo + hi) / 2
}

func histMean(h *metrics.Float64Histogram) float64 {
	var n uint64
	var sum float64
	for i, c := range h.Counts {
		n += c
		sum += float64(c) * bucketValue(h, i)
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// histPercentile is the upper edge of the bucket holding the p-th
// percentile (its lower edge for the last, unbounded bucket): a bound the
// interval's samples stayed under.
func histPercentile(h *metrics.Float64Histogram, p float64) float64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p / 100 * float64(n)))
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank && c > 0 {
			if hi := h.Buckets[i+1]; !math.IsInf(hi, 1) {
				return hi
			}
			return h.Buckets[i]
		}
	}
	return h.Buckets[len(h.Buckets)-2]
}

// LatencySource gives the scheduler latency of the interval since its
// previous call, in seconds.
type LatencySource interface {
	IntervalLatency() float64
}

// SchedLatency reads /sched/latencies:seconds from runtime/metrics and
// reduces each interval's delta with its Statistic.
type SchedLatency struct {
	stat   Statistic
	sample []metrics.Sample
	prev   *metrics.Float64Histogram
}

// NewSchedLatency reads the histogram once, so the first interval starts now.
func NewSchedLatency(stat Statistic) *SchedLatency {
	s := &SchedLatency{stat: stat, sample: []metrics.Sample{{Name: SchedLatencyMetric}}}
	s.prev = s.read()
	return s
}

// read copies the cumulative histogram (runtime/metrics may reuse it).
func (s *SchedLatency) read() *metrics.Float64Histogram {
	metrics.Read(s.sample)
	if s.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	h := s.sample[0].Value.Float64Histogram()
	return &metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: h.Buckets}
}

// IntervalLatency implements LatencySource.
func (s *SchedLatency) IntervalLatency() float64 {
	cur := s.read()
	if cur == nil {
		return 0
	}
	d := HistDelta(cur, s.prev)
	s.prev = cur
	return s.stat.Of(d)
}

// Monitor runs Algorithm 1's loop: at every tick, one Step with the
// source's interval latency. ticks is a time.Ticker's channel in
// production and a test's own channel (a fake clock) in tests; observe,
// when not nil, hears every decision.
func (l *Limiter) Monitor(ctx context.Context, src LatencySource, ticks <-chan time.Time, observe func(Decision)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			d := l.Step(src.IntervalLatency())
			if observe != nil {
				observe(d)
			}
		}
	}
}
