package amf

// A minimal gNB and UE for the AMF's tests (the real simulator is test/ransim).

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/security"
)

// ---- gNB side: uplink NGAP ----

func ngSetupRequest(t testing.TB, mcc, mnc string, tac uint32) []byte {
	return must2(t)(ngapx.BuildNGSetupRequest(ngapx.GNB{PLMN: domain.PLMN{MCC: mcc, MNC: mnc}, ID: 1, TACs: []domain.TAC{domain.TAC(tac)},
		SNSSAIs: []models.Snssai{{Sst: 1, Sd: "010203"}}}))
}

// testCell is where the test gNB's UEs are.
var testCell = ngapx.Cell{TAI: domain.TAI{PLMN: testPLMN, TAC: 1}, CellID: 1}

// testPLMN and testGUAMI are the test config's PLMN and GUAMI (pointer 0).
var (
	testPLMN  = domain.PLMN{MCC: "208", MNC: "93"}
	testGUAMI = domain.GUAMI{PLMN: testPLMN, AMFID: domain.AMFID{RegionID: 0xCA, SetID: 0x3F8}}
)

func initialUEMessage(t testing.TB, ranID int64, nasPDU []byte) []byte {
	return must2(t)(ngapx.BuildInitialUEMessage(ranID, nasPDU, testCell, nil))
}

func uplinkNAS(t testing.TB, amfID, ranID int64, nasPDU []byte) []byte {
	return must2(t)(ngapx.BuildUplinkNASTransport(amfID, ranID, nasPDU, testCell))
}

func releaseComplete(t testing.TB, amfID, ranID int64) []byte {
	return must2(t)(ngapx.BuildUEContextReleaseComplete(amfID, ranID))
}

// must2 fails the test on a builder's error.
func must2(t testing.TB) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// ---- the test's view of the AMF over one association ----

type gnbSide struct {
	t    *testing.T
	h    *harness
	conn *fakeConn
}

func (h *harness) connect() *gnbSide {
	c := newFakeConn()
	go h.amf.Serve(c)
	h.t.Cleanup(func() { _ = c.Close() })
	return &gnbSide{t: h.t, h: h, conn: c}
}

func (g *gnbSide) send(b []byte) { g.conn.in <- msg{b: b} }

// recv returns the next PDU the AMF sent (the wait bounds a failing test;
// no test asserts on time).
func (g *gnbSide) recv() (ngapx.Summary, uint16) {
	g.t.Helper()
	return g.recvWithin(10 * time.Second)
}

// recvWithin is recv failing after d.
func (g *gnbSide) recvWithin(d time.Duration) (ngapx.Summary, uint16) {
	g.t.Helper()
	select {
	case m := <-g.conn.out:
		pdu, err := ngapx.Decode(m.b)
		if err != nil {
			g.t.Fatalf("AMF sent undecodable NGAP: %v", err)
		}
		s, err := ngapx.Summarize(pdu)
		if err != nil {
			g.t.Fatal(err)
		}
		return s, m.stream
	case <-time.After(d):
		g.t.Fatalf("no NGAP message from the AMF within %v", d)
	}
	return ngapx.Summary{}, 0
}

func (g *gnbSide) expect(name string) ngapx.Summary {
	g.t.Helper()
	s, stream := g.recv()
	if s.Name != name {
		g.t.Fatalf("AMF sent %s, want %s", s.Name, name)
	}
	ueAssoc := s.AMFUEID >= 0 && name != "ErrorIndication"
	if ueAssoc && stream == 0 || !ueAssoc && name != "ErrorIndication" && stream != 0 {
		g.t.Fatalf("%s on stream %d", name, stream)
	}
	return s
}

// newSetUpHarness is a harness whose gNB has completed NG Setup.
func newSetUpHarness(t *testing.T, edit func(*config.Config)) (*harness, *gnbSide) {
	t.Helper()
	h := newHarness(t, edit)
	g := h.connect()
	g.setup()
	return h, g
}

func (g *gnbSide) setup() {
	g.send(ngSetupRequest(g.t, "208", "93", 1))
	g.expect("NGSetupResponse")
}

// ---- UE side: uplink NAS ----

type testUE struct {
	t       *testing.T
	g       *gnbSide
	supi    string
	suci    string
	k       []byte
	ranID   int64
	amfID   int64
	opc     []byte
	sec     *security.NASContext
	guti    *nasx.GUTI
	rand    []byte
	kamf    []byte
	caps    []byte
	lastKSI uint8
}

