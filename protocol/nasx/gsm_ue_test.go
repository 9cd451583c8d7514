package nasx

import (
	"math"
	"net"
	"net/netip"
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/openapi/models"
)

// decodeGSM reads what the UE sent with free5gc/nas, the decoder an SMF
// of another core would use.
func decodeGSM(t *testing.T, b []byte, err error) *nas.GsmMessage {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	m := nas.NewMessage()
	if err := m.PlainNasDecode(&b); err != nil {
		t.Fatalf("free5gc/nas cannot decode % x: %v", b, err)
	}
	return m.GsmMessage
}

func TestEstablishmentRequestAsksForIPv4AndSSCMode1(t *testing.T) {
	b, err := BuildGSMEstablishmentRequest(GSMEstablishmentRequest{SessionID: 5, PTI: 3, Type: nasMessage.PDUSessionTypeIPv4, SSCMode: SSCMode1})
	r := decodeGSM(t, b, err).PDUSessionEstablishmentRequest
	if r.GetPDUSessionID() != 5 || r.GetPTI() != 3 {
		t.Fatalf("session %d PTI %d", r.GetPDUSessionID(), r.GetPTI())
	}
	if r.PDUSessionType == nil || r.PDUSessionType.GetPDUSessionTypeValue() != nasMessage.PDUSessionTypeIPv4 {
		t.Fatal("no PDU session type IPv4")
	}
	if r.SSCMode == nil || r.SSCMode.GetSSCMode() != 1 {
		t.Fatal("no SSC mode 1")
	}
	if r.IntegrityProtectionMaximumDataRate.GetMaximumDataRatePerUEForUserPlaneIntegrityProtectionForUpLink() != 0xFF {
		t.Fatal("integrity protection maximum data rate is not full rate")
	}
}

func TestReleaseAndModificationAnswersCarryTheCommandsPTI(t *testing.T) {
	rr := decodeGSM2(t)(BuildGSMReleaseRequest(2, 9, 0)).PDUSessionReleaseRequest
	if rr.GetPDUSessionID() != 2 || rr.GetPTI() != 9 || rr.Cause5GSM == nil || rr.Cause5GSM.GetCauseValue() != nasMessage.Cause5GSMRegularDeactivation {
		t.Fatalf("Release Request %+v", rr)
	}
	rc := decodeGSM2(t)(BuildGSMReleaseComplete(2, 0)).PDUSessionReleaseComplete
	if rc.GetPDUSessionID() != 2 || rc.GetPTI() != 0 {
		t.Fatal("Release Complete")
	}
	mc := decodeGSM2(t)(BuildGSMModificationComplete(4, 0)).PDUSessionModificationComplete
	if mc.GetPDUSessionID() != 4 {
		t.Fatal("Modification Complete")
	}
	mr := decodeGSM2(t)(BuildGSMModificationCommandReject(4, 0, nasMessage.Cause5GSMSyntacticalErrorInTheQoSOperation)).PDUSessionModificationCommandReject
	if mr.Cause5GSM.GetCauseValue() != nasMessage.Cause5GSMSyntacticalErrorInTheQoSOperation {
		t.Fatal("Modification Command Reject cause")
	}
}

// decodeGSM2 takes a builder's two results directly.
func decodeGSM2(t *testing.T) func([]byte, error) *nas.GsmMessage {
	return func(b []byte, err error) *nas.GsmMessage { return decodeGSM(t, b, err) }
}

