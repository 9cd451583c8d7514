package ngapx

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/free5gc/ngap/ngapType"
)

var (
	hoTargetTunnel  = Tunnel{IPv4: netip.MustParseAddr("10.100.0.3"), TEID: 0x88}
	hoForwardTunnel = Tunnel{IPv4: netip.MustParseAddr("10.100.0.3"), TEID: 0x89}
)

// mustBuild(t)(Build…(…)) fails the test when a builder refuses.
func mustBuild(t testing.TB) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func TestPathSwitchTransfersRoundTrip(t *testing.T) {
	want := PathSwitchRequest{DL: hoTargetTunnel, QFIs: []uint8{1, 2}}
	got, err := ParsePathSwitchRequestTransfer(mustBuild(t)(BuildPathSwitchRequestTransfer(want)))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("path switch request: %v\n got %+v\nwant %+v", err, got, want)
	}
	ul, err := ParsePathSwitchRequestAcknowledgeTransfer(mustBuild(t)(BuildPathSwitchRequestAcknowledgeTransfer(&smUPFTunnel)))
	if err != nil || ul == nil || *ul != smUPFTunnel {
		t.Fatalf("acknowledge with UL tunnel: %v %v", ul, err)
	}
	ul, err = ParsePathSwitchRequestAcknowledgeTransfer(mustBuild(t)(BuildPathSwitchRequestAcknowledgeTransfer(nil)))
	if err != nil || ul != nil {
		t.Fatalf("acknowledge without UL tunnel: %v %v", ul, err)
	}
	fail := mustBuild(t)(BuildPathSwitchRequestSetupFailedTransfer(CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownPDUSessionID)))
	if c, err := ParsePathSwitchRequestSetupFailedTransfer(fail); err != nil || c.RadioNetwork == nil ||
		c.RadioNetwork.Value != ngapType.CauseRadioNetworkPresentUnknownPDUSessionID {
		t.Fatalf("setup failed: %+v %v", c, err)
	}
}

func TestPathSwitchRequestTransferRefusesBadInput(t *testing.T) {
	if _, err := BuildPathSwitchRequestTransfer(PathSwitchRequest{DL: hoTargetTunnel}); err == nil {
		t.Error("a path switch request transfer without flows was built")
	}
	if _, err := BuildPathSwitchRequestTransfer(PathSwitchRequest{QFIs: []uint8{1}}); err == nil {
		t.Error("a path switch request transfer without a tunnel was built")
	}
	// A tunnel whose address is 128 bits (IPv6 only) is not one the SMF
	// can use: an error, not a wrong address.
	b := mustBuild(t)(BuildPathSwitchRequestTransfer(PathSwitchRequest{DL: hoTargetTunnel, QFIs: []uint8{1}}))
	var raw ngapType.PathSwitchRequestTransfer
	if err := unmarshalTransfer(b, &raw, "x"); err != nil {
		t.Fatal(err)
	}
	raw.DLNGUUPTNLInformation.GTPTunnel.TransportLayerAddress.Value.Bytes = make([]byte, 16)
	raw.DLNGUUPTNLInformation.GTPTunnel.TransportLayerAddress.Value.BitLength = 128
	v6 := mustBuild(t)(marshalTransfer(raw, "x"))
	if _, err := ParsePathSwitchRequestTransfer(v6); err == nil {
		t.Error("an IPv6-only tunnel was read as IPv4")
	}
}

