package ransim

// AMF overload as a gNB and a UE honour it:
//   - NGAP Overload Start / Overload Stop (TS 38.413 8.7.6, 8.7.7): while
//     the AMF is overloaded the gNB refuses the new RRC connections its
//     overload action names; here such an attempt is held at the gNB until
//     Overload Stop (a real UE would retry after the RRC reject's wait time,
//     which comes to the same: nothing reaches the AMF meanwhile).
//   - 5GMM cause #22 with T3346 (TS 24.501 5.3.9, 5.5.1.2.5): the UE waits
//     T3346 and registers again; without T3346 it waits a random back-off.
//   - T3510 (TS 24.501 10.2, 15 s): an attempt the network left unanswered
//     that long is one the UE's own timer would have aborted; counted.

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/free5gc/aper"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// T3510 is the UE's registration timer (TS 24.501 table 10.2.1).
const T3510 = 15 * time.Second

// overloadGate is the gNB's view of its AMF's overload (TS 38.413 8.7.6.2).
type overloadGate struct {
	mu      sync.Mutex
	on      bool
	o       ngapx.Overload
	stopped chan struct{} // closed at Overload Stop; replaced at each Start
}

// OverloadCounters are what the gNB saw of the AMF's overload control.
type OverloadCounters struct {
	Starts, Stops atomic.Int64
	// Held counts attempts the gNB held back under an overload action.
	Held atomic.Int64
}

// onOverloadStart takes the AMF's overload action into use (TS 38.413
// 8.7.6.2); a second Start replaces the first's action.
func (g *GNB) onOverloadStart(pdu *ngapType.NGAPPDU) {
	o, err := ngapx.ParseOverloadStart(pdu)
	if err != nil {
		g.log.Warn("Overload Start", "err", err)
		return
	}
	g.overload.mu.Lock()
	if !g.overload.on {
		g.overload.stopped = make(chan struct{})
	}
	g.overload.on, g.overload.o = true, o
	g.overload.mu.Unlock()
	g.OverloadSeen.Starts.Add(1)
	g.log.Info("Overload Start from the AMF", "action", o.Action, "noAction", o.NoAction, "reduction", o.Reduction)
}

// onOverloadStop lets held attempts go (TS 38.413 8.7.7.2).
func (g *GNB) onOverloadStop() {
	g.overload.mu.Lock()
	if g.overload.on {
		g.overload.on = false
		close(g.overload.stopped)
	}
	g.overload.mu.Unlock()
	g.OverloadSeen.Stops.Add(1)
	g.log.Info("Overload Stop from the AMF")
}

// Overloaded says whether the AMF's Overload Start is in force.
func (g *GNB) Overloaded() bool {
	g.overload.mu.Lock()
	defer g.overload.mu.Unlock()
	return g.overload.on
}

