package amf

// The window of an AN release (TS 23.502 4.2.6 steps 3-5). Once the UE
// Context Release Command is out, the UE is CM-IDLE as far as it knows and
// may come straight back (a real UE does: new uplink data, a paging, a
// periodic timer): a Service Request (4.2.3.2, or the answer to a paging,
// 4.2.3.3 step 6), a mobility or periodic Registration Request with its
// 5G-GUTI (4.2.2.2.2), a Deregistration Request. Its InitialUEMessage runs
// on a key of its own, the gNB's Complete on the old connection's key, and
// nothing orders the two: the new message could look for the parked context
// before the Complete has parked it, and get Service Reject #9 (or an
// Identity Request and a whole new authentication instead of the kept
// context). An SMF's paging (N1N2MessageTransfer) that met the context
// still releasing got 504 UE_NOT_REACHABLE, and one queued behind the
// Complete on the old key got 404.
//
// So the AMF notes the release in the UE table under the 5G-TMSI when the
// Release Command goes out (markLeaving), and whatever names that 5G-TMSI
// meanwhile waits for the release to end (dropConnection) instead of
// missing the context:
//   - an initial NAS message holds its own key (the dispatcher's Hold, as
//     the limiter's gate does) and runs again, first of its key's events,
//     once the old connection is gone (Resume): its own later messages stay
//     behind it, every other UE runs on;
//   - an N1N2MessageTransfer waits on its HTTP request and then pages the
//     parked UE (202 ATTEMPTING_TO_REACH_UE).
// The order "deactivation answered before activation sent" is kept as
// before: the activation waits on the session's deactivation
// (gmm_service_request.go, activate). A release the gNB never completes
// ends on the release guard (amf.ngap.ue_release_timeout); the note itself
// expires a while after that (releaseNoteLife), so no waiter is ever left
// behind, even by a context that ended some other way.

import (
	"context"
	"net/http"
	"time"

	"github.com/free5gc/nas"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/ratelimit"
	"github.com/l25gc/l25gc/sbi"
)

// leavingUEs are the registered UEs whose N2 connection is being released,
// by 5G-TMSI; under the table's lock.
type leavingUEs map[uint32]*leavingUE

// leavingUE is one release in progress and what waits for its end.
type leavingUE struct {
	amfID   int64
	waiters []func()
	expiry  *time.Timer
}

// markLeaving notes that the connection amfID of the UE with tmsi is being
// released; after d the note ends by itself (its waiters run then).
func (t *ueTable) markLeaving(tmsi uint32, amfID int64, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.leaving == nil {
		t.leaving = leavingUEs{}
	}
	if _, on := t.leaving[tmsi]; on {
		return // released again, or another connection of the GUTI: the first note stands
	}
	t.leaving[tmsi] = &leavingUE{amfID: amfID, expiry: time.AfterFunc(d, func() { runAll(t.left(tmsi, amfID)) })}
}

// awaitLeft files then to run when the release of tmsi's connection ends.
// It says false when there is nothing to wait for: the context is parked
// already, or no release of it is in progress.
func (t *ueTable) awaitLeft(tmsi uint32, then func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, parked := t.idle[tmsi]; parked {
		return false
	}
	l := t.leaving[tmsi]
	if l == nil {
		return false
	}
	l.waiters = append(l.waiters, then)
	return true
}

// someLeaving says whether any release is in progress (so that an initial
// message is read for its 5G-TMSI only then).
func (t *ueTable) someLeaving() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.leaving) > 0
}

// left ends the note of amfID's release and hands over its waiters, for
// the caller to run outside the lock.
func (t *ueTable) left(tmsi uint32, amfID int64) []func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.leaving[tmsi]
	if l == nil || l.amfID != amfID {
		return nil
	}
	delete(t.leaving, tmsi)
	l.expiry.Stop()
	return l.waiters
}

func runAll(fns []func()) {
	for _, fn := range fns {
		fn()
	}
}

// noteRelease: a registered UE's N2 connection is being released (TS
// 23.502 4.2.6 step 2); it will be parked under its 5G-TMSI. A UE
// deregistering is forgotten instead: nothing to wait for.
func (n *NF) noteRelease(ue *ueContext) {
	if !ue.registered || ue.deregistering || ue.guti == nil {
		return
	}
	n.ues.markLeaving(ue.guti.TMSI, ue.amfID, releaseNoteLife(n.cfg.AMF.NGAP.UEReleaseTimeout))
}

// releaseNoteLife outlasts the release guard (guard) by as much again, at
// least a second: the guard's expiry is an event on the UE's key and may
// queue behind others on a loaded AMF before it ends the release.
func releaseNoteLife(guard time.Duration) time.Duration {
	return guard + max(guard, time.Second)
}

// releaseEnded: the connection is gone and the context parked (or
// forgotten); what waited for it runs now, after everything the release
// did on this key.
func (n *NF) releaseEnded(ue *ueContext) {
	if ue.guti != nil {
		runAll(n.ues.left(ue.guti.TMSI, ue.amfID))
	}
}

