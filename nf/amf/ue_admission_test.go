package amf

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/ratelimit"
)

// ueContexts is the AMF's own count of UE contexts with an N2 connection:
// all, and those of the test's first gNB (association 1).
func (h *harness) ueContexts() (all, firstGNB int) { return h.amf.ues.connected(1) }

// wantNoUEContexts waits until the AMF keeps no UE context with an N2
// connection (the last step runs on the UE's key after its last message).
func (h *harness) wantNoUEContexts() {
	h.t.Helper()
	h.eventually("no UE context left", func() bool { all, _ := h.ueContexts(); return all == 0 })
	h.wantMetric("l25gc_amf_ue_contexts", nil, 0, "UE contexts")
}

// expireGuard makes the UE's guard expire now, as its timer would.
func (h *harness) expireGuard(amfID int64) {
	_ = h.amf.disp.Dispatch(ratelimit.UE(amfID), func() {
		if ue := h.amf.ues.get(amfID); ue != nil && ue.guard != nil {
			h.amf.step(ue, EvTimerExpiry, &input{timerGen: ue.guard.gen})
		}
	})
}

// wantCause fails unless the NGAP message s carries cause want.
func wantCause(t *testing.T, s ngapx.Summary, want ngapType.Cause) {
	t.Helper()
	if got, w := ngapx.CauseString(s.Cause), ngapx.CauseString(&want); got != w {
		t.Fatalf("%s with cause %s, want %s", s.Name, got, w)
	}
}

func status(t *testing.T, pdu []byte) uint8 {
	t.Helper()
	m, err := nasx.Decode(pdu)
	if err != nil || m.Status5GMM == nil {
		t.Fatalf("want 5GMM STATUS, got %x (%v)", pdu, err)
	}
	return m.Status5GMM.Cause5GMM.GetCauseValue()
}

// An InitialUEMessage whose NAS is no initial NAS message (TS 24.501
// 4.4.6), or starts nothing, leaves no UE context: the UE hears what TS
// 24.501 clause 7 prescribes, the gNB UE Context Release Command, and the
// gNB's Complete for the freed context gets no Error Indication.
func TestInitialUEMessageWithGarbageNASLeavesNoContext(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	identityResponse := identityResponse(t, []byte{0x01, 0x02, 0xf8, 0x39, 0xf0, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01})
	brokenRequest := []byte{0x7e, 0x00, nas.MsgTypeRegistrationRequest, 0x79} // mandatory IEs cut off
	cases := []struct {
		name       string
		nas        []byte
		wantStatus uint8 // 5GMM STATUS cause; 0: none
		wantReject bool  // Registration Reject (the reply policy's answer)
	}{
		{"too short", []byte{0x7e}, 0, false},
		{"unknown EPD", []byte{0x11, 0x00, 0x41, 0x00}, 0, false},
		{"5GSM message", []byte{0x2e, 0x01, 0x01, 0xc1}, 0, false},
		{"ciphered as a whole", append([]byte{0x7e, 0x02, 1, 2, 3, 4, 0}, 0x7e, 0x00, 0x41), 0, false},
		{"unknown message type", []byte{0x7e, 0x00, 0x99}, nasx.CauseMessageTypeNonExistent, false},
		{"Identity Response", identityResponse, nasx.CauseMessageTypeNotCompatible, false},
		{"5GMM STATUS", must2(t)(nasx.BuildStatus(nasx.CauseProtocolErrorUnspecified)), 0, false},
		{"Registration Request that does not decode", brokenRequest, 0, true},
	}
	for i, c := range cases {
		ranID := int64(100 + i)
		g.send(initialUEMessage(t, ranID, c.nas))
		if c.wantStatus != 0 || c.wantReject {
			dl := g.expect("DownlinkNASTransport")
			switch {
			case c.wantStatus != 0:
				if got := status(t, dl.NASPDU); got != c.wantStatus {
					t.Fatalf("%s: 5GMM STATUS #%d, want #%d", c.name, got, c.wantStatus)
				}
			default:
				if m, err := nasx.Decode(dl.NASPDU); err != nil || m.RegistrationReject == nil {
					t.Fatalf("%s: want Registration Reject, got %x", c.name, dl.NASPDU)
				}
			}
		}
		rel := g.expect("UEContextReleaseCommand")
		if rel.RANUEID != ranID {
			t.Fatalf("%s: release of RAN UE %d, want %d", c.name, rel.RANUEID, ranID)
		}
		wantCause(t, rel, ngapx.CauseNas(ngapType.CauseNasPresentUnspecified))
		h.wantNoUEContexts()
		g.send(releaseComplete(t, rel.AMFUEID, ranID))
	}
	// The Completes were dropped: the next message the gNB hears answers
	// its next InitialUEMessage, not one of them.
	g.send(initialUEMessage(t, 1, []byte{0x7e}))
	if s := g.expect("UEContextReleaseCommand"); s.RANUEID != 1 {
		t.Fatalf("release of RAN UE %d, want 1", s.RANUEID)
	}
	h.wantMetric("l25gc_amf_ngap_errors_total", nil, 0, "Error Indications")
	h.wantMetric("l25gc_amf_initial_ue_refused_total", map[string]string{"reason": "no-procedure"}, 1, "contexts freed at once")
	h.wantMetric("l25gc_amf_initial_ue_refused_total", map[string]string{"reason": "not-initial"}, 5, "non-initial messages")
	h.wantMetric("l25gc_amf_initial_ue_refused_total", map[string]string{"reason": "undecodable"}, 3, "headerless messages")
}

