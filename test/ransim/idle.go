package ransim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// AN release (TS 23.502 4.2.6): the gNB asks the AMF to release a UE's
// N2 connection for user inactivity; the UE goes CM-IDLE keeping its
// 5G-GUTI, NAS security context and PDU sessions (TS 24.501 5.3.1.1), and
// the gNB drops the sessions' N3 tunnels. A session's Tunnel stays the
// UE's (its TUN stays bound to it) but is parked: uplink is refused with
// ErrIdle until a Service Request sets the tunnel up again with a new gNB
// TEID (service_request.go). The gNB keeps the idle UEs it serves by
// 5G-S-TMSI so that it can page them (paging.go).

// ErrIdle is uplink on a session of a CM-IDLE UE: it has no N3 tunnel
// until a Service Request re-activates it.
var ErrIdle = errors.New("the UE is CM-IDLE: no user plane until a Service Request")

// idleState is the UE's CM-IDLE part, shared with its gNB.
type idleState struct {
	// stmsi is the 5G-S-TMSI the UE answers paging for, published by the
	// UE's own goroutine (its GUTI is the UE's alone) for the gNB's.
	stmsi atomic.Pointer[nasx.STMSI]
	// paged holds the time the gNB received a Paging for the UE, until
	// the UE answers it.
	paged chan time.Time
	// answer, while the UE's owner waits in AnswerPaging, is how the
	// UE answers a Paging from the gNB's goroutine that read it
	// (paging.go, answerNow).
	answer atomic.Pointer[pagingAnswer]
	// uplink is signalled when the UE's IP stack sends on a parked
	// tunnel: it has uplink data and wants service (Stay answers it).
	uplink chan struct{}
}

// idleUEs are the CM-IDLE UEs camping on a gNB, by 5G-S-TMSI.
type idleUEs struct {
	mu      sync.Mutex
	bySTMSI map[nasx.STMSI]*UE
}

func (l *idleUEs) add(s nasx.STMSI, u *UE) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bySTMSI == nil {
		l.bySTMSI = map[nasx.STMSI]*UE{}
	}
	l.bySTMSI[s] = u
}

// remove forgets u (only u: another UE may have got the S-TMSI since).
func (l *idleUEs) remove(s nasx.STMSI, u *UE) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bySTMSI[s] == u {
		delete(l.bySTMSI, s)
	}
}

func (l *idleUEs) find(s nasx.STMSI) *UE {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bySTMSI[s]
}

// IdleUEs is how many CM-IDLE UEs the gNB can page.
func (g *GNB) IdleUEs() int {
	g.idle.mu.Lock()
	defer g.idle.mu.Unlock()
	return len(g.idle.bySTMSI)
}

// Idle says whether the UE is registered and CM-IDLE: it has a 5G-GUTI
// and no N2 connection. Call it between the UE's procedures.
func (u *UE) Idle() bool { return u.guti != nil && u.ranID.Load() == 0 }

// GoIdle runs the gNB-initiated AN release (TS 23.502 4.2.6, TS 38.413
// 8.3.2): UE Context Release Request with cause user inactivity naming the
// sessions with a tunnel, until the AMF's UE Context Release Command has
// released the N2 connection. It returns the time from the request to the
// release.
func (u *UE) GoIdle(ctx context.Context) (time.Duration, error) {
	u.drain()
	ranID, amfID := u.ranID.Load(), u.amfID.Load()
	if u.guti == nil || ranID == 0 || amfID < 0 {
		return 0, errors.New("AN release: the UE is not registered and CM-CONNECTED")
	}
	u.publishSTMSI()
	cause := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity)
	b, err := ngapx.BuildUEContextReleaseRequestWithSessions(amfID, ranID, cause, u.g.tunnelIDs(u))
	if err != nil {
		return 0, err
	}
	start := time.Now()
	u.g.tracer().Sent(ranID, b)
	if err := u.g.conn.WriteMsg(b, u.g.stream(ranID)); err != nil {
		return 0, fmt.Errorf("UE Context Release Request: %w", err)
	}
	for {
		m, err := u.nextNAS(ctx)
		if errors.Is(err, ErrReleased) {
			u.enterIdle()
			return time.Since(start), nil
		}
		if err != nil {
			return 0, fmt.Errorf("AN release of %s: %w", u.supi, err)
		}
		if err := u.onCommon(m); err != nil {
			return 0, fmt.Errorf("AN release of %s: %w", u.supi, err)
		}
	}
}

