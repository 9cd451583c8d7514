package rules

import (
	"context"
	"sync"
)

// A ReportHandler's answer goes back to the UPF first (TS 29.244 7.5.8:
// the Session Report Response), and whatever the report starts follows
// it: the SMF's N1N2MessageTransfer that pages the UE (TS 23.502 4.2.3.3
// steps 2b-3a). The N4 client that calls the handler can run that
// follow-up itself, on its own goroutine, right after sending the
// response, instead of the handler handing it to another goroutine that
// must first be woken: the first downlink packet of an idle UE waits for
// every such hop.

// afterAnswerKey is the context key of what a handler leaves to run.
type afterAnswerKey struct{}

// AfterAnswer holds the follow-ups a ReportHandler left (LeaveAfterAnswer)
// for its caller to run once the response is sent.
type AfterAnswer struct {
	mu     sync.Mutex
	closed bool
	fs     []func()
}

// WithAfterAnswer returns ctx, to pass a ReportHandler, through which the
// handler may leave follow-ups, and what collects them: Take them once
// the handler returned, and run them after sending its answer.
func WithAfterAnswer(ctx context.Context) (context.Context, *AfterAnswer) {
	a := &AfterAnswer{}
	return context.WithValue(ctx, afterAnswerKey{}, a), a
}

// LeaveAfterAnswer has f run once the handler's answer is sent, on the
// goroutine that sent it, when the handler's caller offers that (ctx came
// from WithAfterAnswer and the handler has not returned); it says
// whether it will. f gets no context: the handler's ends when the
// handler returns.
func LeaveAfterAnswer(ctx context.Context, f func()) bool {
	a, ok := ctx.Value(afterAnswerKey{}).(*AfterAnswer)
	if !ok {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return false
	}
	a.fs = append(a.fs, f)
	return true
}

// Take closes a to more follow-ups and returns the ones left, in the
// order they were, as one function; nil when none was.
func (a *AfterAnswer) Take() func() {
	a.mu.Lock()
	fs := a.fs
	a.fs, a.closed = nil, true
	a.mu.Unlock()
	if len(fs) == 0 {
		return nil
	}
	return func() {
		for _, f := range fs {
			f()
		}
	}
}
