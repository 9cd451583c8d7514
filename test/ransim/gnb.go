// Package ransim is the gNB and UE simulator: gNBs that speak NGAP to the
// AMF over either N2 transport, and UEs that run 5GMM procedures with real
// NAS security (SUCI concealment, 5G AKA, NIA2/NEA2) against the core.
// `l25gc ransim` and `l25gc bench` drive it; the end-to-end tests use it.
package ransim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/n2"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// GNBConfig says where the gNB is and which AMF it serves.
type GNBConfig struct {
	AMF       string // AMF N2 address, host:port
	Transport string // N2 transport: kernel, raw, udp or auto
	PLMN      domain.PLMN
	TAC       domain.TAC
	ID        uint32
	SNSSAIs   []models.Snssai
	// SCTPImpl is the user-space SCTP data path (n2.ImplOwn, n2.ImplPion;
	// "": n2's default), as amf.ngap.sctp_impl, so that both ends of a
	// benchmark run the one under test.
	SCTPImpl string
	// N3 is the gNB's N3 address, announced as the DL end of each PDU
	// session's tunnel; unset: DefaultN3. GNB.UserPlane().Listen opens it.
	N3  netip.Addr
	Log *slog.Logger // nil: discard
}

// ErrNGSetupFailure is the AMF refusing the gNB (TS 38.413 8.7.1.3).
var ErrNGSetupFailure = errors.New("NG Setup Failure")

// GNB is one gNB with its N2 association. UE-associated downlink is routed
// to UEs by RAN UE NGAP ID, which the gNB allocates (TS 38.413 9.3.3.2).
type GNB struct {
	cfg       GNBConfig
	conn      n2.Conn
	Transport string // the N2 transport in use
	log       *slog.Logger
	cell      ngapx.Cell

	nextRANID atomic.Int64
	// refusedQFIs: QoS flows this gNB refuses as a handover target
	// (handover_qos.go).
	refusedQFIs atomic.Pointer[[]uint8]
	trace       atomic.Pointer[tracing.RAN] // N2 and procedure spans (tracing.go); nil: off
	mu          sync.Mutex
	byRAN       map[int64]*UE
	setup       chan ngapx.Summary // NG Setup outcome
	ranConfig   chan ngapx.Summary // RAN Configuration Update outcome
	resetAck    chan struct{}
	detached    chan struct{} // a UE's N2 connection was released (Shutdown waits on it)
	up          *UserPlane
	tunnels     map[*UE]map[uint8]*Tunnel // PDU sessions' tunnels by UE and session ID
	idle        idleUEs                   // CM-IDLE UEs camping here, by 5G-S-TMSI (idle.go)
	done        chan struct{}
	readErr     error
	ho          handoverDesk // handover.go
	overload    overloadGate // overload.go

	// OverloadSeen counts the AMF's Overload Start/Stop and the attempts
	// held under them (overload.go).
	OverloadSeen OverloadCounters

	// ErrorIndications counts Error Indications the AMF sent.
	ErrorIndications atomic.Int64
	// Pagings counts the Pagings received; PagingsForNobody those for a
	// UE not camping here (paging.go).
	Pagings, PagingsForNobody atomic.Int64
}

