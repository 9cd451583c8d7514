package amf

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// callback sends one notification to the AMF's SBI handler.
func (h *harness) callback(path, body string) (int, models.ProblemDetails) {
	h.t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	h.amf.Handler().ServeHTTP(w, r)
	var p models.ProblemDetails
	if w.Code >= 300 {
		if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
			h.t.Fatalf("%s: %d with Content-Type %q, want a ProblemDetails", path, w.Code, ct)
		}
		_ = json.Unmarshal(w.Body.Bytes(), &p)
	}
	return w.Code, p
}

// The UDM's Nudm_UECM deregistration notification (TS 29.503 5.3.2.3.2,
// TS 23.502 4.2.2.3.3) ends the UE's context here: an idle UE is forgotten,
// a connected one released; the AM policy association goes, the UDM, which
// asked, is not called back.
func TestUDMDeregistrationNotification(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	idle := h.newUE(g, "0000000060", 1)
	idle.register()
	idle.goIdle(1)
	connected := h.newUE(g, "0000000061", 2)
	connected.register()

	body := `{"deregReason":"SUBSCRIPTION_WITHDRAWN","accessType":"3GPP_ACCESS"}`
	if code, p := h.callback("/namf-callback/v1/"+idle.supi+"/dereg-notify", body); code != http.StatusNoContent {
		t.Fatalf("idle UE: %d %+v, want 204", code, p)
	}
	if code, p := h.callback("/namf-callback/v1/"+connected.supi+"/dereg-notify", body); code != http.StatusNoContent {
		t.Fatalf("connected UE: %d %+v, want 204", code, p)
	}
	s := g.expect("UEContextReleaseCommand")
	if s.AMFUEID != connected.amfID || s.Cause == nil || s.Cause.Nas == nil || s.Cause.Nas.Value != ngapType.CauseNasPresentDeregister {
		t.Fatalf("release of UE %d cause %+v, want UE %d, nas deregister", s.AMFUEID, s.Cause, connected.amfID)
	}
	g.send(releaseComplete(t, connected.amfID, connected.ranID))
	h.eventually("both UEs forgotten", func() bool {
		_, policies := h.sbiState()
		return policies == 0 && h.metric("l25gc_amf_registered_ues", nil) == 0
	})
	h.waitIdle(0)
	if purges, _ := h.sbiState(); purges != 0 {
		t.Fatalf("%d UECM purges: the UDM itself deregistered the AMF", purges)
	}
	if code, p := h.callback("/namf-callback/v1/"+idle.supi+"/dereg-notify", body); code != http.StatusNotFound || p.Cause != "CONTEXT_NOT_FOUND" {
		t.Fatalf("forgotten UE: %d %+v, want 404 CONTEXT_NOT_FOUND", code, p)
	}
}

func TestCallbacksAnswerNotificationsAndBadBodies(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000062", 1)
	ue.register()
	policy := "/namf-callback/v1/am-policy/" + ue.supi
	cases := []struct {
		name, path, body string
		status           int
		cause            string
	}{
		{"PCF policy update", policy + "/update", `{"resourceUri":"http://pcf/npcf-am-policy-control/v1/policies/01","triggers":["LOC_CH"]}`, 204, ""},
		{"UDM data change", "/namf-callback/v1/" + ue.supi + "/sdm-notify", `{"notifyItems":[{"resourceId":"am-data","changes":[]}]}`, 204, ""},
		{"SMF-only reason", "/namf-callback/v1/" + ue.supi + "/dereg-notify", `{"deregReason":"SMF_CONTEXT_TRANSFERRED"}`, 204, ""},
		{"not JSON", policy + "/update", `{"resourceUri":`, 400, "INVALID_MSG_FORMAT"},
		{"no resourceUri", policy + "/update", `{}`, 400, "MANDATORY_IE_MISSING"},
		{"no deregReason", "/namf-callback/v1/" + ue.supi + "/dereg-notify", `{"accessType":"3GPP_ACCESS"}`, 400, "MANDATORY_IE_MISSING"},
		{"no notifyItems", "/namf-callback/v1/" + ue.supi + "/sdm-notify", `{}`, 400, "MANDATORY_IE_MISSING"},
		{"unknown UE", "/namf-callback/v1/am-policy/imsi-208930000009999/update", `{"resourceUri":"http://pcf/x"}`, 404, "CONTEXT_NOT_FOUND"},
	}
	for _, c := range cases {
		code, p := h.callback(c.path, c.body)
		if code != c.status || p.Cause != c.cause {
			t.Fatalf("%s: %d %q, want %d %q", c.name, code, p.Cause, c.status, c.cause)
		}
	}
	// None of it touched the UE.
	if h.metric("l25gc_amf_registered_ues", nil) != 1 {
		t.Fatal("a notification deregistered the UE")
	}
}

