package ngapx

import (
	"encoding/binary"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
)

var (
	smUPFTunnel = Tunnel{IPv4: netip.MustParseAddr("10.100.0.1"), TEID: 0x101}
	smGNBTunnel = Tunnel{IPv4: netip.MustParseAddr("10.100.0.2"), TEID: 0x77}
	smFlows     = []FlowQoS{{QFI: 1, FiveQI: 9, ARPPriority: 8, PreemptionVulnerability: true},
		{QFI: 2, FiveQI: 1, ARPPriority: 2, PreemptionCapability: true, GBR: true, MFBRDown: 5e6, MFBRUp: 5e6, GFBRDown: 2e6, GFBRUp: 2e6}}
)

func setupRequestTransfer(t testing.TB) []byte {
	t.Helper()
	b, err := BuildPDUSessionResourceSetupRequestTransfer(SetupRequestTransfer{AMBRDown: 2e8, AMBRUp: 1e8, UL: smUPFTunnel, Flows: smFlows})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSetupRequestTransferRoundTrip(t *testing.T) {
	got, err := ParsePDUSessionResourceSetupRequestTransfer(setupRequestTransfer(t))
	want := SetupRequestTransfer{AMBRDown: 2e8, AMBRUp: 1e8, UL: smUPFTunnel, Flows: smFlows}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip: %v\n got %+v\nwant %+v", err, got, want)
	}
	if _, err := BuildPDUSessionResourceSetupRequestTransfer(SetupRequestTransfer{UL: smUPFTunnel}); err == nil {
		t.Error("a transfer without QoS flows was built")
	}
	if _, err := BuildPDUSessionResourceSetupRequestTransfer(SetupRequestTransfer{UL: Tunnel{}, Flows: smFlows}); err == nil {
		t.Error("a transfer without an uplink address was built")
	}
	if _, err := BuildPDUSessionResourceSetupRequestTransfer(SetupRequestTransfer{UL: smUPFTunnel, Flows: []FlowQoS{{QFI: 1, FiveQI: 9}}}); err == nil {
		t.Error("ARP priority 0 was built")
	}
}

func TestResponseTransfersRoundTrip(t *testing.T) {
	b, err := BuildPDUSessionResourceSetupResponseTransfer(SetupResponse{DL: smGNBTunnel, QFIs: []uint8{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	rsp, err := ParsePDUSessionResourceSetupResponseTransfer(b)
	if err != nil || rsp.DL != smGNBTunnel || !reflect.DeepEqual(rsp.QFIs, []uint8{1, 2}) {
		t.Fatalf("setup response %+v %v", rsp, err)
	}
	mod, err := BuildPDUSessionResourceModifyRequestTransfer(smFlows[1:])
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ParsePDUSessionResourceModifyRequestTransfer(mod); err != nil || !reflect.DeepEqual(got, smFlows[1:]) {
		t.Fatalf("modify request %+v %v", got, err)
	}
	b, _ = BuildPDUSessionResourceModifyResponseTransfer(ModifyResponse{QFIs: []uint8{2}})
	if got, err := ParsePDUSessionResourceModifyResponseTransfer(b); err != nil || !reflect.DeepEqual(got.QFIs, []uint8{2}) {
		t.Fatalf("modify response %+v %v", got, err)
	}
	rel, _ := BuildPDUSessionResourceReleaseCommandTransfer(CauseNas(ngapType.CauseNasPresentNormalRelease))
	if c, err := ParsePDUSessionResourceReleaseCommandTransfer(rel); err != nil || c.Nas == nil || c.Nas.Value != ngapType.CauseNasPresentNormalRelease {
		t.Fatalf("release command %+v %v", c, err)
	}
	fail, _ := BuildPDUSessionResourceSetupUnsuccessfulTransfer(CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified))
	if c, err := ParsePDUSessionResourceSetupUnsuccessfulTransfer(fail); err != nil || c.RadioNetwork == nil {
		t.Fatalf("unsuccessful %+v %v", c, err)
	}
}

func TestTransferParsersRefuseGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, {0}, {0xff, 0xff, 0xff}, setupRequestTransfer(t)[:5]} {
		if _, err := ParsePDUSessionResourceSetupRequestTransfer(b); err == nil {
			t.Errorf("setup request % x parsed", b)
		}
		if _, err := ParsePDUSessionResourceSetupResponseTransfer(b); err == nil {
			t.Errorf("setup response % x parsed", b)
		}
	}
}

