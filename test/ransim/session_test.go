package ransim

// PDU sessions through a scripted AMF: what the UE and gNB send for
// establishment, modification and release (TS 24.501 6.4, TS 38.413 8.2),
// decoded IE by IE, and what they do with the network's answers.

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/nasx/nasxtest"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/protocol/ngapx/ngapxtest"
)

var testUPF = ngapx.Tunnel{IPv4: netip.MustParseAddr("10.100.0.1"), TEID: 0xABCD}

// protectedDL is a 5GSM message in DL NAS Transport, protected as the AMF
// sends it inside an NGAP request.
func (a *scriptedAMF) protectedDL(sessionID uint8, sm []byte) []byte {
	a.t.Helper()
	dl := a.built(nasx.BuildDLNASTransport(nasx.DLNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: sm, PDUSessionID: sessionID}))
	p, err := a.sec.Protect(dl, nas.SecurityHeaderTypeIntegrityProtectedAndCiphered)
	if err != nil {
		a.t.Fatal(err)
	}
	return p
}

// uplinkGSM reads UL NAS Transport carrying N1 SM information and returns
// it with its 5GSM message decoded by free5gc/nas.
func (a *scriptedAMF) uplinkGSM() (*nasMessage.ULNASTransport, *nas.GsmMessage) {
	a.t.Helper()
	m := a.uplinkNAS()
	ul := m.ULNASTransport
	if ul == nil || ul.GetPayloadContainerType() != nasx.PayloadN1SMInformation {
		a.t.Fatalf("message type %d: want UL NAS Transport with N1 SM information", m.GmmHeader.GetMessageType())
	}
	sm := nas.NewMessage()
	b := ul.GetPayloadContainerContents()
	if err := sm.PlainNasDecode(&b); err != nil {
		a.t.Fatalf("5GSM payload: %v", err)
	}
	return ul, sm.GsmMessage
}

type established struct {
	s   *PDUSession
	lat time.Duration
	err error
}

// establish runs the UE's request through the scripted AMF up to the
// Setup Response and returns the UE's result.
func (a *scriptedAMF) establish(ue *UE, ranID int64) (established, *ngapType.NGAPPDU) {
	a.t.Helper()
	done := make(chan established, 1)
	go func() {
		s, lat, err := ue.EstablishPDUSession(context.Background(), SessionRequest{ID: 1, DNN: "internet"})
		done <- established{s, lat, err}
	}()
	ul, sm := a.uplinkGSM()
	r := sm.PDUSessionEstablishmentRequest
	if r == nil || ul.GetPduSessionID2Value() != 1 || ul.RequestType == nil || ul.RequestType.GetRequestTypeValue() != nasx.RequestInitial ||
		ul.DNN == nil || ul.DNN.GetDNN() != "internet" || ul.SNSSAI == nil {
		a.t.Fatalf("UL NAS Transport %+v: want session 1, initial request, DNN internet, S-NSSAI", ul)
	}
	if r.PDUSessionType.GetPDUSessionTypeValue() != nasMessage.PDUSessionTypeIPv4 || r.SSCMode.GetSSCMode() != 1 || r.GetPTI() == 0 {
		a.t.Fatal("Establishment Request: want IPv4, SSC mode 1, a PTI")
	}
	accept := a.protectedDL(1, a.built(nasxtest.Accept(1, r.GetPTI(), netip.MustParseAddr("10.60.0.9"), "internet")))
	a.send(ngapxtest.SetupRequest(testAMFUEID, ranID, []ngapxtest.Session{{ID: 1, NASPDU: accept, UL: testUPF, QFIs: []uint8{1}}}, nil))
	resp := a.next("PDUSessionResourceSetupResponse")
	return <-done, resp
}

