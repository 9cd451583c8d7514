package amf

// A minimal gNB and UE for the AMF's tests (the real simulator is test/ransim).

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/free5gc/aper"
	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/security"
)

// ---- gNB side: uplink NGAP ----

func ie[T any](id int64, crit aper.Enumerated, v T) (ngapType.ProtocolIEID, ngapType.Criticality, T) {
	return ngapType.ProtocolIEID{Value: id}, ngapType.Criticality{Value: crit}, v
}

func encode(t testing.TB, pdu *ngapType.NGAPPDU) []byte {
	b, err := ngapx.Encode(pdu)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func initiatingPDU(code int64, present int) *ngapType.NGAPPDU {
	pdu := &ngapType.NGAPPDU{Present: ngapType.NGAPPDUPresentInitiatingMessage,
		InitiatingMessage: &ngapType.InitiatingMessage{ProcedureCode: ngapType.ProcedureCode{Value: code},
			Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentIgnore}}}
	pdu.InitiatingMessage.Value.Present = present
	return pdu
}

func ngSetupRequest(t testing.TB, mcc, mnc string, tac uint32) []byte {
	plmn, _ := ngapx.PLMN(mcc, mnc)
	sn, _ := ngapx.SNSSAI(models.Snssai{Sst: 1, Sd: "010203"})
	pdu := initiatingPDU(ngapType.ProcedureCodeNGSetup, ngapType.InitiatingMessagePresentNGSetupRequest)
	r := &ngapType.NGSetupRequest{}
	add := func(id int64, v ngapType.NGSetupRequestIEsValue) {
		r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.NGSetupRequestIEs{Id: ngapType.ProtocolIEID{Value: id},
			Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentReject}, Value: v})
	}
	add(ngapType.ProtocolIEIDGlobalRANNodeID, ngapType.NGSetupRequestIEsValue{Present: ngapType.NGSetupRequestIEsPresentGlobalRANNodeID,
		GlobalRANNodeID: &ngapType.GlobalRANNodeID{Present: ngapType.GlobalRANNodeIDPresentGlobalGNBID,
			GlobalGNBID: &ngapType.GlobalGNBID{PLMNIdentity: plmn, GNBID: ngapType.GNBID{Present: ngapType.GNBIDPresentGNBID,
				GNBID: &aper.BitString{Bytes: []byte{0, 0, 1}, BitLength: 24}}}}})
	add(ngapType.ProtocolIEIDSupportedTAList, ngapType.NGSetupRequestIEsValue{Present: ngapType.NGSetupRequestIEsPresentSupportedTAList,
		SupportedTAList: &ngapType.SupportedTAList{List: []ngapType.SupportedTAItem{{TAC: ngapx.TAC(tac),
			BroadcastPLMNList: ngapType.BroadcastPLMNList{List: []ngapType.BroadcastPLMNItem{{PLMNIdentity: plmn,
				TAISliceSupportList: ngapType.SliceSupportList{List: []ngapType.SliceSupportItem{{SNSSAI: sn}}}}}}}}}})
	add(ngapType.ProtocolIEIDDefaultPagingDRX, ngapType.NGSetupRequestIEsValue{Present: ngapType.NGSetupRequestIEsPresentDefaultPagingDRX,
		DefaultPagingDRX: &ngapType.PagingDRX{Value: ngapType.PagingDRXPresentV128}})
	pdu.InitiatingMessage.Criticality.Value = ngapType.CriticalityPresentReject
	pdu.InitiatingMessage.Value.NGSetupRequest = r
	return encode(t, pdu)
}