// heapAndGoroutines settles the runtime and reads what a leak would grow.
// The dispatcher's parked workers (ratelimit warm_workers.go, a bounded
// pool kept on purpose) are not counted; it waits until every worker has
// parked or left.
func (h *harness) heapAndGoroutines() (heap uint64, goroutines int) {
	pool, _ := h.amf.disp.(interface{ Workers() (alive, parked int) })
	parked := 0
	if pool != nil {
		h.eventually("dispatcher workers parked", func() bool {
			alive, p := pool.Workers()
			parked = p
			return alive == p
		})
	}
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, runtime.NumGoroutine() - parked
}

// goroutinesDownTo polls heapAndGoroutines until at most want goroutines
// run or 10 s passed, and returns the last count. Goroutines of what ended
// (a reader, a timer's callback, a worker about to park) wind down after
// the test saw the end: read at once, one was still counted when a loaded
// CI machine had not run it yet. A goroutine that stays still fails.
func (h *harness) goroutinesDownTo(want int) (heap uint64, goroutines int) {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if heap, goroutines = h.heapAndGoroutines(); goroutines <= want || time.Now().After(deadline) {
			return heap, goroutines
		}
	}
}

// A flood of InitialUEMessages with garbage NAS (issue 9: 50,000 of them
// left 50,000 contexts) leaves none: the AMF's UE count, its heap and its
// goroutines return to where they were.
func TestGarbageInitialUEFloodReturnsToBaseline(t *testing.T) {
	const flood = 10000
	h, g := newSetUpHarness(t, nil)
	garbage := [][]byte{{0x7e}, {0x7e, 0x00, 0x99}, {0x7e, 0x00, nas.MsgTypeRegistrationRequest, 0x79},
		{0x7e, 0x00, nas.MsgTypeAuthenticationResponse, 0x2d}, {0xde, 0xad, 0xbe, 0xef}}
	msgs := make([][]byte, len(garbage))
	for i, b := range garbage {
		msgs[i] = initialUEMessage(t, int64(i), b)
	}
	heap0, goroutines0 := h.heapAndGoroutines()

	released := make(chan int)
	go func() {
		n := 0
		for n < flood {
			m := <-g.conn.out
			if pdu, err := ngapx.Decode(m.b); err == nil {
				if s, _ := ngapx.Summarize(pdu); s.Name == "UEContextReleaseCommand" {
					n++
				}
			}
		}
		released <- n
	}()
	for i := 0; i < flood; i++ {
		g.send(msgs[i%len(msgs)])
	}
	select {
	case <-released:
	case <-time.After(time.Minute):
		all, _ := h.ueContexts()
		t.Fatalf("not every garbage InitialUEMessage was answered with a release; %d UE contexts", all)
	}
	h.wantNoUEContexts()
	heap, goroutines := h.goroutinesDownTo(goroutines0 + 2)
	// A leaked context holds about 850 bytes (measured: 13,107 left 11 MB):
	// 10,000 of them are over 8 MB; 4 MB is room for the runtime's noise.
	t.Logf("heap %d KiB -> %d KiB, goroutines %d -> %d", heap0>>10, heap>>10, goroutines0, goroutines)
	if heap > heap0+4<<20 {
		t.Errorf("heap %d KiB after the flood, %d KiB before", heap>>10, heap0>>10)
	}
	if goroutines > goroutines0+2 {
		t.Errorf("%d goroutines after the flood, %d before", goroutines, goroutines0)
	}
	h.wantMetric("l25gc_amf_ue_guard_expiries_total", nil, 0, "guard expiries (nothing should have waited for one)")
	// The association is unharmed.
	ue := h.newUE(g, "0000000060", 1)
	ue.register()
}