func (h *harness) newUE(g *gnbSide, msin string, ranID int64) *testUE {
	supi := "imsi-20893" + msin
	k, _ := hex.DecodeString(config.DefaultK)
	opc, _ := hex.DecodeString(config.DefaultOPc)
	h.peers.subs[supi] = &subscriber{k: k, opc: opc, sqn: make([]byte, 6), nssai: []models.Snssai{{Sst: 1, Sd: "010203"}}}
	return &testUE{t: h.t, g: g, supi: supi, suci: "suci-0-208-93-0000-0-0-" + msin, k: k, opc: opc, ranID: ranID,
		caps: []byte{0xE0, 0xE0}, lastKSI: 7}
}

func (u *testUE) registrationRequest(regType uint8, identity []byte) []byte {
	return must2(u.t)(nasx.BuildRegistrationRequest(nasx.RegistrationRequest{Type: regType, NgKSI: u.lastKSI, Identity: identity,
		SecurityCaps: u.caps, Requested: []models.Snssai{{Sst: 1, Sd: "010203"}, {Sst: 9}}}))
}

func (u *testUE) suciIdentity() []byte {
	b, err := nasx.EncodeSUCI(u.suci)
	if err != nil {
		u.t.Fatal(err)
	}
	return b
}

// protect sends a message under the UE's context (integrity + "ciphered" header).
func (u *testUE) protect(b []byte, sht uint8) []byte {
	out, err := u.sec.Protect(b, sht)
	if err != nil {
		u.t.Fatal(err)
	}
	return out
}

// dl reads the next Downlink NAS Transport (or ICS) and returns its decoded NAS.
func (u *testUE) dl(name string) *nas.Message {
	u.t.Helper()
	s := u.g.expect(name)
	if s.RANUEID != u.ranID {
		u.t.Fatalf("%s for RAN UE %d, want %d", name, s.RANUEID, u.ranID)
	}
	u.amfID = s.AMFUEID
	return u.decode(s.NASPDU)
}

func (u *testUE) decode(pdu []byte) *nas.Message {
	u.t.Helper()
	h, err := nasx.PeekHeader(pdu)
	if err != nil {
		u.t.Fatal(err)
	}
	if h.Protected() {
		if u.sec == nil {
			u.t.Fatalf("protected downlink before security: %x", pdu)
		}
		if pdu, _, err = u.sec.Unprotect(pdu); err != nil {
			u.t.Fatalf("downlink integrity: %v", err)
		}
	}
	m, err := nasx.Decode(pdu)
	if err != nil {
		u.t.Fatal(err)
	}
	return m
}

func (u *testUE) up(b []byte) { u.g.send(uplinkNAS(u.t, u.amfID, u.ranID, b)) }

// authenticate answers an Authentication Request the test way (RES* of the fake AUSF).
func (u *testUE) authResponse(m *nas.Message) []byte {
	r := m.AuthenticationRequest
	if r == nil {
		u.t.Fatalf("want Authentication Request, got %d", m.GmmHeader.GetMessageType())
	}
	if !bytes.Equal(r.ABBA.Buffer, []byte{0, 0}) {
		u.t.Fatalf("ABBA %x", r.ABBA.Buffer)
	}
	rand := r.AuthenticationParameterRAND.GetRANDValue()
	autn := r.AuthenticationParameterAUTN.GetAUTN()
	u.rand = rand[:]
	u.lastKSI = r.SpareHalfOctetAndNgksi.GetNasKeySetIdentifiler()
	// The USIM and ME of TS 33.501 6.1.3.2 steps 5-6, with package security.
	aka, err := security.VerifyAUTN(u.k, u.opc, u.rand, autn[:])
	if err != nil {
		u.t.Fatalf("AUTN: %v", err)
	}
	sn := security.ServingNetworkName("208", "93")
	kseaf := security.KSEAF(security.KAUSF(aka.CK, aka.IK, sn, aka.SQNXorAK), sn)
	u.kamf = security.KAMF(kseaf, strings.TrimPrefix(u.supi, "imsi-"), []byte{0, 0})
	return must2(u.t)(nasx.BuildAuthenticationResponse(security.ResStar(aka.CK, aka.IK, sn, u.rand, aka.RES)))
}