// publishSTMSI tells the gNB which 5G-S-TMSI pages the UE: the short form
// of its current 5G-GUTI (TS 23.003 2.11).
func (u *UE) publishSTMSI() {
	if u.guti == nil {
		u.idle.stmsi.Store(nil)
		return
	}
	s := u.guti.STMSI()
	u.idle.stmsi.Store(&s)
}

// enterIdle makes the released UE pageable under its current 5G-S-TMSI
// (a Configuration Update may have changed the GUTI while the release
// ran), and forgets a paging answered by the procedure that just ended.
func (u *UE) enterIdle() {
	select {
	case <-u.idle.paged:
	default:
	}
	select {
	case <-u.idle.uplink:
	default:
	}
	u.watchUplink()
	old := u.idle.stmsi.Load()
	u.publishSTMSI()
	s := u.idle.stmsi.Load()
	if old != nil && (s == nil || *old != *s) {
		// The gNB parked the UE under the S-TMSI it had before the
		// procedure gave it a new 5G-GUTI (TS 24.501 5.5.1.3.4): nobody
		// is paged by that one any more.
		u.g.idle.remove(*old, u)
	}
	if s != nil {
		u.g.idle.add(*s, u)
	}
}

// leaveIdle stops the gNB paging the UE: it is about to connect.
func (u *UE) leaveIdle() {
	if s := u.idle.stmsi.Load(); s != nil {
		u.g.idle.remove(*s, u)
	}
}

// tunnelIDs are the PDU sessions of ue with a tunnel at the gNB.
func (g *GNB) tunnelIDs(ue *UE) []uint8 {
	g.mu.Lock()
	defer g.mu.Unlock()
	ids := make([]uint8, 0, len(g.tunnels[ue]))
	for id := range g.tunnels[ue] {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// onUEContextRelease handles UE Context Release Command (TS 38.413
// 8.3.3.2): the answer names the sessions whose resources went with the
// context (TS 23.502 4.2.6 step 5), their tunnels are parked, and the UE,
// CM-IDLE now, can be paged here under the 5G-S-TMSI it published.
func (g *GNB) onUEContextRelease(ue *UE, amfID int64) {
	ranID := ue.ranID.Load()
	ids := g.tunnelIDs(ue)
	g.send(amfID, ranID, func(amfID, ranID int64) ([]byte, error) {
		return ngapx.BuildRANContextReleaseComplete(amfID, ranID, ids)
	})
	g.parkTunnels(ue)
	g.detach(ranID)
	if s := ue.idle.stmsi.Load(); s != nil {
		g.idle.add(*s, ue)
	}
	ue.deliver(downlink{amfID: amfID, released: true})
}

// parkTunnels takes the UE's tunnels off N3 (downlink for their TEIDs gets
// Error Indication) and refuses their uplink until they are set up again.
func (g *GNB) parkTunnels(ue *UE) {
	g.mu.Lock()
	for _, t := range g.tunnels[ue] {
		t.parked.Store(true)
	}
	g.mu.Unlock()
	g.dropTunnels(ue)
}

// reactivate gives a parked tunnel of this gNB a new DL TEID (a new gNB
// end, TS 38.413 9.3.2.2) and the UPF's end and QoS flows the AMF sent,
// and puts it on N3 again.
func (p *UserPlane) reactivate(t *Tunnel, ul ngapx.Tunnel, qfis []uint8) {
	t.ul.Store(&ul)
	t.qfis.Store(&qfis)
	p.enter(t)
	t.parked.Store(false)
}

// ReleaseToIdle is GoIdle as a fleet procedure.
func ReleaseToIdle(ctx context.Context, ue *UE) (time.Duration, error) { return ue.GoIdle(ctx) }

// Wake is RequestService as a fleet procedure.
func Wake(ctx context.Context, ue *UE) (time.Duration, error) { return ue.RequestService(ctx) }

// watchUplink has the UE's parked tunnels signal uplink data.
func (u *UE) watchUplink() {
	signal := func() {
		select {
		case u.idle.uplink <- struct{}{}:
		default:
		}
	}
	u.sessMu.Lock()
	defer u.sessMu.Unlock()
	for _, s := range u.sessions {
		if s.Tunnel != nil {
			s.Tunnel.onParkedUplink.Store(&signal)
		}
	}
}