// TS 29.507 4.2.4.3: the PCF asks to terminate the AM policy association;
// the AMF answers 204 and deletes it (Npcf_AMPolicyControl_Delete), once.
func TestPCFTerminationDeletesTheAssociation(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000063", 1)
	ue.register()
	body := `{"resourceUri":"http://pcf/npcf-am-policy-control/v1/policies/01","cause":"UNSPECIFIED"}`
	if code, p := h.callback("/namf-callback/v1/am-policy/"+ue.supi+"/terminate", body); code != http.StatusNoContent {
		t.Fatalf("%d %+v, want 204", code, p)
	}
	h.eventually("AM policy association deleted", func() bool { _, policies := h.sbiState(); return policies == 0 })
	ue.up(ue.deregistrationRequest(false))
	ue.dl("DownlinkNASTransport")
	g.expect("UEContextReleaseCommand")
	if purges, policies := h.sbiState(); purges != 1 || policies != 0 {
		t.Fatalf("UDM purges %d, PCF associations %d after deregistration", purges, policies)
	}
}

// stalledPeer holds every call of one operation while armed until release
// is closed, deaf to the AMF's deadline: a peer that hangs.
type stalledPeer struct {
	*fakePeers
	op      string // "Authenticate" or "RegisterUECM"
	armed   *atomic.Bool
	held    *atomic.Int32 // calls held now
	entered chan struct{}
	release chan struct{}
}

func newStalledPeer(t *testing.T, h *harness, op string) (p stalledPeer, unstall func()) {
	p = stalledPeer{h.peers, op, new(atomic.Bool), new(atomic.Int32), make(chan struct{}, 1), make(chan struct{})}
	h.amf.opts.Consumer = p
	unstall = sync.OnceFunc(func() { close(p.release) })
	t.Cleanup(unstall) // before the AMF stops, even when the test fails
	return p, unstall
}

func (p stalledPeer) hold(op string) {
	if p.op == op && p.armed.Load() {
		p.held.Add(1)
		p.entered <- struct{}{}
		<-p.release
		p.held.Add(-1)
	}
}

// waitEntered waits until the AMF's call reached the stalled peer.
func (p stalledPeer) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-p.entered:
	case <-time.After(10 * time.Second):
		t.Fatalf("the AMF never called %s", p.op)
	}
}

func (p stalledPeer) Authenticate(ctx context.Context, id, sn string, r *models.ResynchronizationInfo) (AuthVector, error) {
	p.hold("Authenticate")
	return p.fakePeers.Authenticate(ctx, id, sn, r)
}

func (p stalledPeer) RegisterUECM(ctx context.Context, supi string, reg models.Amf3GppAccessRegistration) error {
	p.hold("RegisterUECM")
	return p.fakePeers.RegisterUECM(ctx, supi, reg)
}