func FuzzSMTransfers(f *testing.F) {
	f.Add(setupRequestTransfer(f))
	b, _ := BuildPDUSessionResourceSetupResponseTransfer(SetupResponse{DL: smGNBTunnel, QFIs: []uint8{1}})
	f.Add(b)
	b, _ = BuildPDUSessionResourceModifyResponseTransfer(ModifyResponse{QFIs: []uint8{2}})
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParsePDUSessionResourceSetupResponseTransfer(b)
		_, _ = ParsePDUSessionResourceSetupUnsuccessfulTransfer(b)
		_, _ = ParsePDUSessionResourceModifyResponseTransfer(b)
		_, _ = ParsePDUSessionResourceSetupRequestTransfer(b)
		_, _ = ParsePDUSessionResourceModifyRequestTransfer(b)
		_, _ = ParsePDUSessionResourceReleaseCommandTransfer(b)
	})
}

// The NGAP messages that carry the SMF's transfers and 5GSM messages to
// the gNB and the UE, and the gNB's answer, as the AMF would send them
// (the AMF's own builders are another part's): for the dissector test.
func smMessages(t *testing.T) map[string][]byte {
	t.Helper()
	accept, err := nasx.BuildPDUSessionEstablishmentAccept(nasx.EstablishmentAccept{PDUSessionID: 1, PTI: 1,
		UEIPv4: netip.MustParseAddr("10.60.0.1"), AMBRDown: 2e8, AMBRUp: 1e8, SNSSAI: models.Snssai{Sst: 1, Sd: "010203"}, DNN: "internet",
		DNS:   []netip.Addr{netip.MustParseAddr("8.8.8.8")},
		Rules: []nasx.QoSRule{{ID: 1, Operation: nasx.RuleOpCreate, Default: true, Precedence: 255, QFI: 1, Filters: []nasx.PacketFilter{{ID: 1, Direction: nasx.FilterBidirectional}}}},
		Flows: []nasx.QoSFlow{{QFI: 1, Operation: nasx.RuleOpCreate, FiveQI: 9}}})
	if err != nil {
		t.Fatal(err)
	}
	modCmd, _ := nasx.BuildPDUSessionModificationCommand(nasx.ModificationCommand{PDUSessionID: 1,
		Rules: []nasx.QoSRule{{ID: 2, Operation: nasx.RuleOpCreate, Precedence: 10, QFI: 2, Filters: []nasx.PacketFilter{{ID: 1,
			Direction: nasx.FilterBidirectional, Protocol: 17, Remote: netip.MustParsePrefix("10.200.0.2/32"), RemotePort: 5201}}}},
		Flows: []nasx.QoSFlow{{QFI: 2, Operation: nasx.RuleOpCreate, FiveQI: 1, GFBRUp: 2e6, GFBRDown: 2e6, MFBRUp: 5e6, MFBRDown: 5e6}}})
	relCmd, _ := nasx.BuildPDUSessionReleaseCommand(1, 0, nasx.GSMCauseRegularDeactivation)
	reject, _ := nasx.BuildPDUSessionEstablishmentReject(1, 1, nasx.GSMCauseMissingOrUnknownDNN)
	dl := func(gsm []byte) []byte {
		b, err := nasx.BuildDLNASTransport(nasx.DLNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: gsm, PDUSessionID: 1})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	modReq, _ := BuildPDUSessionResourceModifyRequestTransfer(smFlows[1:])
	relTr, _ := BuildPDUSessionResourceReleaseCommandTransfer(CauseNas(ngapType.CauseNasPresentNormalRelease))
	setupRsp, _ := BuildPDUSessionResourceSetupResponseTransfer(SetupResponse{DL: smGNBTunnel, QFIs: []uint8{1}})
	rejectDL, _ := BuildDownlinkNASTransport(1, 1, dl(reject))
	modRej, _ := nasx.BuildPDUSessionModificationReject(1, 3, nasx.GSMCauseSemanticErrorsInPacketFilters)
	relRej, _ := nasx.BuildPDUSessionReleaseReject(1, 4, nasx.GSMCauseInvalidPDUSessionIdentity)
	modRejDL, _ := BuildDownlinkNASTransport(1, 1, dl(modRej))
	relRejDL, _ := BuildDownlinkNASTransport(1, 1, dl(relRej))
	return map[string][]byte{
		"modification reject": modRejDL,
		"release reject":      relRejDL,
		"setup request":       encodeTest(t, setupRequestPDU(dl(accept), setupRequestTransfer(t))),
		"setup response":      encodeTest(t, setupResponsePDU(setupRsp)),
		"modify request":      encodeTest(t, modifyRequestPDU(dl(modCmd), modReq)),
		"release command":     encodeTest(t, releaseCommandPDU(dl(relCmd), relTr)),
		"reject":              rejectDL,
	}
}

