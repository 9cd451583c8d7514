package ransim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// TS 38.413 8.7.6.2: which RRC establishment causes each overload action
// refuses; emergency and mobile terminated access pass every action.
func TestOverloadActionsShedTheirCauses(t *testing.T) {
	const (
		modt = ngapType.OverloadActionPresentRejectNonEmergencyMoDt
		sig  = ngapType.OverloadActionPresentRejectRrcCrSignalling
		emer = ngapType.OverloadActionPresentPermitEmergencySessionsAndMobileTerminatedServicesOnly
		high = ngapType.OverloadActionPresentPermitHighPrioritySessionsAndMobileTerminatedServicesOnly
	)
	cases := []struct {
		name   string
		action aper.Enumerated
		cause  aper.Enumerated
		shed   bool
	}{
		{"MO-DT sheds mo-data", modt, ngapType.RRCEstablishmentCausePresentMoData, true},
		{"MO-DT spares mo-signalling", modt, ngapType.RRCEstablishmentCausePresentMoSignalling, false},
		{"signalling sheds mo-signalling", sig, ngapType.RRCEstablishmentCausePresentMoSignalling, true},
		{"signalling sheds mo-data", sig, ngapType.RRCEstablishmentCausePresentMoData, true},
		{"signalling spares mt-access", sig, ngapType.RRCEstablishmentCausePresentMtAccess, false},
		{"emergency-only sheds mo-signalling", emer, ngapType.RRCEstablishmentCausePresentMoSignalling, true},
		{"emergency-only spares emergency", emer, ngapType.RRCEstablishmentCausePresentEmergency, false},
		{"high-priority-only spares high priority", high, ngapType.RRCEstablishmentCausePresentHighPriorityAccess, false},
		{"high-priority-only sheds mo-data", high, ngapType.RRCEstablishmentCausePresentMoData, true},
	}
	for _, c := range cases {
		if got := sheds(ngapx.Overload{Action: c.action}, c.cause); got != c.shed {
			t.Errorf("%s: shed %v, want %v", c.name, got, c.shed)
		}
	}
	if sheds(ngapx.Overload{NoAction: true}, ngapType.RRCEstablishmentCausePresentMoData) {
		t.Error("an Overload Start without an action shed mo-data")
	}
}