func TestHandoverTransfersRoundTrip(t *testing.T) {
	for _, direct := range []bool{true, false} {
		got, err := ParseHandoverRequiredTransfer(mustBuild(t)(BuildHandoverRequiredTransfer(direct)))
		if err != nil || got != direct {
			t.Fatalf("handover required direct=%v: got %v %v", direct, got, err)
		}
	}
	for _, want := range []HandoverRequestAck{
		{DL: hoTargetTunnel, DLForwarding: &hoForwardTunnel, QFIs: []uint8{1, 2}, ForwardQFIs: []uint8{1}, FailedQFIs: []uint8{3}},
		{DL: hoTargetTunnel, QFIs: []uint8{1}},
	} {
		got, err := ParseHandoverRequestAcknowledgeTransfer(mustBuild(t)(BuildHandoverRequestAcknowledgeTransfer(want)))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("handover request acknowledge: %v\n got %+v\nwant %+v", err, got, want)
		}
	}
	for _, want := range []HandoverCommand{{DLForwarding: &hoForwardTunnel, ForwardQFIs: []uint8{1, 2}}, {}} {
		got, err := ParseHandoverCommandTransfer(mustBuild(t)(BuildHandoverCommandTransfer(want)))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("handover command: %v\n got %+v\nwant %+v", err, got, want)
		}
	}
	fail := mustBuild(t)(BuildHandoverResourceAllocationUnsuccessfulTransfer(CauseRadioNetwork(ngapType.CauseRadioNetworkPresentNoRadioResourcesAvailableInTargetCell)))
	if c, err := ParseHandoverResourceAllocationUnsuccessfulTransfer(fail); err != nil || c.RadioNetwork == nil ||
		c.RadioNetwork.Value != ngapType.CauseRadioNetworkPresentNoRadioResourcesAvailableInTargetCell {
		t.Fatalf("resource allocation unsuccessful: %+v %v", c, err)
	}
	if _, err := BuildHandoverRequestAcknowledgeTransfer(HandoverRequestAck{DL: hoTargetTunnel}); err == nil {
		t.Error("a handover request acknowledge transfer without flows was built")
	}
	if _, err := BuildHandoverCommandTransfer(HandoverCommand{DLForwarding: &Tunnel{}}); err == nil {
		t.Error("a handover command transfer with no forwarding address was built")
	}
}

func TestHandoverTransferParsersRefuseGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, {0xff, 0xff, 0xff}, mustBuild(t)(BuildPathSwitchRequestTransfer(PathSwitchRequest{DL: hoTargetTunnel, QFIs: []uint8{1}}))[:3]} {
		if _, err := ParsePathSwitchRequestTransfer(b); err == nil {
			t.Errorf("path switch request % x parsed", b)
		}
		if _, err := ParseHandoverRequestAcknowledgeTransfer(b); err == nil {
			t.Errorf("handover request acknowledge % x parsed", b)
		}
	}
	// Handover Required Transfer is a few bits: only empty or
	// overlong-extension input is surely invalid.
	for _, b := range [][]byte{nil, {0xff, 0xff, 0xff}} {
		if _, err := ParseHandoverRequiredTransfer(b); err == nil {
			t.Errorf("handover required % x parsed", b)
		}
	}
}

func FuzzHandoverSMTransfers(f *testing.F) {
	f.Add(mustBuild(f)(BuildPathSwitchRequestTransfer(PathSwitchRequest{DL: hoTargetTunnel, QFIs: []uint8{1}})))
	f.Add(mustBuild(f)(BuildHandoverRequiredTransfer(true)))
	f.Add(mustBuild(f)(BuildHandoverRequestAcknowledgeTransfer(HandoverRequestAck{DL: hoTargetTunnel, DLForwarding: &hoForwardTunnel,
		QFIs: []uint8{1, 2}, ForwardQFIs: []uint8{1}, FailedQFIs: []uint8{3}})))
	f.Add(mustBuild(f)(BuildHandoverCommandTransfer(HandoverCommand{DLForwarding: &hoForwardTunnel, ForwardQFIs: []uint8{1}})))
	f.Add(mustBuild(f)(BuildPathSwitchRequestAcknowledgeTransfer(&smUPFTunnel)))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParsePathSwitchRequestTransfer(b)
		_, _ = ParsePathSwitchRequestAcknowledgeTransfer(b)
		_, _ = ParsePathSwitchRequestSetupFailedTransfer(b)
		_, _ = ParseHandoverRequiredTransfer(b)
		_, _ = ParseHandoverRequestAcknowledgeTransfer(b)
		_, _ = ParseHandoverCommandTransfer(b)
		_, _ = ParseHandoverResourceAllocationUnsuccessfulTransfer(b)
	})
}

