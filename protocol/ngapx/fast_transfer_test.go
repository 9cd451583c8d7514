package ngapx

import (
	"bytes"
	"fmt"
	"net/netip"
	"reflect"
	"testing"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
)

// checkTransferSame is checkSameAsLibrary for a transfer: v is the value
// (as marshalTransfer gets it), fresh makes an empty one to decode into.
func checkTransferSame(t *testing.T, name string, v any, fresh func() any, mustFast bool) {
	t.Helper()
	lib, libErr := aper.MarshalWithParams(v, "valueExt")
	fast, ok := marshalTransferFast(v)
	switch {
	case ok && (libErr != nil || !bytes.Equal(fast, lib)):
		t.Errorf("%s:\n fast %x\n lib  %x (%v)", name, fast, lib, libErr)
	case !ok && mustFast:
		t.Errorf("%s: encoding left to the library", name)
	}
	if libErr != nil {
		return
	}
	checkTransferDecodeSame(t, name, lib, fresh, mustFast)
}

func checkTransferDecodeSame(t *testing.T, name string, b []byte, fresh func() any, mustFast bool) {
	t.Helper()
	want, got := fresh(), fresh()
	wantErr := aper.UnmarshalWithParams(b, want, "valueExt")
	ok := unmarshalTransferFast(b, got)
	switch {
	case ok && (wantErr != nil || !reflect.DeepEqual(got, want)):
		t.Errorf("%s: decoding %x: fast %+v, library %+v (%v)", name, b, got, want, wantErr)
	case !ok && mustFast:
		t.Errorf("%s: decoding left to the library", name)
	}
}

func newSetupRequestTransfer() any  { return &ngapType.PDUSessionResourceSetupRequestTransfer{} }
func newSetupResponseTransfer() any { return &ngapType.PDUSessionResourceSetupResponseTransfer{} }

// requestTransferOf is the value BuildPDUSessionResourceSetupRequestTransfer encodes.
func requestTransferOf(t *testing.T, p SetupRequestTransfer) ngapType.PDUSessionResourceSetupRequestTransfer {
	t.Helper()
	b, err := BuildPDUSessionResourceSetupRequestTransfer(p)
	if err != nil {
		t.Fatal(err)
	}
	var v ngapType.PDUSessionResourceSetupRequestTransfer
	if err := aper.UnmarshalWithParams(b, &v, "valueExt"); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFastSetupRequestTransfer: what the SMF sends for a session (TS 38.413
// 9.3.4.1): 1 to 64 flows, GBR and not, ARP 1..15 with both pre-emption
// flags, every 5QI, AMBR at its edges.
func TestFastSetupRequestTransfer(t *testing.T) {
	ul := Tunnel{IPv4: netip.MustParseAddr("10.100.0.1"), TEID: 0xdeadbeef}
	for _, n := range []int{1, 2, 8, 64} {
		for _, ambr := range []uint64{0, 255, 1e9, maxBitRate} {
			p := SetupRequestTransfer{AMBRDown: ambr, AMBRUp: ambr / 2, UL: ul}
			for i := 0; i < n; i++ {
				f := FlowQoS{QFI: uint8(i), FiveQI: uint8(i * 4), ARPPriority: uint8(1 + i%15),
					PreemptionCapability: i%2 == 0, PreemptionVulnerability: i%3 == 0}
				if i%2 == 1 {
					f.GBR, f.MFBRDown, f.MFBRUp, f.GFBRDown, f.GFBRUp = true, ambr, 1, 0, maxBitRate
				}
				p.Flows = append(p.Flows, f)
			}
			checkTransferSame(t, fmt.Sprintf("request %d flows AMBR %d", n, ambr), requestTransferOf(t, p), newSetupRequestTransfer, true)
		}
	}
	// Outside the covered shapes: a 5QI with a priority override, an
	// extension value of PDU session type.
	v := requestTransferOf(t, SetupRequestTransfer{UL: ul, Flows: []FlowQoS{{QFI: 1, FiveQI: 9, ARPPriority: 8}}})
	for _, ie := range v.ProtocolIEs.List {
		if l := ie.Value.QosFlowSetupRequestList; l != nil {
			l.List[0].QosFlowLevelQosParameters.QosCharacteristics.NonDynamic5QI.PriorityLevelQos = &ngapType.PriorityLevelQos{Value: 5}
		}
		if p := ie.Value.PDUSessionType; p != nil {
			p.Value = 6
		}
	}
	checkTransferSame(t, "request outside the fast shapes", v, newSetupRequestTransfer, false)
}

// TestFastSetupResponseTransfer: what the gNB answers (9.3.4.2): 1 to 64
// flows, tunnel addresses of 32 bits and of other sizes.
func TestFastSetupResponseTransfer(t *testing.T) {
	for _, n := range []int{1, 2, 63, 64} {
		var qfis []uint8
		for i := 0; i < n; i++ {
			qfis = append(qfis, uint8(i))
		}
		b, err := BuildPDUSessionResourceSetupResponseTransfer(SetupResponse{DL: testTunnel, QFIs: qfis})
		if err != nil {
			t.Fatal(err)
		}
		var v ngapType.PDUSessionResourceSetupResponseTransfer
		if err := aper.UnmarshalWithParams(b, &v, "valueExt"); err != nil {
			t.Fatal(err)
		}
		checkTransferSame(t, fmt.Sprintf("response %d flows", n), v, newSetupResponseTransfer, true)
		for _, bits := range []uint64{1, 7, 8, 9, 36, 128, 160} {
			w := v
			w.DLQosFlowPerTNLInformation.UPTransportLayerInformation.GTPTunnel = &ngapType.GTPTunnel{
				TransportLayerAddress: ngapType.TransportLayerAddress{Value: aper.BitString{Bytes: bytes.Repeat([]byte{0xff}, int(bits+7)/8), BitLength: bits}},
				GTPTEID:               ngapType.GTPTEID{Value: []byte{1, 2, 3, 4}}}
			checkTransferSame(t, fmt.Sprintf("response %d flows, address of %d bits", n, bits), w, newSetupResponseTransfer, true)
		}
	}
	cause := CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified)
	b, err := BuildPDUSessionResourceSetupResponseTransfer(SetupResponse{DL: testTunnel, QFIs: []uint8{1}})
	if err != nil {
		t.Fatal(err)
	}
	var v ngapType.PDUSessionResourceSetupResponseTransfer
	if err := aper.UnmarshalWithParams(b, &v, "valueExt"); err != nil {
		t.Fatal(err)
	}
	v.QosFlowFailedToSetupList = &ngapType.QosFlowListWithCause{List: []ngapType.QosFlowWithCauseItem{{
		QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: 2}, Cause: cause}}}
	checkTransferSame(t, "response with a failed flow", v, newSetupResponseTransfer, false)
}

