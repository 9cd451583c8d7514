package amf

// Waiting for a peer NF without holding up the UE.
//
// Design (issue 8 item 7). A handler that needs an AUSF, UDM or PCF answer
// does not wait for it on the dispatcher's worker: call starts the request
// on its own goroutine and the handler returns the UE in a waiting state of
// the table (StateAwaitingVector, StateAwaitingConfirmation,
// StateAwaitingPeers). The answer comes back through the
// dispatcher as a typed event on the UE's key (EvAuthVector, ...) carrying
// the AMF UE NGAP ID and a call generation, never the context (STYLE.md
// habits 4-5), so runUE looks the UE up again. Meanwhile every other event
// of the UE — NAS, NGAP, timers, and the UDM and PCF notifications of
// namf_callback.go — runs at once instead of queueing for up to sbiTimeout
// per call.
//
// The alternative, a separate ordering for callbacks, would let a
// notification act on a context whose procedure is half-way through a call
// on another goroutine. Here a UE's context is still touched only by its
// own events, one at a time, and the state machine says in one table which
// answer is awaited where: an answer the UE no longer waits for (released,
// procedure restarted) is dropped, and what it created at a peer is undone.
//
// The release-time calls of cleanupSBI (UDM purge, AM policy delete) still
// run on the worker: they end a procedure rather than wait inside one, and
// a purge must not overtake the next registration of the same SUPI.

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/ratelimit"
)

// pendingCall is the one SBI request a UE's procedure waits for.
type pendingCall struct {
	gen    uint64 // 0: none
	cancel context.CancelFunc
}

// sbiAnswer is the typed payload of an answer event; the event says which
// result field is set.
type sbiAnswer struct {
	gen      uint64
	err      error
	av       AuthVector       // EvAuthVector
	conf     AuthConfirmation // EvAuthConfirmation
	udm      udmAnswer        // EvPeersAnswer
	policyID string           // EvPeersAnswer: the AM policy association created
	// policyErr is why no AM policy association was created
	// (EvPeersAnswer); registration goes on without one.
	policyErr error
	// undo reverses what the call created at the peer; it runs (on its own
	// goroutine) when no handler took the answer.
	undo  func()
	taken bool
}

// udmAnswer is the outcome of TS 23.502 4.2.2.2.2 steps 14a-c.
type udmAnswer struct {
	registered bool // step 14a succeeded: the UDM holds this AMF for the UE
	am         models.AccessAndMobilitySubscriptionData
	slices     *models.AuthorizedNetworkSliceInfo // the NSSF's answer; nil: not reached (nssf_consumer.go)
	// smfSelection is the SMF selection subscription data; nil: not read.
	smfSelection *models.SmfSelectionSubscriptionData
}

// call runs do off the UE's key, bounded by sbiTimeout, and delivers its
// answer as event ev on that key. A call still pending is cancelled: a UE
// waits for one answer at a time.
func (n *NF) call(ue *ueContext, ev Event, do func(ctx context.Context) sbiAnswer) {
	n.cancelCall(ue)
	gen := n.callGen.Add(1)
	ctx, cancel := context.WithTimeout(n.trace.Context(n.calls, ue.amfID), sbiTimeout)
	ue.call = pendingCall{gen: gen, cancel: cancel}
	id := ue.amfID
	n.workers.Go(func() {
		defer cancel()
		cctx, span := tracing.Start(ctx, ev.String(), tracing.HopConsumer)
		a, crash := runContained(cctx, do)
		span.End()
		a.gen = gen
		in := &input{answer: &a, done: a.undoUnlessTaken}
		event := n.trace.Event(ctx, id, ev.String(), func() { n.runUE(id, ev, in) })
		if crash != nil {
			// Raised again on the UE's key, where the dispatcher contains
			// it like a handler's panic: counted, and only this UE cleaned up.
			event = func() { panic(crash) }
		}
		if err := n.disp.Dispatch(ratelimit.UE(id), event); err != nil {
			a.undoUnlessTaken() // the AMF is stopping
		}
	})
}

// runContained runs do, turning a panic into a value: a goroutine of its
// own has no dispatcher to recover it, and a bug in one call must cost one
// UE, never the AMF.
func runContained(ctx context.Context, do func(context.Context) sbiAnswer) (a sbiAnswer, crash any) {
	defer func() {
		if r := recover(); r != nil {
			crash = fmt.Sprintf("SBI call: %v\n%s", r, debug.Stack())
		}
	}()
	return do(ctx), nil
}

// answer hands a handler the answer of the call the UE waits for, or nil
// when in carries a stale one (the handler then changes nothing).
func (n *NF) answer(ue *ueContext, in *input) *sbiAnswer {
	a := in.answer
	if a == nil || ue.call.gen == 0 || a.gen != ue.call.gen {
		return nil
	}
	ue.call = pendingCall{}
	a.taken = true
	return a
}

// cancelCall gives up the UE's pending call, if any: its answer, when it
// comes, is stale.
func (n *NF) cancelCall(ue *ueContext) {
	if ue.call.cancel != nil {
		ue.call.cancel()
	}
	ue.call = pendingCall{}
}

func (a *sbiAnswer) undoUnlessTaken() {
	if !a.taken && a.undo != nil {
		go a.undo()
	}
}

// isAnswer says whether ev is a peer's answer rather than something the UE
// or gNB did.
func isAnswer(ev Event) bool {
	switch ev {
	case EvAuthVector, EvAuthConfirmation, EvPeersAnswer:
		return true
	}
	return false
}
