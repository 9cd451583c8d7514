package smf

import (
	"context"
	"net/netip"
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
)

// The AMF forwards the gNB's setup response and the UE's next 5GSM message
// each on its own, so a UE that asks to release its session at once can
// have the Release Request reach the SMF first (the e2e reuse test saw
// it). The late setup response then finds the N4 session deleted: it is
// taken without touching the UPF, and the release completes.
func TestSetupResponseAfterReleaseRequest(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, _ := s.established(t, subscribed, 3, establishmentRequest(t, 3, 1))
	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}},
		n1Part(gsmMsg(3, 2, nas.MsgTypePDUSessionReleaseRequest))); a.status != 200 {
		t.Fatalf("release request: %d %s", a.status, a.json)
	}
	rsp, err := ngapx.BuildPDUSessionResourceSetupResponseTransfer(ngapx.SetupResponse{
		DL: ngapx.Tunnel{IPv4: netip.MustParseAddr(gnbN3), TEID: 0x77}, QFIs: []uint8{1}})
	if err != nil {
		t.Fatal(err)
	}
	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N2SmInfo: &models.RefToBinaryData{ContentId: "n2"},
		N2SmInfoType: models.N2SmInfoType_PDU_RES_SETUP_RSP}, n2Part(rsp)); a.status/100 != 2 {
		t.Fatalf("late setup response: %d %s, want it taken", a.status, a.json)
	}
	if len(s.n4.modifications()) != 0 {
		t.Fatalf("N4 modifications %+v for a session being released", s.n4.modifications())
	}
	s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}},
		n1Part(gsmMsg(3, 2, nas.MsgTypePDUSessionReleaseComplete)))
	s.core.waitReleased(t)
	s.assertNothingHeld(t)
}

// TS 29.502 5.2.2.4: a context the AMF released itself (ReleaseSMContext,
// e.g. the UE deregistered right after its Release Complete) is not
// notified as released afterwards by the UE-requested release still
// finishing: that notification would reach the AMF late, when the UE may
// already have a new session with the same ID.
func TestNoStatusNotificationAfterAMFRelease(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, _ := s.established(t, subscribed, 4, establishmentRequest(t, 4, 1))
	s.activate(t, ref)
	c, ok := s.nf.ctxs.get(ref[len(smContextsPath)+1:])
	if !ok {
		t.Fatal("no SM context for", ref)
	}
	if a := s.post(t, ref+"/release", models.SmfPduSessionSmContextReleaseData{}); a.status != 204 {
		t.Fatalf("ReleaseSMContext: %d %s", a.status, a.json)
	}
	// What the release's completion runs (releaseAnswered) when it was
	// already under way as the AMF's release arrived.
	s.nf.releaseLocally(context.Background(), c, "release complete")
	if len(s.core.released) != 0 {
		t.Fatalf("status notification %q after the AMF's own release", <-s.core.released)
	}
	s.assertNothingHeld(t)
}
