package e2e

// Idle mode and mobility together (issue 12), end to end with the lab's
// user plane: a UE that moved by handover goes CM-IDLE at the target and
// is paged there (TS 23.502 4.9.1 then 4.2.6 and 4.2.3.3); an idle UE
// reselects a gNB of another tracking area and registers there (mobility
// registration update, TS 24.501 5.5.1.3), keeping its sessions, and is
// paged there; a periodic registration update from CM-IDLE keeps them too;
// a UE that vanishes in CM-IDLE is deregistered implicitly and nothing of
// it stays at the AMF, SMF or UPF (TS 24.501 5.3.7). The UE's IP stack is
// a TUN in its own namespace, so the data network pings it with ping.
// These tests run UPF-U: run them under `flock /work/userplane.lock`.

import (
	"context"
	"net/netip"
	"os/exec"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/protocol/gtpu"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// otherTAC is gNB 2's tracking area where a test gives it one of its own;
// the AMF serves it too (config tacs), so it is in the UE's registration
// area and in the AMF's Paging.
const otherTAC = "000002"

// mobilityNetns is the UE's namespace and TUN here, apart from the
// l25gc-ue1 of `l25gc ransim --tun`.
const mobilityNetns = "l25gc-uemob"

// mobilityLab is a core with the lab user plane, gNB 1 and gNB 2 with N3
// at 10.100.0.2 and .3 (gNB 2 in otherTAC when asked), and one UE with PDU
// session 1 on gNB 1 whose TUN is in mobilityNetns.
type mobilityLab struct {
	cfg    *config.Config
	path   string // the core's config file
	gnbs   [2]*ransim.GNB
	ue     *ransim.UE
	ueAddr netip.Addr
}

func startMobilityLab(t *testing.T, secondTA bool, edit func(*config.Config)) *mobilityLab {
	t.Helper()
	cfg, path := coreConfig(t, t.TempDir(), func(c *config.Config) {
		withUserPlane(c)
		if secondTA {
			c.TACs = append(c.TACs, otherTAC)
		}
		if edit != nil {
			edit(c)
		}
	})
	startCore(t, cfg, path)
	l := &mobilityLab{cfg: cfg, path: path}
	if err := ransim.AddN3Address(node.LabN3Peer, ransim.NthN3(ransim.DefaultN3, 1), 24); err != nil {
		t.Fatal(err)
	}
	for i := range l.gnbs {
		l.gnbs[i] = l.connectGNB(t, i, secondTA && i == 1)
	}
	l.ue = newUE(t, cfg, l.gnbs[0], 0, "null")
	ctx := procCtx(t)
	if _, err := l.ue.Register(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := l.ue.RequestPDUSession(ctx, 1, "internet")
	if err != nil {
		t.Fatal(err)
	}
	l.ueAddr = s.Address
	tun, err := ransim.OpenUETUN(mobilityNetns, s.Address, s.Tunnel)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tun.Close() })
	l.pingDN(t, "before any move")
	return l
}

