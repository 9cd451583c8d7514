package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/protocol/gtpu"
	"github.com/l25gc/l25gc/test/ransim"
)

// Procedures of `bench paging` and `bench service-request`, as the JSON
// names them.
const (
	// ProcedurePaging is a downlink packet for a CM-IDLE UE sent from the
	// data network → the gNB receives the NGAP Paging for that UE
	// (TS 23.502 4.2.3.3 steps 1-4b: UPF-U buffers, reports, the SMF asks
	// the AMF, the AMF pages).
	ProcedurePaging = "paging"
	// ProcedurePagingFirstPacket is the same packet sent → it comes out of
	// the UE's tunnel (steps 5-12 too: the Service Request, the user plane
	// set up again, UPF-U forwarding what it buffered).
	ProcedurePagingFirstPacket = "paging_first_packet"
	// ProcedureServiceRequest is a UE-triggered Service Request → Service
	// Accept (TS 23.502 4.2.3.2), by which the gNB has set the sessions'
	// tunnels up again.
	ProcedureServiceRequest = "service_request"
	// ProcedureANRelease is UE Context Release Request → the release
	// (TS 23.502 4.2.6), `l25gc ransim --idle`.
	ProcedureANRelease = "an_release"
)

// IdleDwell is how long UEs stay CM-IDLE before the measurement starts, as
// a UE goes idle after inactivity rather than the instant before it needs
// service again: the AMF finishes the release (the SMFs' deactivation,
// the context parked) before the UEs' Service Requests and pagings meet it.
const IdleDwell = 100 * time.Millisecond

// Paging measures paging from a real downlink packet: for each UE count
// the UEs register, establish one IPv4 session and go CM-IDLE (none of it
// measured); then one UDP datagram per UE leaves the lab's data-network
// namespace for the UE's address, o.Concurrency at a time, each measured
// until the gNB receives the Paging for its UE ("paging") and until the
// UE receives that datagram through its tunnel ("paging_first_packet").
// The UEs deregister afterwards. It needs UPF-U and the lab network
// (`l25gc up` builds it; root).
func Paging(ctx context.Context, o RegistrationOptions) ([]Result, error) {
	dn, err := dataNetwork(o)
	if err != nil {
		return nil, err
	}
	return measure(ctx, o, idleRun(o.dnn(), dn, ProcedurePaging, pagingPhase))
}

// ServiceRequest measures UE-triggered Service Request from CM-IDLE (set up
// unmeasured as for Paging): Service Request → Service Accept. A UE whose
// user plane then does not carry a downlink datagram from the data
// network counts as failed.
func ServiceRequest(ctx context.Context, o RegistrationOptions) ([]Result, error) {
	dn, err := dataNetwork(o)
	if err != nil {
		return nil, err
	}
	return measure(ctx, o, idleRun(o.dnn(), dn, ProcedureServiceRequest, serviceRequestPhase))
}

func (o RegistrationOptions) dnn() string {
	if o.DNN == "" {
		return "internet"
	}
	return o.DNN
}

// dataNetwork is the data network's address in the lab topology of the
// core (fresh, or o.AMF's with the same config).
func dataNetwork(o RegistrationOptions) (netip.Addr, error) {
	if o.AMF == "" && !o.Config.Runs("upf-u") {
		return netip.Addr{}, errors.New("bench: paging needs a user plane: the config's nfs lack upf-u")
	}
	l, err := node.LabNetFor(o.Config)
	if err != nil {
		return netip.Addr{}, err
	}
	p, err := netip.ParsePrefix(l.DNAddr)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("bench: the config gives no lab data network (upf.n6.port is set): %w", err)
	}
	return p.Addr(), nil
}

// idlePhase measures one thing with CM-IDLE UEs whose probes are ready.
type idlePhase func(ctx context.Context, f ransim.Fleet, dn *net.UDPConn, probes map[*ransim.UE]*probe, mode string) []Result

// idleRun brings a fleet to CM-IDLE with a session each, runs phase, and
// deregisters the UEs so the core keeps nothing of them.
func idleRun(dnn string, dnAddr netip.Addr, name string, phase idlePhase) run {
	return func(ctx context.Context, g *ransim.GNB, f ransim.Fleet, mode string, w io.Writer, warm bool) ([]Result, error) {
		if err := listenN3(g); err != nil {
			return nil, err
		}
		dn, err := openDNSocket(node.LabNetns, dnAddr)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		defer dn.Close()
		ues, err := g.FleetUEs(f)
		if err != nil {
			return nil, err
		}
		probes, err := toIdle(ctx, ues, f, dn, dnn, mode, w, warm)
		var results []Result
		if err == nil {
			f.Progress = ProgressLine(w, phaseLabel(name, mode, f.UEs, warm))
			startMeasuring(ctx)
			results = phase(ctx, f, dn, probes, mode)
			endMeasuring(ctx, results)
		}
		if derr := deregister(ctx, ues, f); derr != nil {
			fmt.Fprintf(w, "warning: %v\n", derr)
		}
		return results, err
	}
}

