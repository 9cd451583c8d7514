package ratelimit

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestEventsOfOneKeyRunInOrder(t *testing.T) {
	p := New(4, nil, nil)
	var mu sync.Mutex
	var got []int
	for i := range 200 {
		if err := p.Dispatch(UE(7), func() { mu.Lock(); got = append(got, i); mu.Unlock() }); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	for i, v := range got {
		if v != i {
			t.Fatalf("event %d ran at position %d", v, i)
		}
	}
	if len(got) != 200 {
		t.Fatalf("ran %d events, want 200", len(got))
	}
}

// A blocked key must not hold up another key.
func TestKeysRunConcurrently(t *testing.T) {
	p := New(2, nil, nil)
	release := make(chan struct{})
	_ = p.Dispatch(UE(1), func() { <-release })
	done := make(chan struct{})
	_ = p.Dispatch(UE(2), func() { close(done) })
	<-done // would deadlock if UE 2 waited for UE 1
	close(release)
	p.Close()
}

func TestConcurrencyNeverExceedsLimit(t *testing.T) {
	p := New(3, nil, nil)
	var running, peak atomic.Int32
	var wg sync.WaitGroup
	for k := range 50 {
		wg.Add(1)
		_ = p.Dispatch(UE(int64(k)), func() {
			defer wg.Done()
			n := running.Add(1)
			for {
				old := peak.Load()
				if n <= old || peak.CompareAndSwap(old, n) {
					break
				}
			}
			running.Add(-1)
		})
	}
	wg.Wait()
	p.Close()
	if peak.Load() > 3 {
		t.Fatalf("peak concurrency %d > limit 3", peak.Load())
	}
}

func TestPanicIsReportedAndWorkerContinues(t *testing.T) {
	var reported []Key
	var mu sync.Mutex
	p := New(1, func(k Key, r any, _ []byte) { mu.Lock(); reported = append(reported, k); mu.Unlock() }, nil)
	_ = p.Dispatch(UE(1), func() { panic("bad message") })
	ran := make(chan struct{})
	_ = p.Dispatch(UE(2), func() { close(ran) })
	<-ran
	p.Close()
	if len(reported) != 1 || reported[0] != UE(1) {
		t.Fatalf("reported %v, want [ue/1]", reported)
	}
}

func TestSetLimitAndGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := NewGauges(reg, "test")
	p := New(1, nil, g)
	block := make(chan struct{})
	started := make(chan struct{}, 2)
	_ = p.Dispatch(UE(1), func() { started <- struct{}{}; <-block })
	_ = p.Dispatch(UE(2), func() { started <- struct{}{}; <-block })
	<-started
	if p.InFlight() != 1 || p.QueueLen() != 1 {
		t.Fatalf("inflight %d queue %d, want 1 and 1", p.InFlight(), p.QueueLen())
	}
	if v := gauge(g.queue); v != 1 {
		t.Fatalf("queue gauge %v", v)
	}
	p.SetLimit(2) // the waiting event starts now
	<-started
	if p.Limit() != 2 || gauge(g.limit) != 2 {
		t.Fatalf("limit %d", p.Limit())
	}
	close(block)
	p.Close()
	if err := p.Dispatch(UE(3), func() {}); err != ErrClosed {
		t.Fatalf("dispatch after close: %v", err)
	}
}

func gauge(g prometheus.Gauge) float64 {
	var m dto.Metric
	_ = g.Write(&m)
	return m.GetGauge().GetValue()
}

// A held key keeps its later events, in order, behind the event Resume
// gives; other keys run meanwhile.
func TestHoldKeepsKeyOrderUntilResume(t *testing.T) {
	p := New(4, nil, nil)
	var mu sync.Mutex
	var got []string
	note := func(s string) func() { return func() { mu.Lock(); got = append(got, s); mu.Unlock() } }
	held := make(chan struct{})
	_ = p.Dispatch(UE(1), func() { note("initiating, held")(); p.Hold(UE(1)); close(held) })
	<-held
	_ = p.Dispatch(UE(1), note("next of ue 1"))
	other := make(chan struct{})
	_ = p.Dispatch(UE(2), func() { note("ue 2")(); close(other) })
	<-other // a held key holds up no other key
	mu.Lock()
	if len(got) != 2 || got[1] != "ue 2" {
		t.Fatalf("ran %v while ue 1 was held", got)
	}
	mu.Unlock()
	if p.QueueLen() != 1 {
		t.Fatalf("queue %d, want the held event", p.QueueLen())
	}
	if err := p.Resume(UE(1), note("initiating, admitted")); err != nil {
		t.Fatal(err)
	}
	p.Close()
	want := []string{"initiating, held", "ue 2", "initiating, admitted", "next of ue 1"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

// Resume may come before the holding event returned.
func TestResumeWhileHoldingEventRuns(t *testing.T) {
	p := New(2, nil, nil)
	done := make(chan struct{})
	_ = p.Dispatch(UE(1), func() {
		p.Hold(UE(1))
		_ = p.Resume(UE(1), func() { close(done) })
	})
	<-done
	p.Close()
	if err := p.Resume(UE(1), func() {}); err != ErrClosed {
		t.Fatalf("resume after close: %v", err)
	}
}

// The limiter may admit a waiting event (Resume, on another goroutine)
// before the event that queued it has called Hold: that Hold must not park
// the key, or the UE would never run again.
func TestResumeBeforeHoldDoesNotPark(t *testing.T) {
	p := New(2, nil, nil)
	done := make(chan struct{})
	_ = p.Dispatch(UE(1), func() {
		_ = p.Resume(UE(1), func() { close(done) })
		p.Hold(UE(1))
	})
	<-done
	next := make(chan struct{})
	_ = p.Dispatch(UE(1), func() { close(next) })
	<-next
	p.Close()
}