func TestPDUSessionEstablishmentSetsUpTheTunnel(t *testing.T) {
	g, amf := connectScripted(t)
	ue, ranID := amf.register(g, "208930000000011")
	res, resp := amf.establish(ue, ranID)
	if res.err != nil {
		t.Fatal(res.err)
	}
	s := res.s
	if s.Address != netip.MustParseAddr("10.60.0.9") || s.DefaultQFI() != 1 || s.AMBR.DownlinkBps != 1_000_000_000 || s.Tunnel == nil {
		t.Fatalf("session %+v", s)
	}
	var list *ngapType.PDUSessionResourceSetupListSURes
	for _, ie := range resp.SuccessfulOutcome.Value.PDUSessionResourceSetupResponse.ProtocolIEs.List {
		if ie.Value.PDUSessionResourceSetupListSURes != nil {
			list = ie.Value.PDUSessionResourceSetupListSURes
		}
	}
	if list == nil || len(list.List) != 1 {
		t.Fatal("Setup Response without the session set up")
	}
	r, err := ngapx.ParsePDUSessionResourceSetupResponseTransfer(list.List[0].PDUSessionResourceSetupResponseTransfer)
	if dl := r.DL; err != nil || dl.IPv4 != DefaultN3 || dl.TEID != s.Tunnel.DLTEID || dl.TEID == 0 || len(r.QFIs) != 1 || r.QFIs[0] != 1 {
		t.Fatalf("DL tunnel %+v QFIs %v (%v): want %v, TEID %d, QFI 1", r.DL, r.QFIs, err, DefaultN3, s.Tunnel.DLTEID)
	}
	if s.Tunnel.UL() != testUPF {
		t.Fatalf("UL tunnel %+v, want the UPF's %+v", s.Tunnel.UL(), testUPF)
	}
}

func TestEstablishmentRejectNamesThe5GSMCause(t *testing.T) {
	g, amf := connectScripted(t)
	ue, ranID := amf.register(g, "208930000000012")
	done := make(chan error, 1)
	go func() { _, err := ue.RequestPDUSession(context.Background(), 1, "nowhere"); done <- err }()
	_, sm := amf.uplinkGSM()
	pti := sm.PDUSessionEstablishmentRequest.GetPTI()
	amf.nasDown(ranID, amf.built(nasx.BuildDLNASTransport(nasx.DLNASTransport{PayloadType: nasx.PayloadN1SMInformation, PDUSessionID: 1,
		Payload: amf.built(nasxtest.Reject(1, pti, nasMessage.Cause5GSMMissingOrUnknownDNN))})))
	var rej *SessionRejectError
	if err := <-done; !errors.As(err, &rej) || rej.Cause != 27 {
		t.Fatalf("err %v: want a reject with 5GSM cause #27", err)
	}
	if rej.Error() != "PDU Session Establishment Reject: 5GSM cause #27 (missing or unknown DNN)" {
		t.Fatalf("message %q", rej.Error())
	}
}

