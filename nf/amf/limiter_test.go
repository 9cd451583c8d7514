package amf

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/ratelimit"
	"github.com/l25gc/l25gc/sbi"
)

// settled waits until no procedure is counted or waiting (the ends run on
// the UE's key after the message the test saw), then checks what the
// limiter counted in all.
func (h *harness) settled(started uint64) {
	h.t.Helper()
	h.eventually("E_current and the queue back at 0", func() bool {
		s := h.amf.limiter.State()
		return s.ECurrent == 0 && s.Queue == 0
	})
	if s := h.amf.limiter.State(); s.Started != started {
		h.t.Fatalf("limiter counted %d procedures, want %d", s.Started, started)
	}
	h.wantMetric("l25gc_amf_limiter_ecurrent", nil, 0, "E_current on /metrics")
}

// establish plays the SMF and gNB of one PDU session establishment up to
// the SMF's answer to the setup response.
func establish(t *testing.T, h *harness, g *gnbSide, smf *fakeSMF, ue *testUE, id uint8) {
	t.Helper()
	answerSetup(t, h, g, ue, id)
	if u := smf.expect("modify"); u.update.N2SmInfoType != models.N2SmInfoType_PDU_RES_SETUP_RSP {
		t.Fatalf("update %s", u.update.N2SmInfoType)
	}
}

// answerSetup is the SMF's N1N2MessageTransfer and the gNB's successful
// setup response.
func answerSetup(t *testing.T, h *harness, g *gnbSide, ue *testUE, id uint8) {
	t.Helper()
	req, parts := transferRequest(int32(id), models.AmfCommunicationNgapIeType_PDU_RES_SETUP_REQ, []byte{0x2e, id, 1, 0xc2}, []byte{1})
	if w, p := h.n1n2(ue.supi, req, parts...); w.Code != http.StatusOK {
		t.Fatalf("N1N2MessageTransfer: %d %+v", w.Code, p)
	}
	s, _, _ := g.readSessionRequest("PDUSessionResourceSetupRequest")
	if s.AMFUEID != ue.amfID {
		t.Fatalf("setup request for UE %d, want %d", s.AMFUEID, ue.amfID)
	}
	g.send(setupResponse(t, ue.amfID, ue.ranID, map[int64][]byte{int64(id): {0x01}}, nil))
}

// The paper's experiment under the tightest limit: with fixed:1, 50 UEs
// send PDU Session Establishment Request at once. One establishment runs
// at a time, the other 49 wait at the gate, and every one completes: the
// follow-ups of the running one (the SMF's N1N2MessageTransfer, the gNB's
// setup response, the SMF's answers) never wait behind the gate.
func TestFixedOneFiftyConcurrentEstablishmentsComplete(t *testing.T) {
	const n = 50
	h, g := newSetUpHarness(t, func(c *config.Config) { c.AMF.Limiter.Mode = "fixed:1" })
	smf, _ := h.withSMF()
	bySUPI := map[string]*testUE{}
	var ues []*testUE
	for i := range n {
		ue := h.newUE(g, fmt.Sprintf("00000003%02d", i), int64(i+1))
		ue.register()
		bySUPI[ue.supi] = ue
		ues = append(ues, ue)
	}
	h.settled(n) // the registrations, one at a time
	for _, ue := range ues {
		ue.requestSession(1, &slice1, "internet")
	}
	for i := range n {
		c := smf.expect("create")
		if i == 0 {
			// The first one holds the only slot until its end: the
			// others all end up waiting.
			h.eventually("49 establishments waiting", func() bool { return h.amf.limiter.State().Queue == n-1 })
		}
		if s := h.amf.limiter.State(); s.ECurrent != 1 || s.EMax != 1 {
			t.Fatalf("establishment %d: E_current %d E_max %d, want 1 and 1", i, s.ECurrent, s.EMax)
		}
		ue := bySUPI[c.create.Supi]
		if ue == nil {
			t.Fatalf("create for unknown %q", c.create.Supi)
		}
		establish(t, h, g, smf, ue, 1)
	}
	h.settled(2 * n)
	h.wantMetric("l25gc_amf_limiter_queued_total", nil, n-1, "establishments that waited")
}

