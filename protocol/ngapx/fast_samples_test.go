package ngapx

import (
	"net/netip"
	"testing"

	"github.com/free5gc/ngap"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/internal/fuzzseed"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// hotSample is one message of a registration or PDU session setup, as the
// AMF or the simulator builds it: the PDU and the library's bytes for it.
type hotSample struct {
	name  string
	pdu   *ngapType.NGAPPDU
	bytes []byte
}

// hotSamples are the messages of a lone registration and PDU session
// establishment (TS 23.502 4.2.2.2.2 and 4.3.2.2.1), built by the same
// builders the AMF and the simulator use.
func hotSamples(tb testing.TB) []hotSample {
	must := fuzzseed.Must(tb)
	cell := Cell{TAI: domain.TAI{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, TAC: 1}, CellID: 0x123}
	suci := must(nasx.EncodeSUCI("suci-0-208-93-0000-0-0-0000000001"))
	initial := must(nasx.BuildRegistrationRequest(nasx.RegistrationRequest{Type: 1, NgKSI: 7, Identity: suci,
		SecurityCaps: []byte{0xE0, 0xE0}, Cleartext: true}))
	caps := nasx.SecurityCapability{Raw: []byte{0xE0, 0xE0}}
	enc, integ := caps.NRBits()
	transfer := must(BuildPDUSessionResourceSetupRequestTransfer(SetupRequestTransfer{AMBRDown: 2e9, AMBRUp: 1e9,
		UL:    Tunnel{IPv4: netip.MustParseAddr("10.100.0.1"), TEID: 0x10},
		Flows: []FlowQoS{{QFI: 1, FiveQI: 9, ARPPriority: 8}}}))
	authReq := must(nasx.BuildAuthenticationRequest(0, []byte{0, 0}, [16]byte{1}, [16]byte{2}))
	authRes := must(nasx.BuildAuthenticationResponse(make([]byte, 16)))
	sm := must(nasx.BuildPDUSessionEstablishmentRequest(1, 1))
	smNAS := must(nasx.BuildDLNASTransport(nasx.DLNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: sm, PDUSessionID: 1}))
	dl := Tunnel{IPv4: netip.MustParseAddr("10.100.0.2"), TEID: 0x20}
	stmsi := nasx.STMSI{SetID: 0x3F8, Pointer: 1, TMSI: 7}
	raw := []struct {
		name string
		b    []byte
	}{
		{"InitialUEMessage", must(BuildInitialUEMessage(1, initial, cell, nil))},
		{"InitialUEMessage/stmsi", must(BuildInitialUEMessage(1, initial, cell, &stmsi))},
		{"DownlinkNASTransport", must(BuildDownlinkNASTransport(1, 1, authReq))},
		{"UplinkNASTransport", must(BuildUplinkNASTransport(1, 1, authRes, cell))},
		{"InitialContextSetupRequest", must(BuildInitialContextSetupRequest(InitialContext{AMFUEID: 1, RANUEID: 1, GUAMI: testGUAMI,
			Allowed: []models.Snssai{{Sst: 1, Sd: "010203"}}, NREncryption: enc, NRIntegrity: integ, KgNB: make([]byte, 32),
			AMBRUL: 1e9, AMBRDL: 2e9, NASPDU: smNAS}))},
		{"InitialContextSetupRequest/radio-capability", must(BuildInitialContextSetupRequest(InitialContext{AMFUEID: 1, RANUEID: 1, GUAMI: testGUAMI,
			Allowed: []models.Snssai{{Sst: 1, Sd: "010203"}}, NREncryption: enc, NRIntegrity: integ, KgNB: make([]byte, 32),
			RadioCapability: make([]byte, 40), NASPDU: smNAS, Sessions: []SessionResource{{ID: 1, SNSSAI: models.Snssai{Sst: 1, Sd: "010203"}, Transfer: transfer}}}))},
		{"InitialContextSetupResponse", must(BuildInitialContextSetupResponse(1, 1))},
		{"InitialContextSetupResponse/sessions", must(BuildRANInitialContextSetupResponse(1, 1, []RANSessionResult{{ID: 1, DL: dl, QFIs: []uint8{1}}}))},
		{"Paging", must(BuildPaging(Paging{STMSI: stmsi, TAIs: []domain.TAI{cell.TAI}}))},
		{"PDUSessionResourceReleaseCommand", must(BuildPDUSessionResourceReleaseCommand(SessionResourceRequest{AMFUEID: 1, RANUEID: 1, NASPDU: smNAS,
			Sessions: []SessionResource{{ID: 1, Transfer: must(BuildPDUSessionResourceReleaseCommandTransfer(CauseNas(ngapType.CauseNasPresentNormalRelease)))}}}))},
		{"PDUSessionResourceReleaseResponse", must(BuildRANReleaseResponse(1, 1, []uint8{1}))},
		{"UEContextReleaseRequest", must(BuildUEContextReleaseRequestWithSessions(1, 1, CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity), []uint8{1, 2}))},
		{"UEContextReleaseCommand", must(BuildUEContextReleaseCommand(1, 1, CauseNas(ngapType.CauseNasPresentNormalRelease)))},
		{"UEContextReleaseComplete", must(BuildRANContextReleaseComplete(1, 1, []uint8{1, 2}))},
		{"UERadioCapabilityInfoIndication", must(BuildUERadioCapabilityInfoIndication(1, 1, make([]byte, 40)))},
		{"PDUSessionResourceSetupRequest", must(BuildPDUSessionResourceSetupRequest(SessionResourceRequest{AMFUEID: 1, RANUEID: 1,
			Sessions: []SessionResource{{ID: 1, NASPDU: smNAS, SNSSAI: models.Snssai{Sst: 1, Sd: "010203"}, Transfer: transfer}}}))},
		{"PDUSessionResourceSetupResponse", must(BuildRANSetupResponse(1, 1, []RANSessionResult{{ID: 1, DL: dl, QFIs: []uint8{1}}}))},
	}
	out := make([]hotSample, 0, len(raw))
	for _, r := range raw {
		pdu, err := ngap.Decoder(r.b)
		if err != nil {
			tb.Fatalf("%s: %v", r.name, err)
		}
		out = append(out, hotSample{name: r.name, pdu: pdu, bytes: r.b})
	}
	return out
}

// BenchmarkNGAPCodec compares, per hot message, free5GC's reflective APER
// coder ("lib") with the hand-written one ("fast"). A command, not a test:
// go test -run '^$' -bench NGAPCodec ./protocol/ngapx
func BenchmarkNGAPCodec(b *testing.B) {
	for _, s := range hotSamples(b) {
		b.Run("encode/lib/"+s.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := ngap.Encoder(*s.pdu); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("encode/fast/"+s.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, ok := encodeFast(s.pdu); !ok {
					b.Fatal("not covered")
				}
			}
		})
		b.Run("decode/lib/"+s.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := ngap.Decoder(s.bytes); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("decode/fast/"+s.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, ok := decodeFast(s.bytes); !ok {
					b.Fatal("not covered")
				}
			}
		})
	}
}

// BenchmarkSummarize is the AMF reader's routing step after Decode, per
// hot message, by reflection ("any") and by the fast path:
// go test -run '^$' -bench Summarize ./protocol/ngapx
func BenchmarkSummarize(b *testing.B) {
	for _, s := range hotSamples(b) {
		for _, way := range []struct {
			name string
			f    func(*ngapType.NGAPPDU) (Summary, error)
		}{{"any", summarizeAny}, {"fast", Summarize}} {
			b.Run(way.name+"/"+s.name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := way.f(s.pdu); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
