// Package amf is the access and mobility management function of L25GC+:
// N2 (NGAP) towards gNBs, N1 (NAS-5GS 5GMM) towards UEs, and the SBI calls of
// registration to AUSF, UDM and PCF (TS 23.502 4.2.2.2.2, 4.2.2.3).
//
// Every NGAP/NAS event goes through one ratelimit.Dispatcher: keyed by the
// AMF UE NGAP ID for UE-associated signalling and by the association for the
// rest. Registration does not wait for a peer NF on the worker: its SBI
// requests run on their own goroutines and the answers come back as events
// (sbi_call.go), so a slow peer holds up neither other UEs nor the
// notifications for the same UE. Files by role: ngap_*.go (N2 handlers and
// senders), ue_admission.go (what an InitialUEMessage must pass before a UE
// context exists: initial NAS message, caps), gmm_*.go (NAS handlers and
// senders), state.go (the transition table), reply.go (what is answered on
// failure), consumer.go and sbi_call.go (SBI calls), namf_callback.go (SBI
// notifications), timers.go (NAS timers and the guards that bound a UE
// context's life), persist*.go (the UE store: registered UEs survive a
// restart of the process, in a write-behind log in data_dir rather than a
// UDSF, so that a restart depends on no other NF and no procedure waits for
// an SBI round trip; why and what a crash costs are in persist.go),
// metrics.go, limiter*.go (procedures in progress as the limiter counts
// them: the gate of event-initiating messages, DESIGN.md "AMF limiter").
// PDU sessions: gsm_transport.go (5GSM from the UE to the SMF),
// pdu_session.go (routing contexts, their SBI calls), namf_comm_n1n2.go
// (the SMF's N1N2MessageTransfer), ngap_pdu_session.go (PDU Session
// Resource procedures), smf_consumer.go and nssf_consumer.go. Idle mode:
// an_release.go (AMF-initiated AN release), gmm_service_request.go
// (Service Request, TS 23.502 4.2.3.2), paging.go and ngap_paging.go
// (network-triggered Service Request, 4.2.3.3), mobile_reachable.go
// (mobile reachable timer, implicit deregistration, TS 24.501 5.3.7).
package amf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/internal/gopool"
	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/ratelimit"
	"github.com/l25gc/l25gc/sbi"
)

// Options are the seams of the AMF; zero values take the production ones,
// except Listen, which the caller always gives (cmd/l25gc:
// AdaptListen(n2.Listen)) so that the AMF does not import its transport.
type Options struct {
	Listen     ListenFunc           // N2 listener (package n2)
	Consumer   Consumer             // SBI peers (NRF discovery over env.Client)
	Sessions   SessionConsumer      // UDM smf-select-data, SMF selection, Nsmf_PDUSession (smf_consumer.go)
	Slices     SliceSelector        // Nnssf_NSSelection (nssf_consumer.go)
	Crypto     Crypto               // key derivation and NAS protection (package security)
	Dispatcher ratelimit.Dispatcher // event dispatcher (ratelimit.Pool)
	Limit      int                  // initial dispatcher limit when Dispatcher is nil
}

// NF is the AMF.
type NF struct {
	env      *nf.Env
	cfg      *config.Config
	log      *slog.Logger
	opts     Options
	id       string // NF instance id
	guami    domain.GUAMI
	tais     []domain.TAI
	metrics  *metrics
	disp     ratelimit.Dispatcher
	trace    *tracing.AMF // N2 and step spans (tracing.go); nil: off
	limiter  *procLimiter // procedures in progress (limiter.go)
	machine  machine
	ues      *ueTable
	timerGen atomic.Uint64
	callGen  atomic.Uint64 // generations of SBI calls (sbi_call.go)
	// calls is the parent of every SBI call's context; Stop cancels it.
	calls     context.Context
	stopCalls context.CancelFunc
	// workers run the SBI calls (call, smCall, concurrently) on goroutines
	// whose stacks have grown already (internal/gopool).
	workers *gopool.Pool
	persist *ueStore // UE contexts across restarts (persist.go); nil when off

	mu     sync.Mutex
	gnbs   map[uint64]*gnb
	nextGN uint64
	ln     Listener
	wg     sync.WaitGroup
	closed bool
}

// New builds the AMF from its environment with the production seams.
func New(env *nf.Env) (*NF, error) { return NewWithOptions(env, Options{}) }

