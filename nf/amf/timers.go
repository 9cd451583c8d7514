package amf

import (
	"time"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// timerKind names the AMF's 5GMM timers (TS 24.501 10.3, table 10.2.2).
type timerKind int

const (
	T3550 timerKind = iota + 1 // Registration Accept (5.5.1.2.8)
	T3560                      // Authentication Request, Security Mode Command (5.4.1.3.7, 5.4.2.7)
	T3570                      // Identity Request (5.4.3.7)
)

func (k timerKind) String() string {
	return map[timerKind]string{T3550: "T3550", T3560: "T3560", T3570: "T3570"}[k]
}

// nasTimer guards one downlink message; on expiry it is retransmitted. It
// keeps the plain message, not the bytes sent: a protected message is
// protected again with the next downlink NAS COUNT, since the UE accepts
// each COUNT once (TS 33.501 6.4.3.2; TS 24.501 4.4.3.1).
type nasTimer struct {
	kind    timerKind
	gen     uint64
	plain   []byte // the plain 5GMM message
	smc     bool   // it is the Security Mode Command (security header type 3)
	retries int
	t       *time.Timer
}

func (n *NF) timerDuration(k timerKind) time.Duration {
	c := n.cfg.AMF.NAS
	switch k {
	case T3550:
		return c.T3550
	case T3560:
		return c.T3560
	default:
		return c.T3570
	}
}

// startTimer (re)starts the UE's one 5GMM timer for the plain message just
// sent. The expiry comes back as an event on the UE's own key, carrying a
// generation so that a timer stopped meanwhile is recognised as stale.
func (n *NF) startTimer(ue *ueContext, k timerKind, plain []byte, smc bool) {
	n.stopTimer(ue)
	ue.timer = &nasTimer{kind: k, plain: plain, smc: smc}
	n.armTimer(ue, ue.timer)
}

func (n *NF) armTimer(ue *ueContext, t *nasTimer) {
	gen := n.timerGen.Add(1)
	t.gen = gen
	id, k := ue.amfID, t.kind
	t.t = time.AfterFunc(n.timerDuration(k), func() {
		n.dispatchUE(id, EvTimerExpiry, &input{timer: k, timerGen: gen})
	})
}

func (n *NF) stopTimer(ue *ueContext) {
	if ue.timer != nil {
		ue.timer.t.Stop()
		ue.timer = nil
	}
}

// onTimerExpiry retransmits the guarded message up to MaxRetransmissions
// times, then aborts the procedure and releases the UE (TS 24.501 5.5.1.2.8,
// 5.4.1.3.7, 5.4.2.7, 5.4.3.7: "on the fifth expiry ... abort"). A
// retransmission always travels in Downlink NAS Transport: a message first
// sent inside Initial Context Setup Request finds the gNB with the UE's
// context already.
func (n *NF) onTimerExpiry(ue *ueContext, in *input) (State, error) {
	if in.timer == 0 {
		return n.onGuardExpiry(ue, in)
	}
	t := ue.timer
	if t == nil || t.gen != in.timerGen {
		return ue.state, nil // stopped meanwhile
	}
	if t.retries < n.cfg.AMF.NAS.MaxRetransmissions {
		t.retries++
		n.metrics.retransmissions.WithLabelValues(t.kind.String()).Inc()
		n.log.Debug("NAS retransmission", "amfUeNgapId", ue.amfID, "timer", t.kind, "n", t.retries)
		if err := n.sendNAS(ue, t.plain, t.smc); err != nil {
			return ue.state, err
		}
		n.armTimer(ue, t)
		return ue.state, nil
	}
	n.log.Info("NAS procedure aborted", "amfUeNgapId", ue.amfID, "timer", t.kind, "state", ue.state)
	ue.timer = nil
	n.finishProcedure(ue, procedureOf(ue.state), resultTimeout)
	if !ue.registered {
		// A UE that never completed a registration is forgotten with its
		// N2 connection: its SBI state goes now. A registered UE whose
		// update was aborted keeps its context (TS 24.501 5.5.1.3.8).
		n.endContext(ue)
	}
	return n.release(ue, ngapx.CauseNas(ngapType.CauseNasPresentUnspecified))
}

// guardKind names what a UE context's guard bounds.
type guardKind int

const (
	// guardUnauthenticated runs from the InitialUEMessage until the UE's NAS
	// security context is confirmed (TS 24.501 4.4.2): an unauthenticated
	// peer cannot keep a context longer (amf.nas.unauthenticated_timeout).
	guardUnauthenticated guardKind = iota + 1
	// guardRelease runs from the UE Context Release Command until its
	// Complete (TS 38.413 8.3.3; amf.ngap.ue_release_timeout).
	guardRelease
)

func (k guardKind) String() string {
	return map[guardKind]string{guardUnauthenticated: "unauthenticated", guardRelease: "release"}[k]
}

// guardTimer bounds a UE context's life where no NAS timer does: before
// authentication the AMF's NAS timers restart with every procedure a peer
// starts, and a release waits on the gNB. Its expiry comes as EvTimerExpiry
// with timer 0 (no NAS timer) and its own generation.
type guardTimer struct {
	kind guardKind
	gen  uint64
	t    *time.Timer
}

// startGuard (re)arms the UE's guard for kind.
func (n *NF) startGuard(ue *ueContext, kind guardKind) {
	n.stopGuard(ue)
	d := n.cfg.AMF.NAS.UnauthenticatedTimeout
	if kind == guardRelease {
		d = n.cfg.AMF.NGAP.UEReleaseTimeout
	}
	gen := n.timerGen.Add(1)
	id := ue.amfID
	ue.guard = &guardTimer{kind: kind, gen: gen, t: time.AfterFunc(d, func() {
		n.dispatchUE(id, EvTimerExpiry, &input{timerGen: gen})
	})}
}

func (n *NF) stopGuard(ue *ueContext) {
	if ue.guard != nil {
		ue.guard.t.Stop()
		ue.guard = nil
	}
}

// endGuardOnAuthentication stops the unauthenticated guard once the UE has
// proved itself: its NAS security context is confirmed (Security Mode
// Complete, or an initial message that passed the integrity check of a kept
// context; TS 24.501 4.4.2). From there the NAS timers bound each procedure.
func (n *NF) endGuardOnAuthentication(ue *ueContext) {
	if ue.guard != nil && ue.guard.kind == guardUnauthenticated && ue.sec != nil && ue.sec.confirmed {
		n.stopGuard(ue)
	}
}

// onGuardExpiry: an unauthenticated UE is released (UE Context Release
// Command, NAS cause unspecified, TS 38.413 9.3.1.2), as when a NAS
// procedure is aborted; a release the gNB never completed ends locally.
func (n *NF) onGuardExpiry(ue *ueContext, in *input) (State, error) {
	g := ue.guard
	if g == nil || g.gen != in.timerGen {
		return ue.state, nil // stopped meanwhile
	}
	ue.guard = nil
	n.metrics.guardExpiries.WithLabelValues(g.kind.String()).Inc()
	n.log.Info("UE context guard expired", "amfUeNgapId", ue.amfID, "guard", g.kind, "state", ue.state)
	if g.kind == guardRelease {
		return n.dropConnection(ue), nil
	}
	n.finishProcedure(ue, procedureOf(ue.state), resultTimeout)
	if !ue.registered {
		n.endContext(ue)
	}
	return n.release(ue, causeNasUnspecified())
}
