package ransim

// What the simulator puts on N2, decoded by a scripted AMF on a fake
// association: each IE a real UE (TS 24.501) and gNB (TS 38.413) includes
// is there, so the simulator can drive other cores.

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/security"
)

// fakeConn is the gNB's end of an association whose other end is the test.
type fakeConn struct {
	down   chan []byte // AMF → gNB
	up     chan []byte // gNB → AMF
	closed chan struct{}
}

func newFakeConn() *fakeConn {
	return &fakeConn{down: make(chan []byte, 16), up: make(chan []byte, 16), closed: make(chan struct{})}
}

var errClosed = errors.New("association closed")

func (c *fakeConn) ReadMsg() ([]byte, uint16, error) {
	select {
	case b := <-c.down:
		return b, 1, nil
	case <-c.closed:
		return nil, 0, errClosed
	}
}

func (c *fakeConn) WriteMsg(b []byte, _ uint16) error {
	select {
	case <-c.closed:
		return errClosed
	default:
	}
	c.up <- append([]byte(nil), b...)
	return nil
}

func (c *fakeConn) Close() error {
	select {
	case <-c.closed:
	default:
		close(c.closed)
	}
	return nil
}

func (c *fakeConn) LocalAddr() net.Addr  { return &net.UDPAddr{} }
func (c *fakeConn) RemoteAddr() net.Addr { return &net.UDPAddr{} }
func (c *fakeConn) Streams() uint16      { return 2 }

// scriptedAMF is the test's side of the association.
type scriptedAMF struct {
	t    *testing.T
	conn *fakeConn
	sec  *security.NASContext // the AMF's NAS context once security mode ran
}

// next returns the next PDU the gNB sent, decoded.
func (a *scriptedAMF) next(want string) *ngapType.NGAPPDU {
	a.t.Helper()
	select {
	case b := <-a.conn.up:
		pdu, err := ngapx.Decode(b)
		if err != nil {
			a.t.Fatalf("the gNB sent undecodable NGAP: %v", err)
		}
		s, err := ngapx.Summarize(pdu)
		if err != nil {
			a.t.Fatal(err)
		}
		if s.Name != want {
			a.t.Fatalf("the gNB sent %s, want %s", s.Name, want)
		}
		return pdu
	case <-time.After(10 * time.Second): // bounds a failing test only
		a.t.Fatalf("no %s from the gNB", want)
	}
	return nil
}

func (a *scriptedAMF) send(b []byte, err error) {
	a.t.Helper()
	if err != nil {
		a.t.Fatal(err)
	}
	a.conn.down <- b
}

// nasDown sends a 5GMM message in Downlink NAS Transport, protected once
// security mode ran.
func (a *scriptedAMF) nasDown(ranID int64, plain []byte) {
	a.t.Helper()
	var err error
	if a.sec != nil {
		if plain, err = a.sec.Protect(plain, nas.SecurityHeaderTypeIntegrityProtectedAndCiphered); err != nil {
			a.t.Fatal(err)
		}
	}
	a.send(ngapx.BuildDownlinkNASTransport(testAMFUEID, ranID, plain))
}

// built fails the test on a builder's error.
func (a *scriptedAMF) built(b []byte, err error) []byte {
	a.t.Helper()
	if err != nil {
		a.t.Fatal(err)
	}
	return b
}

// uplinkNAS reads Uplink NAS Transport, checks its NGAP IEs and returns its
// 5GMM message, unprotected with the AMF's context when there is one.
func (a *scriptedAMF) uplinkNAS() *nas.Message {
	a.t.Helper()
	m := a.next("UplinkNASTransport").InitiatingMessage.Value.UplinkNASTransport
	var pdu []byte
	var uli *ngapType.UserLocationInformation
	for _, ie := range m.ProtocolIEs.List {
		switch {
		case ie.Value.NASPDU != nil:
			pdu = ie.Value.NASPDU.Value
		case ie.Value.UserLocationInformation != nil:
			uli = ie.Value.UserLocationInformation
		}
	}
	checkULI(a.t, "Uplink NAS Transport", uli)
	if a.sec != nil {
		plain, _, err := a.sec.Unprotect(pdu)
		if err != nil {
			a.t.Fatalf("uplink NAS integrity: %v", err)
		}
		pdu = plain
	}
	msg, err := nasx.Decode(pdu)
	if err != nil {
		a.t.Fatal(err)
	}
	return msg
}