func initialUEMessage(t testing.TB, ranID int64, nasPDU []byte) []byte {
	tai, _ := ngapx.TAI(nasx.TAI{MCC: "208", MNC: "93", TAC: 1})
	pdu := initiatingPDU(ngapType.ProcedureCodeInitialUEMessage, ngapType.InitiatingMessagePresentInitialUEMessage)
	m := &ngapType.InitialUEMessage{}
	add := func(id int64, v ngapType.InitialUEMessageIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.InitialUEMessageIEs{Id: ngapType.ProtocolIEID{Value: id},
			Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentReject}, Value: v})
	}
	add(ngapType.ProtocolIEIDRANUENGAPID, ngapType.InitialUEMessageIEsValue{Present: ngapType.InitialUEMessageIEsPresentRANUENGAPID,
		RANUENGAPID: &ngapType.RANUENGAPID{Value: ranID}})
	add(ngapType.ProtocolIEIDNASPDU, ngapType.InitialUEMessageIEsValue{Present: ngapType.InitialUEMessageIEsPresentNASPDU,
		NASPDU: &ngapType.NASPDU{Value: nasPDU}})
	add(ngapType.ProtocolIEIDUserLocationInformation, ngapType.InitialUEMessageIEsValue{Present: ngapType.InitialUEMessageIEsPresentUserLocationInformation,
		UserLocationInformation: &ngapType.UserLocationInformation{Present: ngapType.UserLocationInformationPresentUserLocationInformationNR,
			UserLocationInformationNR: &ngapType.UserLocationInformationNR{TAI: tai, NRCGI: ngapType.NRCGI{PLMNIdentity: tai.PLMNIdentity,
				NRCellIdentity: ngapType.NRCellIdentity{Value: aper.BitString{Bytes: []byte{0, 0, 0, 1, 0x00}, BitLength: 36}}}}}})
	add(ngapType.ProtocolIEIDRRCEstablishmentCause, ngapType.InitialUEMessageIEsValue{Present: ngapType.InitialUEMessageIEsPresentRRCEstablishmentCause,
		RRCEstablishmentCause: &ngapType.RRCEstablishmentCause{Value: ngapType.RRCEstablishmentCausePresentMoSignalling}})
	pdu.InitiatingMessage.Value.InitialUEMessage = m
	return encode(t, pdu)
}

func uplinkNAS(t testing.TB, amfID, ranID int64, nasPDU []byte) []byte {
	pdu := initiatingPDU(ngapType.ProcedureCodeUplinkNASTransport, ngapType.InitiatingMessagePresentUplinkNASTransport)
	tai, _ := ngapx.TAI(nasx.TAI{MCC: "208", MNC: "93", TAC: 1})
	m := &ngapType.UplinkNASTransport{}
	add := func(id int64, v ngapType.UplinkNASTransportIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.UplinkNASTransportIEs{Id: ngapType.ProtocolIEID{Value: id},
			Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentReject}, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, ngapType.UplinkNASTransportIEsValue{Present: ngapType.UplinkNASTransportIEsPresentAMFUENGAPID,
		AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, ngapType.UplinkNASTransportIEsValue{Present: ngapType.UplinkNASTransportIEsPresentRANUENGAPID,
		RANUENGAPID: &ngapType.RANUENGAPID{Value: ranID}})
	add(ngapType.ProtocolIEIDNASPDU, ngapType.UplinkNASTransportIEsValue{Present: ngapType.UplinkNASTransportIEsPresentNASPDU,
		NASPDU: &ngapType.NASPDU{Value: nasPDU}})
	add(ngapType.ProtocolIEIDUserLocationInformation, ngapType.UplinkNASTransportIEsValue{Present: ngapType.UplinkNASTransportIEsPresentUserLocationInformation,
		UserLocationInformation: &ngapType.UserLocationInformation{Present: ngapType.UserLocationInformationPresentUserLocationInformationNR,
			UserLocationInformationNR: &ngapType.UserLocationInformationNR{TAI: tai, NRCGI: ngapType.NRCGI{PLMNIdentity: tai.PLMNIdentity,
				NRCellIdentity: ngapType.NRCellIdentity{Value: aper.BitString{Bytes: []byte{0, 0, 0, 1, 0x00}, BitLength: 36}}}}}})
	pdu.InitiatingMessage.Value.UplinkNASTransport = m
	return encode(t, pdu)
}

func releaseComplete(t testing.TB, amfID, ranID int64) []byte {
	pdu := &ngapType.NGAPPDU{Present: ngapType.NGAPPDUPresentSuccessfulOutcome,
		SuccessfulOutcome: &ngapType.SuccessfulOutcome{ProcedureCode: ngapType.ProcedureCode{Value: ngapType.ProcedureCodeUEContextRelease},
			Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentReject}}}
	pdu.SuccessfulOutcome.Value.Present = ngapType.SuccessfulOutcomePresentUEContextReleaseComplete
	c := &ngapType.UEContextReleaseComplete{}
	c.ProtocolIEs.List = []ngapType.UEContextReleaseCompleteIEs{
		{Id: ngapType.ProtocolIEID{Value: ngapType.ProtocolIEIDAMFUENGAPID}, Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentIgnore},
			Value: ngapType.UEContextReleaseCompleteIEsValue{Present: ngapType.UEContextReleaseCompleteIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfID}}},
		{Id: ngapType.ProtocolIEID{Value: ngapType.ProtocolIEIDRANUENGAPID}, Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentIgnore},
			Value: ngapType.UEContextReleaseCompleteIEsValue{Present: ngapType.UEContextReleaseCompleteIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranID}}},
	}
	pdu.SuccessfulOutcome.Value.UEContextReleaseComplete = c
	return encode(t, pdu)
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
	case <-time.After(10 * time.Second):
		g.t.Fatal("no NGAP message from the AMF")
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