// TestTransferParsersUseTheFastPath: the SMF's and the gNB's readers give
// what they gave, through the fast path.
func TestTransferParsersUseTheFastPath(t *testing.T) {
	ul := Tunnel{IPv4: netip.MustParseAddr("10.100.0.1"), TEID: 7}
	p := SetupRequestTransfer{AMBRDown: 2e9, AMBRUp: 1e9, UL: ul, Flows: []FlowQoS{{QFI: 1, FiveQI: 9, ARPPriority: 8},
		{QFI: 2, FiveQI: 1, ARPPriority: 2, GBR: true, MFBRDown: 10, MFBRUp: 20, GFBRDown: 5, GFBRUp: 6}}}
	b, err := BuildPDUSessionResourceSetupRequestTransfer(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParsePDUSessionResourceSetupRequestTransfer(b)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("parsed %+v, %v; want %+v", got, err, p)
	}
	ran, err := DecodeSetupRequestTransfer(b)
	if err != nil || ran.UL != ul || len(ran.Flows) != 2 || ran.AMBRDownlink != 2e9 {
		t.Fatalf("gNB read %+v, %v", ran, err)
	}
	rb, err := BuildPDUSessionResourceSetupResponseTransfer(SetupResponse{DL: testTunnel, QFIs: []uint8{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParsePDUSessionResourceSetupResponseTransfer(rb)
	if err != nil || r.DL != testTunnel || !bytes.Equal(r.QFIs, []uint8{1, 2}) {
		t.Fatalf("SMF read %+v, %v", r, err)
	}
}

// FuzzFastTransferDecode: the transfer readers never panic, and the fast
// path decodes only what the library decodes, to the same value.
func FuzzFastTransferDecode(f *testing.F) {
	for _, s := range hotSamples(f) {
		if m := s.pdu.InitiatingMessage; m != nil && m.Value.PDUSessionResourceSetupRequest != nil {
			for _, ie := range m.Value.PDUSessionResourceSetupRequest.ProtocolIEs.List {
				if l := ie.Value.PDUSessionResourceSetupListSUReq; l != nil {
					f.Add([]byte(l.List[0].PDUSessionResourceSetupRequestTransfer))
				}
			}
		}
	}
	if b, err := BuildPDUSessionResourceSetupResponseTransfer(SetupResponse{DL: testTunnel, QFIs: []uint8{1, 5}}); err == nil {
		f.Add(b)
	}
	if b, err := BuildPDUSessionResourceReleaseCommandTransfer(CauseNas(ngapType.CauseNasPresentNormalRelease)); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, fresh := range []func() any{newSetupRequestTransfer, newSetupResponseTransfer, newReleaseCommandTransfer, newReleaseResponseTransfer} {
			checkTransferDecodeSame(t, "fuzz", b, fresh, false)
		}
		_, _ = DecodeSetupRequestTransfer(b)
		_, _ = ParsePDUSessionResourceSetupResponseTransfer(b)
		_ = ranSideReleaseCause(b)
	})
}

// FuzzFastTransferEncode builds random transfers of the covered shapes
// (any number of flows up to 64 and past it, any 5QI, ARP and bit rates,
// tunnel addresses of any size) and checks the fast encoder against the
// library, and the decoders back.
func FuzzFastTransferEncode(f *testing.F) {
	f.Add(bytes.Repeat([]byte{3}, 40))
	f.Add(bytes.Repeat([]byte{0xff, 0x01, 0x80}, 30))
	f.Fuzz(func(t *testing.T, seed []byte) {
		s := &fuzzSource{b: seed}
		p := SetupRequestTransfer{AMBRDown: s.u64() >> 22, AMBRUp: s.u64() >> 22,
			UL: Tunnel{IPv4: netip.AddrFrom4([4]byte{s.u8(), s.u8(), s.u8(), s.u8()}), TEID: uint32(s.u64())}}
		var qfis []uint8
		for i := 0; i < 1+int(s.u8()%70); i++ {
			f := FlowQoS{QFI: s.u8() % 70, FiveQI: s.u8(), ARPPriority: s.u8() % 17, PreemptionCapability: s.flag(), PreemptionVulnerability: s.flag()}
			if s.flag() {
				f.GBR, f.MFBRDown, f.MFBRUp, f.GFBRDown, f.GFBRUp = true, s.u64()>>22, s.u64()>>22, s.u64()>>22, s.u64()>>22
			}
			p.Flows = append(p.Flows, f)
			qfis = append(qfis, f.QFI)
		}
		if ul, err := flowsTransfer(p); err == nil {
			checkTransferSame(t, "request", ul, newSetupRequestTransfer, false)
		}
		r := ngapType.PDUSessionResourceSetupResponseTransfer{}
		bits := uint64(s.u8())
		dl, err := upTNL(testTunnel)
		if err != nil {
			t.Fatal(err)
		}
		dl.GTPTunnel.TransportLayerAddress.Value = aper.BitString{Bytes: bytes.Repeat([]byte{s.u8()}, int(bits+7)/8), BitLength: bits}
		r.DLQosFlowPerTNLInformation.UPTransportLayerInformation = *dl
		for _, q := range qfis {
			r.DLQosFlowPerTNLInformation.AssociatedQosFlowList.List = append(r.DLQosFlowPerTNLInformation.AssociatedQosFlowList.List,
				ngapType.AssociatedQosFlowItem{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(q)}})
		}
		checkTransferSame(t, "response", r, newSetupResponseTransfer, false)
	})
}