// Connect opens the N2 association and runs NG Setup (TS 38.413 8.7.1).
func Connect(ctx context.Context, cfg GNBConfig) (*GNB, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.ID == 0 {
		cfg.ID = 1
	}
	o := simulatorN2()
	o.SCTPImpl = cfg.SCTPImpl
	conn, picked, err := o.Dial(ctx, cfg.Transport, cfg.AMF)
	if err != nil {
		return nil, err
	}
	g := newGNB(cfg, conn, picked)
	go g.readLoop()
	if err := g.ngSetup(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return g, nil
}

// simulatorN2 is the simulated gNB's SCTP tuning (RFC 9260 16 lets RTO.Max
// and HB.interval be configured). With the defaults (heartbeat every 30 s,
// retransmission timers doubling to 60 s) a gNB whose AMF was killed while
// it had nothing unacknowledged took up to 30 s to notice the restart. Now
// its next heartbeat, within about a second, draws either the new AMF's
// ABORT or, while no AMF listens, ICMP Port Unreachable, and either ends
// the association (n2 takes the ICMP as an ABORT, RFC 6951 5.5).
//
// ReadInline: readLoop sits in ReadMsg for the association's whole life,
// so on the own data path it reads the socket itself, a thread wake-up
// less per downlink message.
func simulatorN2() n2.Options {
	return n2.Options{RTOMax: time.Second, HeartbeatInterval: time.Second, ReadInline: true}
}

// newGNB is a gNB on an open association, before NG Setup.
func newGNB(cfg GNBConfig, conn n2.Conn, transport string) *GNB {
	if !cfg.N3.IsValid() {
		cfg.N3 = DefaultN3
	}
	return &GNB{cfg: cfg, conn: conn, Transport: transport, log: cfg.Log,
		cell:  ngapx.Cell{TAI: domain.TAI{PLMN: cfg.PLMN, TAC: cfg.TAC}, CellID: uint64(cfg.ID) << 12},
		byRAN: map[int64]*UE{}, setup: make(chan ngapx.Summary, 1), ranConfig: make(chan ngapx.Summary, 1),
		resetAck: make(chan struct{}, 1), detached: make(chan struct{}, 1), done: make(chan struct{}),
		up: NewUserPlane(cfg.N3, cfg.Log), tunnels: map[*UE]map[uint8]*Tunnel{}}
}

// announced is what the gNB tells the AMF about itself.
func (g *GNB) announced() ngapx.GNB {
	return ngapx.GNB{PLMN: g.cfg.PLMN, ID: g.cfg.ID,
		Name: fmt.Sprintf("l25gc-ransim-%d", g.cfg.ID), TACs: []domain.TAC{g.cfg.TAC}, SNSSAIs: g.cfg.SNSSAIs}
}

func (g *GNB) ngSetup(ctx context.Context) error {
	req, err := ngapx.BuildNGSetupRequest(g.announced())
	if err != nil {
		return err
	}
	if err := g.conn.WriteMsg(req, 0); err != nil {
		return fmt.Errorf("NG Setup Request: %w", err)
	}
	select {
	case s := <-g.setup:
		if s.Kind != ngapx.Successful {
			return fmt.Errorf("%w: %s", ErrNGSetupFailure, ngapx.CauseString(s.Cause))
		}
		return nil
	case <-g.done:
		return fmt.Errorf("NG Setup: association ended: %v", g.readErr)
	case <-ctx.Done():
		return fmt.Errorf("NG Setup: %w", ctx.Err())
	}
}

// Reset sends NG Reset of the whole interface and waits for the
// acknowledgement (TS 38.413 8.7.4.2.1); all UE associations are gone.
func (g *GNB) Reset(ctx context.Context) error {
	b, err := ngapx.BuildNGReset(ngapx.CauseMisc(ngapType.CauseMiscPresentOmIntervention))
	if err != nil {
		return err
	}
	if err := g.conn.WriteMsg(b, 0); err != nil {
		return err
	}
	select {
	case <-g.resetAck:
		g.mu.Lock()
		for id, ue := range g.byRAN {
			delete(g.byRAN, id)
			ue.deliver(downlink{released: true})
		}
		g.mu.Unlock()
		return nil
	case <-g.done:
		return fmt.Errorf("NG Reset: association ended: %v", g.readErr)
	case <-ctx.Done():
		return fmt.Errorf("NG Reset: %w", ctx.Err())
	}
}

// ErrRANConfigurationUpdateFailure is the AMF refusing a RAN configuration
// update (TS 38.413 8.7.2.3).
var ErrRANConfigurationUpdateFailure = errors.New("RAN Configuration Update Failure")

// UpdateConfiguration announces the gNB's name and TAs again with RAN
// Configuration Update and waits for the AMF's answer (TS 38.413 8.7.2).
func (g *GNB) UpdateConfiguration(ctx context.Context) error {
	b, err := ngapx.BuildRANConfigurationUpdate(g.announced())
	if err != nil {
		return err
	}
	if err := g.conn.WriteMsg(b, 0); err != nil {
		return fmt.Errorf("RAN Configuration Update: %w", err)
	}
	select {
	case s := <-g.ranConfig:
		if s.Kind != ngapx.Successful {
			return fmt.Errorf("%w: %s", ErrRANConfigurationUpdateFailure, ngapx.CauseString(s.Cause))
		}
		return nil
	case <-g.done:
		return fmt.Errorf("RAN Configuration Update: association ended: %v", g.readErr)
	case <-ctx.Done():
		return fmt.Errorf("RAN Configuration Update: %w", ctx.Err())
	}
}

// SendRaw puts an arbitrary PDU on a stream (fault injection in tests).
func (g *GNB) SendRaw(pdu []byte, stream uint16) error { return g.conn.WriteMsg(pdu, stream) }

// Close ends the association at once, whatever the AMF still sends, and
// closes the N3 socket.
func (g *GNB) Close() error {
	g.up.Close()
	return g.conn.Close()
}

// Shutdown ends a run the way UEs going quiet end: it asks the AMF to
// release every UE still connected (UE Context Release Request, user
// inactivity; TS 38.413 8.3.2), answers the UE Context Release Commands and
// then closes the association. The AMF sends a UE's release command after
// what it still had in flight for that UE on the same stream, such as the
// Configuration Update Command following Registration Complete (TS 24.501
// 5.4.4), so nothing the AMF sends meets a closed association. When ctx
// ends first, the association is closed anyway.
func (g *GNB) Shutdown(ctx context.Context) error {
	waiting := g.requestReleases()
	for waiting > 0 {
		select {
		case <-g.detached:
			waiting = g.stillConnected()
		case <-g.done:
			return g.Close()
		case <-ctx.Done():
			g.Close()
			return fmt.Errorf("shutdown: %d UEs not released: %w", waiting, ctx.Err())
		}
	}
	return g.Close()
}

// requestReleases sends UE Context Release Request for each UE the AMF
// knows (it has an AMF UE NGAP ID) and returns how many it sent.
func (g *GNB) requestReleases() int {
	cause := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity)
	n := 0
	for ranID, amfID := range g.connectedUEs() {
		b, err := ngapx.BuildUEContextReleaseRequest(amfID, ranID, cause)
		if err == nil {
			g.tracer().Sent(ranID, b)
			err = g.conn.WriteMsg(b, g.stream(ranID))
		}
		if err != nil {
			g.log.Warn("UE Context Release Request", "ranUeNgapId", ranID, "err", err)
			continue
		}
		n++
	}
	return n
}