// listenN3 opens the gNB's N3 socket once for all counts: the UEs' tunnels
// end there (the lab's l25gc-n3-gnb address).
func listenN3(g *ransim.GNB) error {
	if g.UserPlane().LocalPort() != 0 {
		return nil
	}
	if err := g.UserPlane().Listen(gtpu.Port); err != nil {
		return fmt.Errorf("bench: paging needs the gNB's N3: %w", err)
	}
	return nil
}

// toIdle registers the UEs, establishes session 1 each, binds each
// session's tunnel to a probe and releases the UEs to CM-IDLE; any failure
// ends the run, as the measurement is over every UE.
func toIdle(ctx context.Context, ues []*ransim.UE, f ransim.Fleet, dn *net.UDPConn, dnn, mode string, w io.Writer, warm bool) (map[*ransim.UE]*probe, error) {
	steps := []struct {
		name string
		proc ransim.Procedure
	}{
		{"registration", func(ctx context.Context, ue *ransim.UE) (time.Duration, error) { return ue.Register(ctx) }},
		{"pdu_session", ransim.Establish(ransim.SessionRequest{ID: 1, DNN: dnn})},
	}
	for _, s := range steps {
		f.Progress = ProgressLine(w, phaseLabel(s.name+" (not measured)", mode, f.UEs, warm))
		if o := ransim.RunFleet(ctx, ues, f, s.proc); o.Failed > 0 {
			return nil, fmt.Errorf("bench: %d of %d %s before going idle failed: %v", o.Failed, len(ues), s.name, o.Errors)
		}
	}
	probes := newProbes(ues)
	// The UEs use their sessions first, as UEs with traffic do before they
	// go idle: it checks each user plane, and UPF-U has resolved the gNB's
	// N3 address when it later flushes what it buffered.
	f.Progress = ProgressLine(w, phaseLabel("downlink before idle (not measured)", mode, f.UEs, warm))
	if o := ransim.RunFleet(ctx, ues, f, func(ctx context.Context, ue *ransim.UE) (time.Duration, error) {
		return 0, probes[ue].reach(ctx, dn)
	}); o.Failed > 0 {
		return nil, fmt.Errorf("bench: %d of %d sessions carried no downlink before going idle: %v", o.Failed, len(ues), o.Errors)
	}
	for _, p := range probes {
		p.renew()
	}
	f.Progress = ProgressLine(w, phaseLabel(ProcedureANRelease+" (not measured)", mode, f.UEs, warm))
	if o := ransim.RunFleet(ctx, ues, f, ransim.ReleaseToIdle); o.Failed > 0 {
		return nil, fmt.Errorf("bench: %d of %d AN releases failed: %v", o.Failed, len(ues), o.Errors)
	}
	select {
	case <-time.After(IdleDwell):
	case <-ctx.Done():
	}
	return probes, nil
}

// deregister switches the UEs off (unmeasured), from whatever state.
func deregister(ctx context.Context, ues []*ransim.UE, f ransim.Fleet) error {
	f.Progress = nil
	o := ransim.RunFleet(ctx, ues, f, func(ctx context.Context, ue *ransim.UE) (time.Duration, error) { return ue.Deregister(ctx, true) })
	if o.Failed > 0 {
		return fmt.Errorf("bench: %d of %d deregistrations after the run failed: %v", o.Failed, len(ues), o.Errors)
	}
	return nil
}

// probe is one UE's downlink datagram: its sequence, and when it came out
// of the UE's tunnel and when the UE was paged.
type probe struct {
	addr    netip.Addr
	seq     atomic.Uint32 // the probe's current sequence: the UE's index, then + 1<<31 after renew
	arrived chan time.Time
	paged   chan paged
}

// renew gives the probe a sequence no earlier datagram carries and forgets
// an arrival of theirs.
func (p *probe) renew() {
	p.seq.Add(1 << 31)
	select {
	case <-p.arrived:
	default:
	}
}

type paged struct {
	at  time.Time
	err error
}

// newProbes gives each UE's session 1 tunnel a sink that notes its probe's
// arrival; the tunnel stays the session's through CM-IDLE.
func newProbes(ues []*ransim.UE) map[*ransim.UE]*probe {
	out := make(map[*ransim.UE]*probe, len(ues))
	for i, ue := range ues {
		s := ue.Session(1)
		p := &probe{addr: s.Address, arrived: make(chan time.Time, 1), paged: make(chan paged, 1)}
		p.seq.Store(uint32(i))
		s.Tunnel.SetSink(func(pkt []byte) {
			if seq, ok := probeSeq(pkt); ok && seq == p.seq.Load() {
				select {
				case p.arrived <- time.Now():
				default:
				}
			}
		})
		out[ue] = p
	}
	return out
}

// send puts the probe on the data network towards the UE.
func (p *probe) send(dn *net.UDPConn) (time.Time, error) {
	sent := time.Now()
	_, err := dn.WriteToUDPAddrPort(probePayload(p.seq.Load()), netip.AddrPortFrom(p.addr, probePort))
	return sent, err
}