const testAMFUEID = 77

var (
	testPLMN  = domain.PLMN{MCC: "208", MNC: "93"}
	testSlice = models.Snssai{Sst: 1, Sd: "010203"}
)

// checkULI: User Location Information NR with the TAI and the NR CGI
// (TS 38.413 9.3.1.16).
func checkULI(t *testing.T, where string, uli *ngapType.UserLocationInformation) {
	t.Helper()
	if uli == nil || uli.UserLocationInformationNR == nil {
		t.Fatalf("%s without NR User Location Information", where)
	}
	nr := uli.UserLocationInformationNR
	tai, err := domain.TAIFromNGAP(nr.TAI)
	if err != nil || tai != (domain.TAI{PLMN: testPLMN, TAC: 1}) {
		t.Fatalf("%s: TAI %v, %v", where, tai, err)
	}
	if nr.NRCGI.NRCellIdentity.Value.BitLength != 36 || len(nr.NRCGI.PLMNIdentity.Value) != 3 {
		t.Fatalf("%s: NR CGI %+v", where, nr.NRCGI)
	}
}

// connectScripted runs NG Setup over a fake association and checks what NG
// Setup Request carries (TS 38.413 9.2.6.1).
func connectScripted(t *testing.T) (*GNB, *scriptedAMF) {
	conn := newFakeConn()
	amf := &scriptedAMF{t: t, conn: conn}
	cfg := GNBConfig{PLMN: testPLMN, TAC: 1, ID: 1, SNSSAIs: []models.Snssai{testSlice}, Log: slog.New(slog.DiscardHandler)}
	// What Connect does after dialling.
	g := newGNB(cfg, conn, "fake")
	go g.readLoop()
	t.Cleanup(func() { g.Close() })
	errc := make(chan error, 1)
	go func() { errc <- g.ngSetup(context.Background()) }()

	req := amf.next("NGSetupRequest").InitiatingMessage.Value.NGSetupRequest
	seen := map[int64]bool{}
	for _, ie := range req.ProtocolIEs.List {
		seen[ie.Id.Value] = true
		if tas := ie.Value.SupportedTAList; tas != nil {
			if len(tas.List) != 1 || len(tas.List[0].BroadcastPLMNList.List) != 1 ||
				len(tas.List[0].BroadcastPLMNList.List[0].TAISliceSupportList.List) != 1 {
				t.Fatalf("Supported TA List %+v: want one TA broadcasting the PLMN with its slice", tas)
			}
		}
	}
	for _, id := range []int64{ngapType.ProtocolIEIDGlobalRANNodeID, ngapType.ProtocolIEIDRANNodeName,
		ngapType.ProtocolIEIDSupportedTAList, ngapType.ProtocolIEIDDefaultPagingDRX} {
		if !seen[id] {
			t.Fatalf("NG Setup Request without IE %d", id)
		}
	}
	amf.send(ngapx.BuildNGSetupResponse(ngapx.Served{AMFName: "amf", GUAMI: testGUAMI, Capacity: 255, SNSSAIs: []models.Snssai{testSlice}}))
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return g, amf
}

var testGUAMI = domain.GUAMI{PLMN: testPLMN, AMFID: domain.AMFID{RegionID: 0xCA, SetID: 0x3F8}}