// awaitAdmission returns once the gNB may set up an RRC connection with
// this establishment cause: at once outside overload or when the action
// spares the cause, else at Overload Stop (or ctx's end).
func (g *GNB) awaitAdmission(ctx context.Context, rrcCause aper.Enumerated) error {
	g.overload.mu.Lock()
	shed := g.overload.on && sheds(g.overload.o, rrcCause)
	stopped := g.overload.stopped
	g.overload.mu.Unlock()
	if !shed {
		return nil
	}
	g.OverloadSeen.Held.Add(1)
	select {
	case <-stopped:
		return nil
	case <-g.done:
		return errors.New("N2 association ended while held by AMF overload")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sheds says whether the overload action refuses an RRC connection with
// this establishment cause (TS 38.413 9.3.1.105, TS 38.331 5.3.3), and,
// with a traffic load reduction, draws whether this one falls in the shed
// share (9.3.1.106). Without an action the gNB sheds nothing (8.7.6.2).
func sheds(o ngapx.Overload, rrcCause aper.Enumerated) bool {
	if o.NoAction || !shedByAction(o.Action, rrcCause) {
		return false
	}
	return o.Reduction == 0 || rand.Int64N(100) < o.Reduction
}

// shedByAction is the table of TS 38.413 8.7.6.2.
func shedByAction(action, rrcCause aper.Enumerated) bool {
	switch rrcCause {
	case ngapType.RRCEstablishmentCausePresentEmergency:
		return false // no action refuses emergency
	case ngapType.RRCEstablishmentCausePresentMtAccess:
		return false // mobile terminated services are always permitted
	}
	mo := rrcCause == ngapType.RRCEstablishmentCausePresentMoData || rrcCause == ngapType.RRCEstablishmentCausePresentMoSMS ||
		rrcCause == ngapType.RRCEstablishmentCausePresentMoVideoCall || rrcCause == ngapType.RRCEstablishmentCausePresentMoVoiceCall
	switch action {
	case ngapType.OverloadActionPresentRejectNonEmergencyMoDt:
		return mo // "non-emergency mobile originated data transfer"
	case ngapType.OverloadActionPresentRejectRrcCrSignalling:
		return mo || rrcCause == ngapType.RRCEstablishmentCausePresentMoSignalling
	case ngapType.OverloadActionPresentPermitEmergencySessionsAndMobileTerminatedServicesOnly:
		return true
	case ngapType.OverloadActionPresentPermitHighPrioritySessionsAndMobileTerminatedServicesOnly:
		return rrcCause != ngapType.RRCEstablishmentCausePresentHighPriorityAccess &&
			rrcCause != ngapType.RRCEstablishmentCausePresentMpsPriorityAccess && rrcCause != ngapType.RRCEstablishmentCausePresentMcsPriorityAccess
	}
	return false
}

// BackOff says how a UE of a fleet answers #22 congestion.
type BackOff struct {
	// Max caps the wait (a lab shortcut: the AMF's T3346 is 20-60 s);
	// 0 waits the full T3346.
	Max time.Duration
	// Attempts bounds the registrations per UE; 0: 10.
	Attempts int
	// AttemptTimeout bounds each attempt; 0: only ctx does.
	AttemptTimeout time.Duration
}

// OverloadStats are what a fleet's UEs met of the AMF's congestion control.
type OverloadStats struct {
	// BackOffs counts #22 rejects after which a UE waited and tried again.
	BackOffs atomic.Int64
	// WithT3346 counts the #22 rejects that carried T3346.
	WithT3346 atomic.Int64
	// T3510Expiries counts attempts left unanswered for T3510 or longer:
	// a real UE would have given up on them.
	T3510Expiries atomic.Int64
}

// RegisterWithBackOff runs initial registration until accepted, backing off
// after each #22 congestion reject (TS 24.501 5.5.1.2.5: with T3346 the UE
// waits it out, 5.3.9). It returns the time from the first attempt to the
// accept, back-offs and holds included: what the UE's user waits.
func RegisterWithBackOff(ctx context.Context, ue *UE, b BackOff, st *OverloadStats) (time.Duration, error) {
	attempts := b.Attempts
	if attempts <= 0 {
		attempts = 10
	}
	start := time.Now()
	for i := 1; ; i++ {
		ue.lastSent = time.Time{} // an attempt held until ctx ended sends nothing
		_, err := registerAttempt(ctx, ue, b.AttemptTimeout)
		if !ue.lastSent.IsZero() && time.Since(ue.lastSent) >= T3510 {
			st.T3510Expiries.Add(1)
		}
		var rej *RejectError
		if err == nil || !errors.As(err, &rej) || rej.Cause != causeCongestion || i == attempts {
			return time.Since(start), err
		}
		st.BackOffs.Add(1)
		if rej.T3346 > 0 {
			st.WithT3346.Add(1)
		}
		if err := sleepCtx(ctx, backOffWait(rej.T3346, b.Max)); err != nil {
			return 0, err
		}
	}
}

func registerAttempt(ctx context.Context, ue *UE, timeout time.Duration) (time.Duration, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return ue.Register(ctx)
}

// causeCongestion is 5GMM cause #22 (TS 24.501 9.11.3.2).
const causeCongestion = 22

// backOffWait is the wait after #22: T3346 when the network gave one, else a
// random 5-15 s (around T3511, 10 s, so the UEs refused together spread
// out); capped by max when max > 0.
func backOffWait(t3346, max time.Duration) time.Duration {
	d := t3346
	if d <= 0 {
		d = 5*time.Second + rand.N(10*time.Second)
	}
	if max > 0 && d > max {
		// Keep the spread the network meant under the cap.
		d = max/2 + rand.N(max/2+1)
	}
	return d
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// registrationReject is a Registration Reject as an error, with its T3346.
func registrationReject(r *nasMessage.RegistrationReject) *RejectError {
	e := &RejectError{Message: "Registration Reject", Cause: r.Cause5GMM.GetCauseValue()}
	if r.T3346Value != nil {
		e.T3346 = nasx.GPRSTimer2Duration(r.T3346Value.GetGPRSTimer2Value())
	}
	return e
}

// serviceReject is a Service Reject as an error, with its T3346.
func serviceReject(r *nasMessage.ServiceReject) *RejectError {
	e := &RejectError{Message: "Service Reject", Cause: r.Cause5GMM.GetCauseValue()}
	if r.T3346Value != nil {
		e.T3346 = nasx.GPRSTimer2Duration(r.T3346Value.GetGPRSTimer2Value())
	}
	return e
}

// registerFleetWithBackOff is RegisterFleet for UEs that back off at #22:
// each attempt within f.Timeout (30 s by default), the whole registration
// within as many timeouts as attempts plus the longest T3346 (60 s each).
func registerFleetWithBackOff(ctx context.Context, ues []*UE, f Fleet) Outcome {
	var st OverloadStats
	b := *f.BackOff
	if b.Attempts <= 0 {
		b.Attempts = 10
	}
	if b.AttemptTimeout = f.Timeout; b.AttemptTimeout == 0 {
		b.AttemptTimeout = 30 * time.Second
	}
	f.Timeout = time.Duration(b.Attempts) * (b.AttemptTimeout + time.Minute)
	out := RunFleet(ctx, ues, f, func(ctx context.Context, ue *UE) (time.Duration, error) {
		lat, err := RegisterWithBackOff(ctx, ue, b, &st)
		if err != nil || !f.Deregister {
			return lat, err
		}
		_, err = ue.Deregister(ctx, true)
		return lat, err
	})
	out.BackedOff = true
	out.BackOffs, out.WithT3346, out.T3510Expiries = int(st.BackOffs.Load()), int(st.WithT3346.Load()), int(st.T3510Expiries.Load())
	return out
}
