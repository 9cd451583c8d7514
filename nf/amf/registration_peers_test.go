package amf

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/gopool"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// stepPeers makes chosen calls of TS 23.502 4.2.2.2.2 steps 14-16 fail and
// counts the SDM subscriptions and the SDM Gets of am-data.
type stepPeers struct {
	*fakePeers
	uecm, amData, policy error
	subscribed, amReads  *atomic.Int32
}

func (p stepPeers) RegisterUECM(ctx context.Context, supi string, r models.Amf3GppAccessRegistration) error {
	if p.uecm != nil {
		return p.uecm
	}
	return p.fakePeers.RegisterUECM(ctx, supi, r)
}

func (p stepPeers) AMData(ctx context.Context, supi string, plmn models.PlmnId) (models.AccessAndMobilitySubscriptionData, error) {
	if p.amReads != nil {
		p.amReads.Add(1)
	}
	if p.amData != nil {
		return models.AccessAndMobilitySubscriptionData{}, p.amData
	}
	return p.fakePeers.AMData(ctx, supi, plmn)
}

func (p stepPeers) SubscribeSDM(ctx context.Context, supi string, s models.SdmSubscription) error {
	p.subscribed.Add(1)
	return p.fakePeers.SubscribeSDM(ctx, supi, s)
}

func (p stepPeers) CreateAMPolicy(ctx context.Context, r models.PcfAmPolicyControlPolicyAssociationRequest) (string, error) {
	if p.policy != nil {
		return "", p.policy
	}
	return p.fakePeers.CreateAMPolicy(ctx, r)
}

// registerPastSecurityMode runs a SUCI registration up to the answer after
// Security Mode Complete.
func (u *testUE) registerPastSecurityMode() *nasMessage.RegistrationReject {
	u.t.Helper()
	u.g.send(initialUEMessage(u.t, u.ranID, u.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, u.suciIdentity())))
	u.up(u.authResponse(u.dl("DownlinkNASTransport")))
	u.up(u.acceptSMC(u.g.expect("DownlinkNASTransport").NASPDU, nil))
	m := u.dl("DownlinkNASTransport")
	if m.RegistrationReject == nil {
		u.t.Fatalf("message type %d, want Registration Reject", m.GmmHeader.GetMessageType())
	}
	u.g.expect("UEContextReleaseCommand")
	return m.RegistrationReject
}

// The UDM, NSSF and PCF are asked at once after security mode
// (registration_peers.go), but a failing step still decides the answer as
// when they ran in turn: a failed UECM registration or SDM Get rejects with
// its cause, and what the other branches created meanwhile (the UDM
// registration, the AM policy association) is undone; step 14c follows
// only a successful SDM Get.
func TestFailedStepOfParallelRegistrationCallsRejectsAndUndoes(t *testing.T) {
	cases := []struct {
		name                 string
		uecm, amData         error
		wantCause            uint8 // 0: the configured unknown-subscriber cause
		wantT3346            bool
		wantPurges           int
		wantSDMSubscriptions int32
	}{
		{name: "UECM registration finds no subscriber", uecm: problem(404, "USER_NOT_FOUND"),
			wantSDMSubscriptions: 1},
		{name: "UECM registration unreachable", uecm: errors.New("dial tcp: connection refused"),
			wantCause: nasx.CauseCongestion, wantT3346: true, wantSDMSubscriptions: 1},
		{name: "SDM Get fails", amData: problem(500, "SYSTEM_FAILURE"),
			wantCause: nasx.CauseCongestion, wantT3346: true, wantPurges: 1},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, g := newSetUpHarness(t, nil)
			subscribed := new(atomic.Int32)
			h.amf.opts.Consumer = stepPeers{fakePeers: h.peers, uecm: c.uecm, amData: c.amData, subscribed: subscribed}
			ue := h.newUE(g, "00000002"+string(rune('0'+i))+"0", 1)
			rej := ue.registerPastSecurityMode()
			want := c.wantCause
			if want == 0 {
				want = uint8(h.cfg.AMF.NAS.UnknownSubscriberCause)
			}
			if got := rej.Cause5GMM.GetCauseValue(); got != want {
				t.Fatalf("Registration Reject #%d, want #%d", got, want)
			}
			if (rej.T3346Value != nil) != c.wantT3346 {
				t.Fatalf("T3346 value present %v, want %v", rej.T3346Value != nil, c.wantT3346)
			}
			h.wantSBIState(c.wantPurges, 0, 0) // the AM policy created at the same time is deleted
			if got := subscribed.Load(); got != c.wantSDMSubscriptions {
				t.Fatalf("SDM subscriptions %d, want %d", got, c.wantSDMSubscriptions)
			}
		})
	}
}

// A PCF that cannot create the AM policy association does not stop the
// registration (TS 23.502 4.16.1.2), also when it is asked beside the UDM.
func TestFailedAMPolicyInParallelStillRegisters(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	h.amf.opts.Consumer = stepPeers{fakePeers: h.peers, policy: problem(503, "SYSTEM_FAILURE"), subscribed: new(atomic.Int32)}
	ue := h.newUE(g, "0000000230", 1)
	ue.register()
	h.wantSBIState(0, 0, 1)
}

// barrierPeers holds each of the UECM registration, the SDM Get and the AM
// policy creation until all three have been asked: they complete only when
// the AMF has them in flight at once.
type barrierPeers struct {
	*fakePeers
	arrived *sync.WaitGroup
}

