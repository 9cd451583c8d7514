package amf

// A PDU session ID used again while the network still ends the session
// that had it (TS 24.501 6.4.1.2; TS 23.502 4.3.2.2.1 step 3): whatever
// arrives late about the old SM context (the SMF's status notification,
// TS 29.502 5.2.2.5; its answer to a forwarded message) must leave the
// new session alone. The QoS e2e test lost a new session 1 this way.

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/sbi"
)

const releasedNote = `{"statusInfo":{"resourceStatus":"RELEASED"}}`

// statusPath is the path of the smContextStatusUri the AMF gave the SMF.
func statusPath(t *testing.T, c smfCall) string {
	t.Helper()
	u, err := url.Parse(c.create.SmContextStatusUri)
	if err != nil || u.Path == "" {
		t.Fatalf("smContextStatusUri %q: %v", c.create.SmContextStatusUri, err)
	}
	return u.Path
}

// transferStatus is the status of the SMF's N1N2MessageTransfer for id.
func transferStatus(h *harness, supi string, id uint8) int {
	req, parts := transferRequest(int32(id), models.AmfCommunicationNgapIeType_PDU_RES_MOD_REQ, []byte{0x2e, id, 0, 0xcb}, []byte{0x77})
	w, _ := h.n1n2(supi, req, parts...)
	return w.Code
}

// The UE asks for PDU session 1 again while its old one is still being
// released: the old context's late status notification is answered but
// ends nothing; the new context's own notification ends the new session.
func TestLateStatusOfReplacedContextKeepsTheNewSession(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	smf, _ := h.withSMF()
	ue := h.newUE(g, "0000000901", 1)
	ue.register()
	ue.requestSession(1, &slice1, "internet")
	old := smf.expect("create")
	establish(t, h, g, smf, ue, 1)

	ue.requestSession(1, &slice1, "internet")
	released, created := smf.expect2("release", "create")
	if released.ref != "1" {
		t.Fatalf("released SM context %s, want the old one (1)", released.ref)
	}
	oldPath, newPath := statusPath(t, old), statusPath(t, created)
	if oldPath == newPath {
		t.Fatalf("both SM contexts of session 1 have status URI %s: a notification cannot tell them apart", oldPath)
	}
	answerSetup(t, h, g, ue, 1)
	smf.expect("modify") // the gNB's setup response

	if code, p := h.callback(oldPath, releasedNote); code != http.StatusNoContent {
		t.Fatalf("late notification of the old context: %d %+v", code, p)
	}
	if code := transferStatus(h, ue.supi, 1); code != http.StatusOK {
		t.Fatalf("N1N2MessageTransfer for the new session 1 after the old one's notification: %d, want 200", code)
	}
	g.readSessionRequest("PDUSessionResourceModifyRequest")

	if code, p := h.callback(newPath, releasedNote); code != http.StatusNoContent {
		t.Fatalf("notification of the new context: %d %+v", code, p)
	}
	if code := transferStatus(h, ue.supi, 1); code != http.StatusNotFound {
		t.Fatalf("N1N2MessageTransfer after the new context's release: %d, want 404", code)
	}
}

// The UE releases session 1, deregisters and registers again at once with
// a new session 1 (the QoS e2e sequence): the old context's notification,
// still on its way, ends nothing.
func TestLateStatusAfterReregistrationKeepsTheNewSession(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	smf, _ := h.withSMF()
	ue := h.newUE(g, "0000000902", 1)
	ue.register()
	ue.requestSession(1, &slice1, "internet")
	old := smf.expect("create")
	establish(t, h, g, smf, ue, 1)

	ue.up(ue.deregistrationRequest(false))
	ue.dl("DownlinkNASTransport") // Deregistration Accept
	g.expect("UEContextReleaseCommand")
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	if c := smf.expect("release"); c.ref != "1" {
		t.Fatalf("deregistration released SM context %s, want 1", c.ref)
	}

	ue.ranID = 2
	ue.register()
	ue.requestSession(1, &slice1, "internet")
	smf.expect("create")
	answerSetup(t, h, g, ue, 1)
	smf.expect("modify")

	if code, p := h.callback(statusPath(t, old), releasedNote); code != http.StatusNoContent {
		t.Fatalf("late notification of the old context: %d %+v", code, p)
	}
	if code := transferStatus(h, ue.supi, 1); code != http.StatusOK {
		t.Fatalf("N1N2MessageTransfer for the new session 1: %d, want 200 (the old context's notification ended it)", code)
	}
}