// acceptSMC verifies the Security Mode Command with the keys the UE derives.
func (u *testUE) acceptSMC(pdu []byte, fullRequest []byte) []byte {
	u.t.Helper()
	h, _ := nasx.PeekHeader(pdu)
	if h.SecurityHeaderType != nas.SecurityHeaderTypeIntegrityProtectedWithNew5gNasSecurityContext {
		u.t.Fatalf("SMC with security header type %d, want 3", h.SecurityHeaderType)
	}
	m, err := nasx.Decode(pdu[7:])
	if err != nil || m.SecurityModeCommand == nil {
		u.t.Fatalf("not a Security Mode Command: %v", err)
	}
	c := m.SecurityModeCommand
	ea, ia := c.SelectedNASSecurityAlgorithms.GetTypeOfCipheringAlgorithm(), c.SelectedNASSecurityAlgorithms.GetTypeOfIntegrityProtectionAlgorithm()
	if !bytes.Equal(c.ReplayedUESecurityCapabilities.Buffer, u.caps) {
		u.t.Fatalf("replayed capabilities %x, want %x", c.ReplayedUESecurityCapabilities.Buffer, u.caps)
	}
	u.sec = security.NewNASContext(u.kamf, ea, ia, security.Uplink)
	if _, _, err := u.sec.Unprotect(pdu); err != nil {
		u.t.Fatalf("SMC MAC: %v", err)
	}
	return u.protect(must2(u.t)(nasx.BuildSecurityModeComplete(fullRequest)), nas.SecurityHeaderTypeIntegrityProtectedAndCipheredWithNew5gNasSecurityContext)
}

func (u *testUE) registrationComplete() []byte {
	return u.protect(must2(u.t)(nasx.BuildRegistrationComplete()), nas.SecurityHeaderTypeIntegrityProtectedAndCiphered)
}

func (u *testUE) deregistrationRequest(switchOff bool) []byte {
	g, _ := nasx.EncodeGUTI(*u.guti)
	return u.protect(must2(u.t)(nasx.BuildDeregistrationRequest(switchOff, u.lastKSI, g)), nas.SecurityHeaderTypeIntegrityProtectedAndCiphered)
}

// returnWithGUTI is the UE coming back from CM-IDLE on a new RAN UE NGAP
// ID with a mobility registration update under its kept security context
// (integrity protected, TS 24.501 4.4.6), accepted without authentication.
func (u *testUE) returnWithGUTI(ranID int64) *nasMessage.RegistrationAccept {
	u.t.Helper()
	gb, _ := nasx.EncodeGUTI(*u.guti)
	u.ranID = ranID
	u.g.send(initialUEMessage(u.t, u.ranID, u.protect(u.registrationRequest(
		nasMessage.RegistrationType5GSMobilityRegistrationUpdating, gb), nas.SecurityHeaderTypeIntegrityProtected)))
	return u.readAccept()
}

// acceptRegistration reads ICS + Registration Accept and checks what a user would.
func (u *testUE) readAccept() *nasMessage.RegistrationAccept {
	u.t.Helper()
	m := u.dl("InitialContextSetupRequest")
	a := m.RegistrationAccept
	if a == nil {
		u.t.Fatalf("ICS carries message type %d, want Registration Accept", m.GmmHeader.GetMessageType())
	}
	if a.GUTI5G == nil {
		u.t.Fatal("Registration Accept without 5G-GUTI")
	}
	id, err := nasx.ParseMobileIdentity(a.GUTI5G.Octet[:])
	if err != nil {
		u.t.Fatal(err)
	}
	u.guti = &id.GUTI
	return a
}

// registerUntilAccept runs an initial registration with SUCI up to the
// Initial Context Setup Request that carries Registration Accept.
func (u *testUE) registerUntilAccept() *nasMessage.RegistrationAccept {
	u.t.Helper()
	u.g.send(initialUEMessage(u.t, u.ranID, u.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, u.suciIdentity())))
	u.up(u.authResponse(u.dl("DownlinkNASTransport")))
	u.up(u.acceptSMC(u.g.expect("DownlinkNASTransport").NASPDU, nil))
	return u.readAccept()
}

// register runs a whole initial registration with SUCI.
func (u *testUE) register() *nasMessage.RegistrationAccept {
	u.t.Helper()
	a := u.registerUntilAccept()
	u.up(u.registrationComplete())
	if m := u.dl("DownlinkNASTransport"); m.ConfigurationUpdateCommand == nil {
		u.t.Fatalf("after Registration Complete: message type %d, want Configuration Update Command", m.GmmHeader.GetMessageType())
	}
	return a
}

func releaseRequest(t testing.TB, amfID, ranID int64) []byte {
	return must2(t)(ngapx.BuildUEContextReleaseRequest(amfID, ranID, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity)))
}

func identityResponse(t testing.TB, id []byte) []byte {
	return must2(t)(nasx.BuildIdentityResponse(id))
}

func authFailure(t testing.TB, cause uint8, auts []byte) []byte {
	return must2(t)(nasx.BuildAuthenticationFailure(cause, auts))
}

func ngReset(t testing.TB) []byte {
	return must2(t)(ngapx.BuildNGReset(ngapx.CauseMisc(ngapType.CauseMiscPresentOmIntervention)))
}