// Monitor ticks race with events (-race): an adaptive limiter starting at
// E_max 1, stepped (and ramped) with alternating slow and fast intervals while 20
// establishments run, lets every one complete and leaves nothing counted.
func TestAdaptiveStepsDuringEstablishments(t *testing.T) {
	const n = 20
	h, g := newSetUpHarness(t, func(c *config.Config) {
		c.AMF.Limiter.Initial, c.AMF.Limiter.Min, c.AMF.Limiter.Max = 1, 1, 4
		c.AMF.Limiter.Threshold = time.Millisecond
	})
	smf, _ := h.withSMF()
	bySUPI := map[string]*testUE{}
	for i := range n {
		ue := h.newUE(g, fmt.Sprintf("00000008%02d", i), int64(i+1))
		ue.register()
		bySUPI[ue.supi] = ue
	}
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// One slow interval (2 ms) in four: the EWMA crosses the
			// 1 ms threshold both ways, E_max moves up and down.
			lat := 0.0
			if i%4 == 0 {
				lat = 2e-3
			}
			h.amf.limiter.Step(lat)
			h.amf.limiter.Ramp(lat) // the slow start's look between intervals races too
			time.Sleep(100 * time.Microsecond)
		}
	}()
	for _, ue := range bySUPI {
		ue.requestSession(1, &slice1, "internet")
	}
	// Several establishments may run at once: the SMF's calls interleave.
	peak := 0
	for done := 0; done < n; {
		switch c := smf.next1(); c.op {
		case "create":
			peak = max(peak, h.amf.limiter.State().ECurrent)
			answerSetup(t, h, g, bySUPI[c.create.Supi], 1)
		case "modify":
			done++
		}
	}
	close(stop)
	<-ticked
	h.settled(2 * n)
	if peak < 2 {
		t.Fatalf("E_current peaked at %d: E_max never rose above 1", peak)
	}
}

// A UE's messages keep their order across the gate: a Deregistration
// Request sent right after a waiting PDU Session Establishment Request
// runs after it.
func TestWaitingUEKeepsItsOrder(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) { c.AMF.Limiter.Mode = "fixed:1" })
	smf, _ := h.withSMF()
	a, b := h.newUE(g, "0000000401", 1), h.newUE(g, "0000000402", 2)
	a.register()
	b.register()
	a.requestSession(1, &slice1, "internet")
	smf.expect("create") // a holds the slot
	b.requestSession(1, &slice1, "internet")
	b.up(b.deregistrationRequest(true))
	h.eventually("b's request waiting", func() bool { return h.amf.limiter.State().Queue == 1 })
	establish(t, h, g, smf, a, 1)
	// b's establishment ran first (its create), then its deregistration.
	if c := smf.expect("create"); c.create.Supi != b.supi {
		t.Fatalf("create for %s, want b", c.create.Supi)
	}
	g.expect("UEContextReleaseCommand")
	g.send(releaseComplete(t, b.amfID, b.ranID))
	h.settled(5)
}

