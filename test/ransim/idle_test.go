package ransim

// CM-IDLE through a scripted AMF: AN release, paging and both kinds of
// Service Request, decoded IE by IE as an AMF reads them (TS 23.502
// 4.2.6, 4.2.3.2, 4.2.3.3; TS 24.501 5.6.1; TS 38.413 8.3, 8.5.1).

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/gtpu"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/protocol/ngapx/ngapxtest"
)

// testSTMSI is the 5G-S-TMSI of the GUTI scriptedAMF.accept assigns.
var testSTMSI = nasx.GUTI{GUAMI: testGUAMI, TMSI: 5}.STMSI()

// withIdleSession registers a UE, establishes PDU session 1 and releases
// it to CM-IDLE, checking the release messages on the way.
func (a *scriptedAMF) withIdleSession(g *GNB) (*UE, *PDUSession) {
	a.t.Helper()
	ue, ranID := a.register(g, "208930000000021")
	res, _ := a.establish(ue, ranID)
	if res.err != nil {
		a.t.Fatal(res.err)
	}
	a.goIdle(ue, ranID)
	return ue, res.s
}

// goIdle runs the gNB's AN release of a UE with session 1.
func (a *scriptedAMF) goIdle(ue *UE, ranID int64) {
	t := a.t
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := ue.GoIdle(context.Background()); done <- err }()
	req := a.next("UEContextReleaseRequest").InitiatingMessage.Value.UEContextReleaseRequest
	var sessions []int64
	var cause *ngapType.Cause
	for _, ie := range req.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceListCxtRelReq; l != nil {
			for _, it := range l.List {
				sessions = append(sessions, it.PDUSessionID.Value)
			}
		}
		if ie.Value.Cause != nil {
			cause = ie.Value.Cause
		}
	}
	if !reflect.DeepEqual(sessions, []int64{1}) || cause == nil || cause.RadioNetwork == nil ||
		cause.RadioNetwork.Value != ngapType.CauseRadioNetworkPresentUserInactivity {
		t.Fatalf("UE Context Release Request names sessions %v, cause %+v: want [1], user inactivity", sessions, cause)
	}
	a.send(ngapx.BuildUEContextReleaseCommand(testAMFUEID, ranID, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity)))
	cpl := a.next("UEContextReleaseComplete").SuccessfulOutcome.Value.UEContextReleaseComplete
	sessions = nil
	for _, ie := range cpl.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceListCxtRelCpl; l != nil {
			for _, it := range l.List {
				sessions = append(sessions, it.PDUSessionID.Value)
			}
		}
	}
	if !reflect.DeepEqual(sessions, []int64{1}) {
		t.Fatalf("UE Context Release Complete names sessions %v, want [1]", sessions)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestANReleaseKeepsTheSessionAndParksItsTunnel(t *testing.T) {
	g, amf := connectScripted(t)
	ue, s := amf.withIdleSession(g)
	if !ue.Idle() || ue.Session(1) != s || ue.GUTI() == nil {
		t.Fatalf("after the release: idle %v, session %v, GUTI %v: want CM-IDLE with session 1 and the GUTI", ue.Idle(), ue.Session(1), ue.GUTI())
	}
	if n := g.UserPlane().Tunnels(); n != 0 {
		t.Fatalf("the gNB holds %d tunnels of a CM-IDLE UE", n)
	}
	if g.IdleUEs() != 1 {
		t.Fatalf("the gNB can page %d UEs, want 1", g.IdleUEs())
	}
	if err := s.Tunnel.SendUplink(ipv4Packet(s.Address, netip.MustParseAddr("10.200.0.2"))); !errors.Is(err, ErrIdle) {
		t.Fatalf("uplink of a CM-IDLE UE: %v, want ErrIdle", err)
	}
	if _, err := ue.GoIdle(context.Background()); err == nil {
		t.Fatal("a CM-IDLE UE went idle again")
	}
}

// initialNAS reads Initial UE Message and returns the RRC establishment
// cause, the 5G-S-TMSI and the NAS-PDU.
func (a *scriptedAMF) initialNAS() (aper int64, stmsi *ngapType.FiveGSTMSI, ranID int64, pdu []byte) {
	a.t.Helper()
	m := a.next("InitialUEMessage")
	s, _ := ngapx.Summarize(m)
	for _, ie := range m.InitiatingMessage.Value.InitialUEMessage.ProtocolIEs.List {
		switch {
		case ie.Value.RRCEstablishmentCause != nil:
			aper = int64(ie.Value.RRCEstablishmentCause.Value)
		case ie.Value.FiveGSTMSI != nil:
			stmsi = ie.Value.FiveGSTMSI
		}
	}
	return aper, stmsi, s.RANUEID, s.NASPDU
}

// serviceRequest reads the UE's Service Request as the AMF does (TS 24.501
// 4.4.6): integrity protected, the whole request in the ciphered NAS
// message container.
func (a *scriptedAMF) serviceRequest(pdu []byte) (cleartext, full nasx.ServiceRequest) {
	t := a.t
	t.Helper()
	plain, sht, err := a.sec.Unprotect(pdu)
	if err != nil || sht != nas.SecurityHeaderTypeIntegrityProtected {
		t.Fatalf("Service Request: security header %d, %v: want integrity protected", sht, err)
	}
	m, err := nasx.Decode(plain)
	if err != nil || m.ServiceRequest == nil {
		t.Fatalf("initial NAS message %v: want Service Request", err)
	}
	if cleartext, err = nasx.ParseServiceRequest(m.ServiceRequest); err != nil {
		t.Fatal(err)
	}
	if m.ServiceRequest.NASMessageContainer == nil || m.ServiceRequest.PDUSessionStatus != nil {
		t.Fatal("Service Request: want only cleartext IEs and the NAS message container")
	}
	inner, err := a.sec.DecipherContainer(m.ServiceRequest.NASMessageContainer.GetNASMessageContainerContents())
	if err != nil {
		t.Fatal(err)
	}
	whole, err := nasx.Decode(inner)
	if err != nil || whole.ServiceRequest == nil {
		t.Fatalf("NAS message container %v: want the whole Service Request", err)
	}
	if full, err = nasx.ParseServiceRequest(whole.ServiceRequest); err != nil {
		t.Fatal(err)
	}
	return cleartext, full
}

// contextWithSession answers a Service Request with Service Accept in
// Initial Context Setup Request re-activating session 1 on a new UPF end,
// and returns the gNB's DL end of it.
func (a *scriptedAMF) contextWithSession(ranID int64, ul ngapx.Tunnel) ngapx.Tunnel {
	a.t.Helper()
	dl := a.setUpContext(ranID, ul, nil)
	a.next("UERadioCapabilityInfoIndication")
	return dl
}

// setUpContext sends the Initial Context Setup Request of
// contextWithSession, with radioCapability when not nil, and returns the
// gNB's DL end from its response.
func (a *scriptedAMF) setUpContext(ranID int64, ul ngapx.Tunnel, radioCapability []byte) ngapx.Tunnel {
	t := a.t
	t.Helper()
	acc, err := a.sec.Protect(a.built(nasx.BuildServiceAccept(nasx.ServiceAccept{PDUSessionStatus: ptr(nasx.PSIs(1))})),
		nas.SecurityHeaderTypeIntegrityProtectedAndCiphered)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ngapxtest.SetupRequestTransfer(ngapxtest.Session{ID: 1, UL: ul, QFIs: []uint8{1}})
	if err != nil {
		t.Fatal(err)
	}
	a.send(ngapx.BuildInitialContextSetupRequest(ngapx.InitialContext{AMFUEID: testAMFUEID + 1, RANUEID: ranID, GUAMI: testGUAMI,
		Allowed: []models.Snssai{testSlice}, NREncryption: [2]byte{0xC0}, NRIntegrity: [2]byte{0xC0}, KgNB: make([]byte, 32), NASPDU: acc,
		RadioCapability: radioCapability, Sessions: []ngapx.SessionResource{{ID: 1, SNSSAI: testSlice, Transfer: tr}}}))
	resp := a.next("InitialContextSetupResponse")
	out, err := ngapx.ParseInitialContextSetupOutcomes(resp)
	if err != nil || len(out) != 1 || out[0].ID != 1 || out[0].Type != models.N2SmInfoType_PDU_RES_SETUP_RSP {
		t.Fatalf("Initial Context Setup Response outcomes %+v (%v): want session 1 set up", out, err)
	}
	r, err := ngapx.ParsePDUSessionResourceSetupResponseTransfer(out[0].Transfer)
	if err != nil {
		t.Fatal(err)
	}
	return r.DL
}

func ptr[T any](v T) *T { return &v }

// TS 23.502 4.2.3.3 steps 4b-6: the gNB receives Paging for the UE's
// 5G-S-TMSI in its TA; the UE answers with a Service Request, service type
// mobile terminated services, RRC cause mt-Access; the session's tunnel
// comes back with a new DL TEID, and downlink reaches the same sink.
func TestPagedUEAnswersWithServiceRequest(t *testing.T) {
	g, amf := connectScripted(t)
	// N3 on loopback; no session exists yet for the gNB's reader to meet.
	g.up = NewUserPlane(netip.MustParseAddr("127.0.0.1"), nil)
	if err := g.up.Listen(0); err != nil {
		t.Fatal(err)
	}
	ue, s := amf.withIdleSession(g)
	oldTEID := s.Tunnel.DLTEID
	got := make(chan []byte, 1)
	s.Tunnel.SetSink(func(pkt []byte) { got <- append([]byte(nil), pkt...) })

	type answer struct {
		at  time.Time
		lat time.Duration
		err error
	}
	done := make(chan answer, 1)
	go func() { at, lat, err := ue.AnswerPaging(context.Background()); done <- answer{at, lat, err} }()
	before := time.Now()
	amf.send(ngapx.BuildPaging(ngapx.Paging{STMSI: testSTMSI, TAIs: []domain.TAI{{PLMN: testPLMN, TAC: 1}}}))

	rrc, stmsi, ranID, pdu := amf.initialNAS()
	if rrc != int64(ngapType.RRCEstablishmentCausePresentMtAccess) || stmsi == nil {
		t.Fatalf("Initial UE Message: RRC cause %d, 5G-S-TMSI %v: want mt-Access and the 5G-S-TMSI", rrc, stmsi)
	}
	if id, err := ngapx.DecodeFiveGSTMSI(*stmsi); err != nil || id != testSTMSI {
		t.Fatalf("5G-S-TMSI %+v (%v), want %+v", id, err, testSTMSI)
	}
	clear, full := amf.serviceRequest(pdu)
	if clear.ServiceType != nasx.ServiceTypeMobileTerminated || clear.STMSI != testSTMSI || full.ServiceType != nasx.ServiceTypeMobileTerminated {
		t.Fatalf("Service Request %+v / %+v: want mobile terminated services from %+v", clear, full, testSTMSI)
	}
	if full.PDUSessionStatus == nil || *full.PDUSessionStatus != nasx.PSIs(1) || full.UplinkDataStatus != nil {
		t.Fatalf("whole Service Request %+v: want PDU session status {1} and no uplink data status", full)
	}
	newUL := ngapx.Tunnel{IPv4: testUPF.IPv4, TEID: testUPF.TEID + 1}
	dl := amf.contextWithSession(ranID, newUL)
	a := <-done
	if a.err != nil || a.at.Before(before) || a.lat <= 0 {
		t.Fatalf("AnswerPaging: paged at %v, %v, %v", a.at, a.lat, a.err)
	}
	if ue.Idle() || g.IdleUEs() != 0 {
		t.Fatalf("after the Service Request: idle %v, the gNB pages %d UEs", ue.Idle(), g.IdleUEs())
	}
	if dl.TEID == oldTEID || dl.TEID != s.Tunnel.DLTEID || ue.Session(1).Tunnel != s.Tunnel || s.Tunnel.UL() != newUL {
		t.Fatalf("DL TEID %#x (was %#x, tunnel's %#x), UL %v: want a new TEID on the session's tunnel and the new UPF end",
			dl.TEID, oldTEID, s.Tunnel.DLTEID, s.Tunnel.UL())
	}
	// Downlink on the new TEID reaches the sink bound before the release.
	sendDownlink(t, g, dl.TEID, []byte{0x45, 0, 0, 20})
	select {
	case pkt := <-got:
		if pkt[0] != 0x45 {
			t.Fatalf("sink got %x", pkt)
		}
	case <-time.After(10 * time.Second): // bounds a failing test only
		t.Fatal("downlink on the re-activated tunnel did not reach the sink")
	}
}

// TS 38.413 8.5.1.2: a paging for another TA or a UE not camping here is
// no Service Request; one that does not decode gets Error Indication.
func TestPagingForOthersIsNotAnswered(t *testing.T) {
	g, amf := connectScripted(t)
	ue, _ := amf.withIdleSession(g)
	other := testSTMSI
	other.TMSI++
	amf.send(ngapx.BuildPaging(ngapx.Paging{STMSI: other, TAIs: []domain.TAI{{PLMN: testPLMN, TAC: 1}}}))
	amf.send(ngapx.BuildPaging(ngapx.Paging{STMSI: testSTMSI, TAIs: []domain.TAI{{PLMN: testPLMN, TAC: 2}}}))
	bad, _ := ngapx.Decode(amf.built(ngapx.BuildPaging(ngapx.Paging{STMSI: testSTMSI, TAIs: []domain.TAI{{PLMN: testPLMN, TAC: 1}}})))
	bad.InitiatingMessage.Value.Paging.ProtocolIEs.List = bad.InitiatingMessage.Value.Paging.ProtocolIEs.List[:1]
	amf.send(ngapx.Encode(bad))
	ind := amf.next("ErrorIndication")
	if s, _ := ngapx.Summarize(ind); s.Cause == nil || s.Cause.Protocol == nil {
		t.Fatalf("Error Indication cause %+v: want a protocol cause", s.Cause)
	}
	if g.Pagings.Load() != 2 || g.PagingsForNobody.Load() != 1 {
		t.Fatalf("pagings %d, for nobody %d: want 2 and 1", g.Pagings.Load(), g.PagingsForNobody.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ue.AwaitPaging(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("the UE was paged: %v", err)
	}
}

// TS 24.501 5.6.1.2: a UE-triggered Service Request names the sessions
// with uplink data; a Service Reject ends it with the 5GMM cause and the
// UE stays CM-IDLE, pageable.
func TestUETriggeredServiceRequest(t *testing.T) {
	g, amf := connectScripted(t)
	ue, _ := amf.withIdleSession(g)
	done := make(chan error, 1)
	go func() { _, err := ue.RequestService(context.Background()); done <- err }()
	rrc, _, ranID, pdu := amf.initialNAS()
	_, full := amf.serviceRequest(pdu)
	if rrc != int64(ngapType.RRCEstablishmentCausePresentMoData) || full.ServiceType != nasx.ServiceTypeData ||
		full.UplinkDataStatus == nil || *full.UplinkDataStatus != nasx.PSIs(1) {
		t.Fatalf("RRC cause %d, Service Request %+v: want mo-Data, service type data, uplink data status {1}", rrc, full)
	}
	rej, err := amf.sec.Protect(amf.built(nasx.BuildServiceRejectWith(nasx.ServiceReject{Cause: 22})), nas.SecurityHeaderTypeIntegrityProtectedAndCiphered)
	if err != nil {
		t.Fatal(err)
	}
	amf.send(ngapx.BuildDownlinkNASTransport(testAMFUEID+1, ranID, rej))
	amf.send(ngapx.BuildUEContextReleaseCommand(testAMFUEID+1, ranID, ngapx.CauseNas(ngapType.CauseNasPresentNormalRelease)))
	var reject *RejectError
	if err := <-done; !errors.As(err, &reject) || reject.Cause != 22 {
		t.Fatalf("Service Request: %v, want Service Reject #22", err)
	}
	amf.next("UEContextReleaseComplete")
	if err := ue.Serve(ctxTimeout(t)); !errors.Is(err, ErrReleased) {
		t.Fatalf("Serve after the reject: %v, want the release", err)
	}
	// CM-IDLE still: the next Service Request is accepted.
	go func() { _, err := ue.RequestService(context.Background()); done <- err }()
	_, _, ranID, pdu = amf.initialNAS()
	amf.serviceRequest(pdu)
	amf.contextWithSession(ranID, testUPF)
	if err := <-done; err != nil || ue.Idle() {
		t.Fatalf("second Service Request: %v (idle %v)", err, ue.Idle())
	}
}

// sendDownlink puts a G-PDU for teid on the gNB's N3 socket, as UPF-U does.
func sendDownlink(t *testing.T, g *GNB, teid uint32, pkt []byte) {
	t.Helper()
	c, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: g.up.Addr().AsSlice(), Port: g.up.LocalPort()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b, err := gtpu.GPDU(teid, gtpu.DLPDUSessionInformation, 1, pkt).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
}

func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // bounds a failing test only
	t.Cleanup(cancel)
	return ctx
}

// TS 24.501 5.6.1.2: a CM-IDLE UE whose IP stack sends uplink asks for
// service itself (service type data); the packet that woke it is lost,
// the next goes through the tunnel set up again.
func TestUplinkFromAnIdleUEStartsAServiceRequest(t *testing.T) {
	g, amf := connectScripted(t)
	ue, s := amf.withIdleSession(g)
	ctx, cancel := context.WithCancel(context.Background())
	stayed := make(chan error, 1)
	go func() { stayed <- ue.Stay(ctx, nil) }()
	defer func() {
		cancel()
		if err := <-stayed; err != nil {
			t.Error(err)
		}
	}()
	if err := s.Tunnel.SendUplink(ipv4Packet(s.Address, netip.MustParseAddr("10.200.0.2"))); !errors.Is(err, ErrIdle) {
		t.Fatalf("uplink of a CM-IDLE UE: %v, want ErrIdle", err)
	}
	rrc, _, ranID, pdu := amf.initialNAS()
	_, full := amf.serviceRequest(pdu)
	if rrc != int64(ngapType.RRCEstablishmentCausePresentMoData) || full.ServiceType != nasx.ServiceTypeData {
		t.Fatalf("RRC cause %d, service type %d: want mo-Data and data", rrc, full.ServiceType)
	}
	amf.contextWithSession(ranID, testUPF)
	if s.Tunnel.parked.Load() {
		t.Fatal("the tunnel is still parked after the Service Accept")
	}
}