// waitHeld waits until the gNB holds n attempts back.
func waitHeld(t *testing.T, g *GNB, n int64) {
	t.Helper()
	for range 1000 {
		if g.OverloadSeen.Held.Load() >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the gNB held %d attempts, want %d", g.OverloadSeen.Held.Load(), n)
}

// TS 38.413 8.7.6.2, 8.7.7.2: under Overload Start (reject RRC signalling)
// a new registration is held at the gNB, nothing reaches the AMF, and it
// goes out at Overload Stop.
func TestRegistrationWaitsForOverloadStop(t *testing.T) {
	g, amf := connectScripted(t)
	amf.send(ngapx.BuildOverloadStart(ngapx.Overload{Action: ngapx.OverloadRejectRRCSignalling}))
	for !g.Overloaded() {
		time.Sleep(time.Millisecond)
	}
	ue, done := startRegistration(g, "208930000000031")
	waitHeld(t, g, 1)
	if n := len(amf.conn.up); n != 0 {
		t.Fatalf("the gNB sent %d messages while holding the registration", n)
	}
	amf.send(ngapx.BuildOverloadStop())
	ranID := amf.initialRegistrationRequest()
	amf.authenticate(ranID, ue.sub.IMSI)
	amf.securityMode(ranID, ue.sub.IMSI)
	amf.accept(ranID)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s, p := g.OverloadSeen.Starts.Load(), g.OverloadSeen.Stops.Load(); s != 1 || p != 1 {
		t.Fatalf("counted %d Overload Start, %d Stop; want 1 each", s, p)
	}
}

// TS 24.501 5.5.1.2.5, 5.3.9: a #22 reject carries T3346; the UE waits
// (capped here) and registers again, and the back-off is counted.
func TestCongestionRejectIsRetriedAfterBackOff(t *testing.T) {
	g, amf := connectScripted(t)
	ue := g.NewUE(Subscriber{IMSI: "208930000000032", K: testK, OPc: testOPc}, Concealment{})
	var st OverloadStats
	done := make(chan error, 1)
	go func() {
		_, err := RegisterWithBackOff(context.Background(), ue, BackOff{Max: 20 * time.Millisecond}, &st)
		done <- err
	}()
	ranID := amf.initialRegistrationRequest()
	amf.nasDown(ranID, amf.built(nasx.BuildRegistrationRejectWithT3346(nasx.CauseCongestion, 30*time.Second)))
	ranID = amf.initialRegistrationRequest()
	amf.authenticate(ranID, ue.sub.IMSI)
	amf.securityMode(ranID, ue.sub.IMSI)
	amf.accept(ranID)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b, w, x := st.BackOffs.Load(), st.WithT3346.Load(), st.T3510Expiries.Load(); b != 1 || w != 1 || x != 0 {
		t.Fatalf("%d back-offs (%d with T3346), %d T3510 expiries; want 1, 1, 0", b, w, x)
	}
}

// The reject's T3346 reaches the caller; a cause other than #22 is not
// retried.
func TestOtherRejectsAreNotRetried(t *testing.T) {
	g, amf := connectScripted(t)
	ue := g.NewUE(Subscriber{IMSI: "208930000000033", K: testK, OPc: testOPc}, Concealment{})
	var st OverloadStats
	done := make(chan error, 1)
	go func() { _, err := RegisterWithBackOff(context.Background(), ue, BackOff{}, &st); done <- err }()
	ranID := amf.initialRegistrationRequest()
	amf.nasDown(ranID, amf.built(nasx.BuildRegistrationReject(nasx.CauseIllegalUE)))
	var rej *RejectError
	if err := <-done; !errors.As(err, &rej) || rej.Cause != nasx.CauseIllegalUE {
		t.Fatalf("got %v, want Registration Reject #3", err)
	}
	if st.BackOffs.Load() != 0 {
		t.Fatal("a #3 reject was counted as a back-off")
	}
}

// Without T3346 the wait is random 5-15 s; a cap keeps it under the cap.
func TestBackOffWait(t *testing.T) {
	for range 100 {
		if d := backOffWait(0, 0); d < 5*time.Second || d >= 15*time.Second {
			t.Fatalf("back-off without T3346: %v, want 5-15 s", d)
		}
		if d := backOffWait(40*time.Second, 2*time.Second); d < time.Second || d > 2*time.Second {
			t.Fatalf("capped back-off: %v, want 1-2 s", d)
		}
	}
	if d := backOffWait(3*time.Second, 0); d != 3*time.Second {
		t.Fatalf("T3346 3 s: waited %v", d)
	}
}

// TS 38.413 8.7.6.2: "reject non-emergency MO-DT" holds a Service Request
// for uplink data (mo-Data) until Overload Stop.
func TestServiceRequestForDataWaitsForOverloadStop(t *testing.T) {
	g, amf := connectScripted(t)
	ue, _ := amf.withIdleSession(g)
	amf.send(ngapx.BuildOverloadStart(ngapx.Overload{Action: ngapx.OverloadRejectNonEmergencyMODT}))
	for !g.Overloaded() {
		time.Sleep(time.Millisecond)
	}
	go func() { _, _ = ue.RequestService(context.Background()) }()
	waitHeld(t, g, 1)
	if n := len(amf.conn.up); n != 0 {
		t.Fatalf("the gNB sent %d messages while holding the Service Request", n)
	}
	amf.send(ngapx.BuildOverloadStop())
	if rrc, _, _, _ := amf.initialNAS(); rrc != int64(ngapType.RRCEstablishmentCausePresentMoData) {
		t.Fatalf("RRC cause %d after Overload Stop, want the held mo-Data Service Request", rrc)
	}
}
