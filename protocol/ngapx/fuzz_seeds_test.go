package ngapx

import (
	"path/filepath"
	"testing"

	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/internal/fuzzseed"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// uplinkSamples are the messages a gNB sends the AMF, from the RAN-side
// builders (ran_build.go) and, where the simulator has none, free5gc's
// types: seeds that take the fuzzer into the AMF's uplink parsers rather
// than only the downlink messages of samples.
func uplinkSamples(t testing.TB) map[string][]byte {
	must := fuzzseed.Must(t)
	cell := Cell{TAI: domain.TAI{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, TAC: 1}, CellID: 0x123}
	suci := must(nasx.EncodeSUCI("suci-0-208-93-0000-0-0-0000000001"))
	guti := must(nasx.EncodeGUTI(nasx.GUTI{GUAMI: testGUAMI, TMSI: 7}))
	initial := must(nasx.BuildRegistrationRequest(nasx.RegistrationRequest{Type: nasMessage.RegistrationType5GSInitialRegistration,
		NgKSI: 7, Identity: suci, SecurityCaps: []byte{0xE0, 0xE0}, Cleartext: true}))
	byGUTI := must(nasx.BuildRegistrationRequest(nasx.RegistrationRequest{Type: nasMessage.RegistrationType5GSMobilityRegistrationUpdating,
		NgKSI: 1, Identity: guti, SecurityCaps: []byte{0xE0, 0xE0}, Requested: []models.Snssai{{Sst: 1, Sd: "010203"}}}))
	stmsi := nasx.STMSI{SetID: 0x3F8, Pointer: 1, TMSI: 7}
	return map[string][]byte{
		"initial-ue-message":       must(BuildInitialUEMessage(2, initial, cell, nil)),
		"initial-ue-message-stmsi": must(BuildInitialUEMessage(3, byGUTI, cell, &stmsi)),
		"uplink-nas-transport":     must(BuildUplinkNASTransport(1, 2, must(nasx.BuildAuthenticationResponse(make([]byte, 16))), cell)),
		"ng-setup-request-named": must(BuildNGSetupRequest(GNB{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, ID: 1, Name: "gnb-1", TACs: []domain.TAC{1, 2},
			SNSSAIs: []models.Snssai{{Sst: 1, Sd: "010203"}, {Sst: 2}}})),
		"ran-configuration-update": must(BuildRANConfigurationUpdate(GNB{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, ID: 1, Name: "gnb-1", TACs: []domain.TAC{1},
			SNSSAIs: []models.Snssai{{Sst: 1, Sd: "010203"}}})),
		"ng-reset":                       must(BuildNGReset(CauseMisc(ngapType.CauseMiscPresentOmIntervention))),
		"ng-reset-partial":               testNGResetPartial(t),
		"initial-context-setup-response": must(BuildInitialContextSetupResponse(1, 2)),
		"initial-context-setup-failure":  testInitialContextSetupFailure(t, 1, 2),
		"ue-context-release-request":     must(BuildUEContextReleaseRequest(1, 2, CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity))),
		"ue-context-release-complete":    must(BuildUEContextReleaseComplete(1, 2)),
		"error-indication-non-ue":        must(BuildErrorIndication(-1, -1, CauseProtocol(ngapType.CauseProtocolPresentSemanticError))),
		"ue-radio-capability-info":       must(BuildUERadioCapabilityInfoIndication(1, 2, []byte("opaque RRC container"))),
		"nas-non-delivery-indication": must(BuildNASNonDeliveryIndication(1, 2, must(nasx.BuildRegistrationReject(nasx.CauseCongestion)),
			CauseRadioNetwork(ngapType.CauseRadioNetworkPresentRadioConnectionWithUeLost))),
	}
}

// testNGResetPartial is NG Reset of two UE-associated connections, one
// named by both IDs, one by the RAN UE NGAP ID only (TS 38.413 9.2.6.11);
// the simulator only resets the whole interface.
func testNGResetPartial(t testing.TB) []byte {
	cause := CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified)
	pdu := initiating(ngapType.ProcedureCodeNGReset, reject, ngapType.InitiatingMessagePresentNGReset)
	pdu.InitiatingMessage.Value.NGReset = &ngapType.NGReset{ProtocolIEs: ngapType.ProtocolIEContainerNGResetIEs{List: []ngapType.NGResetIEs{
		{Id: id(ngapType.ProtocolIEIDCause), Criticality: ignore, Value: ngapType.NGResetIEsValue{Present: ngapType.NGResetIEsPresentCause, Cause: &cause}},
		{Id: id(ngapType.ProtocolIEIDResetType), Criticality: reject, Value: ngapType.NGResetIEsValue{Present: ngapType.NGResetIEsPresentResetType,
			ResetType: &ngapType.ResetType{Present: ngapType.ResetTypePresentPartOfNGInterface, PartOfNGInterface: &ngapType.UEAssociatedLogicalNGConnectionList{
				List: []ngapType.UEAssociatedLogicalNGConnectionItem{
					{AMFUENGAPID: &ngapType.AMFUENGAPID{Value: 1}, RANUENGAPID: &ngapType.RANUENGAPID{Value: 2}},
					{RANUENGAPID: &ngapType.RANUENGAPID{Value: 3}},
				}}}}},
	}}}
	return mustEncode(t, pdu)
}