// flowsTransfer is the value BuildPDUSessionResourceSetupRequestTransfer
// would encode for p, without its range checks, so values past the ranges
// reach both encoders.
func flowsTransfer(p SetupRequestTransfer) (ngapType.PDUSessionResourceSetupRequestTransfer, error) {
	var t ngapType.PDUSessionResourceSetupRequestTransfer
	ul, err := upTNL(p.UL)
	if err != nil {
		return t, err
	}
	l := &ngapType.QosFlowSetupRequestList{}
	for _, f := range p.Flows {
		q := ngapType.QosFlowLevelQosParameters{
			QosCharacteristics: ngapType.QosCharacteristics{Present: ngapType.QosCharacteristicsPresentNonDynamic5QI,
				NonDynamic5QI: &ngapType.NonDynamic5QIDescriptor{FiveQI: ngapType.FiveQI{Value: int64(f.FiveQI)}}},
			AllocationAndRetentionPriority: ngapType.AllocationAndRetentionPriority{PriorityLevelARP: ngapType.PriorityLevelARP{Value: int64(f.ARPPriority)},
				PreEmptionCapability: ngapType.PreEmptionCapability{Value: enumOf(f.PreemptionCapability)}, PreEmptionVulnerability: ngapType.PreEmptionVulnerability{Value: enumOf(f.PreemptionVulnerability)}}}
		if f.GBR {
			q.GBRQosInformation = &ngapType.GBRQosInformation{MaximumFlowBitRateDL: ngapType.BitRate{Value: int64(f.MFBRDown)},
				MaximumFlowBitRateUL: ngapType.BitRate{Value: int64(f.MFBRUp)}, GuaranteedFlowBitRateDL: ngapType.BitRate{Value: int64(f.GFBRDown)},
				GuaranteedFlowBitRateUL: ngapType.BitRate{Value: int64(f.GFBRUp)}}
		}
		l.List = append(l.List, ngapType.QosFlowSetupRequestItem{QosFlowIdentifier: ngapType.QosFlowIdentifier{Value: int64(f.QFI)}, QosFlowLevelQosParameters: q})
	}
	add := func(id int64, v ngapType.PDUSessionResourceSetupRequestTransferIEsValue) {
		i, c := ie(id, ngapType.CriticalityPresentReject)
		t.ProtocolIEs.List = append(t.ProtocolIEs.List, ngapType.PDUSessionResourceSetupRequestTransferIEs{Id: i, Criticality: c, Value: v})
	}
	add(ngapType.ProtocolIEIDPDUSessionAggregateMaximumBitRate, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestTransferIEsPresentPDUSessionAggregateMaximumBitRate, PDUSessionAggregateMaximumBitRate: ambr(p.AMBRDown, p.AMBRUp)})
	add(ngapType.ProtocolIEIDULNGUUPTNLInformation, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestTransferIEsPresentULNGUUPTNLInformation, ULNGUUPTNLInformation: ul})
	add(ngapType.ProtocolIEIDQosFlowSetupRequestList, ngapType.PDUSessionResourceSetupRequestTransferIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestTransferIEsPresentQosFlowSetupRequestList, QosFlowSetupRequestList: l})
	return t, nil
}

