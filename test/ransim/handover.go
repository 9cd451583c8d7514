package ransim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// The gNBs' side of handover (TS 23.502 4.9.1; TS 38.413 8.4): what a
// gNB routes to its handover desk instead of to a UE, the answers a UE's
// handover waits for, the UEs a target expects, and the releases of UEs
// that moved away. The procedures themselves are in handover_n2.go (N2
// handover, source and target) and xn.go (Xn handover, path switch).

// TargetBehaviour is how a gNB answers Handover Request, for tests of the
// failure paths (TS 23.502 4.9.1.3.4).
type TargetBehaviour int

const (
	// TargetAccepts admits every session the AMF asks for.
	TargetAccepts TargetBehaviour = iota
	// TargetRefuses answers Handover Failure (TS 38.413 8.4.2.3).
	TargetRefuses
	// TargetSilent never answers: the AMF's TNGRELOCprep ends it.
	TargetSilent
)

// SetTargetBehaviour says how the gNB answers Handover Requests from now on.
func (g *GNB) SetTargetBehaviour(b TargetBehaviour) {
	g.ho.mu.Lock()
	g.ho.behaviour = b
	g.ho.mu.Unlock()
}

// Errors of a handover that left the UE with the source gNB.
var (
	// ErrHandoverPreparationFailure is the AMF's Handover Preparation
	// Failure (TS 38.413 8.4.1.3).
	ErrHandoverPreparationFailure = errors.New("Handover Preparation Failure")
	// ErrPathSwitchRequestFailure is the AMF's Path Switch Request Failure
	// (TS 38.413 8.4.4.3).
	ErrPathSwitchRequestFailure = errors.New("Path Switch Request Failure")
	// ErrHandoverCancelled is a handover the source cancelled (8.4.5).
	ErrHandoverCancelled = errors.New("handover cancelled by the source")
)

// answerKind names the answers a UE's handover waits for.
type answerKind int

const (
	answerPreparation answerKind = iota // Handover Command or Preparation Failure, at the source
	answerPathSwitch                    // Path Switch Request Acknowledge or Failure, at the target
	answerCancel                        // Handover Cancel Acknowledge, at the source
	answerRelease                       // UE Context Release Command of a UE that left, at the source
	answerStatus                        // Downlink RAN Status Transfer, at the target
)

type answerKey struct {
	kind  answerKind
	ranID int64
}

// handoverDesk is a gNB's handover state. The zero value is ready.
type handoverDesk struct {
	mu        sync.Mutex
	behaviour TargetBehaviour
	waiting   map[answerKey]chan *ngapType.NGAPPDU
	expected  []*arrival          // UEs announced to come by N2 handover, oldest first
	prepared  map[int64]*arrival  // by the target's RAN UE NGAP ID, until the UE arrives
	departed  map[int64][]*Tunnel // tunnels of UEs that left, by their RAN UE NGAP ID here
}

// arrival is a UE a target prepares for: its sessions' new tunnels and
// the DL forwarding tunnels offered for them (TS 38.413 9.3.4.11).
type arrival struct {
	ue         *UE
	ulTEIDs    []uint32 // the UPF's tunnels of its sessions, which the Handover Request repeats
	ranID      int64
	amfID      int64
	tunnels    map[uint8]*Tunnel
	forwarding []*Tunnel
	ready      chan struct{} // closed once prepared (Acknowledge sent)
}

// await registers for the answer of kind to the UE with ranID; it must
// precede the request, so the answer cannot come first.
func (d *handoverDesk) await(kind answerKind, ranID int64) <-chan *ngapType.NGAPPDU {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.waiting == nil {
		d.waiting = map[answerKey]chan *ngapType.NGAPPDU{}
	}
	ch := make(chan *ngapType.NGAPPDU, 1)
	d.waiting[answerKey{kind, ranID}] = ch
	return ch
}