// No path leaks a slot: every way a procedure ends brings E_current back
// to 0 (table test; each case counts its procedures).
func TestNoSlotLeaks(t *testing.T) {
	for _, c := range []struct {
		name    string
		edit    func(*config.Config)
		started uint64
		run     func(t *testing.T, h *harness, g *gnbSide)
	}{
		{"registration completes", nil, 1, func(t *testing.T, h *harness, g *gnbSide) {
			h.newUE(g, "0000000501", 1).register()
		}},
		{"registration rejected", nil, 1, func(t *testing.T, h *harness, g *gnbSide) {
			ue := &testUE{t: t, g: g, suci: "suci-0-208-93-0000-0-0-0999999999", ranID: 3, caps: []byte{0xE0, 0xE0}, lastKSI: 7}
			g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
			if m := ue.dl("DownlinkNASTransport"); m.RegistrationReject == nil {
				t.Fatal("want Registration Reject")
			}
			g.expect("UEContextReleaseCommand")
		}},
		{"registration: gNB releases the UE", nil, 1, func(t *testing.T, h *harness, g *gnbSide) {
			ue := h.newUE(g, "0000000502", 1)
			g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
			ue.dl("DownlinkNASTransport")
			g.send(releaseRequest(t, ue.amfID, ue.ranID))
			g.expect("UEContextReleaseCommand")
			g.send(releaseComplete(t, ue.amfID, ue.ranID))
		}},
		{"registration: NG Reset", nil, 1, func(t *testing.T, h *harness, g *gnbSide) {
			ue := h.newUE(g, "0000000503", 1)
			g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
			ue.dl("DownlinkNASTransport")
			g.send(ngReset(t))
			g.expect("NGResetAcknowledge")
		}},
		{"registration: NAS timer gives up", func(c *config.Config) {
			c.AMF.NAS.T3560 = time.Millisecond
			c.AMF.NAS.MaxRetransmissions = 0
		}, 1, func(t *testing.T, h *harness, g *gnbSide) {
			ue := h.newUE(g, "0000000504", 1)
			g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
			ue.dl("DownlinkNASTransport")
			g.expect("UEContextReleaseCommand")
		}},
		{"registration: restarted by a new request", nil, 2, func(t *testing.T, h *harness, g *gnbSide) {
			ue := h.newUE(g, "0000000505", 1)
			g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
			ue.dl("DownlinkNASTransport")
			ue.up(ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity()))
			ue.up(ue.authResponse(ue.dl("DownlinkNASTransport")))
			ue.up(ue.acceptSMC(g.expect("DownlinkNASTransport").NASPDU, nil))
			ue.readAccept()
			ue.up(ue.registrationComplete())
			ue.dl("DownlinkNASTransport")
		}},
		{"registration: the UE's event panics", nil, 1, func(t *testing.T, h *harness, g *gnbSide) {
			ue := h.newUE(g, "0000000506", 1)
			h.amf.opts.Consumer = panicky{h.peers, ue.suci}
			g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
			g.expect("UEContextReleaseCommand")
		}},
		{"deregistration", nil, 2, func(t *testing.T, h *harness, g *gnbSide) {
			ue := h.newUE(g, "0000000507", 1)
			ue.register()
			ue.up(ue.deregistrationRequest(false))
			ue.dl("DownlinkNASTransport")
			g.expect("UEContextReleaseCommand")
			g.send(releaseComplete(t, ue.amfID, ue.ranID))
		}},
		{"deregistration: release never completed", func(c *config.Config) { c.AMF.NGAP.UEReleaseTimeout = time.Millisecond }, 2,
			func(t *testing.T, h *harness, g *gnbSide) {
				ue := h.newUE(g, "0000000508", 1)
				ue.register()
				ue.up(ue.deregistrationRequest(true))
				g.expect("UEContextReleaseCommand")
			}},
		{"PDU session: establishment completes", nil, 2, func(t *testing.T, h *harness, g *gnbSide) {
			smf, _ := h.withSMF()
			ue := h.newUE(g, "0000000509", 1)
			ue.register()
			ue.requestSession(5, &slice1, "internet")
			smf.expect("create")
			establish(t, h, g, smf, ue, 5)
		}},
		{"PDU session: not forwarded", nil, 2, func(t *testing.T, h *harness, g *gnbSide) {
			h.withSMF()
			ue := h.newUE(g, "0000000510", 1)
			ue.register()
			sm := ue.requestSession(4, &models.Snssai{Sst: 9}, "internet")
			ue.sentBack(sm, 4, nasx.CausePayloadNotForwarded)
		}},
		{"PDU session: the SMF fails", nil, 2, func(t *testing.T, h *harness, g *gnbSide) {
			smf, _ := h.withSMF()
			smf.set("create", smfReply{status: 500, body: models.ProblemDetails{Status: 500, Cause: sbi.CauseSystemFailure}})
			ue := h.newUE(g, "0000000511", 1)
			ue.register()
			sm := ue.requestSession(3, &slice1, "internet")
			smf.expect("create")
			ue.sentBack(sm, 3, nasx.CausePayloadNotForwarded)
		}},
		{"PDU session: the gNB fails the setup", nil, 2, func(t *testing.T, h *harness, g *gnbSide) {
			smf, _ := h.withSMF()
			ue := h.newUE(g, "0000000512", 1)
			ue.register()
			ue.requestSession(2, &slice1, "internet")
			smf.expect("create")
			req, parts := transferRequest(2, models.AmfCommunicationNgapIeType_PDU_RES_SETUP_REQ, []byte{0x2e, 2, 1, 0xc2}, []byte{9})
			h.n1n2(ue.supi, req, parts...)
			g.readSessionRequest("PDUSessionResourceSetupRequest")
			g.send(setupResponse(t, ue.amfID, ue.ranID, nil, map[int64][]byte{2: {0x40}}))
			smf.expect("modify")
		}},
		{"PDU session: UE gone mid-establishment", nil, 2, func(t *testing.T, h *harness, g *gnbSide) {
			smf, _ := h.withSMF()
			ue := h.newUE(g, "0000000513", 1)
			ue.register()
			ue.requestSession(2, &slice1, "internet")
			smf.expect("create")
			g.send(releaseRequest(t, ue.amfID, ue.ranID))
			g.expect("UEContextReleaseCommand")
			g.send(releaseComplete(t, ue.amfID, ue.ranID))
		}},
		{"PDU session: UE-requested release ends on the SMF's status", nil, 3, func(t *testing.T, h *harness, g *gnbSide) {
			smf, _ := h.withSMF()
			ue := h.newUE(g, "0000000514", 1)
			ue.register()
			ue.requestSession(6, &slice1, "internet")
			smf.expect("create")
			establish(t, h, g, smf, ue, 6)
			ue.up(ue.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: []byte{0x2e, 6, 2, 0xd1}, PDUSessionID: 6}))
			smf.expect("modify")
			h.eventually("release counted", func() bool { return h.amf.limiter.State().ECurrent == 1 })
			if code, _ := h.callback(smStatusPath(ue.supi, 6), `{"statusInfo":{"resourceStatus":"RELEASED"}}`); code != http.StatusNoContent {
				t.Fatalf("status notify %d", code)
			}
		}},
		{"PDU session: network-initiated modification ends on the UE's complete", nil, 3, func(t *testing.T, h *harness, g *gnbSide) {
			smf, _ := h.withSMF()
			ue := h.newUE(g, "0000000515", 1)
			ue.register()
			ue.requestSession(7, &slice1, "internet")
			smf.expect("create")
			establish(t, h, g, smf, ue, 7)
			h.settled(2)
			req, parts := transferRequest(7, models.AmfCommunicationNgapIeType_PDU_RES_MOD_REQ, []byte{0x2e, 7, 0, 0xcb}, []byte{0x77})
			if w, _ := h.n1n2(ue.supi, req, parts...); w.Code != http.StatusOK {
				t.Fatalf("transfer %d", w.Code)
			}
			g.readSessionRequest("PDUSessionResourceModifyRequest")
			if s := h.amf.limiter.State(); s.ECurrent != 1 {
				t.Fatalf("network-initiated modification not counted: E_current %d", s.ECurrent)
			}
			ue.up(ue.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: []byte{0x2e, 7, 0, 0xcc}, PDUSessionID: 7}))
			smf.expect("modify")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, g := newSetUpHarness(t, c.edit)
			c.run(t, h, g)
			h.settled(c.started)
		})
	}
}

