package gopool

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every function handed to the pool runs exactly once, also when many are
// handed over at once from many goroutines.
func TestEveryFunctionRunsOnce(t *testing.T) {
	p := New(time.Minute)
	const n = 2000
	var runs [n]atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go p.Go(func() {
			runs[i].Add(1)
			wg.Done()
		})
	}
	wg.Wait()
	for i := range runs {
		if got := runs[i].Load(); got != 1 {
			t.Fatalf("function %d ran %d times, want once", i, got)
		}
	}
}

// A goroutine that finished its function waits for the next one: handed
// one after the other, the functions share the goroutine Go started for
// the first.
func TestAFinishedGoroutineTakesTheNextFunction(t *testing.T) {
	p := New(time.Minute)
	ran := make(chan struct{})
	p.Go(func() { ran <- struct{}{} })
	<-ran
	for range 100 {
		p.work <- func() { ran <- struct{}{} } // what Go does when a goroutine waits
		<-ran
	}
	if live, started := p.Goroutines(); live != 1 || started != 1 {
		t.Fatalf("%d goroutines live, %d started for 101 functions run one after another; want 1 and 1", live, started)
	}
}

// An idle pool keeps no goroutine.
func TestIdleGoroutinesExit(t *testing.T) {
	p := New(time.Millisecond)
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		p.Go(wg.Done)
	}
	wg.Wait()
	if _, started := p.Goroutines(); started == 0 {
		t.Fatal("no goroutine started")
	}
	for {
		if live, _ := p.Goroutines(); live == 0 {
			return
		}
		time.Sleep(time.Millisecond) // the go test deadline ends a pool that never lets go
	}
}

// A nil pool (a component built without New) still runs what it is given.
func TestANilPoolStartsAGoroutine(t *testing.T) {
	var p *Pool
	done := make(chan struct{})
	p.Go(func() { close(done) })
	<-done
}
