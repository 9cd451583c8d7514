package ngapx

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/internal/tsharkcap"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// setupTransfer is a PDU Session Resource Setup Request Transfer as an SMF
// writes it (TS 38.413 9.3.4.1): UPF N3 tunnel, IPv4, one QoS flow of 5QI 9.
func setupTransfer(t *testing.T) []byte {
	t.Helper()
	tr := ngapType.PDUSessionResourceSetupRequestTransfer{}
	add := func(ie int64, v ngapType.PDUSessionResourceSetupRequestTransferIEsValue) {
		tr.ProtocolIEs.List = append(tr.ProtocolIEs.List, ngapType.PDUSessionResourceSetupRequestTransferIEs{Id: id(ie), Criticality: reject, Value: v})
	}
	add(ngapType.ProtocolIEIDULNGUUPTNLInformation, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestTransferIEsPresentULNGUUPTNLInformation,
		ULNGUUPTNLInformation: &ngapType.UPTransportLayerInformation{Present: ngapType.UPTransportLayerInformationPresentGTPTunnel,
			GTPTunnel: &ngapType.GTPTunnel{
				TransportLayerAddress: ngapType.TransportLayerAddress{Value: aper.BitString{Bytes: []byte{10, 100, 0, 1}, BitLength: 32}},
				GTPTEID:               ngapType.GTPTEID{Value: []byte{0, 0, 0, 1}}}}})
	add(ngapType.ProtocolIEIDPDUSessionType, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present:        ngapType.PDUSessionResourceSetupRequestTransferIEsPresentPDUSessionType,
		PDUSessionType: &ngapType.PDUSessionType{Value: ngapType.PDUSessionTypePresentIpv4}})
	add(ngapType.ProtocolIEIDQosFlowSetupRequestList, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestTransferIEsPresentQosFlowSetupRequestList,
		QosFlowSetupRequestList: &ngapType.QosFlowSetupRequestList{List: []ngapType.QosFlowSetupRequestItem{{
			QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: 1},
			QosFlowLevelQosParameters: ngapType.QosFlowLevelQosParameters{
				QosCharacteristics: ngapType.QosCharacteristics{Present: ngapType.QosCharacteristicsPresentNonDynamic5QI,
					NonDynamic5QI: &ngapType.NonDynamic5QIDescriptor{FiveQI: ngapType.FiveQI{Value: 9}}},
				AllocationAndRetentionPriority: ngapType.AllocationAndRetentionPriority{PriorityLevelARP: ngapType.PriorityLevelARP{Value: 8},
					PreEmptionCapability:    ngapType.PreEmptionCapability{Value: ngapType.PreEmptionCapabilityPresentShallNotTriggerPreEmption},
					PreEmptionVulnerability: ngapType.PreEmptionVulnerability{Value: ngapType.PreEmptionVulnerabilityPresentNotPreEmptable}}}}}}})
	b, err := aper.MarshalWithParams(tr, "valueExt")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The AMF's PDU Session Resource requests, with an SMF's transfer and a
// plain DL NAS Transport carrying a 5GSM message, dissect in tshark
// without error (DESIGN.md: every NGAP message the system sends).
func TestPDUSessionResourceRequestsDissectInTShark(t *testing.T) {
	for _, tool := range []string{"tshark", "text2pcap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	sm, err := nasx.BuildPDUSessionEstablishmentRequest(5, 1)
	if err != nil {
		t.Fatal(err)
	}
	nasPDU, err := nasx.BuildDLNASTransport(nasx.DLNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: sm, PDUSessionID: 5})
	if err != nil {
		t.Fatal(err)
	}
	s := testSession
	s.NASPDU, s.Transfer = nasPDU, setupTransfer(t)
	req := SessionResourceRequest{AMFUEID: 7, RANUEID: 9, Sessions: []SessionResource{s}}
	setup, err := BuildPDUSessionResourceSetupRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	text := tsharkcap.DissectNGAP(t, setup)
	for _, want := range []string{"PDUSessionResourceSetupRequest", "PDUSessionResourceSetupRequestTransfer", "DL NAS transport",
		"PDU session establishment request", "gTP-TEID: 00000001"} {
		if !strings.Contains(text, want) {
			t.Errorf("tshark shows no %q:\n%s", want, text)
		}
	}
	if os.Getenv("SHOW") != "" { // SHOW=1 prints the dissection
		t.Log(text)
	}
	if strings.Contains(text, "Malformed") || strings.Contains(text, "Expert Info (Error") {
		t.Fatalf("tshark flags the message:\n%s", text)
	}
}