// The USIM keys of the test UEs (the config's default subscriber range).
var (
	testK, _   = hex.DecodeString("8baf473f2f8fd09487cccbd7097c6862")
	testOPc, _ = hex.DecodeString("8e27b6af0e692e750f32667a3b14605d")
)

// startRegistration puts a UE with imsi under g and starts its initial
// registration; done receives Register's result.
func startRegistration(g *GNB, imsi string) (ue *UE, done chan error) {
	ue = g.NewUE(Subscriber{IMSI: imsi, K: testK, OPc: testOPc}, Concealment{Scheme: security.SchemeNull})
	done = make(chan error, 1)
	go func() { _, err := ue.Register(context.Background()); done <- err }()
	return ue, done
}

// register runs a whole initial registration of imsi with the checks of
// each step, and returns the UE and its RAN UE NGAP ID.
func (a *scriptedAMF) register(g *GNB, imsi string) (*UE, int64) {
	a.t.Helper()
	ue, done := startRegistration(g, imsi)
	ranID := a.initialRegistrationRequest()
	a.authenticate(ranID, imsi)
	a.securityMode(ranID, imsi)
	a.accept(ranID)
	if err := <-done; err != nil {
		a.t.Fatal(err)
	}
	return ue, ranID
}

// TS 24.501 5.5.1.2.2, 4.4.6, 5.4.2.3 and TS 38.413 8.6.1, 8.3.1: an
// initial registration as a real UE and gNB send it, message by message.
func TestSimulatorSendsWhatARealUEAndGNBSend(t *testing.T) {
	g, amf := connectScripted(t)
	const imsi = "208930000000001"
	ue, done := startRegistration(g, imsi)

	ranID := amf.initialRegistrationRequest()
	// TS 24.501 5.4.3.3: the identity asked for.
	for _, want := range []struct {
		typ nasx.IdentityType
		pei string
	}{{nasx.IdentityIMEI, "imei-" + imeiOf(imsi)}, {nasx.IdentityIMEISV, "imeisv-" + imeisvOf(imsi)}, {nasx.IdentitySUCI, ""}} {
		amf.nasDown(ranID, amf.built(nasx.BuildIdentityRequest(want.typ)))
		r := amf.uplinkNAS().IdentityResponse
		if r == nil {
			t.Fatalf("want Identity Response for %s", want.typ)
		}
		id, err := nasx.ParseMobileIdentity(r.MobileIdentity.Buffer)
		if err != nil || id.Type != want.typ || id.PEI != want.pei {
			t.Fatalf("Identity Response for %s: %+v, %v", want.typ, id, err)
		}
	}
	amf.authenticate(ranID, imsi)
	amf.securityMode(ranID, imsi)
	amf.accept(ranID)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// A later registration, under the UE's context: cleartext IEs, the
	// whole request ciphered in the NAS message container (4.4.6), naming
	// where the UE was registered (9.11.3.8).
	identity, err := nasx.EncodeGUTI(*ue.GUTI())
	if err != nil {
		t.Fatal(err)
	}
	mobility := uint8(nasMessage.RegistrationType5GSMobilityRegistrationUpdating)
	full, err := nasx.BuildRegistrationRequest(ue.registrationRequest(mobility, identity))
	if err != nil {
		t.Fatal(err)
	}
	initial, err := ue.initialRequest(mobility, identity, full)
	if err != nil {
		t.Fatal(err)
	}
	pdu, err := ue.sec.Protect(initial, nas.SecurityHeaderTypeIntegrityProtected)
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := amf.sec.Unprotect(pdu)
	if err != nil {
		t.Fatal(err)
	}
	outer := decodeRegistration(t, plain)
	if outer.Capability5GMM != nil || outer.RequestedNSSAI != nil || outer.NASMessageContainer == nil {
		t.Fatal("initial message under a context: want cleartext IEs and a NAS message container (TS 24.501 4.4.6)")
	}
	inner, err := amf.sec.DecipherContainer(outer.NASMessageContainer.Buffer)
	if err != nil {
		t.Fatal(err)
	}
	r := decodeRegistration(t, inner)
	if lv := r.LastVisitedRegisteredTAI; lv == nil || lv.Octet != [6]byte{0x02, 0xf8, 0x39, 0, 0, 1} {
		t.Fatalf("mobility registration: last visited registered TAI %+v, want 208/93 TAC 1", lv)
	}
	if r.Capability5GMM == nil || r.RequestedNSSAI == nil {
		t.Fatal("mobility registration without 5GMM capability or requested NSSAI (TS 24.501 5.5.1.3.2)")
	}
}

