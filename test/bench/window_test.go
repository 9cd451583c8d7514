package bench

import (
	"context"
	"testing"
)

// A run opens its profile window where its measurement starts and closes
// it where it ends: once each, whoever calls again; a run that fails
// before its measurement opens none, and none opens after it.
func TestMeasuredWindow(t *testing.T) {
	var opened, closed int
	var got []Result
	newWindow := func() *measuredWindow {
		return &measuredWindow{open: func() func([]Result) {
			opened++
			return func(rs []Result) { closed++; got = rs }
		}}
	}
	w := newWindow()
	ctx := withWindow(context.Background(), w)
	if opened != 0 {
		t.Fatal("the window opened before the run's measurement")
	}
	startMeasuring(ctx)
	startMeasuring(ctx)
	rs := []Result{{Procedure: "paging", Succeeded: 64}}
	endMeasuring(ctx, rs)
	w.end(nil) // the run returns: closed already
	if opened != 1 || closed != 1 || len(got) != 1 || got[0].Succeeded != 64 {
		t.Fatalf("opened %d, closed %d with %v: want once each with the run's results", opened, closed, got)
	}

	opened, closed = 0, 0
	w = newWindow()
	ctx = withWindow(context.Background(), w)
	w.end(nil) // failed in its setup
	startMeasuring(ctx)
	if opened != 0 || closed != 0 {
		t.Fatalf("a run that never measured: opened %d, closed %d", opened, closed)
	}

	// Without --profile the calls do nothing.
	startMeasuring(context.Background())
	endMeasuring(context.Background(), rs)
}