// The mobility NGAP messages with only the IEs that carry the transfers
// (the messages themselves are another part's): enough for tshark to
// dissect each transfer in its place.
func hoMessages(t *testing.T) [][]byte {
	t.Helper()
	psReq := mustBuild(t)(BuildPathSwitchRequestTransfer(PathSwitchRequest{DL: hoTargetTunnel, QFIs: []uint8{1, 2}}))
	psAck := mustBuild(t)(BuildPathSwitchRequestAcknowledgeTransfer(&smUPFTunnel))
	psFail := mustBuild(t)(BuildPathSwitchRequestSetupFailedTransfer(CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified)))
	hoRqd := mustBuild(t)(BuildHandoverRequiredTransfer(true))
	hoAck := mustBuild(t)(BuildHandoverRequestAcknowledgeTransfer(HandoverRequestAck{DL: hoTargetTunnel, DLForwarding: &hoForwardTunnel,
		QFIs: []uint8{1, 2}, ForwardQFIs: []uint8{1}, FailedQFIs: []uint8{3}}))
	hoFail := mustBuild(t)(BuildHandoverResourceAllocationUnsuccessfulTransfer(CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified)))
	hoCmd := mustBuild(t)(BuildHandoverCommandTransfer(HandoverCommand{DLForwarding: &hoForwardTunnel, ForwardQFIs: []uint8{1}}))
	return [][]byte{
		encodeTest(t, pathSwitchRequestPDU(psReq)),
		encodeTest(t, pathSwitchAckPDU(psAck, psFail)),
		encodeTest(t, handoverRequiredPDU(hoRqd)),
		encodeTest(t, handoverRequestAckPDU(hoAck, hoFail)),
		encodeTest(t, handoverCommandPDU(hoCmd)),
	}
}

func pathSwitchRequestPDU(transfer []byte) *ngapType.NGAPPDU {
	pdu := initiating(ngapType.ProcedureCodePathSwitchRequest, reject, ngapType.InitiatingMessagePresentPathSwitchRequest)
	m := &ngapType.PathSwitchRequest{}
	m.ProtocolIEs.List = []ngapType.PathSwitchRequestIEs{{Id: id(ngapType.ProtocolIEIDPDUSessionResourceToBeSwitchedDLList), Criticality: reject,
		Value: ngapType.PathSwitchRequestIEsValue{Present: ngapType.PathSwitchRequestIEsPresentPDUSessionResourceToBeSwitchedDLList,
			PDUSessionResourceToBeSwitchedDLList: &ngapType.PDUSessionResourceToBeSwitchedDLList{List: []ngapType.PDUSessionResourceToBeSwitchedDLItem{{
				PDUSessionID: ngapType.PDUSessionID{Value: 1}, PathSwitchRequestTransfer: transfer}}}}}}
	pdu.InitiatingMessage.Value.PathSwitchRequest = m
	return pdu
}

func pathSwitchAckPDU(ack, fail []byte) *ngapType.NGAPPDU {
	pdu := successful(ngapType.ProcedureCodePathSwitchRequest, ngapType.SuccessfulOutcomePresentPathSwitchRequestAcknowledge)
	m := &ngapType.PathSwitchRequestAcknowledge{}
	m.ProtocolIEs.List = []ngapType.PathSwitchRequestAcknowledgeIEs{
		{Id: id(ngapType.ProtocolIEIDPDUSessionResourceSwitchedList), Criticality: ignore, Value: ngapType.PathSwitchRequestAcknowledgeIEsValue{
			Present: ngapType.PathSwitchRequestAcknowledgeIEsPresentPDUSessionResourceSwitchedList,
			PDUSessionResourceSwitchedList: &ngapType.PDUSessionResourceSwitchedList{List: []ngapType.PDUSessionResourceSwitchedItem{{
				PDUSessionID: ngapType.PDUSessionID{Value: 1}, PathSwitchRequestAcknowledgeTransfer: ack}}}}},
		{Id: id(ngapType.ProtocolIEIDPDUSessionResourceReleasedListPSAck), Criticality: ignore, Value: ngapType.PathSwitchRequestAcknowledgeIEsValue{
			Present: ngapType.PathSwitchRequestAcknowledgeIEsPresentPDUSessionResourceReleasedListPSAck,
			PDUSessionResourceReleasedListPSAck: &ngapType.PDUSessionResourceReleasedListPSAck{List: []ngapType.PDUSessionResourceReleasedItemPSAck{{
				PDUSessionID: ngapType.PDUSessionID{Value: 2}, PathSwitchRequestUnsuccessfulTransfer: fail}}}}},
	}
	pdu.SuccessfulOutcome.Value.PathSwitchRequestAcknowledge = m
	return pdu
}