func decodeRegistration(t *testing.T, b []byte) *nasMessage.RegistrationRequest {
	t.Helper()
	m, err := nasx.Decode(b)
	if err != nil || m.RegistrationRequest == nil {
		t.Fatalf("want a Registration Request: %v", err)
	}
	return m.RegistrationRequest
}

// initialRegistrationRequest reads Initial UE Message: NGAP IEs of TS 38.413
// 9.2.5.1 and a Registration Request cut to its cleartext IEs (4.4.6).
func (a *scriptedAMF) initialRegistrationRequest() int64 {
	t := a.t
	msg := a.next("InitialUEMessage").InitiatingMessage.Value.InitialUEMessage
	var ranID int64 = -1
	var pdu []byte
	seen := map[int64]bool{}
	for _, ie := range msg.ProtocolIEs.List {
		seen[ie.Id.Value] = true
		switch v := ie.Value; {
		case v.RANUENGAPID != nil:
			ranID = v.RANUENGAPID.Value
		case v.NASPDU != nil:
			pdu = v.NASPDU.Value
		case v.UserLocationInformation != nil:
			checkULI(t, "Initial UE Message", v.UserLocationInformation)
		case v.RRCEstablishmentCause != nil:
			if v.RRCEstablishmentCause.Value != ngapType.RRCEstablishmentCausePresentMoSignalling {
				t.Fatalf("RRC establishment cause %d, want mo-Signalling", v.RRCEstablishmentCause.Value)
			}
		}
	}
	for _, id := range []int64{ngapType.ProtocolIEIDRANUENGAPID, ngapType.ProtocolIEIDNASPDU, ngapType.ProtocolIEIDUserLocationInformation,
		ngapType.ProtocolIEIDRRCEstablishmentCause, ngapType.ProtocolIEIDUEContextRequest} {
		if !seen[id] {
			t.Fatalf("Initial UE Message without IE %d", id)
		}
	}
	m, err := nasx.Decode(pdu)
	if err != nil {
		t.Fatal(err)
	}
	r := m.RegistrationRequest
	if r == nil || r.NgksiAndRegistrationType5GS.GetRegistrationType5GS() != nasMessage.RegistrationType5GSInitialRegistration ||
		r.NgksiAndRegistrationType5GS.GetNasKeySetIdentifiler() != 7 || r.NgksiAndRegistrationType5GS.GetFOR() != 1 {
		t.Fatalf("want an initial Registration Request with ngKSI 7 and follow-on request, got %+v", m.GmmMessage)
	}
	id, err := nasx.ParseMobileIdentity(r.MobileIdentity5GS.Buffer)
	if err != nil || id.Type != nasx.IdentitySUCI {
		t.Fatalf("5GS mobile identity %+v, %v: want a SUCI", id, err)
	}
	if r.UESecurityCapability == nil {
		t.Fatal("Registration Request without UE security capability (a cleartext IE, TS 24.501 4.4.6)")
	}
	if r.Capability5GMM != nil || r.RequestedNSSAI != nil {
		t.Fatal("non-cleartext IEs in an initial message sent without a security context (TS 24.501 4.4.6)")
	}
	return ranID
}

