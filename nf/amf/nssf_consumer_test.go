package amf

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// fakeNSSF answers Nnssf_NSSelection for registration with a fixed allowed
// NSSAI, or fails, and records what it was asked.
type fakeNSSF struct {
	mu      sync.Mutex
	allowed []models.Snssai
	fail    bool
	asked   []models.SliceInfoForRegistration
}

func (f *fakeNSSF) ForRegistration(_ context.Context, _ string, info models.SliceInfoForRegistration, _ models.Tai) (models.AuthorizedNetworkSliceInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, info)
	if f.fail {
		return models.AuthorizedNetworkSliceInfo{}, errors.New("NSSF unreachable")
	}
	var list []models.AllowedSnssai
	for i := range f.allowed {
		list = append(list, models.AllowedSnssai{AllowedSnssai: &f.allowed[i]})
	}
	out := models.AuthorizedNetworkSliceInfo{}
	if len(list) > 0 {
		out.AllowedNssaiList = []models.AllowedNssai{{AllowedSnssaiList: list, AccessType: models.AccessType__3_GPP_ACCESS}}
	}
	return out, nil
}

func allowedInAccept(t *testing.T, u *testUE) []models.Snssai {
	t.Helper()
	a := u.register()
	if a.AllowedNSSAI == nil {
		t.Fatal("Registration Accept without allowed NSSAI")
	}
	l, err := nasx.NSSAIModels(a.AllowedNSSAI.Buffer)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TS 23.502 4.2.2.2.3: the NSSF's allowed NSSAI is the UE's; the AMF asks
// with the requested and the subscribed S-NSSAIs.
func TestRegistrationTakesTheNSSFsAllowedNSSAI(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	nssf := &fakeNSSF{allowed: []models.Snssai{{Sst: 1, Sd: "112233"}}}
	h.amf.opts.Slices = nssf
	ue := h.newUE(g, "0000000201", 1)
	got := allowedInAccept(t, ue)
	if len(got) != 1 || !domain.SameModelSNSSAI(got[0], models.Snssai{Sst: 1, Sd: "112233"}) {
		t.Fatalf("allowed NSSAI %v, want the NSSF's 1/112233", got)
	}
	if len(nssf.asked) != 1 || len(nssf.asked[0].RequestedNssai) != 2 || len(nssf.asked[0].SubscribedNssai) != 1 ||
		!nssf.asked[0].SubscribedNssai[0].DefaultIndication {
		t.Fatalf("NSSF asked %+v: want the 2 requested and the 1 default subscribed S-NSSAI", nssf.asked)
	}
}

// An unreachable NSSF costs no registration: the AMF computes requested ∩
// subscribed ∩ served itself.
func TestRegistrationFallsBackWhenTheNSSFIsUnreachable(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	h.amf.opts.Slices = &fakeNSSF{fail: true}
	got := allowedInAccept(t, h.newUE(g, "0000000202", 1))
	if len(got) != 1 || !domain.SameModelSNSSAI(got[0], slice1) {
		t.Fatalf("allowed NSSAI %v, want the local 1/010203", got)
	}
}

// The NSSF allowing nothing is #62 (TS 24.501 5.5.1.2.5).
func TestRegistrationRejectedWhenTheNSSFAllowsNothing(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	h.amf.opts.Slices = &fakeNSSF{}
	ue := h.newUE(g, "0000000203", 1)
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(1, ue.suciIdentity())))
	ue.up(ue.authResponse(ue.dl("DownlinkNASTransport")))
	ue.up(ue.acceptSMC(g.expect("DownlinkNASTransport").NASPDU, nil))
	m := ue.dl("DownlinkNASTransport")
	if m.RegistrationReject == nil || m.RegistrationReject.Cause5GMM.GetCauseValue() != nasx.CauseNoNetworkSlicesAvailable {
		t.Fatalf("message type %d, want Registration Reject #62", m.GmmHeader.GetMessageType())
	}
}
