package amf

import (
	"fmt"
	"testing"

	"github.com/free5gc/nas"

	"github.com/l25gc/l25gc/protocol/nasx"
)

// goIdle releases the UE's N2 connection the way a gNB does on inactivity;
// the UE's 5GMM context stays, parked by its 5G-TMSI.
func (u *testUE) goIdle(idle int) {
	u.t.Helper()
	u.g.send(releaseRequest(u.t, u.amfID, u.ranID))
	u.g.expect("UEContextReleaseCommand")
	u.g.send(releaseComplete(u.t, u.amfID, u.ranID))
	u.g.h.waitIdle(idle)
}

// TS 24.501 4.4.4.3: a Deregistration Request that fails the integrity check
// of the UE's context is not processed. Anyone who knows an idle UE's
// 5G-GUTI could otherwise deregister it with an unprotected message.
func TestDeregistrationRequestFailingIntegrityDoesNotDeregister(t *testing.T) {
	for i, c := range []struct {
		name      string
		switchOff bool
		forgedMAC bool
	}{
		{"unprotected normal", false, false},
		{"unprotected switch-off", true, false},
		{"forged MAC", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, g := newSetUpHarness(t, nil)
			ue := h.newUE(g, fmt.Sprintf("%010d", 40+i), 1)
			ue.register()
			ue.goIdle(1)

			gb, _ := nasx.EncodeGUTI(*ue.guti)
			dereg := must2(t)(nasx.BuildDeregistrationRequest(c.switchOff, ue.lastKSI, gb))
			if c.forgedMAC {
				dereg = append([]byte{0x7e, nas.SecurityHeaderTypeIntegrityProtected, 0xde, 0xad, 0xbe, 0xef, 0x05}, dereg...)
			}
			const attackerRAN = 9
			g.send(initialUEMessage(t, attackerRAN, dereg))
			s := g.expect("UEContextReleaseCommand") // and no Deregistration Accept before it
			g.send(releaseComplete(t, s.AMFUEID, attackerRAN))
			h.waitIdle(1)
			if len(h.peers.purge) != 0 || len(h.peers.policies) != 1 {
				t.Fatalf("UDM purges %v, PCF associations %v: the UE was deregistered", h.peers.purge, h.peers.policies)
			}
			h.wantMetric("l25gc_amf_registered_ues", nil, 1, "registered UEs")

			// The UE's own context survived: a GUTI registration needs no authentication.
			ue.returnWithGUTI(2)
		})
	}
}

// An idle UE's genuine Deregistration Request, protected under its context,
// is processed: accepted, and the UDM and PCF state is undone.
func TestProtectedDeregistrationOfIdleUE(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000049", 1)
	ue.register()
	ue.goIdle(1)
	ue.ranID = 2
	gb, _ := nasx.EncodeGUTI(*ue.guti)
	// An initial NAS message is integrity protected, not ciphered (TS 24.501 4.4.6).
	dereg := ue.protect(must2(t)(nasx.BuildDeregistrationRequest(false, ue.lastKSI, gb)), nas.SecurityHeaderTypeIntegrityProtected)
	g.send(initialUEMessage(t, ue.ranID, dereg))
	if m := ue.dl("DownlinkNASTransport"); m.DeregistrationAcceptUEOriginatingDeregistration == nil {
		t.Fatalf("message type %d, want Deregistration Accept", m.GmmHeader.GetMessageType())
	}
	g.expect("UEContextReleaseCommand")
	if len(h.peers.purge) != 1 || len(h.peers.policies) != 0 {
		t.Fatalf("UDM purges %v, PCF associations %v", h.peers.purge, h.peers.policies)
	}
}