// authenticate runs 5G AKA as the AUSF and AMF would and checks RES*.
func (a *scriptedAMF) authenticate(ranID int64, imsi string) {
	t := a.t
	sn := security.ServingNetworkName("208", "93")
	av, err := security.GenerateAuthVector(testK, testOPc, []byte{0, 0, 0, 0, 0, 0x21}, []byte{0x80, 0}, nil, sn)
	if err != nil {
		t.Fatal(err)
	}
	var rand, autn [16]byte
	copy(rand[:], av.RAND)
	copy(autn[:], av.AUTN)
	a.nasDown(ranID, a.built(nasx.BuildAuthenticationRequest(1, []byte{0, 0}, rand, autn)))
	r := a.uplinkNAS().AuthenticationResponse
	if r == nil || r.AuthenticationResponseParameter == nil ||
		!bytes.Equal(r.AuthenticationResponseParameter.Octet[:r.AuthenticationResponseParameter.GetLen()], av.XRESStar) {
		t.Fatalf("Authentication Response %+v: want RES* = XRES*", r)
	}
	kamf := security.KAMF(security.KSEAF(av.KAUSF, sn), imsi, []byte{0, 0})
	a.sec = security.NewNASContext(kamf, security.NEA2, security.NIA2, security.Downlink)
}

// securityMode asks for the IMEISV and checks Security Mode Complete: the
// IMEISV (5.4.2.3) and the whole Registration Request with every IE a UE
// includes in an initial registration (4.4.6, 5.5.1.2.2).
func (a *scriptedAMF) securityMode(ranID int64, imsi string) {
	t := a.t
	smc, err := nasx.BuildSecurityModeCommand(nasx.SecurityModeCommand{IA: security.NIA2, EA: security.NEA2, NgKSI: 1,
		ReplayedUECap: nasx.SecurityCapability{Raw: []byte{0xE0, 0xE0}}, IMEISVRequest: true})
	if err != nil {
		t.Fatal(err)
	}
	pdu, err := a.sec.Protect(smc, nas.SecurityHeaderTypeIntegrityProtectedWithNew5gNasSecurityContext)
	if err != nil {
		t.Fatal(err)
	}
	a.send(ngapx.BuildDownlinkNASTransport(testAMFUEID, ranID, pdu))
	c := a.uplinkNAS().SecurityModeComplete
	if c == nil {
		t.Fatal("want Security Mode Complete")
	}
	if c.IMEISV == nil {
		t.Fatal("Security Mode Complete without the IMEISV the command requested (TS 24.501 5.4.2.3)")
	}
	id, err := nasx.ParseMobileIdentity(c.IMEISV.Octet[:c.IMEISV.GetLen()])
	if err != nil || id.Type != nasx.IdentityIMEISV || id.PEI != "imeisv-"+imeisvOf(imsi) {
		t.Fatalf("IMEISV %+v, %v", id, err)
	}
	if c.NASMessageContainer == nil {
		t.Fatal("Security Mode Complete without the full Registration Request (TS 24.501 4.4.6)")
	}
	m, err := nasx.Decode(c.NASMessageContainer.Buffer)
	if err != nil || m.RegistrationRequest == nil {
		t.Fatalf("NAS message container: %v", err)
	}
	r := m.RegistrationRequest
	switch {
	case r.Capability5GMM == nil:
		t.Fatal("Registration Request without 5GMM capability (TS 24.501 5.5.1.2.2; free5GC rejects it with #111)")
	case r.UESecurityCapability == nil:
		t.Fatal("Registration Request without UE security capability")
	case r.RequestedNSSAI == nil:
		t.Fatal("Registration Request without requested NSSAI")
	case r.LastVisitedRegisteredTAI != nil:
		t.Fatal("a last visited registered TAI before the UE was ever registered")
	}
	requested, err := nasx.NSSAIModels(r.RequestedNSSAI.Buffer)
	if err != nil || len(requested) != 1 || requested[0] != testSlice {
		t.Fatalf("requested NSSAI %v, %v", requested, err)
	}
}