// NewWithOptions builds the AMF with some seams replaced (tests, X-IO).
func NewWithOptions(env *nf.Env, o Options) (*NF, error) {
	cfg := env.Config
	// A stable id, like every NF's: a restarted AMF replaces its profile at
	// the NRF instead of leaving a stale one (sbi.InstanceID).
	id := sbi.InstanceID(models.NrfNfManagementNfType_AMF, cfg.AdvertisedAddr(cfg.AMF.SBIPort))
	n := &NF{env: env, cfg: cfg, log: env.Log, opts: o, id: id,
		machine: newMachine(), ues: newUETable(), gnbs: map[uint64]*gnb{}, trace: tracing.NewAMF(env.Tracing)}
	amfID, err := domain.NewAMFID(cfg.AMF.GUAMI.RegionID, cfg.AMF.GUAMI.SetID, cfg.AMF.GUAMI.Pointer)
	if err != nil {
		return nil, fmt.Errorf("amf: %w", err)
	}
	n.guami = domain.GUAMI{PLMN: cfg.PLMN, AMFID: amfID}
	for _, s := range cfg.TACs {
		tac, err := domain.ParseTAC(s)
		if err != nil {
			return nil, fmt.Errorf("amf: %w", err)
		}
		n.tais = append(n.tais, domain.TAI{PLMN: cfg.PLMN, TAC: tac})
	}
	if n.opts.Consumer == nil {
		n.opts.Consumer = NewSBIConsumer(env.Client, env.NRF)
	}
	if n.opts.Sessions == nil {
		n.opts.Sessions = NewSBISessions(env.Client, env.NRF)
	}
	if n.opts.Slices == nil {
		n.opts.Slices = NewSBISlices(env.Client, env.NRF)
	}
	if n.opts.Crypto == nil {
		n.opts.Crypto = securityCrypto{}
	}
	n.calls, n.stopCalls = context.WithCancel(context.Background())
	n.workers = gopool.New(0)
	n.metrics = newMetrics(env.Registry)
	countUEs(env.Registry, n.ues)
	countIdle(env.Registry, n.ues)
	n.disp = o.Dispatcher
	if n.disp == nil {
		n.disp = ratelimit.New(max(o.Limit, 64), n.onPanic, ratelimit.NewGauges(env.Registry, "l25gc_amf"))
	}
	n.limiter = newProcLimiter(n, env.Registry)
	return n, nil
}

// Dispatcher exposes the event dispatcher, for the adaptive limiter.
func (n *NF) Dispatcher() ratelimit.Dispatcher { return n.disp }

// Handler serves the AMF's SBI: the callbacks it gives the UDM, PCF and
// SMF (namf_callback.go, namf_comm_n1n2.go) and Namf_Communication's
// N1N2MessageTransfer (namf_comm_n1n2.go).
func (n *NF) Handler() http.Handler {
	mux := http.NewServeMux()
	n.routeCallbacks(mux)
	n.routeSessions(mux)
	return mux
}

// Profile is the AMF's NRF profile (TS 29.510 6.1.6.2.2) offering namf-comm.
func (n *NF) Profile() models.NrfNfManagementNfProfile {
	p := sbi.Profile(n.id, models.NrfNfManagementNfType_AMF, n.cfg.AdvertisedIP(), n.cfg.AMF.SBIPort,
		n.env.PLMN(), models.ServiceName_NAMF_COMM)
	g := n.guami.ToModel()
	p.AmfInfo = &models.NrfNfManagementAmfInfo{AmfSetId: n.guami.AMFID.SetIDString(),
		AmfRegionId: n.guami.AMFID.RegionIDString(), GuamiList: []models.Guami{g}}
	return p
}

// Start listens on N2 and serves each association on its own reader.
func (n *NF) Start(ctx context.Context) error {
	listen := n.opts.Listen
	if listen == nil {
		return errors.New("amf: no N2 transport: set Options.Listen, e.g. amf.AdaptListen(n2.Listen)")
	}
	// The UEs of the previous process come back before any gNB can
	// connect, so none of their GUTIs looks unknown.
	if err := n.openPersist(); err != nil {
		return err
	}
	ln, picked, err := listen(n.cfg.AMF.NGAP.Transport, n.cfg.AMF.NGAP.Addr)
	if err != nil {
		return fmt.Errorf("amf: N2 listen %s (%s): %w", n.cfg.AMF.NGAP.Addr, n.cfg.AMF.NGAP.Transport, err)
	}
	n.log.Info("N2 listening", "addr", n.cfg.AMF.NGAP.Addr, "transport", picked, "configured", n.cfg.AMF.NGAP.Transport)
	n.mu.Lock()
	n.ln = ln
	n.mu.Unlock()
	n.limiter.start(n)
	n.wg.Add(1)
	go n.acceptLoop(ln)
	return nil
}