// connectedUEs maps the RAN UE NGAP ID of each UE the AMF knows to its AMF
// UE NGAP ID.
func (g *GNB) connectedUEs() map[int64]int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[int64]int64{}
	for ranID, ue := range g.byRAN {
		if amfID := ue.amfID.Load(); amfID >= 0 {
			out[ranID] = amfID
		}
	}
	return out
}

func (g *GNB) stillConnected() int { return len(g.connectedUEs()) }

// Done is closed when the association has ended.
func (g *GNB) Done() <-chan struct{} { return g.done }

// stream spreads UEs over the UE-associated streams (TS 38.412 7: stream 0
// is for non-UE-associated signalling).
func (g *GNB) stream(ranID int64) uint16 {
	n := int64(g.conn.Streams())
	if n <= 1 {
		return 0
	}
	return uint16(1 + ranID%(n-1))
}

func (g *GNB) attach(ue *UE) int64 {
	id := g.nextRANID.Add(1)
	g.mu.Lock()
	g.byRAN[id] = ue
	g.mu.Unlock()
	return id
}

func (g *GNB) detach(ranID int64) {
	g.mu.Lock()
	delete(g.byRAN, ranID)
	g.mu.Unlock()
	select {
	case g.detached <- struct{}{}:
	default:
	}
}

// find names the UE of a UE-associated PDU: by RAN UE NGAP ID, or by AMF
// UE NGAP ID alone (UE Context Release Command may carry only that).
func (g *GNB) find(s ngapx.Summary) *UE {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.RANUEID >= 0 {
		return g.byRAN[s.RANUEID]
	}
	if s.AMFUEID < 0 {
		return nil
	}
	for _, ue := range g.byRAN {
		if ue.amfID.Load() == s.AMFUEID {
			return ue
		}
	}
	return nil
}

func (g *GNB) readLoop() {
	defer close(g.done)
	for {
		b, _, err := g.conn.ReadMsg()
		at := g.tracer().Now()
		if err != nil {
			g.readErr = err
			g.mu.Lock()
			for _, ue := range g.byRAN {
				ue.deliver(downlink{released: true})
			}
			g.mu.Unlock()
			return
		}
		g.handle(b, at)
	}
}