// waitForRelease holds a new connection's initial NAS message (raw) that
// names a UE whose old connection is still being released, and runs it
// again on the same key once the release ended. It says whether it did.
func (n *NF) waitForRelease(g *gnb, ue *ueContext, raw []byte) bool {
	if !n.ues.someLeaving() {
		return false
	}
	tmsi, kind, ok := n.namedTMSI(raw)
	if !ok {
		return false
	}
	id := ue.amfID
	key := ratelimit.UE(id)
	waits := n.ues.awaitLeft(tmsi, func() {
		// An error means the AMF is stopping: the message goes unanswered,
		// as any queued one.
		_ = n.disp.Resume(key, func() { n.afterRelease(g, id, raw) })
	})
	if !waits {
		return false
	}
	n.metrics.releaseWaits.WithLabelValues(kind).Inc()
	n.log.Debug("initial NAS message waits for the UE's AN release", "amfUeNgapId", id, "tmsi", tmsi, "message", kind)
	n.disp.Hold(key)
	return true
}

// afterRelease runs the held initial message, first of its key's events.
func (n *NF) afterRelease(g *gnb, id int64, raw []byte) {
	ue := n.ues.get(id)
	if ue == nil {
		return
	}
	n.onUplinkNAS(ue, raw, true)
	n.keepIfStarted(g, ue)
}

// Labels of l25gc_amf_release_waits_total.
const (
	waitServiceRequest = "service_request"
	waitRegistration   = "registration_request"
	waitDeregistration = "deregistration_request"
	waitTransfer       = "n1n2_message_transfer"
)

// namedTMSI reads the 5G-TMSI an initial NAS message names with an
// identity of this AMF: the 5G-S-TMSI of a Service Request, the 5G-GUTI of
// a Registration or Deregistration Request (TS 24.501 8.2.16, 8.2.6,
// 8.2.12). The message is read as onUplinkNAS reads it: an initial message
// is integrity protected at most, never ciphered (TS 24.501 4.4.6).
func (n *NF) namedTMSI(raw []byte) (tmsi uint32, kind string, ok bool) {
	h, err := nasx.PeekHeader(raw)
	switch {
	case err != nil:
		return 0, "", false
	case h.SecurityHeaderType == nas.SecurityHeaderTypeIntegrityProtected:
		raw = raw[7:]
	case h.Protected():
		return 0, "", false
	}
	m, err := nasx.Decode(raw)
	if err != nil || m.GmmMessage == nil {
		return 0, "", false
	}
	switch {
	case m.ServiceRequest != nil:
		req, err := nasx.ParseServiceRequest(m.ServiceRequest)
		ours := n.guami.AMFID
		if err != nil || req.STMSI.SetID != ours.SetID || req.STMSI.Pointer != ours.Pointer {
			return 0, "", false
		}
		return req.STMSI.TMSI, waitServiceRequest, true
	case m.RegistrationRequest != nil:
		return n.gutiTMSI(m.RegistrationRequest.MobileIdentity5GS.Buffer, waitRegistration)
	case m.DeregistrationRequestUEOriginatingDeregistration != nil:
		return n.gutiTMSI(m.DeregistrationRequestUEOriginatingDeregistration.MobileIdentity5GS.Buffer, waitDeregistration)
	}
	return 0, "", false
}

// gutiTMSI is the 5G-TMSI of a 5GS mobile identity that is a 5G-GUTI of
// this AMF.
func (n *NF) gutiTMSI(identity []byte, kind string) (uint32, string, bool) {
	id, err := nasx.ParseMobileIdentity(identity)
	if err != nil || id.Type != nasx.IdentityGUTI || !n.assigned(id.GUTI) {
		return 0, "", false
	}
	return id.GUTI.TMSI, kind, true
}

// pageAfterRelease: an N1N2MessageTransfer for a UE whose connection is
// being released pages the UE once it is parked (TS 23.502 4.2.3.3 step
// 3a: the UE is CM-IDLE by then) instead of 504. The verdict goes to done
// when the release ended; it says whether the transfer waits. A transfer
// whose SMF stopped waiting (ctx) does not page.
func (n *NF) pageAfterRelease(ctx context.Context, ue *ueContext, t transfer, done chan<- transferVerdict) bool {
	if ue.state != StateReleasing || !ue.registered || ue.deregistering || ue.guti == nil {
		return false
	}
	supi := ue.supi
	waits := n.ues.awaitLeft(ue.guti.TMSI, func() {
		if ctx.Err() != nil {
			return
		}
		done <- n.pageParked(supi, t)
	})
	if waits {
		n.metrics.releaseWaits.WithLabelValues(waitTransfer).Inc()
	}
	return waits
}

// pageParked pages the parked UE of supi for t, or says it has none.
func (n *NF) pageParked(supi string, t transfer) transferVerdict {
	if v, parked := n.pageFor(supi, t); parked {
		return v
	}
	return transferVerdict{http.StatusGatewayTimeout, causeUENotReachable, "the N2 connection of " + supi + " ended without a context kept"}
}

func newReleaseWaits(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "l25gc_amf_release_waits_total",
		Help: "Messages for a UE whose AN release was still in progress that waited for its context to be parked (TS 23.502 4.2.6), by message."},
		[]string{"message"})
	reg.MustRegister(c)
	return c
}

// pageParkedOr404: a transfer for a connection that ended before it ran
// pages the UE if it was parked, else the SMF hears 404 as before.
func (n *NF) pageParkedOr404(supi string, t transfer) transferVerdict {
	if v, parked := n.pageFor(supi, t); parked {
		return v
	}
	return transferVerdict{http.StatusNotFound, sbi.CauseContextNotFound, "no UE context for " + supi}
}
