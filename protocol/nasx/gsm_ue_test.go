package nasx

import (
	"math"
	"net/netip"
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx/nasxtest"
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
	b, err := BuildGSMEstablishmentRequest(GSMEstablishmentRequest{SessionID: 5, PTI: 3, Type: nasMessage.PDUSessionTypeIPv4, SSCMode: 1})
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

// smfAccept is an accept as an SMF builds it with free5gc/nas.
func smfAccept(t *testing.T) []byte {
	t.Helper()
	b, err := nasxtest.Accept(1, 1, netip.MustParseAddr("10.60.0.7"), "internet")
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
	if g, err := ParseGSMAtUE(ueMust(nasxtest.Reject(1, 1, nasMessage.Cause5GSMMissingOrUnknownDNN))); err != nil || g.Cause != 27 {
		t.Fatalf("reject: %+v, %v (want cause #27 unknown DNN)", g, err)
	}
	g, err := ParseGSMAtUE(ueMust(nasxtest.ReleaseCommand(1, 4, nasMessage.Cause5GSMRegularDeactivation)))
	if err != nil || g.Type != nas.MsgTypePDUSessionReleaseCommand || g.Cause != 36 || g.PTI != 4 {
		t.Fatalf("release: %+v, %v", g, err)
	}
	rules := nasType.QoSRules{nasxtest.RuleToHost(2, 10, 5, netip.MustParseAddr("10.200.0.2"))}
	g, err = ParseGSMAtUE(ueMust(nasxtest.ModificationCommand(1, rules, nasType.QoSFlowDescs{nasxtest.Flow(5, 7)})))
	if err != nil || g.Modify == nil || len(g.Modify.QoSRules) != 1 || g.Modify.QoSRules[0].QFI != 5 || len(g.Modify.QoSFlows) != 1 {
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
		if got := BitRate(c.unit, c.value); got != c.want {
			t.Errorf("unit %d value %d: %d bit/s, want %d", c.unit, c.value, got, c.want)
		}
	}
}