// A procedure whose answer never comes (the gNB never answers the setup
// request) is ended by the limiter after amf.limiter.procedure_timeout.
func TestLostAnswerEndsAtProcedureTimeout(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	clk := &testClock{t: time.Unix(1e6, 0)}
	cfg, _ := h.cfg.AMF.Limiter.Settings()
	h.amf.limiter.Limiter = ratelimit.NewLimiter(cfg, clk.now)
	smf, _ := h.withSMF()
	ue := h.newUE(g, "0000000601", 1)
	ue.register()
	ue.requestSession(1, &slice1, "internet")
	smf.expect("create")
	req, parts := transferRequest(1, models.AmfCommunicationNgapIeType_PDU_RES_SETUP_REQ, []byte{0x2e, 1, 1, 0xc2}, []byte{9})
	h.n1n2(ue.supi, req, parts...)
	g.readSessionRequest("PDUSessionResourceSetupRequest")
	if s := h.amf.limiter.State(); s.ECurrent != 1 {
		t.Fatalf("E_current %d, want the establishment", s.ECurrent)
	}
	clk.advance(h.cfg.AMF.Limiter.ProcedureTimeout + time.Second)
	if d := h.amf.limiter.Step(0); d.Expired != 1 {
		t.Fatalf("expired %d, want 1", d.Expired)
	}
	h.settled(2)
	if s := h.amf.limiter.State(); s.Expired != 1 {
		t.Fatalf("expired count %d, want 1", s.Expired)
	}
	// The UE is no longer busy: its next initiating message meets the gate.
	busy := make(chan bool, 1)
	_ = h.amf.disp.Dispatch(ratelimit.UE(ue.amfID), func() { busy <- h.amf.ues.get(ue.amfID).lim.busy() })
	if <-busy {
		t.Fatal("the UE still counts as busy with an expired procedure")
	}
}