func ueMust(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// smfAccept builds an accept the way an SMF does, with free5gc/nas: the
// default QoS rule (match-all, QFI 1), a QoS flow of 5QI 9, Session-AMBR
// 100 Mbit/s up / 1 Gbit/s down, 10.60.0.7, slice 1/010203, DNN internet.
func smfAccept(t *testing.T) []byte {
	t.Helper()
	m := nas.NewMessage()
	m.GsmMessage = nas.NewGsmMessage()
	m.GsmHeader.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSSessionManagementMessage)
	m.GsmHeader.SetMessageType(nas.MsgTypePDUSessionEstablishmentAccept)
	a := nasMessage.NewPDUSessionEstablishmentAccept(0)
	a.ExtendedProtocolDiscriminator.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSSessionManagementMessage)
	a.PDUSessionID.SetPDUSessionID(1)
	a.PTI.SetPTI(1)
	a.PDUSESSIONESTABLISHMENTACCEPTMessageIdentity.SetMessageType(nas.MsgTypePDUSessionEstablishmentAccept)
	a.SelectedSSCModeAndSelectedPDUSessionType.SetPDUSessionType(nasMessage.PDUSessionTypeIPv4)
	a.SelectedSSCModeAndSelectedPDUSessionType.SetSSCMode(1)
	rules := nasType.QoSRules{{Identifier: 1, Operation: nasType.OperationCodeCreateNewQoSRule, DQR: true, Precedence: 255, QFI: 1,
		PacketFilterList: nasType.PacketFilterList{{Identifier: 1, Direction: nasType.PacketFilterDirectionBidirectional,
			Components: nasType.PacketFilterComponentList{&nasType.PacketFilterMatchAll{}}}}}}
	rb, err := rules.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	a.AuthorizedQosRules.SetLen(uint16(len(rb)))
	a.AuthorizedQosRules.SetQosRule(rb)
	a.SessionAMBR.SetLen(6)
	a.SessionAMBR.SetUnitForSessionAMBRForUplink(6) // 1 Mbit/s
	a.SessionAMBR.SetSessionAMBRForUplink([2]uint8{0, 100})
	a.SessionAMBR.SetUnitForSessionAMBRForDownlink(11) // 1 Gbit/s
	a.SessionAMBR.SetSessionAMBRForDownlink([2]uint8{0, 1})
	a.PDUAddress = nasType.NewPDUAddress(nasMessage.PDUSessionEstablishmentAcceptPDUAddressType)
	a.PDUAddress.SetLen(5)
	a.PDUAddress.SetPDUSessionTypeValue(nasMessage.PDUSessionTypeIPv4)
	a.PDUAddress.SetPDUAddressInformation([12]uint8{10, 60, 0, 7})
	flows := nasType.QoSFlowDescs{{QFI: 1, OperationCode: nasType.OperationCodeCreateNewQoSFlowDescription,
		Parameters: nasType.QoSFlowParameterList{&nasType.QoSFlow5QI{FiveQI: 9}}}}
	fb, err := flows.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	a.AuthorizedQosFlowDescriptions = nasType.NewAuthorizedQosFlowDescriptions(nasMessage.PDUSessionEstablishmentAcceptAuthorizedQosFlowDescriptionsType)
	a.AuthorizedQosFlowDescriptions.SetLen(uint16(len(fb)))
	a.AuthorizedQosFlowDescriptions.SetQoSFlowDescriptions(fb)
	a.SNSSAI = nasType.NewSNSSAI(nasMessage.PDUSessionEstablishmentAcceptSNSSAIType)
	a.SNSSAI.SetLen(4)
	a.SNSSAI.SetSST(1)
	a.SNSSAI.SetSD([3]uint8{1, 2, 3})
	a.DNN = nasType.NewDNN(nasMessage.PDUSessionEstablishmentAcceptDNNType)
	a.DNN.SetDNN("internet")
	m.PDUSessionEstablishmentAccept = a
	b, err := m.PlainNasEncode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUEReadsTheAcceptAnSMFBuilds(t *testing.T) {
	g, err := ParseGSMAtUE(smfAccept(t))
	if err != nil {
		t.Fatal(err)
	}
	a := g.Accept
	if g.Type != nas.MsgTypePDUSessionEstablishmentAccept || g.SessionID != 1 || g.PTI != 1 || a == nil {
		t.Fatalf("%+v", g)
	}
	if a.Address != netip.MustParseAddr("10.60.0.7") || a.SessionType != nasMessage.PDUSessionTypeIPv4 || a.SSCMode != 1 {
		t.Fatalf("address %v type %d SSC %d", a.Address, a.SessionType, a.SSCMode)
	}
	if len(a.QoSRules) != 1 || a.QoSRules[0].QFI != 1 || !a.QoSRules[0].DQR {
		t.Fatalf("QoS rules %+v", a.QoSRules)
	}
	if len(a.QoSFlows) != 1 || a.QoSFlows[0].QFI != 1 {
		t.Fatalf("QoS flows %+v", a.QoSFlows)
	}
	if a.AMBR != (SessionAMBR{UplinkBps: 100_000_000, DownlinkBps: 1_000_000_000}) {
		t.Fatalf("AMBR %+v", a.AMBR)
	}
	if a.SNSSAI == nil || *a.SNSSAI != (models.Snssai{Sst: 1, Sd: "010203"}) || a.DNN != "internet" {
		t.Fatalf("slice %+v DNN %q", a.SNSSAI, a.DNN)
	}
}

