package ngapx_test

import (
	"errors"
	"net/netip"
	"reflect"
	"testing"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/protocol/ngapx/ngapxtest"
)

var upf = ngapx.Tunnel{IPv4: netip.MustParseAddr("10.100.0.1"), TEID: 0x1001}

// decode takes a builder's results and decodes the PDU.
func decode(t *testing.T) func([]byte, error) *ngapType.NGAPPDU {
	return func(b []byte, err error) *ngapType.NGAPPDU {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		pdu, err := ngapx.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		return pdu
	}
}

func TestGNBReadsTheSetupRequestAndItsTransfer(t *testing.T) {
	pdu := decode(t)(ngapxtest.SetupRequest(7, 3, []ngapxtest.Session{
		{ID: 1, NASPDU: []byte{0x7E, 0x02}, UL: upf, QFIs: []uint8{1, 2}},
		{ID: 2, UL: upf, QFIs: []uint8{1}},
	}, map[uint8][]byte{2: {0xFF, 0x00}}))
	r, err := ngapx.ParseRANSetupRequest(pdu)
	if err != nil {
		t.Fatal(err)
	}
	if r.AMFUEID != 7 || r.RANUEID != 3 || len(r.Sessions) != 1 {
		t.Fatalf("%+v", r)
	}
	s := r.Sessions[0]
	want := ngapx.RANSessionSetup{ID: 1, NASPDU: []byte{0x7E, 0x02}, UL: upf, Type: ngapType.PDUSessionTypePresentIpv4,
		Flows: []ngapx.FlowQoS{{QFI: 1, FiveQI: 9, ARPPriority: 8}, {QFI: 2, FiveQI: 9, ARPPriority: 8}}, AMBRUplink: 100_000_000, AMBRDownlink: 1_000_000_000}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("session\n%+v\nwant\n%+v", s, want)
	}
	if !reflect.DeepEqual(r.Unreadable, []uint8{2}) {
		t.Fatalf("session 2 with a broken transfer: unreadable %v", r.Unreadable)
	}
}

func TestSetupTransferWithoutMandatoryIEsIsRefused(t *testing.T) {
	var tr ngapType.PDUSessionResourceSetupRequestTransfer
	tr.ProtocolIEs.List = append(tr.ProtocolIEs.List, ngapType.PDUSessionResourceSetupRequestTransferIEs{
		Id: ngapType.ProtocolIEID{Value: ngapType.ProtocolIEIDPDUSessionType}, Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentReject},
		Value: ngapType.PDUSessionResourceSetupRequestTransferIEsValue{Present: ngapType.PDUSessionResourceSetupRequestTransferIEsPresentPDUSessionType,
			PDUSessionType: &ngapType.PDUSessionType{Value: ngapType.PDUSessionTypePresentIpv4}}})
	b, err := aper.MarshalWithParams(tr, "valueExt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ngapx.DecodeSetupRequestTransfer(b); err == nil {
		t.Fatal("a transfer without UL tunnel and QoS flows decoded")
	}
	if _, err := ngapx.DecodeSetupRequestTransfer([]byte{0x80}); err == nil {
		t.Fatal("garbage decoded")
	}
}

func TestSetupResponseCarriesTheDLTunnelPerSession(t *testing.T) {
	gnb := ngapx.Tunnel{IPv4: netip.MustParseAddr("10.100.0.2"), TEID: 42}
	cause := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified)
	b, err := ngapx.BuildRANSetupResponse(7, 3, []ngapx.RANSessionResult{{ID: 1, DL: gnb, QFIs: []uint8{1}}, {ID: 2, Cause: &cause}})
	pdu := decode(t)(b, err)
	r := pdu.SuccessfulOutcome.Value.PDUSessionResourceSetupResponse
	var ok *ngapType.PDUSessionResourceSetupListSURes
	var failed *ngapType.PDUSessionResourceFailedToSetupListSURes
	for _, ie := range r.ProtocolIEs.List {
		if ie.Value.PDUSessionResourceSetupListSURes != nil {
			ok = ie.Value.PDUSessionResourceSetupListSURes
		}
		if ie.Value.PDUSessionResourceFailedToSetupListSURes != nil {
			failed = ie.Value.PDUSessionResourceFailedToSetupListSURes
		}
	}
	if ok == nil || len(ok.List) != 1 || failed == nil || len(failed.List) != 1 || failed.List[0].PDUSessionID.Value != 2 {
		t.Fatalf("lists %+v %+v", ok, failed)
	}
	tr, err := ngapx.ParsePDUSessionResourceSetupResponseTransfer(ok.List[0].PDUSessionResourceSetupResponseTransfer)
	if err != nil || tr.DL != gnb || !reflect.DeepEqual(tr.QFIs, []uint8{1}) {
		t.Fatalf("transfer: %+v %v", tr, err)
	}
}