// A full queue drops the initiating message (counted); the UE's next try
// gets in once there is room.
func TestFullQueueDropsAndCounts(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) {
		c.AMF.Limiter.Mode = "fixed:1"
		c.AMF.Limiter.Queue = 1
	})
	smf, _ := h.withSMF()
	a, b, c := h.newUE(g, "0000000701", 1), h.newUE(g, "0000000702", 2), h.newUE(g, "0000000703", 3)
	a.register()
	b.register()
	c.register()
	a.requestSession(1, &slice1, "internet")
	smf.expect("create")
	b.requestSession(1, &slice1, "internet")
	h.eventually("b waiting", func() bool { return h.amf.limiter.State().Queue == 1 })
	c.requestSession(1, &slice1, "internet")
	h.eventually("c dropped", func() bool {
		return h.metric("l25gc_amf_limiter_dropped_total", map[string]string{"procedure": kindPDUEstablishment}) == 1
	})
	establish(t, h, g, smf, a, 1)
	if got := smf.expect("create"); got.create.Supi != b.supi {
		t.Fatalf("create for %s, want b", got.create.Supi)
	}
	establish(t, h, g, smf, b, 1)
	h.settled(5)
	smf.none()
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The classification of uplink NAS (from the UE) and of the SMF's
// transfers never panics, only the three 5GSM requests initiate in UL NAS
// Transport, and a Service Request always does.
func FuzzInitiatingKind(f *testing.F) {
	ul := func(sm []byte) []byte {
		b, _ := nasx.BuildULNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: sm, PDUSessionID: 1})
		return b
	}
	f.Add(ul([]byte{0x2e, 1, 1, 0xc1}))
	f.Add(ul([]byte{0x2e, 1, 1, 0xc9}))
	f.Add(ul([]byte{0x2e, 1, 1, 0xd1}))
	f.Add(ul([]byte{0x2e, 1, 1, 0xcc}))
	f.Add(ul([]byte{0x2e}))
	f.Add([]byte{0x7e, 0x00, 0x41})
	sr, _ := nasx.BuildServiceRequest(nasx.ServiceRequest{ServiceType: nasx.ServiceTypeData, STMSI: nasx.STMSI{TMSI: 1}})
	f.Add(sr)
	f.Fuzz(func(t *testing.T, b []byte) {
		if kind, ok := networkSessionKind(transfer{id: 1, n1: b}); ok && kind != kindPDUModification && kind != kindPDURelease {
			t.Fatalf("transfer kind %q", kind)
		}
		m, err := nasx.Decode(b)
		if err != nil {
			return
		}
		ev, ok := eventOf(m.GmmHeader.GetMessageType())
		if !ok {
			return
		}
		kind, ok := initiatingKind(ev, m)
		if ev == EvServiceRequest && (!ok || kind != kindServiceRequest) {
			t.Fatalf("Service Request classified %q, %v", kind, ok)
		}
		if ok && ev == EvULNASTransport {
			sm := m.ULNASTransport.GetPayloadContainerContents()
			want := map[uint8]string{0xc1: kindPDUEstablishment, 0xc9: kindPDUModification, 0xd1: kindPDURelease}[sm[3]]
			if kind != want {
				t.Fatalf("5GSM type %#x classified %q", sm[3], kind)
			}
		}
	})
}