// A UE that is not authenticated within amf.nas.unauthenticated_timeout is
// released (UE Context Release Command, NAS cause unspecified), counted,
// and its context goes with the gNB's Complete.
func TestUnauthenticatedUEIsReleasedOnItsGuard(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) { c.AMF.NAS.UnauthenticatedTimeout = time.Millisecond })
	ue := h.newUE(g, "0000000061", 1)
	// The UE asks to register and then goes silent: it never answers the
	// Authentication Request (if that is even sent before the guard fires).
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
	var rel ngapx.Summary
	for rel.Name != "UEContextReleaseCommand" {
		rel, _ = g.recv()
	}
	wantCause(t, rel, ngapx.CauseNas(ngapType.CauseNasPresentUnspecified))
	g.send(releaseComplete(t, rel.AMFUEID, ue.ranID))
	h.wantNoUEContexts()
	h.wantMetric("l25gc_amf_ue_guard_expiries_total", map[string]string{"guard": "unauthenticated"}, 1, "unauthenticated UEs released")
	h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": "registration", "result": "timeout"}, 1, "registration timeouts")
	h.wantSBIState(0, 0, 0)
}

// A gNB that never completes a release cannot keep the context: it is
// freed after amf.ngap.ue_release_timeout.
func TestReleaseNeverCompletedIsFreedOnItsGuard(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) {
		c.AMF.NAS.UnauthenticatedTimeout = time.Millisecond
		c.AMF.NGAP.UEReleaseTimeout = time.Millisecond
	})
	ue := h.newUE(g, "0000000062", 1)
	g.send(initialUEMessage(t, ue.ranID, ue.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, ue.suciIdentity())))
	for s, _ := g.recv(); s.Name != "UEContextReleaseCommand"; s, _ = g.recv() {
	}
	h.wantNoUEContexts()
	h.wantMetric("l25gc_amf_ue_guard_expiries_total", map[string]string{"guard": "release"}, 1, "releases ended locally")
}

// Once authenticated the UE is out of the guard's reach: its expiry, had
// it been left running, would release a registered UE.
func TestAuthenticatedUEOutlivesTheGuard(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	ue := h.newUE(g, "0000000063", 1)
	ue.register()
	h.expireGuard(ue.amfID)
	ue.up(ue.deregistrationRequest(false))
	if m := ue.dl("DownlinkNASTransport"); m.DeregistrationAcceptUEOriginatingDeregistration == nil {
		t.Fatalf("want Deregistration Accept, got message type %d", m.GmmHeader.GetMessageType())
	}
	h.wantMetric("l25gc_amf_ue_guard_expiries_total", nil, 0, "guard expiries")
}

// wantOverloadRefusal reads the refusal of a Registration Request at a cap:
// #22 congestion with T3346 (TS 24.501 5.5.1.2.5) and UE Context Release
// Command with control processing overload (TS 38.413 9.3.1.2).
func wantOverloadRefusal(t *testing.T, g *gnbSide, ranID int64) {
	t.Helper()
	dl := g.expect("DownlinkNASTransport")
	m, err := nasx.Decode(dl.NASPDU)
	if err != nil || m.RegistrationReject == nil {
		t.Fatalf("want Registration Reject, got %x (%v)", dl.NASPDU, err)
	}
	if c := m.RegistrationReject.Cause5GMM.GetCauseValue(); c != nasx.CauseCongestion || m.RegistrationReject.T3346Value == nil {
		t.Fatalf("Registration Reject #%d (T3346 %v), want #22 with T3346", c, m.RegistrationReject.T3346Value != nil)
	}
	rel := g.expect("UEContextReleaseCommand")
	if rel.RANUEID != ranID {
		t.Fatalf("release of RAN UE %d, want %d", rel.RANUEID, ranID)
	}
	wantCause(t, rel, ngapx.CauseMisc(ngapType.CauseMiscPresentControlProcessingOverload))
}