// Issue 8 item 7: the UDM's deregistration notification (TS 23.502
// 4.2.2.3.3) for a UE whose AUSF call hangs does not queue behind that call:
// the UE is released while the AUSF still holds it, and the AUSF's late
// answer is dropped. The bound is generous (ten times the 100 ms)
// and meaningful: the AUSF is released only after, so a notification queued
// behind its call would never be handled in time.
func TestDeregistrationNotificationDoesNotWaitForAStalledAUSF(t *testing.T) {
	const bound = time.Second
	h := newHarness(t, nil)
	stall, unstall := newStalledPeer(t, h, "Authenticate")
	g := h.connect()
	g.setup()
	ue := h.newUE(g, "0000000064", 1)
	ue.register()

	// The registered UE registers again with its SUCI (TS 24.501 5.5.1.2.8
	// d)): the AMF asks the AUSF, which hangs.
	stall.armed.Store(true)
	ue.up(ue.protect(ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity()),
		nas.SecurityHeaderTypeIntegrityProtectedAndCiphered))
	stall.waitEntered(t)

	body := `{"deregReason":"SUBSCRIPTION_WITHDRAWN","accessType":"3GPP_ACCESS"}`
	if code, p := h.callback("/namf-callback/v1/"+ue.supi+"/dereg-notify", body); code != http.StatusNoContent {
		t.Fatalf("notification: %d %+v, want 204", code, p)
	}
	s, _ := g.recvWithin(bound)
	if s.Name != "UEContextReleaseCommand" || s.AMFUEID != ue.amfID || s.Cause == nil || s.Cause.Nas == nil ||
		s.Cause.Nas.Value != ngapType.CauseNasPresentDeregister {
		t.Fatalf("AMF sent %s for UE %d cause %s, want UEContextReleaseCommand for %d, nas deregister",
			s.Name, s.AMFUEID, ngapx.CauseString(s.Cause), ue.amfID)
	}
	if held := stall.held.Load(); held != 1 {
		t.Fatalf("%d AUSF calls held when the UE was released, want the stalled one", held)
	}
	h.wantMetric("l25gc_amf_registered_ues", nil, 0, "registered UEs after the UDM deregistered the UE")

	// The AUSF answers late: the UE is gone, nothing more reaches the gNB.
	unstall()
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	h.eventually("UE forgotten and the late answer handled", func() bool {
		return h.amf.ues.get(ue.amfID) == nil && stall.held.Load() == 0 &&
			h.amf.disp.QueueLen() == 0 && h.amf.disp.InFlight() == 0
	})
	select {
	case m := <-g.conn.out:
		t.Fatalf("AMF sent %x after the UE was released", m.b)
	default:
	}
}

// An answer the UE no longer waits for is undone at the peer: the UDM
// registration that completes after the gNB released the UE is purged
// (TS 29.503 5.3.2.4.2), so the UDM does not keep a dead AMF registered.
func TestLateUDMRegistrationIsPurged(t *testing.T) {
	h := newHarness(t, nil)
	stall, unstall := newStalledPeer(t, h, "RegisterUECM")
	g := h.connect()
	g.setup()
	ue := h.newUE(g, "0000000065", 1)
	stall.armed.Store(true)
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
	ue.up(ue.authResponse(ue.dl("DownlinkNASTransport")))
	ue.up(ue.acceptSMC(g.expect("DownlinkNASTransport").NASPDU, nil))
	stall.waitEntered(t)

	g.send(releaseRequest(t, ue.amfID, ue.ranID))
	g.expect("UEContextReleaseCommand")
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	h.eventually("UE forgotten", func() bool { return h.amf.ues.get(ue.amfID) == nil })
	if purges, _ := h.sbiState(); purges != 0 {
		t.Fatalf("%d UECM purges before the UDM registered the UE", purges)
	}
	unstall()
	h.eventually("the late UECM registration purged", func() bool { purges, _ := h.sbiState(); return purges == 1 })
	h.wantMetric("l25gc_amf_registered_ues", nil, 0, "registered UEs")
}