func (p barrierPeers) await(ctx context.Context) error {
	p.arrived.Done()
	all := make(chan struct{})
	go func() { p.arrived.Wait(); close(all) }()
	select {
	case <-all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p barrierPeers) RegisterUECM(ctx context.Context, supi string, r models.Amf3GppAccessRegistration) error {
	if err := p.await(ctx); err != nil {
		return err
	}
	return p.fakePeers.RegisterUECM(ctx, supi, r)
}

func (p barrierPeers) AMData(ctx context.Context, supi string, plmn models.PlmnId) (models.AccessAndMobilitySubscriptionData, error) {
	if err := p.await(ctx); err != nil {
		return models.AccessAndMobilitySubscriptionData{}, err
	}
	return p.fakePeers.AMData(ctx, supi, plmn)
}

func (p barrierPeers) CreateAMPolicy(ctx context.Context, r models.PcfAmPolicyControlPolicyAssociationRequest) (string, error) {
	if err := p.await(ctx); err != nil {
		return "", err
	}
	return p.fakePeers.CreateAMPolicy(ctx, r)
}

// Steps 14a, 14b and 16 are asked at once: asked in turn, the first would
// wait for the others until the call's timeout and the UE be rejected.
func TestRegistrationAsksUDMAndPCFAtOnce(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	arrived := new(sync.WaitGroup)
	arrived.Add(3)
	h.amf.opts.Consumer = barrierPeers{fakePeers: h.peers, arrived: arrived}
	ue := h.newUE(g, "0000000240", 1)
	ue.register()
	h.wantSBIState(0, 1, 1)
}

// A panic in one of the calls asked at once is handed back, not let loose
// on a goroutine nothing recovers (which would end the AMF), and the
// other calls still finish.
// The first call runs on the caller's goroutine, the others on their own:
// a panic is contained in either place.
func TestConcurrentlyContainsAPanic(t *testing.T) {
	for _, bug := range []int{0, 1} {
		var finished atomic.Bool
		fns := []func(){func() { finished.Store(true) }, func() { finished.Store(true) }}
		fns[bug] = func() { panic("bug in one call") }
		crash := concurrently(gopool.New(0), fns...)
		if crash == nil || !finished.Load() {
			t.Fatalf("call %d panicking: crash %v, other call finished %v; want the panic back and the other call done", bug, crash, finished.Load())
		}
	}
}

// countingSessions counts the reads of SMF selection subscription data.
type countingSessions struct {
	*testSessions
	reads *atomic.Int32
}

func (s countingSessions) SMFSelectionData(ctx context.Context, supi string, plmn models.PlmnId) (models.SmfSelectionSubscriptionData, error) {
	s.reads.Add(1)
	return s.testSessions.SMFSelectionData(ctx, supi, plmn)
}

// TS 23.502 4.2.2.2.2 step 14b reads the SMF selection subscription data
// at registration; the UE's PDU session establishment then checks its DNN
// against it (4.3.2.2.1 step 2) without asking the UDM again.
func TestSMFSelectionDataReadAtRegistration(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	smf, sess := h.withSMF()
	reads := new(atomic.Int32)
	h.amf.opts.Sessions = countingSessions{testSessions: sess, reads: reads}
	ue := h.newUE(g, "0000000250", 1)
	ue.register()
	if got := reads.Load(); got != 1 {
		t.Fatalf("SMF selection data read %d times during registration, want 1", got)
	}
	ue.requestSession(1, &slice1, "internet")
	if c := smf.expect("create").create; c.Dnn != "internet" {
		t.Fatalf("CreateSMContext for DNN %q, want internet", c.Dnn)
	}
	if got := reads.Load(); got != 1 {
		t.Fatalf("SMF selection data read %d times in all, want 1 (at registration)", got)
	}
}

// Once the UE is authenticated, the subscription is read while security
// mode runs (TS 23.502 4.2.2.2.2 step 14b needs nothing from it): the read
// is under way before the UE answers the Security Mode Command, and is not
// asked again after.
func TestSubscriptionIsReadDuringSecurityMode(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	reads := new(atomic.Int32)
	h.amf.opts.Consumer = stepPeers{fakePeers: h.peers, subscribed: new(atomic.Int32), amReads: reads}
	ue := h.newUE(g, "0000000260", 1)
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
	ue.up(ue.authResponse(ue.dl("DownlinkNASTransport")))
	smc := g.expect("DownlinkNASTransport").NASPDU
	h.eventually("the subscription read before Security Mode Complete", func() bool { return reads.Load() == 1 })
	ue.up(ue.acceptSMC(smc, nil))
	ue.readAccept()
	ue.up(ue.registrationComplete())
	if got := reads.Load(); got != 1 {
		t.Fatalf("access and mobility subscription read %d times, want 1", got)
	}
}

// A registration whose UE rejects the Security Mode Command leaves nothing
// behind from the reads made meanwhile: they change nothing at the UDM,
// and no UECM registration or AM policy follows them.
func TestSecurityModeRejectAfterTheReadsLeavesNothing(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000261", 1)
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
	ue.up(ue.authResponse(ue.dl("DownlinkNASTransport")))
	g.expect("DownlinkNASTransport")
	ue.up(must2(t)(nasx.BuildSecurityModeReject(nasMessage.Cause5GMMUESecurityCapabilitiesMismatch)))
	g.expect("UEContextReleaseCommand")
	h.peers.mu.Lock()
	uecm, policies := len(h.peers.uecm), len(h.peers.policies)
	h.peers.mu.Unlock()
	if uecm != 0 || policies != 0 {
		t.Fatalf("UECM registrations %d, AM policies %d after Security Mode Reject; want none", uecm, policies)
	}
}