func gmm(msgType uint8) *nas.Message {
	m := nas.NewMessage()
	m.GmmMessage = nas.NewGmmMessage()
	m.GmmHeader.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSMobilityManagementMessage)
	m.GmmHeader.SetMessageType(msgType)
	return m
}

func plain(t testing.TB, m *nas.Message) []byte {
	b, err := m.PlainNasEncode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hdr(e *nasType.ExtendedProtocolDiscriminator, typ interface{ SetMessageType(uint8) }, t uint8) {
	e.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSMobilityManagementMessage)
	typ.SetMessageType(t)
}

func (u *testUE) registrationRequest(regType uint8, identity []byte) []byte {
	m := gmm(nas.MsgTypeRegistrationRequest)
	r := nasMessage.NewRegistrationRequest(0)
	hdr(&r.ExtendedProtocolDiscriminator, &r.RegistrationRequestMessageIdentity, nas.MsgTypeRegistrationRequest)
	r.NgksiAndRegistrationType5GS.SetRegistrationType5GS(regType)
	r.NgksiAndRegistrationType5GS.SetNasKeySetIdentifiler(u.lastKSI)
	r.NgksiAndRegistrationType5GS.SetFOR(1)
	r.MobileIdentity5GS.SetLen(uint16(len(identity)))
	r.MobileIdentity5GS.Buffer = identity
	r.UESecurityCapability = nasType.NewUESecurityCapability(nasMessage.RegistrationRequestUESecurityCapabilityType)
	r.UESecurityCapability.SetLen(uint8(len(u.caps)))
	r.UESecurityCapability.Buffer = u.caps
	ns, _ := nasx.EncodeNSSAI([]models.Snssai{{Sst: 1, Sd: "010203"}, {Sst: 9}})
	r.RequestedNSSAI = nasType.NewRequestedNSSAI(nasMessage.RegistrationRequestRequestedNSSAIType)
	r.RequestedNSSAI.SetLen(uint8(len(ns)))
	r.RequestedNSSAI.Buffer = ns
	m.RegistrationRequest = r
	return plain(u.t, m)
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
	out := gmm(nas.MsgTypeAuthenticationResponse)
	a := nasMessage.NewAuthenticationResponse(0)
	hdr(&a.ExtendedProtocolDiscriminator, &a.AuthenticationResponseMessageIdentity, nas.MsgTypeAuthenticationResponse)
	a.AuthenticationResponseParameter = nasType.NewAuthenticationResponseParameter(nasMessage.AuthenticationResponseAuthenticationResponseParameterType)
	a.AuthenticationResponseParameter.SetLen(16)
	copy(a.AuthenticationResponseParameter.Octet[:], security.ResStar(aka.CK, aka.IK, sn, u.rand, aka.RES))
	out.AuthenticationResponse = a
	return plain(u.t, out)
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
	out := gmm(nas.MsgTypeSecurityModeComplete)
	s := nasMessage.NewSecurityModeComplete(0)
	hdr(&s.ExtendedProtocolDiscriminator, &s.SecurityModeCompleteMessageIdentity, nas.MsgTypeSecurityModeComplete)
	if fullRequest != nil {
		s.NASMessageContainer = nasType.NewNASMessageContainer(nasMessage.SecurityModeCompleteNASMessageContainerType)
		s.NASMessageContainer.SetLen(uint16(len(fullRequest)))
		s.NASMessageContainer.Buffer = fullRequest
	}
	out.SecurityModeComplete = s
	return u.protect(plain(u.t, out), nas.SecurityHeaderTypeIntegrityProtectedAndCipheredWithNew5gNasSecurityContext)
}