// testInitialContextSetupFailure is the gNB's Initial Context Setup Failure
// (TS 38.413 8.3.1.3); the simulator never fails a setup.
func testInitialContextSetupFailure(t testing.TB, amfUEID, ranUEID int64) []byte {
	cause := CauseRadioNetwork(ngapType.CauseRadioNetworkPresentRadioResourcesNotAvailable)
	pdu := unsuccessful(ngapType.ProcedureCodeInitialContextSetup, ngapType.UnsuccessfulOutcomePresentInitialContextSetupFailure)
	pdu.UnsuccessfulOutcome.Value.InitialContextSetupFailure = &ngapType.InitialContextSetupFailure{
		ProtocolIEs: ngapType.ProtocolIEContainerInitialContextSetupFailureIEs{List: []ngapType.InitialContextSetupFailureIEs{
			{Id: id(ngapType.ProtocolIEIDAMFUENGAPID), Criticality: ignore, Value: ngapType.InitialContextSetupFailureIEsValue{
				Present: ngapType.InitialContextSetupFailureIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}}},
			{Id: id(ngapType.ProtocolIEIDRANUENGAPID), Criticality: ignore, Value: ngapType.InitialContextSetupFailureIEsValue{
				Present: ngapType.InitialContextSetupFailureIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}}},
			{Id: id(ngapType.ProtocolIEIDCause), Criticality: ignore, Value: ngapType.InitialContextSetupFailureIEsValue{
				Present: ngapType.InitialContextSetupFailureIEsPresentCause, Cause: &cause}},
		}}}
	return mustEncode(t, pdu)
}

func mustEncode(t testing.TB, pdu *ngapType.NGAPPDU) []byte {
	t.Helper()
	return fuzzseed.Must(t)(Encode(pdu))
}

// The uplink seeds decode, name their UE, and reach the parser the AMF
// runs on them; -update-seeds writes them to the fuzz corpus.
func TestUplinkSeedsReachTheParsers(t *testing.T) {
	for name, b := range uplinkSamples(t) {
		pdu, s := decodeSummary(t, name, b)
		switch name {
		case "initial-ue-message", "initial-ue-message-stmsi":
			m, err := ParseInitialUEMessage(pdu)
			if err != nil || len(m.NASPDU) == 0 || (name == "initial-ue-message-stmsi") != (m.STMSI != nil) {
				t.Fatalf("%s: parsed %+v, %v", name, m, err)
			}
		case "ng-setup-request-named":
			if r, err := ParseNGSetupRequest(pdu); err != nil || r.Name != "gnb-1" || len(r.TAs) != 2 {
				t.Fatalf("%s: parsed %+v, %v", name, r, err)
			}
		case "ran-configuration-update":
			if r, err := ParseRANConfigurationUpdate(pdu); err != nil || r.Name != "gnb-1" || len(r.TAs) != 1 || s.UEAssociated() {
				t.Fatalf("%s: parsed %+v, %v", name, r, err)
			}
		case "ng-reset", "ng-reset-partial":
			all, part, err := ResetAll(pdu)
			if err != nil || all != (name == "ng-reset") || len(part) != map[bool]int{true: 0, false: 2}[all] {
				t.Fatalf("%s: all %v, %d items, %v", name, all, len(part), err)
			}
		case "ue-radio-capability-info":
			if c, err := ParseUERadioCapability(pdu); err != nil || string(c) != "opaque RRC container" {
				t.Fatalf("%s: capability %q, %v", name, c, err)
			}
		case "error-indication-non-ue":
			if s.UEAssociated() {
				t.Fatalf("%s names a UE: %+v", name, s)
			}
		default:
			if s.AMFUEID != 1 || s.RANUEID != 2 {
				t.Fatalf("%s: UE ids %d/%d, want 1/2", name, s.AMFUEID, s.RANUEID)
			}
		}
	}
	if *updateSeeds {
		fuzzseed.Write(t, filepath.Join("testdata", "fuzz", "FuzzDecodeNGAP"), uplinkSamples(t))
	}
}