// amf.ngap.max_ues_per_gnb: the gNB's next UE is refused; its registered
// UE and the one registering carry on, and another gNB still gets UEs.
func TestPerGNBCapRefusesTheNextUEOnly(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) { c.AMF.NGAP.MaxUEsPerGNB = 2 })
	registered := h.newUE(g, "0000000064", 1)
	registered.register()
	registering := h.newUE(g, "0000000065", 2)
	g.send(initialUEMessage(t, registering.ranID, registering.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, registering.suciIdentity())))
	authRequest := registering.dl("DownlinkNASTransport")

	refused := h.newUE(g, "0000000066", 3)
	g.send(initialUEMessage(t, refused.ranID, refused.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, refused.suciIdentity())))
	wantOverloadRefusal(t, g, refused.ranID)
	h.wantMetric("l25gc_amf_initial_ue_refused_total", map[string]string{"reason": "gnb-cap"}, 1, "UEs refused at the gNB's cap")
	if _, ofGNB := h.ueContexts(); ofGNB != 2 {
		t.Fatalf("gNB has %d UE contexts, want its 2", ofGNB)
	}

	other := h.connect()
	other.setup()
	elsewhere := h.newUE(other, "0000000067", 1)
	elsewhere.register()

	registering.up(registering.authResponse(authRequest))
	registering.up(registering.acceptSMC(g.expect("DownlinkNASTransport").NASPDU, nil))
	registering.readAccept()
	registering.up(registering.registrationComplete())
	registering.dl("DownlinkNASTransport")
	registered.up(registered.deregistrationRequest(false))
	if m := registered.dl("DownlinkNASTransport"); m.DeregistrationAcceptUEOriginatingDeregistration == nil {
		t.Fatal("the registered UE could not deregister")
	}
	h.wantMetric("l25gc_amf_registered_ues", nil, 2, "UEs registered")
}

// amf.ngap.max_ues caps the AMF over all gNBs.
func TestTotalCapRefusesUEsOfAnyGNB(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) { c.AMF.NGAP.MaxUEs = 1 })
	h.newUE(g, "0000000068", 1).register()
	other := h.connect()
	other.setup()
	refused := h.newUE(other, "0000000069", 1)
	other.send(initialUEMessage(t, refused.ranID, refused.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, refused.suciIdentity())))
	wantOverloadRefusal(t, other, refused.ranID)
	h.wantMetric("l25gc_amf_initial_ue_refused_total", map[string]string{"reason": "total-cap"}, 1, "UEs refused at the AMF's cap")
}

// When a gNB's association ends, every UE context of it loses its N2
// state: registered UEs are parked (CM-IDLE), the one registering is
// forgotten with its timers and SBI state, connected_gnbs drops, and the
// other gNB's UE and the goroutines are as before.
func TestAssociationEndFreesItsUEs(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	other := h.connect()
	other.setup()
	elsewhere := h.newUE(other, "0000000070", 1)
	elsewhere.register()
	_, goroutines0 := h.heapAndGoroutines()

	for i := int64(1); i <= 2; i++ {
		h.newUE(g, fmt.Sprintf("00000000%02d", 70+i), i).register()
	}
	registering := h.newUE(g, "0000000073", 3)
	g.send(initialUEMessage(t, registering.ranID, registering.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, registering.suciIdentity())))
	registering.dl("DownlinkNASTransport") // Authentication Request, T3560 running
	h.wantMetric("l25gc_amf_connected_gnbs", nil, 2, "gNBs")

	_ = g.conn.Close()
	h.waitIdle(2)
	h.eventually("the gNB's UE contexts gone", func() bool { all, ofGNB := h.ueContexts(); return ofGNB == 0 && all == 1 })
	h.eventually("connected_gnbs drops", func() bool { return h.metric("l25gc_amf_connected_gnbs", nil) == 1 })
	h.wantMetric("l25gc_amf_registered_ues", nil, 3, "registered UEs (parked ones included)")
	h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": "registration", "result": "failure"}, 1, "the registration cut short")
	h.amf.mu.Lock()
	gnbs := len(h.amf.gnbs)
	h.amf.mu.Unlock()
	if gnbs != 1 {
		t.Fatalf("AMF keeps %d associations, want 1", gnbs)
	}
	if _, goroutines := h.goroutinesDownTo(goroutines0); goroutines > goroutines0 {
		t.Errorf("%d goroutines after the association ended, %d before it carried UEs", goroutines, goroutines0)
	}

	elsewhere.up(elsewhere.deregistrationRequest(false))
	if m := elsewhere.dl("DownlinkNASTransport"); m.DeregistrationAcceptUEOriginatingDeregistration == nil {
		t.Fatal("the other gNB's UE could not deregister")
	}
}
