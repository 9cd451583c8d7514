package ratelimit

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
)

// goroutineID reads the running goroutine's number from its stack header
// ("goroutine 42 [running]:"), only to tell workers apart in tests.
func goroutineID() string {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	f := bytes.Fields(b[:n])
	return string(f[1])
}

// A lone UE's messages, one after the other, run on one warm worker
// instead of a fresh goroutine (and a fresh small stack) each.
func TestSequentialEventsReuseOneWorker(t *testing.T) {
	p := New(8, nil, nil)
	defer p.Close()
	seen := map[string]bool{}
	for range 50 {
		done := make(chan string)
		if err := p.Dispatch(UE(1), func() { done <- goroutineID() }); err != nil {
			t.Fatal(err)
		}
		seen[<-done] = true
	}
	if len(seen) != 1 {
		t.Fatalf("50 sequential events ran on %d goroutines, want 1 warm worker", len(seen))
	}
}

// After a burst no more than warm workers stay parked, and a burst larger
// than the parked ones still gets its concurrency.
func TestParkedWorkersAreBounded(t *testing.T) {
	p := New(16, nil, nil)
	p.SetWarm(3)
	for range 3 {
		burst(t, p, 10)
		settle(t, p)
		if n := p.Idle(); n != 3 {
			t.Fatalf("%d workers parked after a burst of 10, want 3", n)
		}
	}
	p.Close()
	if n := p.Idle(); n != 0 {
		t.Fatalf("%d workers parked after Close, want 0", n)
	}
}

// settle waits until every worker left or parked (none busy) and the
// surplus of a shrunk warm count has gone.
func settle(t *testing.T, p *Pool) {
	t.Helper()
	for i := 0; ; i++ {
		p.mu.Lock()
		quiet := p.busy == 0 && p.workers == p.idle && p.idle <= p.warm
		p.mu.Unlock()
		if quiet {
			return
		}
		if i > 1e6 {
			t.Fatal("workers never settled")
		}
		runtime.Gosched()
	}
}

// burst runs n events on n keys that all wait until every one started, so
// n workers must run at once.
func burst(t *testing.T, p *Pool, n int) {
	t.Helper()
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	var done sync.WaitGroup
	done.Add(n)
	for k := range n {
		if err := p.Dispatch(UE(int64(k)), func() { started.Done(); release.Wait(); done.Done() }); err != nil {
			t.Fatal(err)
		}
	}
	started.Wait() // would hang if fewer than n workers ran
	release.Done()
	done.Wait()
}

// Parked workers count toward nothing: the limit still bounds running
// events, and a shrunk warm count sends the surplus away.
func TestWarmWorkersKeepTheLimit(t *testing.T) {
	p := New(4, nil, nil)
	p.SetWarm(4)
	burst(t, p, 4)
	settle(t, p)
	p.SetLimit(2)
	var mu sync.Mutex
	running, peak := 0, 0
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for k := range 8 {
		wg.Add(1)
		_ = p.Dispatch(UE(int64(k)), func() {
			defer wg.Done()
			mu.Lock()
			running++
			peak = max(peak, running)
			mu.Unlock()
			<-gate
			mu.Lock()
			running--
			mu.Unlock()
		})
	}
	close(gate)
	wg.Wait()
	if peak > 2 {
		t.Fatalf("peak %d events at once with limit 2 and 4 parked workers", peak)
	}
	p.SetWarm(1)
	settle(t, p)
	if n := p.Idle(); n != 1 {
		t.Fatalf("%d workers parked after SetWarm(1), want 1", n)
	}
	p.Close()
}