func encodeTest(t *testing.T, pdu *ngapType.NGAPPDU) []byte {
	t.Helper()
	b, err := Encode(pdu)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ueIDs() (ngapType.ProtocolIEID, *ngapType.AMFUENGAPID, ngapType.ProtocolIEID, *ngapType.RANUENGAPID) {
	return id(ngapType.ProtocolIEIDAMFUENGAPID), &ngapType.AMFUENGAPID{Value: 1}, id(ngapType.ProtocolIEIDRANUENGAPID), &ngapType.RANUENGAPID{Value: 1}
}

func setupRequestPDU(nasPDU, transfer []byte) *ngapType.NGAPPDU {
	pdu := initiating(ngapType.ProcedureCodePDUSessionResourceSetup, reject, ngapType.InitiatingMessagePresentPDUSessionResourceSetupRequest)
	m := &ngapType.PDUSessionResourceSetupRequest{}
	aID, a, rID, r := ueIDs()
	sn, _ := snssaiIE(models.Snssai{Sst: 1, Sd: "010203"})
	m.ProtocolIEs.List = []ngapType.PDUSessionResourceSetupRequestIEs{
		{Id: aID, Criticality: reject, Value: ngapType.PDUSessionResourceSetupRequestIEsValue{Present: ngapType.PDUSessionResourceSetupRequestIEsPresentAMFUENGAPID, AMFUENGAPID: a}},
		{Id: rID, Criticality: reject, Value: ngapType.PDUSessionResourceSetupRequestIEsValue{Present: ngapType.PDUSessionResourceSetupRequestIEsPresentRANUENGAPID, RANUENGAPID: r}},
		{Id: id(ngapType.ProtocolIEIDPDUSessionResourceSetupListSUReq), Criticality: reject, Value: ngapType.PDUSessionResourceSetupRequestIEsValue{
			Present: ngapType.PDUSessionResourceSetupRequestIEsPresentPDUSessionResourceSetupListSUReq,
			PDUSessionResourceSetupListSUReq: &ngapType.PDUSessionResourceSetupListSUReq{List: []ngapType.PDUSessionResourceSetupItemSUReq{{
				PDUSessionID: ngapType.PDUSessionID{Value: 1}, PDUSessionNASPDU: &ngapType.NASPDU{Value: nasPDU}, SNSSAI: sn,
				PDUSessionResourceSetupRequestTransfer: transfer}}}}},
	}
	pdu.InitiatingMessage.Value.PDUSessionResourceSetupRequest = m
	return pdu
}

func setupResponsePDU(transfer []byte) *ngapType.NGAPPDU {
	pdu := successful(ngapType.ProcedureCodePDUSessionResourceSetup, ngapType.SuccessfulOutcomePresentPDUSessionResourceSetupResponse)
	m := &ngapType.PDUSessionResourceSetupResponse{}
	aID, a, rID, r := ueIDs()
	m.ProtocolIEs.List = []ngapType.PDUSessionResourceSetupResponseIEs{
		{Id: aID, Criticality: ignore, Value: ngapType.PDUSessionResourceSetupResponseIEsValue{Present: ngapType.PDUSessionResourceSetupResponseIEsPresentAMFUENGAPID, AMFUENGAPID: a}},
		{Id: rID, Criticality: ignore, Value: ngapType.PDUSessionResourceSetupResponseIEsValue{Present: ngapType.PDUSessionResourceSetupResponseIEsPresentRANUENGAPID, RANUENGAPID: r}},
		{Id: id(ngapType.ProtocolIEIDPDUSessionResourceSetupListSURes), Criticality: ignore, Value: ngapType.PDUSessionResourceSetupResponseIEsValue{
			Present: ngapType.PDUSessionResourceSetupResponseIEsPresentPDUSessionResourceSetupListSURes,
			PDUSessionResourceSetupListSURes: &ngapType.PDUSessionResourceSetupListSURes{List: []ngapType.PDUSessionResourceSetupItemSURes{{
				PDUSessionID: ngapType.PDUSessionID{Value: 1}, PDUSessionResourceSetupResponseTransfer: transfer}}}}},
	}
	pdu.SuccessfulOutcome.Value.PDUSessionResourceSetupResponse = m
	return pdu
}

func modifyRequestPDU(nasPDU, transfer []byte) *ngapType.NGAPPDU {
	pdu := initiating(ngapType.ProcedureCodePDUSessionResourceModify, reject, ngapType.InitiatingMessagePresentPDUSessionResourceModifyRequest)
	m := &ngapType.PDUSessionResourceModifyRequest{}
	aID, a, rID, r := ueIDs()
	m.ProtocolIEs.List = []ngapType.PDUSessionResourceModifyRequestIEs{
		{Id: aID, Criticality: reject, Value: ngapType.PDUSessionResourceModifyRequestIEsValue{Present: ngapType.PDUSessionResourceModifyRequestIEsPresentAMFUENGAPID, AMFUENGAPID: a}},
		{Id: rID, Criticality: reject, Value: ngapType.PDUSessionResourceModifyRequestIEsValue{Present: ngapType.PDUSessionResourceModifyRequestIEsPresentRANUENGAPID, RANUENGAPID: r}},
		{Id: id(ngapType.ProtocolIEIDPDUSessionResourceModifyListModReq), Criticality: reject, Value: ngapType.PDUSessionResourceModifyRequestIEsValue{
			Present: ngapType.PDUSessionResourceModifyRequestIEsPresentPDUSessionResourceModifyListModReq,
			PDUSessionResourceModifyListModReq: &ngapType.PDUSessionResourceModifyListModReq{List: []ngapType.PDUSessionResourceModifyItemModReq{{
				PDUSessionID: ngapType.PDUSessionID{Value: 1}, NASPDU: &ngapType.NASPDU{Value: nasPDU}, PDUSessionResourceModifyRequestTransfer: transfer}}}}},
	}
	pdu.InitiatingMessage.Value.PDUSessionResourceModifyRequest = m
	return pdu
}

func releaseCommandPDU(nasPDU, transfer []byte) *ngapType.NGAPPDU {
	pdu := initiating(ngapType.ProcedureCodePDUSessionResourceRelease, reject, ngapType.InitiatingMessagePresentPDUSessionResourceReleaseCommand)
	m := &ngapType.PDUSessionResourceReleaseCommand{}
	aID, a, rID, r := ueIDs()
	m.ProtocolIEs.List = []ngapType.PDUSessionResourceReleaseCommandIEs{
		{Id: aID, Criticality: reject, Value: ngapType.PDUSessionResourceReleaseCommandIEsValue{Present: ngapType.PDUSessionResourceReleaseCommandIEsPresentAMFUENGAPID, AMFUENGAPID: a}},
		{Id: rID, Criticality: reject, Value: ngapType.PDUSessionResourceReleaseCommandIEsValue{Present: ngapType.PDUSessionResourceReleaseCommandIEsPresentRANUENGAPID, RANUENGAPID: r}},
		{Id: id(ngapType.ProtocolIEIDNASPDU), Criticality: ignore, Value: ngapType.PDUSessionResourceReleaseCommandIEsValue{Present: ngapType.PDUSessionResourceReleaseCommandIEsPresentNASPDU, NASPDU: &ngapType.NASPDU{Value: nasPDU}}},
		{Id: id(ngapType.ProtocolIEIDPDUSessionResourceToReleaseListRelCmd), Criticality: reject, Value: ngapType.PDUSessionResourceReleaseCommandIEsValue{
			Present: ngapType.PDUSessionResourceReleaseCommandIEsPresentPDUSessionResourceToReleaseListRelCmd,
			PDUSessionResourceToReleaseListRelCmd: &ngapType.PDUSessionResourceToReleaseListRelCmd{List: []ngapType.PDUSessionResourceToReleaseItemRelCmd{{
				PDUSessionID: ngapType.PDUSessionID{Value: 1}, PDUSessionResourceReleaseCommandTransfer: transfer}}}}},
	}
	pdu.InitiatingMessage.Value.PDUSessionResourceReleaseCommand = m
	return pdu
}

// writePcap writes the messages as one pcap of link type DLT_USER0 (147),
// which the test maps to the NGAP dissector.
func writePcap(t *testing.T, path string, msgs [][]byte) {
	t.Helper()
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, 0xa1b2c3d4)
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 4)
	b = append(b, make([]byte, 8)...)
	b = binary.LittleEndian.AppendUint32(b, 65535)
	b = binary.LittleEndian.AppendUint32(b, 147)
	for i, m := range msgs {
		b = binary.LittleEndian.AppendUint32(b, uint32(i+1))
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m)))
		b = append(b, m...)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// What the SMF builds dissects cleanly in tshark (DESIGN.md "Correctness