func (u *testUE) registrationComplete() []byte {
	out := gmm(nas.MsgTypeRegistrationComplete)
	c := nasMessage.NewRegistrationComplete(0)
	hdr(&c.ExtendedProtocolDiscriminator, &c.RegistrationCompleteMessageIdentity, nas.MsgTypeRegistrationComplete)
	out.RegistrationComplete = c
	return u.protect(plain(u.t, out), nas.SecurityHeaderTypeIntegrityProtectedAndCiphered)
}

func (u *testUE) deregistrationRequest(switchOff bool) []byte {
	out := gmm(nas.MsgTypeDeregistrationRequestUEOriginatingDeregistration)
	d := nasMessage.NewDeregistrationRequestUEOriginatingDeregistration(0)
	hdr(&d.ExtendedProtocolDiscriminator, &d.DeregistrationRequestMessageIdentity, nas.MsgTypeDeregistrationRequestUEOriginatingDeregistration)
	d.NgksiAndDeregistrationType.SetAccessType(1)
	if switchOff {
		d.NgksiAndDeregistrationType.SetSwitchOff(1)
	}
	d.NgksiAndDeregistrationType.SetNasKeySetIdentifiler(u.lastKSI)
	g, _ := nasx.EncodeGUTI(*u.guti)
	d.MobileIdentity5GS.SetLen(uint16(len(g)))
	d.MobileIdentity5GS.Buffer = g
	out.DeregistrationRequestUEOriginatingDeregistration = d
	return u.protect(plain(u.t, out), nas.SecurityHeaderTypeIntegrityProtectedAndCiphered)
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

// register runs a whole initial registration with SUCI.
func (u *testUE) register() *nasMessage.RegistrationAccept {
	u.t.Helper()
	u.g.send(initialUEMessage(u.t, u.ranID, u.registrationRequest(nasMessage.RegistrationType5GSInitialRegistration, u.suciIdentity())))
	u.up(u.authResponse(u.dl("DownlinkNASTransport")))
	s := u.g.expect("DownlinkNASTransport")
	u.up(u.acceptSMC(s.NASPDU, nil))
	a := u.readAccept()
	u.up(u.registrationComplete())
	if m := u.dl("DownlinkNASTransport"); m.ConfigurationUpdateCommand == nil {
		u.t.Fatalf("after Registration Complete: message type %d, want Configuration Update Command", m.GmmHeader.GetMessageType())
	}
	return a
}

var _ = hex.EncodeToString

func releaseRequest(t testing.TB, amfID, ranID int64) []byte {
	pdu := initiatingPDU(ngapType.ProcedureCodeUEContextReleaseRequest, ngapType.InitiatingMessagePresentUEContextReleaseRequest)
	r := &ngapType.UEContextReleaseRequest{}
	cause := ngapType.Cause{Present: ngapType.CausePresentRadioNetwork, RadioNetwork: &ngapType.CauseRadioNetwork{Value: ngapType.CauseRadioNetworkPresentUserInactivity}}
	r.ProtocolIEs.List = []ngapType.UEContextReleaseRequestIEs{
		{Id: ngapType.ProtocolIEID{Value: ngapType.ProtocolIEIDAMFUENGAPID}, Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentReject},
			Value: ngapType.UEContextReleaseRequestIEsValue{Present: ngapType.UEContextReleaseRequestIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfID}}},
		{Id: ngapType.ProtocolIEID{Value: ngapType.ProtocolIEIDRANUENGAPID}, Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentReject},
			Value: ngapType.UEContextReleaseRequestIEsValue{Present: ngapType.UEContextReleaseRequestIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranID}}},
		{Id: ngapType.ProtocolIEID{Value: ngapType.ProtocolIEIDCause}, Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentIgnore},
			Value: ngapType.UEContextReleaseRequestIEsValue{Present: ngapType.UEContextReleaseRequestIEsPresentCause, Cause: &cause}},
	}
	pdu.InitiatingMessage.Value.UEContextReleaseRequest = r
	return encode(t, pdu)
}