func TestNetworkModificationAddsAQoSFlowForMatchingTraffic(t *testing.T) {
	g, amf := connectScripted(t)
	ue, ranID := amf.register(g, "208930000000013")
	res, _ := amf.establish(ue, ranID)
	if res.err != nil {
		t.Fatal(res.err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ue.Serve(ctx) }()
	dn := netip.MustParseAddr("10.200.0.2")
	cmd := amf.protectedDL(1, amf.built(nasxtest.ModificationCommand(1, nasType.QoSRules{nasxtest.RuleToHost(2, 10, 5, dn)},
		nasType.QoSFlowDescs{nasxtest.Flow(5, 7)})))
	amf.send(ngapxtest.ModifyRequest(testAMFUEID, ranID, 1, cmd, []uint8{5}))
	amf.next("PDUSessionResourceModifyResponse")
	_, sm := amf.uplinkGSM()
	if sm.PDUSessionModificationComplete == nil {
		t.Fatal("no Modification Complete")
	}
	stop()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	tun := res.s.Tunnel
	if q := tun.QFI(ipv4Packet(netip.MustParseAddr("10.60.0.9"), dn)); q != 5 {
		t.Fatalf("packet to %v on QFI %d, want the new flow's 5", dn, q)
	}
	if q := tun.QFI(ipv4Packet(netip.MustParseAddr("10.60.0.9"), netip.MustParseAddr("10.200.0.3"))); q != 1 {
		t.Fatalf("other packet on QFI %d, want the default 1", q)
	}
	if got := tun.QFIs(); len(got) != 2 {
		t.Fatalf("tunnel QoS flows %v, want 1 and 5", got)
	}
}

func TestUERequestedReleaseRemovesTheTunnel(t *testing.T) {
	g, amf := connectScripted(t)
	ue, ranID := amf.register(g, "208930000000014")
	res, _ := amf.establish(ue, ranID)
	if res.err != nil {
		t.Fatal(res.err)
	}
	done := make(chan error, 1)
	go func() { _, err := ue.ReleasePDUSession(context.Background(), 1); done <- err }()
	ul, sm := amf.uplinkGSM()
	rr := sm.PDUSessionReleaseRequest
	if rr == nil || ul.GetPduSessionID2Value() != 1 || rr.Cause5GSM == nil || rr.Cause5GSM.GetCauseValue() != nasMessage.Cause5GSMRegularDeactivation {
		t.Fatal("want Release Request for session 1 with #36 regular deactivation")
	}
	cmd := amf.protectedDL(1, amf.built(nasxtest.ReleaseCommand(1, rr.GetPTI(), nasMessage.Cause5GSMRegularDeactivation)))
	amf.send(ngapxtest.ReleaseCommand(testAMFUEID, ranID, cmd, 1))
	amf.next("PDUSessionResourceReleaseResponse")
	_, sm = amf.uplinkGSM()
	if sm.PDUSessionReleaseComplete == nil || sm.PDUSessionReleaseComplete.GetPTI() != rr.GetPTI() {
		t.Fatal("want Release Complete with the command's PTI")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ue.Session(1) != nil || g.UserPlane().Tunnels() != 0 {
		t.Fatalf("after release: session %v, %d tunnels", ue.Session(1), g.UserPlane().Tunnels())
	}
}

// ipv4Packet is a minimal UDP/IPv4 packet from src to dst.
func ipv4Packet(src, dst netip.Addr) []byte {
	p := make([]byte, 28)
	p[0], p[9] = 0x45, 17
	p[2], p[3] = 0, 28
	s, d := src.As4(), dst.As4()
	copy(p[12:], s[:])
	copy(p[16:], d[:])
	p[20], p[21], p[22], p[23] = 0x30, 0x39, 0x00, 0x35
	return p
}

// TS 24.501 5.5.2.2.2: deregistration releases the UE's sessions locally;
// the UE Context Release that follows takes the gNB's tunnels.
func TestDeregistrationForgetsSessionsAndTunnels(t *testing.T) {
	g, amf := connectScripted(t)
	ue, ranID := amf.register(g, "208930000000015")
	if res, _ := amf.establish(ue, ranID); res.err != nil {
		t.Fatal(res.err)
	}
	done := make(chan error, 1)
	go func() { _, err := ue.Deregister(context.Background(), true); done <- err }()
	if m := amf.uplinkNAS(); m.DeregistrationRequestUEOriginatingDeregistration == nil {
		t.Fatal("want Deregistration Request")
	}
	amf.send(ngapx.BuildUEContextReleaseCommand(testAMFUEID, ranID, ngapx.CauseNas(ngapType.CauseNasPresentDeregister)))
	amf.next("UEContextReleaseComplete")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ue.Session(1) != nil || g.UserPlane().Tunnels() != 0 {
		t.Fatalf("after deregistration: session %v, %d tunnels", ue.Session(1), g.UserPlane().Tunnels())
	}
}

// TS 24.501 6.4.3.5: a network-requested Release Command (PTI 0) that
// crosses the UE's Release Request ends the session all the same.
func TestReleaseCrossedByTheNetworksCommandEndsTheSession(t *testing.T) {
	g, amf := connectScripted(t)
	ue, ranID := amf.register(g, "208930000000016")
	if res, _ := amf.establish(ue, ranID); res.err != nil {
		t.Fatal(res.err)
	}
	done := make(chan error, 1)
	go func() { _, err := ue.ReleasePDUSession(context.Background(), 1); done <- err }()
	amf.uplinkGSM()
	cmd := amf.protectedDL(1, amf.built(nasxtest.ReleaseCommand(1, 0, nasMessage.Cause5GSMRegularDeactivation)))
	amf.send(ngapxtest.ReleaseCommand(testAMFUEID, ranID, cmd, 1))
	amf.next("PDUSessionResourceReleaseResponse")
	if _, sm := amf.uplinkGSM(); sm.PDUSessionReleaseComplete == nil || sm.PDUSessionReleaseComplete.GetPTI() != 0 {
		t.Fatal("want Release Complete with the command's PTI 0")
	}
	if err := <-done; err != nil || ue.Session(1) != nil {
		t.Fatalf("release: %v, session %v", err, ue.Session(1))
	}
}