// Serve runs one already-established association (Start calls it per
// accepted association; tests call it with a fake Conn). It returns when
// the association ends.
func (n *NF) Serve(c Conn) {
	g := n.addGNB(c)
	defer n.removeGNB(g)
	for {
		pdu, stream, err := c.ReadMsg()
		if err != nil {
			n.log.Info("N2 association ended", "gnb", g.id, "remote", addrString(c), "err", err)
			return
		}
		n.onPDU(g, pdu, stream)
	}
}

func (n *NF) acceptLoop(ln Listener) {
	defer n.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			n.log.Info("N2 listener closed", "err", err)
			return
		}
		n.wg.Add(1)
		go func() { defer n.wg.Done(); n.Serve(c) }()
	}
}

// Stop closes N2, gives up the SBI calls in flight and waits for the queued
// events.
func (n *NF) Stop(context.Context) {
	n.mu.Lock()
	n.closed = true
	ln := n.ln
	conns := make([]Conn, 0, len(n.gnbs))
	for _, g := range n.gnbs {
		conns = append(conns, g.conn)
	}
	n.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	for _, c := range conns {
		_ = c.Close()
	}
	n.wg.Wait()
	n.stopCalls()
	n.limiter.halt()
	n.disp.Close()
	n.closePersist()
}

func (n *NF) addGNB(c Conn) *gnb {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nextGN++
	g := &gnb{id: n.nextGN, conn: c}
	n.gnbs[g.id] = g
	n.log.Info("N2 association up", "gnb", g.id, "remote", addrString(c), "streams", c.Streams())
	return g
}

// removeGNB forgets an association; its UEs lose their N2 connection.
func (n *NF) removeGNB(g *gnb) {
	n.mu.Lock()
	delete(n.gnbs, g.id)
	n.mu.Unlock()
	if g.ready.Load() {
		n.metrics.gnbs.Dec()
	}
	_ = g.conn.Close()
	for _, id := range n.ues.ofGNB(g.id) {
		n.dispatchUE(id, EvReset, &input{})
	}
}

func (n *NF) gnb(id uint64) *gnb {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.gnbs[id]
}

// dispatchUE queues an event for the UE with that AMF UE NGAP ID.
func (n *NF) dispatchUE(id int64, ev Event, in *input) {
	_ = n.disp.Dispatch(ratelimit.UE(id), func() { n.runUE(id, ev, in) })
}

// runUE looks the UE up again (it may be gone) and steps its state machine.
func (n *NF) runUE(id int64, ev Event, in *input) {
	if in.done != nil {
		defer in.done()
	}
	ue := n.ues.get(id)
	if ue == nil {
		n.log.Debug("event for a released UE dropped", "amfUeNgapId", id, "event", ev)
		return
	}
	n.step(ue, ev, in)
}

func (n *NF) step(ue *ueContext, ev Event, in *input) {
	if err := n.machine.step(n, ue, ev, in); err != nil {
		n.reply(ue, ev, err)
	}
	n.endGuardOnAuthentication(ue)
}

// onPanic is the dispatcher's report of a panic inside one event: that UE
// (or association) is cleaned up, every other one carries on.
func (n *NF) onPanic(key ratelimit.Key, r any, stack []byte) {
	n.log.Error("panic in event; cleaning up its context", "key", key.String(), "panic", fmt.Sprint(r), "stack", string(stack))
	if key.Class != ratelimit.ClassUE {
		return
	}
	id := int64(key.ID)
	ue := n.ues.get(id)
	if ue == nil {
		return
	}
	n.stopTimer(ue)
	n.stopGuard(ue)
	n.endProcedures(ue, ratelimit.ResultFailure)
	if ue.registered {
		n.metrics.registered.Dec()
	}
	n.forgetUE(ue)
	n.ues.remove(id)
	n.releaseEnded(ue) // what waited for its release meets no context (an_release_window.go)
	if g := n.gnb(ue.gnbID); g != nil {
		n.sendReleaseCommand(g, ue.amfID, ue.ranID, causeNasUnspecified())
	}
}

func addrString(c Conn) string {
	if a := c.RemoteAddr(); a != nil {
		return a.String()
	}
	return ""
}