// forget drops a wait that ended without its answer.
func (d *handoverDesk) forget(kind answerKind, ranID int64) {
	d.mu.Lock()
	delete(d.waiting, answerKey{kind, ranID})
	d.mu.Unlock()
}

// answer hands pdu to whoever waits for it; false when nobody does.
func (d *handoverDesk) answer(kind answerKind, ranID int64, pdu *ngapType.NGAPPDU) bool {
	d.mu.Lock()
	ch, ok := d.waiting[answerKey{kind, ranID}]
	delete(d.waiting, answerKey{kind, ranID})
	d.mu.Unlock()
	if ok {
		ch <- pdu
	}
	return ok
}

// wait waits for an awaited answer or the end of ctx or of the association.
func (g *GNB) wait(ctx context.Context, ch <-chan *ngapType.NGAPPDU, kind answerKind, ranID int64, what string) (*ngapType.NGAPPDU, error) {
	select {
	case pdu := <-ch:
		return pdu, nil
	case <-g.done:
		g.ho.forget(kind, ranID)
		return nil, fmt.Errorf("%s: N2 association of gNB %d ended: %v", what, g.cfg.ID, g.readErr)
	case <-ctx.Done():
		g.ho.forget(kind, ranID)
		return nil, fmt.Errorf("%s: %w", what, ctx.Err())
	}
}

// onHandoverPDU takes what belongs to handover off the UE path: answers a
// handover waits for, Handover Request at a target, and the release of a
// UE that left or never came. False: route it as usual.
func (g *GNB) onHandoverPDU(s ngapx.Summary, pdu *ngapType.NGAPPDU) bool {
	switch s.Procedure {
	case ngapType.ProcedureCodeHandoverResourceAllocation:
		if s.Kind == ngapx.Initiating {
			go g.onHandoverRequest(pdu) // the target's work must not hold up its read loop
		}
		return true
	case ngapType.ProcedureCodeHandoverPreparation:
		return g.ho.answer(answerPreparation, s.RANUEID, pdu)
	case ngapType.ProcedureCodePathSwitchRequest:
		return g.ho.answer(answerPathSwitch, s.RANUEID, pdu)
	case ngapType.ProcedureCodeHandoverCancel:
		return g.ho.answer(answerCancel, s.RANUEID, pdu)
	case ngapType.ProcedureCodeDownlinkRANStatusTransfer:
		// TS 38.413 8.4.7: the PDCP COUNTs to continue from; the
		// simulated UE has no PDCP, so there is nothing to take over,
		// but the handover waits for it (executeHandover).
		g.ho.answer(answerStatus, s.RANUEID, pdu)
		return true
	case ngapType.ProcedureCodeUEContextRelease:
		return s.Kind == ngapx.Initiating && g.releaseMoved(s, pdu)
	case ngapType.ProcedureCodeErrorIndication:
		// The AMF refused a handover message of this UE (TS 38.413
		// 8.7.5): the handover waiting for an answer ends with it.
		return g.ho.answerAny(s.RANUEID, pdu)
	}
	return false
}

// answerAny hands pdu to a handover of the UE with ranID waiting for any answer.
func (d *handoverDesk) answerAny(ranID int64, pdu *ngapType.NGAPPDU) bool {
	for _, k := range []answerKind{answerPreparation, answerPathSwitch, answerCancel} {
		if d.answer(k, ranID, pdu) {
			return true
		}
	}
	return false
}

// refusal is the error of an answer that is not the procedure's success:
// an Error Indication names its cause; else nil (the caller reads the
// unsuccessful outcome).
func refusal(what string, pdu *ngapType.NGAPPDU) error {
	if pdu.Present == ngapType.NGAPPDUPresentInitiatingMessage && pdu.InitiatingMessage != nil &&
		pdu.InitiatingMessage.ProcedureCode.Value == ngapType.ProcedureCodeErrorIndication {
		s, _ := ngapx.Summarize(pdu)
		return fmt.Errorf("%s: Error Indication from the AMF: %s", what, ngapx.CauseString(s.Cause))
	}
	return nil
}