// accept sends Registration Accept in Initial Context Setup Request and
// checks the answers: the response, Registration Complete.
func (a *scriptedAMF) accept(ranID int64) {
	t := a.t
	guti := nasx.GUTI{GUAMI: testGUAMI, TMSI: 5}
	acc, err := nasx.BuildRegistrationAccept(nasx.RegistrationAccept{GUTI: &guti, Allowed: []models.Snssai{testSlice}})
	if err != nil {
		t.Fatal(err)
	}
	pdu, err := a.sec.Protect(acc, nas.SecurityHeaderTypeIntegrityProtectedAndCiphered)
	if err != nil {
		t.Fatal(err)
	}
	a.send(ngapx.BuildInitialContextSetupRequest(ngapx.InitialContext{AMFUEID: testAMFUEID, RANUEID: ranID, GUAMI: testGUAMI,
		Allowed: []models.Snssai{testSlice}, NREncryption: [2]byte{0xC0}, NRIntegrity: [2]byte{0xC0}, KgNB: make([]byte, 32), NASPDU: pdu}))
	a.next("InitialContextSetupResponse")
	// TS 38.413 8.14.1: then the UE's radio capability, for the AMF to keep.
	ind := a.next("UERadioCapabilityInfoIndication").InitiatingMessage.Value.UERadioCapabilityInfoIndication
	var capability []byte
	for _, ie := range ind.ProtocolIEs.List {
		if ie.Value.UERadioCapability != nil {
			capability = ie.Value.UERadioCapability.Value
		}
	}
	if len(capability) == 0 {
		t.Fatal("UE Radio Capability Info Indication without UE Radio Capability")
	}
	if m := a.uplinkNAS(); m.RegistrationComplete == nil {
		t.Fatalf("message type %d, want Registration Complete", m.GmmHeader.GetMessageType())
	}
}

// TS 24.501 5.4.4: the Configuration Update Command the AMF sends after
// Registration Complete reaches the gNB before the run ends; Shutdown
// releases the UE and closes the association only after the release.
func TestShutdownWaitsForTheAMFsLastMessages(t *testing.T) {
	g, amf := connectScripted(t)
	ue, ranID := amf.register(g, "208930000000002")

	shut := make(chan error, 1)
	go func() { shut <- g.Shutdown(context.Background()) }()
	req := amf.next("UEContextReleaseRequest")
	if s, _ := ngapx.Summarize(req); s.AMFUEID != testAMFUEID || s.RANUEID != ranID {
		t.Fatalf("release request for AMF UE %d / RAN UE %d", s.AMFUEID, s.RANUEID)
	}
	// The AMF's last messages for the UE, in the order it sends them.
	amf.nasDown(ranID, amf.built(nasx.BuildConfigurationUpdateCommand("L25GC+", "L25GC")))
	select {
	case <-amf.conn.closed:
		t.Fatal("association closed before the UE was released")
	default:
	}
	amf.send(ngapx.BuildUEContextReleaseCommand(testAMFUEID, ranID, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity)))
	amf.next("UEContextReleaseComplete")
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	select {
	case <-amf.conn.closed:
	default:
		t.Fatal("Shutdown returned with the association open")
	}
	if err := ue.AwaitConfigurationUpdate(context.Background()); err != nil || ue.NetworkName != "L25GC+" {
		t.Fatalf("the UE did not get the Configuration Update Command: %v (network name %q)", err, ue.NetworkName)
	}
}

