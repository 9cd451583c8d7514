package amf

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
)

// readCountingPeers counts the reads of the access and mobility
// subscription.
type readCountingPeers struct {
	*fakePeers
	reads *atomic.Int32
}

func (p readCountingPeers) AMData(ctx context.Context, supi string, plmn models.PlmnId) (models.AccessAndMobilitySubscriptionData, error) {
	p.reads.Add(1)
	return p.fakePeers.AMData(ctx, supi, plmn)
}

// Once the UE is authenticated, the subscription is read while security
// mode runs (TS 23.502 4.2.2.2.2 step 14b needs nothing from it): the read
// is under way before the UE answers the Security Mode Command, and is not
// asked again after.
func TestSubscriptionIsReadDuringSecurityMode(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	reads := new(atomic.Int32)
	h.amf.opts.Consumer = readCountingPeers{fakePeers: h.peers, reads: reads}
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