// releaseMoved answers the UE Context Release Command for a UE that left
// this gNB (TS 23.502 4.9.1.2.2 step 5, 4.9.1.3.3 step 12) or that was
// prepared here and never came (cancel, 4.9.1.4): the tunnels go, the
// UE — served elsewhere — is not told.
func (g *GNB) releaseMoved(s ngapx.Summary, pdu *ngapType.NGAPPDU) bool {
	ranID := s.RANUEID
	if ranID < 0 {
		ranID = g.ranIDOfPrepared(s.AMFUEID)
	}
	g.ho.mu.Lock()
	left, wasHere := g.ho.departed[ranID]
	delete(g.ho.departed, ranID)
	a := g.ho.prepared[ranID]
	delete(g.ho.prepared, ranID)
	g.ho.mu.Unlock()
	if !wasHere && a == nil {
		return false
	}
	for _, t := range left {
		g.retire(t)
	}
	if a != nil {
		for _, t := range a.tunnels {
			g.up.remove(t)
		}
		for _, t := range a.forwarding {
			g.up.remove(t)
		}
	}
	g.detach(ranID)
	// Complete once the context is gone, as a gNB that answers has freed
	// it (a test reading the gNB after the Complete sees it freed).
	g.send(s.AMFUEID, ranID, ngapx.BuildUEContextReleaseComplete)
	g.ho.answer(answerRelease, ranID, pdu)
	return true
}

// ranIDOfPrepared finds a prepared UE by AMF UE NGAP ID (a release command
// may name only that).
func (g *GNB) ranIDOfPrepared(amfID int64) int64 {
	g.ho.mu.Lock()
	defer g.ho.mu.Unlock()
	for id, a := range g.ho.prepared {
		if a.amfID == amfID {
			return id
		}
	}
	return -1
}

// retire removes a source tunnel once the End Marker has passed through
// it; while it forwards and the End Marker is still on its way, after a
// grace period (TS 38.300 9.2.3.2.1: the source forwards until it has
// nothing left).
func (g *GNB) retire(t *Tunnel) {
	if !t.forwarding() || t.sawEndMarker.Load() {
		g.up.remove(t)
		return
	}
	time.AfterFunc(OldPathGrace, func() { g.up.remove(t) })
}

// depart records that ue is leaving this gNB, before the message that
// makes the AMF release it here goes out (so the release cannot overtake
// it): its tunnels stay in the N3 table for forwarding until that release.
func (g *GNB) depart(ue *UE, ranID int64) {
	g.mu.Lock()
	var left []*Tunnel
	for _, t := range g.tunnels[ue] {
		left = append(left, t)
	}
	delete(g.tunnels, ue)
	g.mu.Unlock()
	g.ho.mu.Lock()
	if g.ho.departed == nil {
		g.ho.departed = map[int64][]*Tunnel{}
	}
	g.ho.departed[ranID] = left
	g.ho.mu.Unlock()
}

// undepart is a handover that failed after depart: the UE and its tunnels
// are this gNB's again.
func (g *GNB) undepart(ue *UE, ranID int64) {
	g.ho.mu.Lock()
	left := g.ho.departed[ranID]
	delete(g.ho.departed, ranID)
	g.ho.mu.Unlock()
	for _, t := range left {
		g.putTunnel(ue, t)
	}
}

// expect announces ue to this (target) gNB before the source asks the
// AMF for the handover.
func (g *GNB) expect(ue *UE, ulTEIDs []uint32) *arrival {
	a := &arrival{ue: ue, ulTEIDs: ulTEIDs, ready: make(chan struct{})}
	g.ho.mu.Lock()
	g.ho.expected = append(g.ho.expected, a)
	g.ho.mu.Unlock()
	return a
}

