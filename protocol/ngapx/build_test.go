package ngapx

import (
	"errors"
	"flag"
	"path/filepath"
	"testing"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/internal/fuzzseed"
	"github.com/l25gc/l25gc/protocol/nasx"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz/FuzzDecodeNGAP from the builders")

var testGUAMI = domain.GUAMI{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, AMFID: domain.AMFID{RegionID: 0xCA, SetID: 0x3F8, Pointer: 1}}

// testNGSetupRequest is a minimal gNB's NG Setup Request (the real one is
// the simulator's, in ran_*.go).
func testNGSetupRequest(t testing.TB, mcc, mnc string) []byte {
	plmn, _ := domain.PLMN{MCC: mcc, MNC: mnc}.ToNGAP()
	sn, _ := domain.SNSSAI{SST: 1, SD: "010203"}.ToNGAP()
	tac, _ := domain.TAC(1).ToNGAP()
	pdu := initiating(ngapType.ProcedureCodeNGSetup, reject, ngapType.InitiatingMessagePresentNGSetupRequest)
	r := &ngapType.NGSetupRequest{}
	r.ProtocolIEs.List = []ngapType.NGSetupRequestIEs{
		{Id: id(ngapType.ProtocolIEIDGlobalRANNodeID), Criticality: reject, Value: ngapType.NGSetupRequestIEsValue{
			Present: ngapType.NGSetupRequestIEsPresentGlobalRANNodeID,
			GlobalRANNodeID: &ngapType.GlobalRANNodeID{Present: ngapType.GlobalRANNodeIDPresentGlobalGNBID,
				GlobalGNBID: &ngapType.GlobalGNBID{PLMNIdentity: plmn, GNBID: ngapType.GNBID{Present: ngapType.GNBIDPresentGNBID,
					GNBID: &aper.BitString{Bytes: []byte{0, 0, 1}, BitLength: 24}}}}}},
		{Id: id(ngapType.ProtocolIEIDSupportedTAList), Criticality: reject, Value: ngapType.NGSetupRequestIEsValue{
			Present: ngapType.NGSetupRequestIEsPresentSupportedTAList,
			SupportedTAList: &ngapType.SupportedTAList{List: []ngapType.SupportedTAItem{{TAC: tac,
				BroadcastPLMNList: ngapType.BroadcastPLMNList{List: []ngapType.BroadcastPLMNItem{{PLMNIdentity: plmn,
					TAISliceSupportList: ngapType.SliceSupportList{List: []ngapType.SliceSupportItem{{SNSSAI: sn}}}}}}}}}}},
		{Id: id(ngapType.ProtocolIEIDDefaultPagingDRX), Criticality: ignore, Value: ngapType.NGSetupRequestIEsValue{
			Present: ngapType.NGSetupRequestIEsPresentDefaultPagingDRX, DefaultPagingDRX: &ngapType.PagingDRX{Value: ngapType.PagingDRXPresentV128}}},
	}
	pdu.InitiatingMessage.Value.NGSetupRequest = r
	b, err := Encode(pdu)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func samples(t testing.TB) map[string][]byte {
	must := fuzzseed.Must(t)
	caps := nasx.SecurityCapability{Raw: []byte{0xE0, 0xE0}}
	enc, integ := caps.NRBits()
	return map[string][]byte{
		"ng-setup-request":                 testNGSetupRequest(t, "208", "93"),
		"ng-setup-response":                must(BuildNGSetupResponse(Served{AMFName: "amf", GUAMI: testGUAMI, Capacity: 255, SNSSAIs: []models.Snssai{{Sst: 1, Sd: "010203"}, {Sst: 1}}})),
		"ng-setup-failure":                 must(BuildNGSetupFailure(CauseMisc(ngapType.CauseMiscPresentUnknownPLMN))),
		"ng-reset-ack":                     must(BuildNGResetAcknowledge(nil)),
		"ran-configuration-update-ack":     must(BuildRANConfigurationUpdateAcknowledge()),
		"ran-configuration-update-failure": must(BuildRANConfigurationUpdateFailure(CauseMisc(ngapType.CauseMiscPresentUnknownPLMN))),
		"error-indication":                 must(BuildErrorIndication(5, 7, CauseProtocol(ngapType.CauseProtocolPresentTransferSyntaxError))),
		"downlink-nas":                     must(BuildDownlinkNASTransport(1, 2, []byte{0x7e, 0x00, 0x5b, 0x01})),
		"initial-context-setup-request": must(BuildInitialContextSetupRequest(InitialContext{AMFUEID: 1, RANUEID: 2, GUAMI: testGUAMI,
			Allowed: []models.Snssai{{Sst: 1, Sd: "010203"}}, NREncryption: enc, NRIntegrity: integ, KgNB: make([]byte, 32),
			AMBRUL: 1e9, AMBRDL: 2e9, NASPDU: []byte{0x7e, 0x00, 0x42}})),
		"ue-context-release-command": must(BuildUEContextReleaseCommand(1, 2, CauseNas(ngapType.CauseNasPresentDeregister))),
	}
}

// decodeSummary decodes a built message and summarises it, failing the
// test (naming the sample) if either step fails.
func decodeSummary(t *testing.T, name string, b []byte) (*ngapType.NGAPPDU, Summary) {
	t.Helper()
	pdu, err := Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s, err := Summarize(pdu)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return pdu, s
}

func TestBuildersDecodeBack(t *testing.T) {
	for name, b := range samples(t) {
		_, s := decodeSummary(t, name, b)
		switch name {
		case "downlink-nas", "initial-context-setup-request", "ue-context-release-command":
			if s.AMFUEID != 1 || s.RANUEID != 2 {
				t.Fatalf("%s: UE ids %d/%d, want 1/2", name, s.AMFUEID, s.RANUEID)
			}
		case "error-indication":
			if s.Cause == nil || s.Cause.Protocol == nil || s.Cause.Protocol.Value != ngapType.CauseProtocolPresentTransferSyntaxError {
				t.Fatalf("error indication cause %s", CauseString(s.Cause))
			}
		}
	}
	if *updateSeeds {
		fuzzseed.Write(t, filepath.Join("testdata", "fuzz", "FuzzDecodeNGAP"), samples(t))
	}
}

func TestParseNGSetupRequest(t *testing.T) {
	pdu, err := Decode(testNGSetupRequest(t, "208", "93"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseNGSetupRequest(pdu)
	if err != nil {
		t.Fatal(err)
	}
	if r.PLMN.MCC != "208" || r.PLMN.MNC != "93" || len(r.TAs) != 1 || r.TAs[0].TAC != 1 ||
		len(r.TAs[0].PLMNs) != 1 || r.TAs[0].PLMNs[0].SNSSAIs[0].SD != "010203" {
		t.Fatalf("parsed %+v", r)
	}
}

func TestGarbageIsTransferSyntaxError(t *testing.T) {
	for _, b := range [][]byte{{}, {0xff}, {0x00, 0x15, 0x00}, []byte("hello, AMF")} {
		if _, err := Decode(b); !errors.Is(err, ErrTransferSyntax) {
			t.Fatalf("Decode(%x) = %v, want transfer syntax error", b, err)
		}
	}
}

func TestIEConversions(t *testing.T) {
	s := nasx.STMSI{SetID: 0x3F8, Pointer: 5, TMSI: 0x01020304}
	got, err := DecodeFiveGSTMSI(FiveGSTMSI(s))
	if err != nil || got != s {
		t.Fatalf("5G-S-TMSI round trip %+v %v", got, err)
	}
}