// bar"): the N2 SM transfers inside their NGAP messages and the 5GSM
// messages inside DL NAS Transport, with no malformed packet or error.
func TestTsharkDissectsSMMessages(t *testing.T) {
	msgs := smMessages(t)
	names := []string{"setup request", "setup response", "modify request", "release command", "reject", "modification reject", "release reject"}
	var list [][]byte
	for _, n := range names {
		list = append(list, msgs[n])
	}
	// Message type, GTP TEID, QFIs, and the IPv4 address tshark reads
	// (the PDU address of the Accept, the packet filter's remote address
	// in the Modification Command).
	lines := tsharkFields(t, list, "nas_5gs.sm.message_type", "ngap.gTP_TEID", "ngap.qosFlowIdentifier", "nas_5gs.sm.pdu_addr_inf_ipv4")
	want := []string{"0xc2\t00000101\t1,2\t10.60.0.1", "\t00000077\t1", "0xcb\t\t2\t10.200.0.2", "0xd3", "0xc3", "0xca", "0xd2"}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("%s: tshark fields %q, want %q", names[i], lines[i], w)
		}
	}
}

// tsharkFields has tshark dissect msgs as NGAP, fails the test on any
// malformed packet or error, and returns per message the fields asked
// for, tab-separated, trailing empty ones trimmed. Without tshark the
// test is skipped.
func tsharkFields(t *testing.T, msgs [][]byte, fields ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed (apt-get install tshark)")
	}
	file := filepath.Join(t.TempDir(), "ngap.pcap")
	writePcap(t, file, msgs)
	args := []string{"-r", file, "-o", `uat:user_dlts:"User 0 (DLT=147)","ngap","0","","0",""`}
	out, err := exec.Command("tshark", append(args, "-Y", "_ws.malformed || _ws.expert.severity == error")...).CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	if bad := strings.TrimSpace(dropWarnings(string(out))); bad != "" {
		verbose, _ := exec.Command("tshark", append(args, "-V")...).CombinedOutput()
		t.Fatalf("malformed or erroneous packets:\n%s\n%s", bad, verbose)
	}
	args = append(args, "-T", "fields")
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err = exec.Command("tshark", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("tshark fields: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(dropWarnings(string(out))), "\n")
	if len(lines) != len(msgs) {
		t.Fatalf("tshark read %d packets, want %d:\n%s", len(lines), len(msgs), out)
	}
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], "\t")
	}
	return lines
}

// dropWarnings removes tshark's notes about running as root.
func dropWarnings(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "Running as user") || strings.Contains(l, "dangerous") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
