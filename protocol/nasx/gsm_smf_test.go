package nasx

import (
	"bytes"
	"net/netip"
	"reflect"
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"
)

func sdfRule() QoSRule {
	return QoSRule{ID: 2, Operation: RuleOpCreate, Precedence: 10, QFI: 2, Filters: []PacketFilter{{
		ID: 1, Direction: FilterBidirectional, Remote: netip.MustParsePrefix("10.200.0.2/32"),
		Protocol: 17, RemotePort: 5201}}}
}

func defaultRule() QoSRule {
	return QoSRule{ID: 1, Operation: RuleOpCreate, Default: true, Precedence: 255, QFI: 1,
		Filters: []PacketFilter{{ID: 1, Direction: FilterBidirectional}}}
}

func TestQoSRulesRoundTrip(t *testing.T) {
	in := []QoSRule{defaultRule(), sdfRule(), {ID: 3, Operation: RuleOpDelete}}
	b, err := EncodeQoSRules(in)
	if err != nil {
		t.Fatal(err)
	}
	// TS 24.501 9.11.4.13: rule 1, length 6, create|DQR|1 filter, filter
	// 1 bidirectional with one match-all component, precedence 255, QFI 1.
	if want := []byte{1, 0, 6, 0x31, 0x31, 1, 0x01, 255, 1}; !bytes.Equal(b[:9], want) {
		t.Fatalf("default rule octets % x, want % x", b[:9], want)
	}
	out, err := ParseQoSRules(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

func TestQoSRulesRefuseBadInput(t *testing.T) {
	if _, err := EncodeQoSRules([]QoSRule{{ID: 0, Operation: RuleOpCreate, QFI: 1}}); err == nil {
		t.Error("rule id 0 encoded")
	}
	if _, err := EncodeQoSRules([]QoSRule{{ID: 1, Operation: RuleOpCreate, QFI: 64}}); err == nil {
		t.Error("QFI 64 encoded")
	}
	for _, b := range [][]byte{{1, 0, 9, 0x31}, {1, 0, 3, 0x31, 0x31, 9}, {1, 0, 4, 0x31, 0x31, 1, 0x77}} {
		if _, err := ParseQoSRules(b); err == nil {
			t.Errorf("% x parsed", b)
		}
	}
}

func TestQoSFlowsAndBitRates(t *testing.T) {
	in := []QoSFlow{{QFI: 1, Operation: RuleOpCreate, FiveQI: 9},
		{QFI: 2, Operation: RuleOpCreate, FiveQI: 1, GFBRUp: 2_000_000, GFBRDown: 2_000_000, MFBRUp: 5_000_000, MFBRDown: 5_000_000}}
	b, err := EncodeQoSFlows(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ParseQoSFlows(b)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip: %v\n got %+v\nwant %+v", err, out, in)
	}
	for _, c := range []struct {
		bps  uint64
		unit uint8
		v    uint16
	}{{1_000_000_000, 3, 62500}, {100_000_000, 2, 25000}, {1000, 1, 1}, {65_535_000, 1, 65535}, {65_536_000, 2, 16384}, {4_000_000_000, 4, 62500}, {300_000_000_000, 8, 18750}} {
		u, v := BitRateUnits(c.bps)
		if u != c.unit || v != c.v {
			t.Errorf("%d bit/s: unit %d value %d, want %d %d", c.bps, u, v, c.unit, c.v)
		}
		if BitRate(u, v) != c.bps {
			t.Errorf("%d bit/s reads back as %d", c.bps, BitRate(u, v))
		}
	}
}

func TestEstablishmentAcceptDecodes(t *testing.T) {
	ip := netip.MustParseAddr("10.60.0.7")
	b, err := BuildPDUSessionEstablishmentAccept(EstablishmentAccept{PDUSessionID: 5, PTI: 3, UEIPv4: ip,
		Rules: []QoSRule{defaultRule()}, Flows: []QoSFlow{{QFI: 1, Operation: RuleOpCreate, FiveQI: 9}},
		AMBRDown: 1_000_000_000, AMBRUp: 500_000_000, SNSSAI: models.Snssai{Sst: 1, Sd: "010203"}, DNN: "internet",
		DNS: []netip.Addr{netip.MustParseAddr("8.8.8.8")}, Cause: GSMCausePDUSessionTypeIPv4OnlyAllowed})
	if err != nil {
		t.Fatal(err)
	}
	m := nas.NewMessage()
	if err := m.PlainNasDecode(&b); err != nil {
		t.Fatal(err)
	}
	a := m.PDUSessionEstablishmentAccept
	addr := a.PDUAddress.GetPDUAddressInformation()
	if a.GetPDUSessionID() != 5 || a.GetPTI() != 3 || netip.AddrFrom4([4]byte(addr[:4])) != ip ||
		a.DNN.GetDNN() != "internet" || a.Cause5GSM.GetCauseValue() != 50 || a.SelectedSSCModeAndSelectedPDUSessionType.GetSSCMode() != 1 {
		t.Fatalf("accept decoded as %+v", a)
	}
	rules, err := ParseQoSRules(a.AuthorizedQosRules.GetQosRule())
	if err != nil || len(rules) != 1 || !rules[0].Default {
		t.Fatalf("rules %+v %v", rules, err)
	}
	if BitRate(a.SessionAMBR.GetUnitForSessionAMBRForDownlink(), beUint16(a.SessionAMBR.GetSessionAMBRForDownlink())) != 1_000_000_000 {
		t.Fatal("session AMBR downlink")
	}
	pco := a.ExtendedProtocolConfigurationOptions.GetExtendedProtocolConfigurationOptionsContents()
	if !bytes.Equal(pco, []byte{0x80, 0, 0x0D, 4, 8, 8, 8, 8}) {
		t.Fatalf("ePCO % x", pco)
	}
}

func beUint16(b [2]byte) uint16 { return uint16(b[0])<<8 | uint16(b[1]) }

func TestDecodeGSMRequests(t *testing.T) {
	req, err := BuildPDUSessionEstablishmentRequest(7, 4)
	if err != nil {
		t.Fatal(err)
	}
	g, err := DecodeGSM(req)
	if err != nil || g.Type != nas.MsgTypePDUSessionEstablishmentRequest || g.PDUSessionID != 7 || g.PTI != 4 || g.PDUSessionType != PDUSessionTypeIPv4 {
		t.Fatalf("establishment request: %+v %v", g, err)
	}
	// The SMF's own messages are not ones a UE sends: #97.
	rej, _ := BuildPDUSessionEstablishmentReject(7, 4, GSMCauseMissingOrUnknownDNN)
	if _, err := DecodeGSM(rej); gsmCause(err) != GSMCauseMessageTypeNonExistent {
		t.Fatalf("reject from a UE: %v", err)
	}
	for _, bad := range [][]byte{nil, {0x2e, 1}, {0x7e, 1, 1, 0xc1}, {0x2e, 7, 4, 0xc1, 0x91}} {
		if _, err := DecodeGSM(bad); err == nil {
			t.Errorf("% x decoded", bad)
		}
	}
}

func gsmCause(err error) uint8 {
	if e, ok := err.(*GSMError); ok {
		return e.Cause
	}
	return 0
}

func TestCommandsEncode(t *testing.T) {
	for name, build := range map[string]func() ([]byte, error){
		"release command": func() ([]byte, error) { return BuildPDUSessionReleaseCommand(5, 0, GSMCauseRegularDeactivation) },
		"release reject":  func() ([]byte, error) { return BuildPDUSessionReleaseReject(5, 1, GSMCauseInvalidPTI) },
		"mod reject":      func() ([]byte, error) { return BuildPDUSessionModificationReject(5, 1, GSMCauseInsufficientResources) },
		"mod command": func() ([]byte, error) {
			return BuildPDUSessionModificationCommand(ModificationCommand{PDUSessionID: 5, Rules: []QoSRule{sdfRule()},
				Flows: []QoSFlow{{QFI: 2, Operation: RuleOpCreate, FiveQI: 7}}})
		},
	} {
		b, err := build()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m := nas.NewMessage()
		if err := m.PlainNasDecode(&b); err != nil || b[0] != nasMessage.Epd5GSSessionManagementMessage || b[1] != 5 {
			t.Fatalf("%s: % x %v", name, b, err)
		}
	}
}

func FuzzDecodeGSM(f *testing.F) {
	req, _ := BuildPDUSessionEstablishmentRequest(1, 1)
	f.Add(req)
	f.Add([]byte{0x2e, 1, 1, nas.MsgTypePDUSessionReleaseRequest, 0x59, 0x24})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeGSM(b)
		_, _ = ParseQoSRules(b)
		_, _ = ParseQoSFlows(b)
	})
}