func handoverRequiredPDU(transfer []byte) *ngapType.NGAPPDU {
	pdu := initiating(ngapType.ProcedureCodeHandoverPreparation, reject, ngapType.InitiatingMessagePresentHandoverRequired)
	m := &ngapType.HandoverRequired{}
	m.ProtocolIEs.List = []ngapType.HandoverRequiredIEs{{Id: id(ngapType.ProtocolIEIDPDUSessionResourceListHORqd), Criticality: reject,
		Value: ngapType.HandoverRequiredIEsValue{Present: ngapType.HandoverRequiredIEsPresentPDUSessionResourceListHORqd,
			PDUSessionResourceListHORqd: &ngapType.PDUSessionResourceListHORqd{List: []ngapType.PDUSessionResourceItemHORqd{{
				PDUSessionID: ngapType.PDUSessionID{Value: 1}, HandoverRequiredTransfer: transfer}}}}}}
	pdu.InitiatingMessage.Value.HandoverRequired = m
	return pdu
}

func handoverRequestAckPDU(ack, fail []byte) *ngapType.NGAPPDU {
	pdu := successful(ngapType.ProcedureCodeHandoverResourceAllocation, ngapType.SuccessfulOutcomePresentHandoverRequestAcknowledge)
	m := &ngapType.HandoverRequestAcknowledge{}
	m.ProtocolIEs.List = []ngapType.HandoverRequestAcknowledgeIEs{
		{Id: id(ngapType.ProtocolIEIDPDUSessionResourceAdmittedList), Criticality: ignore, Value: ngapType.HandoverRequestAcknowledgeIEsValue{
			Present: ngapType.HandoverRequestAcknowledgeIEsPresentPDUSessionResourceAdmittedList,
			PDUSessionResourceAdmittedList: &ngapType.PDUSessionResourceAdmittedList{List: []ngapType.PDUSessionResourceAdmittedItem{{
				PDUSessionID: ngapType.PDUSessionID{Value: 1}, HandoverRequestAcknowledgeTransfer: ack}}}}},
		{Id: id(ngapType.ProtocolIEIDPDUSessionResourceFailedToSetupListHOAck), Criticality: ignore, Value: ngapType.HandoverRequestAcknowledgeIEsValue{
			Present: ngapType.HandoverRequestAcknowledgeIEsPresentPDUSessionResourceFailedToSetupListHOAck,
			PDUSessionResourceFailedToSetupListHOAck: &ngapType.PDUSessionResourceFailedToSetupListHOAck{List: []ngapType.PDUSessionResourceFailedToSetupItemHOAck{{
				PDUSessionID: ngapType.PDUSessionID{Value: 2}, HandoverResourceAllocationUnsuccessfulTransfer: fail}}}}},
	}
	pdu.SuccessfulOutcome.Value.HandoverRequestAcknowledge = m
	return pdu
}

func handoverCommandPDU(transfer []byte) *ngapType.NGAPPDU {
	pdu := successful(ngapType.ProcedureCodeHandoverPreparation, ngapType.SuccessfulOutcomePresentHandoverCommand)
	m := &ngapType.HandoverCommand{}
	m.ProtocolIEs.List = []ngapType.HandoverCommandIEs{{Id: id(ngapType.ProtocolIEIDPDUSessionResourceHandoverList), Criticality: ignore,
		Value: ngapType.HandoverCommandIEsValue{Present: ngapType.HandoverCommandIEsPresentPDUSessionResourceHandoverList,
			PDUSessionResourceHandoverList: &ngapType.PDUSessionResourceHandoverList{List: []ngapType.PDUSessionResourceHandoverItem{{
				PDUSessionID: ngapType.PDUSessionID{Value: 1}, HandoverCommandTransfer: transfer}}}}}}
	pdu.SuccessfulOutcome.Value.HandoverCommand = m
	return pdu
}

// The handover transfers dissect cleanly in tshark inside their NGAP
// messages (DESIGN.md "Correctness bar"), and tshark reads the tunnels
// and flows the codecs wrote.
func TestTsharkDissectsHandoverTransfers(t *testing.T) {
	lines := tsharkFields(t, hoMessages(t), "ngap.gTP_TEID", "ngap.qosFlowIdentifier", "ngap.directForwardingPathAvailability")
	want := []string{"00000088\t1,2", "00000101", "\t\t0", "00000088,00000089\t1,2,3", "00000089\t1"}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("message %d: tshark fields %q, want %q", i, lines[i], w)
		}
	}
}