func TestModifyRequestAndResponse(t *testing.T) {
	pdu := decode(t)(ngapxtest.ModifyRequest(7, 3, 1, []byte{0x7E}, []uint8{5}))
	m, err := ngapx.ParseRANModifyRequest(pdu)
	if err != nil {
		t.Fatal(err)
	}
	if m.AMFUEID != 7 || len(m.Sessions) != 1 || m.Sessions[0].ID != 1 ||
		!reflect.DeepEqual(m.Sessions[0].AddOrModify, []ngapx.FlowQoS{{QFI: 5, FiveQI: 9, ARPPriority: 8}}) || m.Sessions[0].NASPDU == nil {
		t.Fatalf("%+v", m)
	}
	b, err := ngapx.BuildRANModifyResponse(7, 3, []ngapx.RANSessionResult{{ID: 1, QFIs: []uint8{5}}})
	resp := decode(t)(b, err).SuccessfulOutcome.Value.PDUSessionResourceModifyResponse
	if resp == nil || len(resp.ProtocolIEs.List) != 3 {
		t.Fatalf("Modify Response %+v", resp)
	}
}

func TestReleaseCommandAndResponse(t *testing.T) {
	pdu := decode(t)(ngapxtest.ReleaseCommand(7, 3, []byte{0x7E}, 1, 2))
	c, err := ngapx.ParseRANReleaseCommand(pdu)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.IDs, []uint8{1, 2}) || c.NASPDU == nil || c.Causes[0] == nil || c.Causes[0].Nas == nil {
		t.Fatalf("%+v", c)
	}
	b, err := ngapx.BuildRANReleaseResponse(7, 3, c.IDs)
	resp := decode(t)(b, err).SuccessfulOutcome.Value.PDUSessionResourceReleaseResponse
	var list *ngapType.PDUSessionResourceReleasedListRelRes
	for _, ie := range resp.ProtocolIEs.List {
		if ie.Value.PDUSessionResourceReleasedListRelRes != nil {
			list = ie.Value.PDUSessionResourceReleasedListRelRes
		}
	}
	if list == nil || len(list.List) != 2 {
		t.Fatalf("released list %+v", list)
	}
}

func TestReadersRefuseOtherMessages(t *testing.T) {
	pdu := decode(t)(ngapxtest.ReleaseCommand(7, 3, nil, 1))
	if _, err := ngapx.ParseRANSetupRequest(pdu); !errors.Is(err, ngapx.ErrNotThisMessage) {
		t.Fatalf("setup reader on a release command: %v", err)
	}
	if _, err := ngapx.ParseRANModifyRequest(pdu); !errors.Is(err, ngapx.ErrNotThisMessage) {
		t.Fatalf("modify reader on a release command: %v", err)
	}
}

// TS 38.413 9.2.1.1: both UE NGAP IDs are mandatory.
func TestSetupRequestWithoutARANUEIDIsRefused(t *testing.T) {
	pdu := decode(t)(ngapxtest.SetupRequest(7, 3, []ngapxtest.Session{{ID: 1, UL: upf, QFIs: []uint8{1}}}, nil))
	r := pdu.InitiatingMessage.Value.PDUSessionResourceSetupRequest
	var kept []ngapType.PDUSessionResourceSetupRequestIEs
	for _, ie := range r.ProtocolIEs.List {
		if ie.Value.RANUENGAPID == nil {
			kept = append(kept, ie)
		}
	}
	r.ProtocolIEs.List = kept
	if _, err := ngapx.ParseRANSetupRequest(pdu); err == nil {
		t.Fatal("a Setup Request without RAN UE NGAP ID parsed")
	}
}