// reach sends the probe until it arrives: a check that the user plane
// carries it, not a measurement, so a first datagram UPF-U drops while it
// resolves the gNB's address (ARP) does not count.
func (p *probe) reach(ctx context.Context, dn *net.UDPConn) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := p.send(dn); err != nil {
			return err
		}
		select {
		case <-p.arrived:
			return nil
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("downlink datagram not received: %w", ctx.Err())
		}
	}
}

func (p *probe) awaitArrival(ctx context.Context) (time.Time, error) {
	select {
	case at := <-p.arrived:
		return at, nil
	case <-ctx.Done():
		return time.Time{}, fmt.Errorf("downlink datagram not received: %w", ctx.Err())
	}
}

// pagingPhase sends each UE's probe while the UE waits to be paged, and
// measures both latencies per UE.
func pagingPhase(ctx context.Context, f ransim.Fleet, dn *net.UDPConn, probes map[*ransim.UE]*probe, mode string) []Result {
	ues := make([]*ransim.UE, 0, len(probes))
	for ue := range probes {
		ues = append(ues, ue)
	}
	sort.Slice(ues, func(i, j int) bool { return probes[ues[i]].seq.Load() < probes[ues[j]].seq.Load() })
	actx, cancel := context.WithCancel(ctx)
	var answering sync.WaitGroup
	for _, ue := range ues {
		answering.Add(1)
		go func() {
			defer answering.Done()
			at, _, err := ue.AnswerPaging(actx)
			probes[ue].paged <- paged{at, err}
		}()
	}
	var pg latencies
	first := ransim.RunFleet(ctx, ues, f, func(ctx context.Context, ue *ransim.UE) (time.Duration, error) {
		p := probes[ue]
		sent, err := p.send(dn)
		if err != nil {
			pg.fail(err)
			return 0, err
		}
		var got paged
		select {
		case got = <-p.paged:
		case <-ctx.Done():
			got.err = fmt.Errorf("no paging: %w", ctx.Err())
		}
		if got.err != nil {
			pg.fail(got.err)
			return 0, got.err
		}
		pg.add(got.at.Sub(sent))
		ue.TraceDownlink(ProcedurePaging, sent, got.at, false)
		at, err := p.awaitArrival(ctx)
		if err == nil {
			ue.TraceDownlink(ProcedurePagingFirstPacket, sent, at, true)
		}
		return at.Sub(sent), err
	})
	cancel()
	answering.Wait()
	return []Result{
		FromOutcome(ProcedurePaging, mode, f.UEs, f.Concurrency, pg.outcome(first.Elapsed)),
		FromOutcome(ProcedurePagingFirstPacket, mode, f.UEs, f.Concurrency, first),
	}
}

// serviceRequestPhase wakes every UE with a Service Request, then checks
// each woken UE's user plane with a probe.
func serviceRequestPhase(ctx context.Context, f ransim.Fleet, dn *net.UDPConn, probes map[*ransim.UE]*probe, mode string) []Result {
	ues := make([]*ransim.UE, 0, len(probes))
	for ue := range probes {
		ues = append(ues, ue)
	}
	var mu sync.Mutex
	woken := map[*ransim.UE]time.Duration{}
	sr := ransim.RunFleet(ctx, ues, f, func(ctx context.Context, ue *ransim.UE) (time.Duration, error) {
		lat, err := ransim.Wake(ctx, ue)
		if err == nil {
			mu.Lock()
			woken[ue] = lat
			mu.Unlock()
		}
		return lat, err
	})
	var lats latencies
	lats.errors = sr.Errors
	lats.failed = sr.Failed
	f.Progress = nil
	ransim.RunFleet(ctx, ues, f, func(ctx context.Context, ue *ransim.UE) (time.Duration, error) {
		lat, ok := woken[ue]
		if !ok {
			return 0, nil
		}
		if err := probes[ue].reach(ctx, dn); err != nil {
			lats.fail(fmt.Errorf("user plane after Service Accept: %w", err))
			return 0, err
		}
		lats.add(lat)
		return lat, nil
	})
	return []Result{FromOutcome(ProcedureServiceRequest, mode, f.UEs, f.Concurrency, lats.outcome(sr.Elapsed))}
}

// latencies collects a measurement's outcome from several goroutines.
type latencies struct {
	mu     sync.Mutex
	all    []time.Duration
	failed int
	errors []string
	counts map[string]int
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, d)
}

func (l *latencies) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed++
	if l.counts == nil {
		l.counts = map[string]int{}
	}
	l.counts[err.Error()]++
}

func (l *latencies) outcome(elapsed time.Duration) ransim.Outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	sort.Slice(l.all, func(i, j int) bool { return l.all[i] < l.all[j] })
	errs := append([]string(nil), l.errors...)
	for e, n := range l.counts {
		errs = append(errs, fmt.Sprintf("%d× %s", n, e))
	}
	sort.Strings(errs)
	return ransim.Outcome{Latencies: l.all, Failed: l.failed, Errors: errs, Elapsed: elapsed}
}