// An initial Registration Request the full queue turns away gets
// Registration Reject #22 with T3346 and a released connection, rather than
// waiting for the UE's T3510.
func TestFullQueueRejectsInitialRegistrationWithBackOff(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) {
		c.AMF.Limiter.Mode = "fixed:1"
		c.AMF.Limiter.Queue = 1
	})
	a, b, c := h.newUE(g, "0000000901", 1), h.newUE(g, "0000000902", 2), h.newUE(g, "0000000903", 3)
	a.registerUntilAccept() // a's registration holds the slot until its Complete
	g.send(initialUEMessage(t, b.ranID, b.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, b.suciIdentity())))
	h.eventually("b waiting", func() bool { return h.amf.limiter.State().Queue == 1 })
	g.send(initialUEMessage(t, c.ranID, c.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, c.suciIdentity())))
	m := c.dl("DownlinkNASTransport")
	r := m.RegistrationReject
	if r == nil || r.Cause5GMM.GetCauseValue() != nasx.CauseCongestion || r.T3346Value == nil {
		t.Fatalf("want Registration Reject #22 with T3346, got %+v", m.GmmMessage)
	}
	g.expect("UEContextReleaseCommand")
	a.up(a.registrationComplete())
	// a's Configuration Update Command and b's Authentication Request (b's
	// turn came with a's end) leave in either order.
	var auth []byte
	for range 2 {
		s := g.expect("DownlinkNASTransport")
		switch s.RANUEID {
		case a.ranID:
			a.decode(s.NASPDU)
		case b.ranID:
			b.amfID, auth = s.AMFUEID, s.NASPDU
		default:
			t.Fatalf("DownlinkNASTransport for RAN UE %d", s.RANUEID)
		}
	}
	b.up(b.authResponse(b.decode(auth)))
	h.wantMetric("l25gc_amf_limiter_dropped_total", map[string]string{"procedure": kindRegistration}, 1, "registrations turned away")
}

// The queue past overload_high brings NGAP Overload Start to the gNB (at
// the monitor's check), and draining to overload_low Overload Stop.
func TestOverloadStartAndStopFollowTheQueue(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) {
		c.AMF.Limiter.Mode = "fixed:1"
		c.AMF.Limiter.OverloadHigh, c.AMF.Limiter.OverloadLow = 3, 1
	})
	smf, _ := h.withSMF()
	bySUPI := map[string]*testUE{}
	var ues []*testUE
	for i := range 4 {
		ue := h.newUE(g, fmt.Sprintf("00000010%02d", i), int64(i+1))
		ue.register()
		bySUPI[ue.supi] = ue
		ues = append(ues, ue)
	}
	h.amf.checkOverload() // nothing waits: nothing is sent
	for _, ue := range ues {
		ue.requestSession(1, &slice1, "internet")
	}
	first := bySUPI[smf.expect("create").create.Supi]
	h.eventually("3 waiting", func() bool { return h.amf.limiter.State().Queue == 3 })
	h.amf.checkOverload()
	g.expect("OverloadStart")
	h.wantMetric("l25gc_amf_limiter_overloaded", nil, 1, "overloaded")
	h.amf.checkOverload() // still overloaded: nothing more is sent
	establish(t, h, g, smf, first, 1)
	second := bySUPI[smf.expect("create").create.Supi]
	h.eventually("2 waiting", func() bool { return h.amf.limiter.State().Queue == 2 })
	h.amf.checkOverload() // between the marks: still overloaded
	establish(t, h, g, smf, second, 1)
	third := bySUPI[smf.expect("create").create.Supi]
	h.eventually("1 waiting", func() bool { return h.amf.limiter.State().Queue == 1 })
	h.amf.checkOverload()
	g.expect("OverloadStop")
	h.wantMetric("l25gc_amf_limiter_overloaded", nil, 0, "overloaded")
	establish(t, h, g, smf, third, 1)
	establish(t, h, g, smf, bySUPI[smf.expect("create").create.Supi], 1)
	h.settled(8)
}

// The cut guard's kept intervals reach /metrics: a cut, then a slow
// interval whose latency did not fall, counts one.
func TestHeldIntervalsOnMetrics(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.AMF.Limiter.Initial, c.AMF.Limiter.Min, c.AMF.Limiter.Max = 2, 1, 8
		c.AMF.Limiter.Threshold = time.Millisecond
		c.AMF.Limiter.Interval = time.Minute // only this test's steps
		c.AMF.Limiter.RampInterval = 0
	})
	l := h.amf.limiter
	l.Force("test")
	l.Force("test")
	if _, err := l.Acquire("test", func(s *ratelimit.Slot) {}); err != nil {
		t.Fatal(err)
	}
	if d := l.Step(5e-3); d.EMax != 1 {
		t.Fatalf("first slow interval: E_max %d, want the cut to 1", d.EMax)
	}
	if d := l.Step(5e-3); !d.Held {
		t.Fatalf("same latency after the cut: %+v, want held", d)
	}
	h.wantMetric("l25gc_amf_limiter_held_total", nil, 1, "intervals the guard kept E_max")
}
