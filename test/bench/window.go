package bench

import (
	"context"
	"sync"
)

// measuredWindow is the profile window of one measured run (o.Window),
// opened by the run itself where its measurement starts (startMeasuring)
// and closed where it ends (endMeasuring, else when the run returns): a
// pdu or paging run first registers its UEs and sets their sessions up,
// unmeasured, and a paging run deregisters them after, and a window
// around all of it gave the CPU of that to the procedures measured.
type measuredWindow struct {
	opened, closed sync.Once
	open           func() func([]Result)
	close          func([]Result)
}

type windowKey struct{}

// withWindow carries w to the run through ctx (nil w: no window).
func withWindow(ctx context.Context, w *measuredWindow) context.Context {
	if w == nil {
		return ctx
	}
	return context.WithValue(ctx, windowKey{}, w)
}

// startMeasuring opens the run's profile window, once.
func startMeasuring(ctx context.Context) {
	if w, ok := ctx.Value(windowKey{}).(*measuredWindow); ok {
		w.opened.Do(func() { w.close = w.open() })
	}
}

// endMeasuring closes the run's profile window with its results, once.
func endMeasuring(ctx context.Context, rs []Result) {
	w, _ := ctx.Value(windowKey{}).(*measuredWindow)
	w.end(rs)
}

// end closes w with rs if it opened; a run that failed before its
// measurement opened none, and none opens after.
func (w *measuredWindow) end(rs []Result) {
	if w == nil {
		return
	}
	w.opened.Do(func() {})
	w.closed.Do(func() {
		if w.close != nil {
			w.close(rs)
		}
	})
}
