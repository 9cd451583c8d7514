package ngapx

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
	"github.com/l25gc/l25gc/internal/tsharkcap"
)

// hoTunnel is an NG-U tunnel for the transfers of the wire test.
func hoTunnel(ip byte, teid byte) ngapType.UPTransportLayerInformation {
	return ngapType.UPTransportLayerInformation{Present: ngapType.UPTransportLayerInformationPresentGTPTunnel,
		GTPTunnel: &ngapType.GTPTunnel{TransportLayerAddress: ngapType.TransportLayerAddress{Value: aper.BitString{Bytes: []byte{10, 100, 0, ip}, BitLength: 32}},
			GTPTEID: ngapType.GTPTEID{Value: []byte{0, 0, 0, teid}}}}
}

func marshalForTest(t testing.TB, v any) []byte {
	t.Helper()
	b, err := marshalTransfer(v, fmt.Sprintf("%T", v))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hoWireMessages are every handover message with real transfers and
// transparent containers inside, as tshark would see them on N2. The N2 SM
// transfers are the SMF's and gNB's (sm_transfer*.go); here they are
// written directly so this test stands on its own.
func hoWireMessages(t testing.TB, setup []byte) map[string][]byte {
	one := func(tr []byte) []SessionTransfer { return []SessionTransfer{{ID: 1, Transfer: tr}} }
	psr := marshalForTest(t, ngapType.PathSwitchRequestTransfer{DLNGUUPTNLInformation: hoTunnel(2, 9),
		QosFlowAcceptedList: ngapType.QosFlowAcceptedList{List: []ngapType.QosFlowAcceptedItem{{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: 1}}}}})
	psrAck := marshalForTest(t, ngapType.PathSwitchRequestAcknowledgeTransfer{})
	rqd := marshalForTest(t, ngapType.HandoverRequiredTransfer{})
	hoAck := marshalForTest(t, ngapType.HandoverRequestAcknowledgeTransfer{DLNGUUPTNLInformation: hoTunnel(3, 7),
		QosFlowSetupResponseList: ngapType.QosFlowListWithDataForwarding{List: []ngapType.QosFlowItemWithDataForwarding{{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: 1}}}}})
	cmd := marshalForTest(t, ngapType.HandoverCommandTransfer{})
	unsuccessful, err := BuildPDUSessionResourceSetupUnsuccessfulTransfer(CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified))
	if err != nil {
		t.Fatal(err)
	}
	s2t, err := SourceToTargetContainer([]byte{0x00}, hoCell, Cell{TAI: hoCell.TAI, CellID: 1}, 30)
	if err != nil {
		t.Fatal(err)
	}
	t2s, err := TargetToSourceContainer([]byte{0x00})
	if err != nil {
		t.Fatal(err)
	}
	drbs, err := RANStatusContainer([]DRBCount{{DRB: 1, ULPDCPSN: 10, DLPDCPSN: 20}})
	if err != nil {
		t.Fatal(err)
	}
	must := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ids := UEIDs{4, 8}
	return map[string][]byte{
		"PathSwitchRequest": must(BuildPathSwitchRequest(PathSwitchRequestMsg{RANUEID: 8, SourceAMFUEID: 4, Cell: hoCell, SecurityCaps: hoCaps, ToSwitch: one(psr)})),
		"PathSwitchRequestAcknowledge": must(BuildPathSwitchRequestAcknowledge(PathSwitchRequestAcknowledge{AMFUEID: 4, RANUEID: 8, Security: hoSec,
			Switched: one(psrAck), Allowed: hoAllowed})),
		"PathSwitchRequestFailure": must(BuildPathSwitchRequestFailure(PathSwitchRequestFailure{AMFUEID: 4, RANUEID: 8, Released: one(unsuccessful)})),
		"HandoverRequired": must(BuildHandoverRequired(HandoverRequired{UEIDs: ids, Cause: hoCause, Target: hoTarget, DirectForwarding: true,
			Sessions: one(rqd), Container: s2t})),
		"HandoverRequest": must(BuildHandoverRequest(HandoverRequest{AMFUEID: 4, Cause: hoCause, AMBRUL: 1e9, AMBRDL: 1e9, SecurityCaps: hoCaps,
			Security: hoSec, Sessions: []SessionResource{{ID: 1, SNSSAI: hoAllowed[0], Transfer: setup}}, Allowed: hoAllowed,
			Container: s2t, GUAMI: testGUAMI})),
		"HandoverRequestAcknowledge": must(BuildHandoverRequestAcknowledge(HandoverRequestAcknowledge{UEIDs: UEIDs{4, 99}, Admitted: one(hoAck), Container: t2s})),
		"HandoverCommand":            must(BuildHandoverCommand(HandoverCommandMsg{UEIDs: ids, Sessions: one(cmd), Container: t2s})),
		"HandoverPreparationFailure": must(BuildHandoverPreparationFailure(HandoverPreparationFailure{UEIDs: ids,
			Cause: CauseRadioNetwork(ngapType.CauseRadioNetworkPresentTngrelocprepExpiry)})),
		"HandoverFailure":           must(BuildHandoverFailure(4, hoCause)),
		"HandoverNotify":            must(BuildHandoverNotify(UEIDs{4, 99}, hoCell)),
		"HandoverCancel":            must(BuildHandoverCancel(ids, hoCause)),
		"HandoverCancelAcknowledge": must(BuildHandoverCancelAcknowledge(ids)),
		"UplinkRANStatusTransfer":   must(BuildUplinkRANStatusTransfer(RANStatusTransfer{UEIDs: ids, Container: drbs})),
		"DownlinkRANStatusTransfer": must(BuildDownlinkRANStatusTransfer(RANStatusTransfer{UEIDs: UEIDs{4, 99}, Container: drbs})),
	}
}

// Every handover message dissects in tshark without error (DESIGN.md:
// every NGAP message the system sends; issue 12: tshark dissects the
// Handover and Path Switch messages).
func TestHandoverMessagesDissectInTShark(t *testing.T) {
	for _, tool := range []string{"tshark", "text2pcap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	for name, b := range hoWireMessages(t, setupTransfer(t)) {
		text := tsharkcap.DissectNGAP(t, b)
		if !strings.Contains(text, name) {
			t.Errorf("%s: tshark does not name it:\n%s", name, text)
		}
		if strings.Contains(text, "Malformed") || strings.Contains(text, "Expert Info (Error") || strings.Contains(text, "Expert Info (Warning") {
			t.Errorf("%s: tshark flags it:\n%s", name, text)
		}
		if os.Getenv("SHOW") != "" {
			t.Log(text)
		}
	}
}