// handle routes one downlink PDU: non-UE-associated procedures here, UE
// ones to the UE by its RAN UE NGAP ID.
func (g *GNB) handle(b []byte, at time.Time) {
	pdu, err := ngapx.Decode(b)
	if err != nil {
		g.log.Warn("undecodable NGAP from the AMF", "err", err)
		return
	}
	s, err := ngapx.Summarize(pdu)
	if err != nil {
		g.log.Warn("NGAP from the AMF", "err", err)
		return
	}
	g.tracer().Received(at, s.RANUEID, int(s.Kind), s.Procedure)
	switch s.Procedure {
	case ngapType.ProcedureCodeNGSetup:
		select {
		case g.setup <- s:
		default:
		}
		return
	case ngapType.ProcedureCodeRANConfigurationUpdate:
		select {
		case g.ranConfig <- s:
		default:
		}
		return
	case ngapType.ProcedureCodeNGReset:
		if s.Kind == ngapx.Successful {
			select {
			case g.resetAck <- struct{}{}:
			default:
			}
		}
		return
	case ngapType.ProcedureCodePaging:
		g.onPaging(pdu)
		return
	case ngapType.ProcedureCodeOverloadStart:
		g.onOverloadStart(pdu)
		return
	case ngapType.ProcedureCodeOverloadStop:
		g.onOverloadStop()
		return
	case ngapType.ProcedureCodeErrorIndication:
		g.ErrorIndications.Add(1)
		g.log.Warn("Error Indication from the AMF", "cause", ngapx.CauseString(s.Cause), "ranUeNgapId", s.RANUEID)
	}
	if g.onHandoverPDU(s, pdu) {
		return
	}
	ue := g.find(s)
	if ue == nil {
		g.log.Debug("downlink for an unknown UE", "msg", s.Name, "ranUeNgapId", s.RANUEID)
		return
	}
	switch s.Procedure {
	case ngapType.ProcedureCodeInitialContextSetup:
		// The gNB sets up AS security and the PDU sessions' tunnels and
		// answers before the UE gets the NAS PDU over RRC (TS 23.502
		// 4.2.2.2.2 steps 21-22, 4.2.3.2 steps 12-14).
		if known := g.onInitialContextSetup(ue, pdu, s); !known {
			// Then it has asked the UE for its radio capability over RRC
			// and hands it to the AMF to keep (TS 38.413 8.14.1); not
			// when the AMF gave the one it kept (TS 23.501 5.4.4.1).
			g.send(s.AMFUEID, s.RANUEID, func(amfID, ranID int64) ([]byte, error) {
				return ngapx.BuildUERadioCapabilityInfoIndication(amfID, ranID, ueRadioCapability)
			})
		}
	case ngapType.ProcedureCodePDUSessionResourceSetup:
		g.onSessionSetup(ue, pdu)
		return
	case ngapType.ProcedureCodePDUSessionResourceModify:
		g.onSessionModify(ue, pdu)
		return
	case ngapType.ProcedureCodePDUSessionResourceRelease:
		g.onSessionRelease(ue, pdu)
		return
	case ngapType.ProcedureCodeUEContextRelease:
		g.onUEContextRelease(ue, s.AMFUEID)
		return
	}
	ue.deliver(downlink{amfID: s.AMFUEID, name: s.Name, nas: s.NASPDU, cause: s.Cause})
}

// ueRadioCapability is the UERadioAccessCapabilityInformation message of
// TS 38.331 10.2.2 (UPER) a gNB puts in UE Radio Capability (TS 38.413
// 9.3.1.74): criticalExtensions c1, ueRadioAccessCapabilityInformation,
// no nonCriticalExtension, and a ue-RadioAccessCapabilityInfo of one octet
// holding an empty UE-CapabilityRAT-ContainerList. The AMF keeps it as an
// opaque container.
var ueRadioCapability = []byte{0x00, 0x08, 0x00}

func (g *GNB) send(amfID, ranID int64, build func(int64, int64) ([]byte, error)) {
	b, err := build(amfID, ranID)
	if err == nil {
		g.tracer().Sent(ranID, b)
		err = g.conn.WriteMsg(b, g.stream(ranID))
	}
	if err != nil {
		g.log.Warn("uplink NGAP", "err", err)
	}
}