// BenchmarkTransferCodec compares free5gc/aper ("lib") and the fast path
// on the two transfers of a PDU session setup:
// go test -run '^$' -bench TransferCodec ./protocol/ngapx
func BenchmarkTransferCodec(b *testing.B) {
	req, err := BuildPDUSessionResourceSetupRequestTransfer(SetupRequestTransfer{AMBRDown: 2e9, AMBRUp: 1e9,
		UL: Tunnel{IPv4: netip.MustParseAddr("10.100.0.1"), TEID: 0x10}, Flows: []FlowQoS{{QFI: 1, FiveQI: 9, ARPPriority: 8}}})
	if err != nil {
		b.Fatal(err)
	}
	res, err := BuildPDUSessionResourceSetupResponseTransfer(SetupResponse{DL: testTunnel, QFIs: []uint8{1}})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		bytes []byte
		fresh func() any
	}{{"SetupRequestTransfer", req, newSetupRequestTransfer}, {"SetupResponseTransfer", res, newSetupResponseTransfer}} {
		v := c.fresh()
		if err := aper.UnmarshalWithParams(c.bytes, v, "valueExt"); err != nil {
			b.Fatal(err)
		}
		value := reflect.ValueOf(v).Elem().Interface()
		b.Run("encode/lib/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, _ = aper.MarshalWithParams(value, "valueExt")
			}
		})
		b.Run("encode/fast/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, ok := marshalTransferFast(value); !ok {
					b.Fatal("not covered")
				}
			}
		})
		b.Run("decode/lib/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = aper.UnmarshalWithParams(c.bytes, c.fresh(), "valueExt")
			}
		})
		b.Run("decode/fast/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if !unmarshalTransferFast(c.bytes, c.fresh()) {
					b.Fatal("not covered")
				}
			}
		})
	}
}

func newReleaseCommandTransfer() any  { return &ngapType.PDUSessionResourceReleaseCommandTransfer{} }
func newReleaseResponseTransfer() any { return &ngapType.PDUSessionResourceReleaseResponseTransfer{} }

// TestFastReleaseTransfers: the release's transfers (TS 38.413 9.3.4.12,
// 9.3.4.21) with every root cause; a cause past its root is the library's.
func TestFastReleaseTransfers(t *testing.T) {
	for group := ngapType.CausePresentRadioNetwork; group <= ngapType.CausePresentMisc; group++ {
		for v := aper.Enumerated(0); uint64(v) <= causeRoots[group]; v++ {
			c := causeOf(group, v)
			checkTransferSame(t, fmt.Sprintf("release command cause %d/%d", group, v),
				ngapType.PDUSessionResourceReleaseCommandTransfer{Cause: c}, newReleaseCommandTransfer, uint64(v) < causeRoots[group])
		}
	}
	checkTransferSame(t, "release response", ngapType.PDUSessionResourceReleaseResponseTransfer{}, newReleaseResponseTransfer, true)
	b, err := BuildPDUSessionResourceReleaseCommandTransfer(CauseNas(ngapType.CauseNasPresentNormalRelease))
	if err != nil {
		t.Fatal(err)
	}
	if c := ranSideReleaseCause(b); c == nil || c.Nas == nil || c.Nas.Value != ngapType.CauseNasPresentNormalRelease {
		t.Fatalf("gNB read cause %+v", c)
	}
}