// unexpect drops an announcement whose handover ended before the target
// got to it, and any preparation made for it.
func (g *GNB) unexpect(a *arrival) {
	g.ho.mu.Lock()
	g.ho.expected = slices.DeleteFunc(g.ho.expected, func(x *arrival) bool { return x == a })
	g.ho.mu.Unlock()
}

// match finds the expected UE a Handover Request is for: by the UPF
// tunnels of its sessions (the SMF keeps the UPF's N3 end in an intra-UPF
// handover), else the oldest announced.
func (g *GNB) match(ulTEIDs []uint32) *arrival {
	g.ho.mu.Lock()
	defer g.ho.mu.Unlock()
	for i, a := range g.ho.expected {
		for _, teid := range ulTEIDs {
			if slices.Contains(a.ulTEIDs, teid) {
				g.ho.expected = slices.Delete(g.ho.expected, i, i+1)
				return a
			}
		}
	}
	if len(g.ho.expected) == 0 {
		return nil
	}
	a := g.ho.expected[0]
	g.ho.expected = g.ho.expected[1:]
	return a
}

// prepare records a at the RAN UE NGAP ID the target gave it.
func (g *GNB) prepare(a *arrival) {
	g.ho.mu.Lock()
	if g.ho.prepared == nil {
		g.ho.prepared = map[int64]*arrival{}
	}
	g.ho.prepared[a.ranID] = a
	g.ho.mu.Unlock()
	close(a.ready)
}

// arrived takes the prepared UE off the list: it is served here now.
func (g *GNB) arrived(a *arrival) {
	g.ho.mu.Lock()
	delete(g.ho.prepared, a.ranID)
	g.ho.mu.Unlock()
	for _, t := range a.tunnels {
		g.putTunnel(a.ue, t)
	}
	// The forwarding tunnels carry what the source still had; they go
	// once that has surely passed.
	fwd := a.forwarding
	time.AfterFunc(3*OldPathGrace, func() {
		for _, t := range fwd {
			g.up.remove(t)
		}
	})
}

// movedSession is one PDU session of a moving UE: its tunnel at the source
// and at the target.
type movedSession struct {
	s        *PDUSession
	old, new *Tunnel
}

// sessionsWithTunnels are the UE's sessions with a user plane at its gNB,
// by session ID.
func (u *UE) sessionsWithTunnels() []movedSession {
	u.sessMu.Lock()
	defer u.sessMu.Unlock()
	var out []movedSession
	for _, s := range u.sessions {
		if t := u.g.tunnel(u, s.ID); t != nil {
			out = append(out, movedSession{s: s, old: t})
		}
	}
	slices.SortFunc(out, func(a, b movedSession) int { return int(a.s.ID) - int(b.s.ID) })
	return out
}

// moveTo makes target the UE's gNB (ranID, amfID its NGAP IDs there) and
// the target's tunnels its sessions' tunnels. The source must have been
// told first (depart): it keeps the old ones for forwarding until the AMF
// releases the UE there.
func (u *UE) moveTo(target *GNB, ranID, amfID int64, moved []movedSession) {
	u.sessMu.Lock()
	for _, m := range moved {
		if m.new == nil {
			continue
		}
		m.new.setRules(m.s.rules)
		m.old.next.Store(m.new)
		m.s.Tunnel = m.new
	}
	u.sessMu.Unlock()
	u.g = target
	u.ranID.Store(ranID)
	u.amfID.Store(amfID)
}

// GNB is the gNB now serving the UE. Call it between the UE's procedures.
func (u *UE) GNB() *GNB { return u.g }

// ueSecurityCapabilities is what the gNB reports of the UE's algorithms
// (TS 38.413 9.3.1.86): NEA1, NEA2 and NIA1, NIA2 (bits 1 and 2 of the
// first octet; NEA0/NIA0 are implied), as the UE's 5G security
// capability announces them (ueSecurityCaps).
var ueSecurityCapabilities = ngapx.SecurityCapabilities{
	NREncryption: [2]byte{0xC0, 0x00}, NRIntegrity: [2]byte{0xC0, 0x00},
}