func identityResponse(t testing.TB, id []byte) []byte {
	out := gmm(nas.MsgTypeIdentityResponse)
	r := nasMessage.NewIdentityResponse(0)
	hdr(&r.ExtendedProtocolDiscriminator, &r.IdentityResponseMessageIdentity, nas.MsgTypeIdentityResponse)
	r.MobileIdentity.SetLen(uint16(len(id)))
	r.MobileIdentity.Buffer = id
	out.IdentityResponse = r
	return plain(t, out)
}

func authFailure(t testing.TB, cause uint8, auts []byte) []byte {
	out := gmm(nas.MsgTypeAuthenticationFailure)
	f := nasMessage.NewAuthenticationFailure(0)
	hdr(&f.ExtendedProtocolDiscriminator, &f.AuthenticationFailureMessageIdentity, nas.MsgTypeAuthenticationFailure)
	f.Cause5GMM.SetCauseValue(cause)
	if auts != nil {
		f.AuthenticationFailureParameter = nasType.NewAuthenticationFailureParameter(nasMessage.AuthenticationFailureAuthenticationFailureParameterType)
		f.AuthenticationFailureParameter.SetLen(14)
		copy(f.AuthenticationFailureParameter.Octet[:], auts)
	}
	out.AuthenticationFailure = f
	return plain(t, out)
}

func ngReset(t testing.TB) []byte {
	pdu := initiatingPDU(ngapType.ProcedureCodeNGReset, ngapType.InitiatingMessagePresentNGReset)
	cause := ngapType.Cause{Present: ngapType.CausePresentMisc, Misc: &ngapType.CauseMisc{Value: ngapType.CauseMiscPresentOmIntervention}}
	r := &ngapType.NGReset{}
	r.ProtocolIEs.List = []ngapType.NGResetIEs{
		{Id: ngapType.ProtocolIEID{Value: ngapType.ProtocolIEIDCause}, Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentIgnore},
			Value: ngapType.NGResetIEsValue{Present: ngapType.NGResetIEsPresentCause, Cause: &cause}},
		{Id: ngapType.ProtocolIEID{Value: ngapType.ProtocolIEIDResetType}, Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentReject},
			Value: ngapType.NGResetIEsValue{Present: ngapType.NGResetIEsPresentResetType,
				ResetType: &ngapType.ResetType{Present: ngapType.ResetTypePresentNGInterface, NGInterface: &ngapType.ResetAll{Value: ngapType.ResetAllPresentResetAll}}}},
	}
	pdu.InitiatingMessage.Value.NGReset = r
	return encode(t, pdu)
}