func TestUEReadsRejectReleaseAndModificationCommands(t *testing.T) {
	gsm := func(typ uint8, set func(*nas.GsmMessage)) []byte {
		m := nas.NewMessage()
		m.GsmMessage = nas.NewGsmMessage()
		m.GsmHeader.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSSessionManagementMessage)
		m.GsmHeader.SetMessageType(typ)
		set(m.GsmMessage)
		b, err := m.PlainNasEncode()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hdr := func(epd *nasType.ExtendedProtocolDiscriminator, id *nasType.PDUSessionID, pti *nasType.PTI, mt interface{ SetMessageType(uint8) }, typ uint8) {
		epd.SetExtendedProtocolDiscriminator(nasMessage.Epd5GSSessionManagementMessage)
		id.SetPDUSessionID(1)
		pti.SetPTI(1)
		mt.SetMessageType(typ)
	}
	reject := gsm(nas.MsgTypePDUSessionEstablishmentReject, func(g *nas.GsmMessage) {
		r := nasMessage.NewPDUSessionEstablishmentReject(0)
		hdr(&r.ExtendedProtocolDiscriminator, &r.PDUSessionID, &r.PTI, &r.PDUSESSIONESTABLISHMENTREJECTMessageIdentity, nas.MsgTypePDUSessionEstablishmentReject)
		r.Cause5GSM.SetCauseValue(nasMessage.Cause5GSMMissingOrUnknownDNN)
		g.PDUSessionEstablishmentReject = r
	})
	if g, err := ParseGSMAtUE(reject); err != nil || g.Cause != 27 {
		t.Fatalf("reject: %+v, %v (want cause #27 unknown DNN)", g, err)
	}
	release := gsm(nas.MsgTypePDUSessionReleaseCommand, func(g *nas.GsmMessage) {
		r := nasMessage.NewPDUSessionReleaseCommand(0)
		hdr(&r.ExtendedProtocolDiscriminator, &r.PDUSessionID, &r.PTI, &r.PDUSESSIONRELEASECOMMANDMessageIdentity, nas.MsgTypePDUSessionReleaseCommand)
		r.Cause5GSM.SetCauseValue(nasMessage.Cause5GSMRegularDeactivation)
		g.PDUSessionReleaseCommand = r
	})
	if g, err := ParseGSMAtUE(release); err != nil || g.Type != nas.MsgTypePDUSessionReleaseCommand || g.Cause != 36 {
		t.Fatalf("release: %+v, %v", g, err)
	}
	rules := nasType.QoSRules{{Identifier: 2, Operation: nasType.OperationCodeCreateNewQoSRule, Precedence: 10, QFI: 5,
		PacketFilterList: nasType.PacketFilterList{{Identifier: 1, Direction: nasType.PacketFilterDirectionUplink,
			Components: nasType.PacketFilterComponentList{&nasType.PacketFilterIPv4RemoteAddress{
				Address: net.IPv4(10, 200, 0, 2).To4(), Mask: net.CIDRMask(32, 32)}}}}}}
	rb, _ := rules.MarshalBinary()
	modify := gsm(nas.MsgTypePDUSessionModificationCommand, func(g *nas.GsmMessage) {
		c := nasMessage.NewPDUSessionModificationCommand(0)
		hdr(&c.ExtendedProtocolDiscriminator, &c.PDUSessionID, &c.PTI, &c.PDUSESSIONMODIFICATIONCOMMANDMessageIdentity, nas.MsgTypePDUSessionModificationCommand)
		c.AuthorizedQosRules = nasType.NewAuthorizedQosRules(nasMessage.PDUSessionModificationCommandAuthorizedQosRulesType)
		c.AuthorizedQosRules.SetLen(uint16(len(rb)))
		c.AuthorizedQosRules.SetQosRule(rb)
		g.PDUSessionModificationCommand = c
	})
	g, err := ParseGSMAtUE(modify)
	if err != nil || g.Modify == nil || len(g.Modify.QoSRules) != 1 || g.Modify.QoSRules[0].QFI != 5 {
		t.Fatalf("modification: %+v, %v", g, err)
	}
}

func TestUERefusesBadFiveGSMInput(t *testing.T) {
	accept := smfAccept(t)
	for name, b := range map[string][]byte{
		"empty":        nil,
		"5GMM":         {0x7E, 0, 0x41, 0},
		"cut accept":   accept[:12],
		"request sent": ueMust(BuildGSMEstablishmentRequest(GSMEstablishmentRequest{SessionID: 1, PTI: 1})),
	} {
		if _, err := ParseGSMAtUE(b); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestSessionAMBRUnits(t *testing.T) {
	for _, c := range []struct {
		unit  uint8
		value uint16
		want  uint64
	}{{1, 1, 1000}, {2, 1, 4000}, {5, 1, 256_000}, {6, 1, 1_000_000}, {7, 3, 12_000_000}, {11, 2, 2_000_000_000},
		{0, 5, 0}, {26, 5, 0}, {25, 65535, math.MaxUint64}} {
		if got := AMBRBitsPerSecond(c.unit, c.value); got != c.want {
			t.Errorf("unit %d value %d: %d bit/s, want %d", c.unit, c.value, got, c.want)
		}
	}
}