// connectGNB connects the i-th gNB (0-based) with its N3 open, in
// otherTAC when ownTA; UPF-U learns its link address before it sends there
// (see startHandoverLab).
func (l *mobilityLab) connectGNB(t *testing.T, i int, ownTA bool) *ransim.GNB {
	t.Helper()
	c := bench.GNBConfig(l.cfg, l.cfg.AMF.NGAP.Addr, l.cfg.AMF.NGAP.Transport)
	c.ID, c.N3 = uint32(i+1), ransim.NthN3(ransim.DefaultN3, i)
	if ownTA {
		tac, err := domain.ParseTAC(otherTAC)
		if err != nil {
			t.Fatal(err)
		}
		c.TAC = tac
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g, err := ransim.Connect(ctx, c)
	if err != nil {
		t.Fatalf("gNB %d: NG Setup: %v", c.ID, err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.UserPlane().Listen(gtpu.Port); err != nil {
		t.Fatal(err)
	}
	return g
}

// pingDN checks the session carries traffic from the UE's namespace.
func (l *mobilityLab) pingDN(t *testing.T, when string) {
	t.Helper()
	b, _ := inNetns(mobilityNetns, "ping", "-c", "3", "-i", "0.2", "-W", "2", dnAddr).CombinedOutput()
	if n := received(string(b)); n < 2 {
		t.Fatalf("ping %s from the UE %s: %d of 3 answered\n%s", dnAddr, when, n, b)
	}
}

// goIdle runs the AN release at the UE's gNB.
func (l *mobilityLab) goIdle(t *testing.T) {
	t.Helper()
	if _, err := l.ue.GoIdle(procCtx(t)); err != nil {
		t.Fatal(err)
	}
	if !l.ue.Idle() {
		t.Fatal("after the AN release the UE is not CM-IDLE")
	}
	l.awaitParked(t)
}

// awaitParked waits until the AMF holds the UE as CM-IDLE. The AMF parks
// the context when it handles UE Context Release Complete; an Initial UE
// Message with the UE's 5G-GUTI that overtakes that finds no context by
// the GUTI (see the report of branch i12-combo), so the UE here does what
// a real one does for longer: it stays idle a moment before it moves.
func (l *mobilityLab) awaitParked(t *testing.T) {
	t.Helper()
	awaitCondition(t, "CM-IDLE UE at the AMF", func() bool { return amfMetric(t, l.cfg, "l25gc_amf_idle_ues") == 1 })
}

// pagedByPing pings the CM-IDLE UE from the data network with a burst and
// checks that every echo is answered in order, the Paging reaching the UE
// at gNB want (the other gNB heard it for nobody), and the data coming
// back through want.
func (l *mobilityLab) pagedByPing(t *testing.T, want *ransim.GNB) {
	t.Helper()
	other := l.gnbs[0]
	if want == other {
		other = l.gnbs[1]
	}
	downBefore := want.UserPlane().DownlinkPackets.Load()
	answered := make(chan error, 1)
	go func() {
		_, lat, err := l.ue.AnswerPaging(procCtx(t))
		if err == nil {
			t.Logf("Paging at gNB %d → Service Accept: %v", want.ID(), lat)
		}
		answered <- err
	}()
	const sent = 20
	out, lost := pingEvery(node.LabNetns, l.ueAddr.String(), sent, "0.005")
	if err := <-answered; err != nil {
		t.Fatalf("the UE did not answer its paging at gNB %d: %v", want.ID(), err)
	}
	if len(lost) != 0 {
		t.Errorf("ping of the idle UE %s: %d of %d answered (lost: %v)\n%s", l.ueAddr, sent-len(lost), sent, lost, out)
	}
	if order := pingOrder(out); !slices.IsSorted(order) {
		t.Errorf("answers out of order: %v", order)
	}
	if l.ue.GNB() != want {
		t.Errorf("the UE answered through gNB %d, want gNB %d", l.ue.GNB().ID(), want.ID())
	}
	if want.UserPlane().DownlinkPackets.Load() == downBefore {
		t.Errorf("no downlink reached the UE through gNB %d", want.ID())
	}
	if other.PagingsForNobody.Load() == 0 && other.Cell().TAI == want.Cell().TAI {
		t.Errorf("gNB %d, in the same TA, heard no Paging for a UE not camping there", other.ID())
	}
	if t.Failed() {
		logUPFMetrics(t, l.cfg)
		for _, g := range l.gnbs {
			up := g.UserPlane()
			t.Logf("gNB %d: %d Pagings (%d for nobody), N3 %d down, %d dropped, %d error indications",
				g.ID(), g.Pagings.Load(), g.PagingsForNobody.Load(), up.DownlinkPackets.Load(), up.Dropped.Load(), up.ErrorIndications.Load())
		}
	}
}

// release ends the session and checks UPF-U holds nothing of it.
func (l *mobilityLab) release(t *testing.T) {
	t.Helper()
	if _, err := l.ue.ReleasePDUSession(procCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	awaitNoUPFSessions(t, l.cfg)
}

// handedOverUEIsPagedAtTheTarget: TS 23.502 4.9.1 then 4.2.6 and 4.2.3.3.
// The target parked the session's tunnel at the AN release, and the
// paging's Service Request sets that tunnel up again at the target.
func handedOverUEIsPagedAtTheTarget(t *testing.T, move func(ctx context.Context, ue *ransim.UE, target *ransim.GNB) error) {
	l := startMobilityLab(t, false, nil)
	src, dst := l.gnbs[0], l.gnbs[1]
	if err := move(procCtx(t), l.ue, dst); err != nil {
		t.Fatal(err)
	}
	if l.ue.GNB() != dst {
		t.Fatal("after the handover the UE is not served by the target")
	}
	l.pingDN(t, "after the handover")
	l.goIdle(t)
	if dst.IdleUEs() != 1 || src.IdleUEs() != 0 {
		t.Errorf("CM-IDLE UEs camping: source %d, target %d; want 0 and 1", src.IdleUEs(), dst.IdleUEs())
	}
	parked := l.ue.Session(1).Tunnel
	l.pagedByPing(t, dst)
	if now := l.ue.Session(1).Tunnel; now != parked || now.DL().IPv4 != dst.UserPlane().Addr() {
		t.Errorf("after the paging session 1 is on a tunnel at %v (the target's parked one: %v), want the target's parked tunnel back",
			now.DL().IPv4, now == parked)
	}
	// The source keeps a forwarding tunnel at most OldPathGrace after
	// the release when no End Marker passed it (nothing flowed here).
	if !eventually(func() bool { return src.UserPlane().Tunnels() == 0 }) {
		t.Errorf("the source gNB still holds %d tunnels", src.UserPlane().Tunnels())
	}
	l.pingDN(t, "after the paging")
	l.release(t)
}

func TestXnHandedOverIdleUEIsPagedAtTheTarget(t *testing.T) {
	handedOverUEIsPagedAtTheTarget(t, func(ctx context.Context, ue *ransim.UE, target *ransim.GNB) error {
		_, err := ue.HandoverXn(ctx, target)
		return err
	})
}

func TestN2HandedOverIdleUEIsPagedAtTheTarget(t *testing.T) {
	handedOverUEIsPagedAtTheTarget(t, func(ctx context.Context, ue *ransim.UE, target *ransim.GNB) error {
		_, err := ue.HandoverN2(ctx, target, ransim.N2Options{})
		return err
	})
}

// TS 24.501 5.5.1.3: a CM-IDLE UE reselects gNB 2, in a tracking area of
// its own, and runs a mobility registration update there without
// follow-on request; the AMF releases it to CM-IDLE with its session kept
// (UPF-U still holds it), and a ping from the data network pages it at
// gNB 2, where the Service Request sets up a new tunnel. Then a periodic
// registration update from CM-IDLE keeps the session too.
func TestIdleUEMovesToAnotherTAAndIsPagedThere(t *testing.T) {
	l := startMobilityLab(t, true, nil)
	g1, g2 := l.gnbs[0], l.gnbs[1]
	if g1.Cell().TAI == g2.Cell().TAI {
		t.Fatalf("both gNBs serve TAI %v", g1.Cell().TAI)
	}
	l.goIdle(t)
	if err := l.ue.Reselect(g2); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ue.UpdateRegistrationFromIdle(procCtx(t), false); err != nil {
		t.Fatalf("mobility registration update at gNB 2: %v", err)
	}
	l.requireSessionKept(t, "the mobility registration update")
	if g2.IdleUEs() != 1 || g1.IdleUEs() != 0 {
		t.Errorf("CM-IDLE UEs camping: gNB 1 %d, gNB 2 %d; want 0 and 1", g1.IdleUEs(), g2.IdleUEs())
	}
	l.pagedByPing(t, g2)
	l.pingDN(t, "after the paging at gNB 2")

	l.goIdle(t)
	if _, err := l.ue.UpdateRegistrationFromIdle(procCtx(t), true); err != nil {
		t.Fatalf("periodic registration update: %v", err)
	}
	l.requireSessionKept(t, "the periodic registration update")
	l.pagedByPing(t, g2)
	l.release(t)
}

// requireSessionKept: the UE is CM-IDLE again after a registration update
// and the SMF and UPF-U still hold its session.
func (l *mobilityLab) requireSessionKept(t *testing.T, after string) {
	t.Helper()
	if !l.ue.Idle() {
		t.Fatalf("after %s the UE is not CM-IDLE (the AMF did not release it)", after)
	}
	l.awaitParked(t)
	if n := len(smfSessions(t, l.cfg)); n != 1 {
		t.Errorf("after %s the SMF holds %d sessions, want 1", after, n)
	}
	if n := upfSessions(t, l.cfg); n != 1 {
		t.Errorf("after %s UPF-U holds %v sessions, want 1", after, n)
	}
}

// TS 24.501 5.3.7, TS 23.502 4.2.2.3.3: a UE that goes CM-IDLE and never
// comes back (no periodic update, no service) is deregistered implicitly
// once the mobile reachable and the implicit deregistration timers ran
// out (short here); its PDU session is released at the SMF and UPF-U and
// the AMF keeps no context of it.
func TestVanishedIdleUEIsImplicitlyDeregistered(t *testing.T) {
	l := startMobilityLab(t, false, func(c *config.Config) {
		c.AMF.NAS.MobileReachable = 2 * time.Second
		c.AMF.NAS.ImplicitDeregistration = 2 * time.Second
	})
	l.goIdle(t)
	if n := amfMetric(t, l.cfg, "l25gc_amf_idle_ues"); n != 1 {
		t.Errorf("the AMF holds %v CM-IDLE UEs, want 1", n)
	}
	// The UE says nothing more: it vanished.
	awaitCondition(t, "implicit deregistration", func() bool {
		return amfMetric(t, l.cfg, "l25gc_amf_implicit_deregistrations_total") == 1
	})
	if n := amfMetric(t, l.cfg, "l25gc_amf_mobile_reachable_expiries_total"); n != 1 {
		t.Errorf("mobile reachable expiries: %v, want 1", n)
	}
	awaitCondition(t, "SMF without sessions", func() bool { return len(smfSessions(t, l.cfg)) == 0 })
	awaitNoUPFSessions(t, l.cfg)
	// What a user reads: `l25gc status` counts UPF-U's sessions.
	if out, err := exec.Command(binary, "status", "--config", l.path).CombinedOutput(); err != nil ||
		!regexp.MustCompile(`UPF-U pid \d+: 0 sessions in the rule tables`).Match(out) {
		t.Errorf("l25gc status after the implicit deregistration (%v): want UPF-U with 0 sessions\n%s", err, out)
	}
	for _, m := range []string{"l25gc_amf_idle_ues", "l25gc_amf_registered_ues", "l25gc_amf_ue_contexts"} {
		if n := amfMetric(t, l.cfg, m); n != 0 {
			t.Errorf("%s = %v after the implicit deregistration, want 0", m, n)
		}
	}
	// A downlink packet for the gone UE's old address pages nobody.
	_ = inNetns(node.LabNetns, "ping", "-c", "1", "-W", "1", l.ueAddr.String()).Run()
	for _, g := range l.gnbs {
		if n := g.Pagings.Load(); n != 0 {
			t.Errorf("gNB %d got %d Pagings for a deregistered UE", g.ID(), n)
		}
	}
}