// The UE's Release Complete is forwarded to the old context, and the UE
// at once asks for the same ID again: the AMF releases the old context,
// so the SMF answers the Release Complete 404. That answer is about the
// replaced context: the new session stays, and the UE gets no #90 for a
// message about a session it no longer has.
func TestLateAnswerForReplacedContextKeepsTheNewSession(t *testing.T) {
	var out lockedBuffer
	h := newHarnessLogging(t, &out)
	g := h.connect()
	g.setup()
	smf, sessions := h.withSMF()
	ue := h.newUE(g, "0000000903", 1)
	ue.register()
	ue.requestSession(1, &slice1, "internet")
	smf.expect("create")
	establish(t, h, g, smf, ue, 1)

	// The SMF's answer to the Release Complete reaches the AMF only once
	// the UE has asked for session 1 again.
	held := &heldN1Update{SessionConsumer: sessions, gate: make(chan struct{})}
	h.amf.opts.Sessions = held
	smf.set("modify", smfReply{status: http.StatusNotFound, body: models.ProblemDetails{Status: 404, Cause: sbi.CauseContextNotFound}})
	ue.up(ue.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: []byte{0x2e, 1, 2, 0xd4}, PDUSessionID: 1}))
	smf.expect("modify")
	ue.requestSession(1, &slice1, "internet")
	smf.expect2("release", "create")
	smf.set("modify", smfReply{status: 204})
	close(held.gate)
	h.eventually("the Release Complete's answer handled", func() bool {
		return strings.Contains(out.String(), "replaced SM context") || strings.Contains(out.String(), "5GMM failure")
	})
	if strings.Contains(out.String(), "5GMM failure") {
		t.Fatalf("the old context's 404 was taken for the new session's:\n%s", out.String())
	}
	answerSetup(t, h, g, ue, 1) // the new session's accept, with nothing before it
	smf.expect("modify")
	if code := transferStatus(h, ue.supi, 1); code != http.StatusOK {
		t.Fatalf("N1N2MessageTransfer for the new session 1 after the old context's 404: %d, want 200", code)
	}
}

// heldN1Update holds the answer to the first forwarded 5GSM message until
// gate closes (the SMF has answered; the answer is on its way back).
type heldN1Update struct {
	SessionConsumer
	gate chan struct{}
	once sync.Once
}

func (s *heldN1Update) UpdateSMContext(ctx context.Context, uri string, d models.SmfPduSessionSmContextUpdateData, n1, n2 []byte) (SMAnswer, error) {
	a, err := s.SessionConsumer.UpdateSMContext(ctx, uri, d, n1, n2)
	if n1 != nil {
		s.once.Do(func() { <-s.gate })
	}
	return a, err
}

// newHarnessLogging is newHarness with the AMF's log written to out.
func newHarnessLogging(t *testing.T, out io.Writer) *harness {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	reg := prometheus.NewRegistry()
	env := &nf.Env{Config: cfg, Log: slog.New(slog.NewTextHandler(out, nil)), Registry: reg}
	peers := newFakePeers()
	a, err := NewWithOptions(env, Options{Consumer: peers, Limit: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	return &harness{t: t, amf: a, peers: peers, reg: reg, cfg: cfg}
}

// The UE's old N2 connection is still being released (UE Context Release
// Command sent, no Complete yet) when it registers afresh with SUCI on a
// new one and asks for session 1 (the QoS e2e sequence: the simulator
// ended and a new one started at once). The SMF's transfer reaches the
// new context, and when the old connection ends its context is not kept
// as a second one of the SUPI: its SM context is released, and the UDM
// registration, now the new context's, is not purged.
func TestNewRegistrationSupersedesAContextBeingReleased(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	smf, _ := h.withSMF()
	old := h.newUE(g, "0000000904", 1)
	old.register()
	old.requestSession(1, &slice1, "internet")
	smf.expect("create")
	establish(t, h, g, smf, old, 1)
	g.send(releaseRequest(t, old.amfID, old.ranID))
	g.expect("UEContextReleaseCommand")

	ue := h.newUE(g, "0000000904", 2)
	ue.register()
	if ue.amfID == old.amfID {
		t.Fatal("the new registration got the old connection's AMF UE NGAP ID")
	}
	ue.requestSession(1, &slice1, "internet")
	smf.expect("create")
	establish(t, h, g, smf, ue, 1) // the SMF's transfer reaches the new context

	g.send(releaseComplete(t, old.amfID, old.ranID))
	if c := smf.expect("release"); c.ref != "1" {
		t.Fatalf("released SM context %s, want the old connection's (1)", c.ref)
	}
	h.waitIdle(0)
	if h.peers.purged(ue.supi) {
		t.Fatal("the UDM registration was purged: it is the new context's")
	}
	if code := transferStatus(h, ue.supi, 1); code != http.StatusOK {
		t.Fatalf("N1N2MessageTransfer for the new session 1 after the old connection ended: %d, want 200", code)
	}
}

// The tag of a status notification comes from the SMF (the URI's last
// segment): whatever it is, only the context's own tag (or none, an URI
// from before tags) ends the session, and nothing else is touched.
func FuzzStatusTag(f *testing.F) {
	f.Add("0123456789abcdef", uint8(1))
	f.Add("", uint8(1))
	f.Add("0123456789abcdeg", uint8(2))
	f.Add("../../1", uint8(15))
	f.Fuzz(func(t *testing.T, tag string, id uint8) {
		var p pduState
		own := &PDUSession{ID: 1, ContextURI: "http://smf/sm-contexts/1", StatusTag: "0123456789abcdef"}
		other := &PDUSession{ID: 2, ContextURI: "http://smf/sm-contexts/2", StatusTag: newStatusTag()}
		p.put(own)
		p.put(other)
		ended := p.endedByStatus(id, tag)
		want := id == 1 && (tag == "" || tag == own.StatusTag) || id == 2 && (tag == "" || tag == other.StatusTag)
		if ended != want {
			t.Fatalf("tag %q id %d: ended %v, want %v", tag, id, ended, want)
		}
		if n := len(p.sessions); ended && n != 1 || !ended && n != 2 {
			t.Fatalf("tag %q id %d: %d sessions left", tag, id, n)
		}
	})
}