// configurationUpdateCommand is a command asking for acknowledgement and
// assigning a new 5G-GUTI (TS 24.501 8.2.19), the way some cores send it.
func configurationUpdateCommand(t *testing.T, guti nasx.GUTI) []byte {
	g, err := nasx.EncodeGUTI(guti)
	if err != nil {
		t.Fatal(err)
	}
	m := nas.NewMessage()
	m.GmmMessage = nas.NewGmmMessage()
	m.GmmHeader.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSMobilityManagementMessage)
	m.GmmHeader.SetMessageType(nas.MsgTypeConfigurationUpdateCommand)
	c := nasMessage.NewConfigurationUpdateCommand(0)
	c.ExtendedProtocolDiscriminator.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSMobilityManagementMessage)
	c.ConfigurationUpdateCommandMessageIdentity.SetMessageType(nas.MsgTypeConfigurationUpdateCommand)
	c.ConfigurationUpdateIndication = nasType.NewConfigurationUpdateIndication(nasMessage.ConfigurationUpdateCommandConfigurationUpdateIndicationType)
	c.ConfigurationUpdateIndication.SetACK(1)
	c.GUTI5G = nasType.NewGUTI5G(nasMessage.ConfigurationUpdateCommandGUTI5GType)
	c.GUTI5G.SetLen(uint16(len(g)))
	copy(c.GUTI5G.Octet[:], g)
	m.ConfigurationUpdateCommand = c
	b, err := m.PlainNasEncode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TS 24.501 5.4.4.3: a UE acknowledges a Configuration Update Command that
// asks for it and takes the new 5G-GUTI.
func TestConfigurationUpdateIsAcknowledgedWhenAsked(t *testing.T) {
	g, amf := connectScripted(t)
	ue, ranID := amf.register(g, "208930000000003")
	done := make(chan error, 1)
	go func() { done <- ue.AwaitConfigurationUpdate(context.Background()) }()
	amf.nasDown(ranID, configurationUpdateCommand(t, nasx.GUTI{GUAMI: testGUAMI, TMSI: 9}))
	if m := amf.uplinkNAS(); m.ConfigurationUpdateComplete == nil {
		t.Fatalf("message type %d, want Configuration Update Complete", m.GmmHeader.GetMessageType())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ue.GUTI() == nil || ue.GUTI().TMSI != 9 {
		t.Fatalf("5G-GUTI %+v, want the one the command assigned", ue.GUTI())
	}
}

// The check digit of TS 23.003 annex B, on a published example IMEI
// (490154203237518).
func TestIMEICheckDigit(t *testing.T) {
	if d := luhn("49015420323751"); d != 8 {
		t.Fatalf("check digit %d, want 8", d)
	}
	if imei := imeiOf("208930000000001"); len(imei) != 15 || imei[:14] != "08930000000001" {
		t.Fatalf("IMEI %q", imei)
	}
}

// TS 24.501 5.4.2.5: replayed UE security capabilities that are not the
// UE's get Security Mode Reject #23, not the command's new context.
func TestMismatchedCapabilitiesGetSecurityModeReject(t *testing.T) {
	g, amf := connectScripted(t)
	const imsi = "208930000000004"
	startRegistration(g, imsi)
	ranID := amf.initialRegistrationRequest()
	amf.authenticate(ranID, imsi)
	smc := amf.built(nasx.BuildSecurityModeCommand(nasx.SecurityModeCommand{IA: security.NIA2, EA: security.NEA2, NgKSI: 1,
		ReplayedUECap: nasx.SecurityCapability{Raw: []byte{0xF0, 0xF0}}}))
	pdu, err := amf.sec.Protect(smc, nas.SecurityHeaderTypeIntegrityProtectedWithNew5gNasSecurityContext)
	if err != nil {
		t.Fatal(err)
	}
	amf.send(ngapx.BuildDownlinkNASTransport(testAMFUEID, ranID, pdu))
	amf.sec = nil // the UE rejects the context: its answer is plain
	r := amf.uplinkNAS().SecurityModeReject
	if r == nil || r.Cause5GMM.GetCauseValue() != nasx.CauseUESecurityCapMismatch {
		t.Fatalf("want Security Mode Reject #23, got %+v", r)
	}
}
