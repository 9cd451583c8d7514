package ngapx

import (
	"bytes"
	"fmt"
	"net/netip"
	"reflect"
	"testing"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/perbits"
)

// checkSameAsLibrary is the contract of the fast path for one PDU: what it
// encodes, the library encodes to the same octets (and it never encodes
// what the library refuses); Encode gives the library's answer either way;
// what it decodes, it decodes to the library's value. mustFast says the
// shape is one the AMF or the simulator builds, so the fast path must
// take it.
func checkSameAsLibrary(t *testing.T, name string, pdu *ngapType.NGAPPDU, mustFast bool) {
	t.Helper()
	lib, libErr := ngap.Encoder(*pdu)
	fast, ok := encodeFast(pdu)
	switch {
	case ok && libErr != nil:
		t.Errorf("%s: fast path encodes what the library refuses (%v)", name, libErr)
	case ok && !bytes.Equal(fast, lib):
		t.Errorf("%s:\n fast %x\n lib  %x", name, fast, lib)
	case !ok && mustFast:
		t.Errorf("%s: left to the library", name)
	}
	got, err := Encode(pdu)
	if (err == nil) != (libErr == nil) || !bytes.Equal(got, lib) {
		t.Errorf("%s: Encode = %x, %v; library %x, %v", name, got, err, lib, libErr)
	}
	if libErr != nil {
		return
	}
	checkDecodeSame(t, name, lib, mustFast)
}

// checkDecodeSame: the fast decoder, when it takes b, gives ngap.Decoder's value.
func checkDecodeSame(t *testing.T, name string, b []byte, mustFast bool) {
	t.Helper()
	want, wantErr := ngap.Decoder(b)
	got, ok := decodeFast(b)
	switch {
	case ok && wantErr != nil:
		t.Errorf("%s: fast path decodes what the library refuses (%v): %x", name, wantErr, b)
	case ok && !reflect.DeepEqual(got, want):
		t.Errorf("%s: decoded values differ for %x:\n fast %s\n lib  %s", name, b,
			ngap.PrintResult(reflect.ValueOf(got), 0), ngap.PrintResult(reflect.ValueOf(want), 0))
	case !ok && mustFast:
		t.Errorf("%s: decoding left to the library", name)
	}
}

// decoded builds with a builder and decodes with the library: the PDU as
// the builder made it.
func decoded(t *testing.T) func(b []byte, err error) *ngapType.NGAPPDU {
	return func(b []byte, err error) *ngapType.NGAPPDU {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		pdu, err := ngap.Decoder(b)
		if err != nil {
			t.Fatal(err)
		}
		return pdu
	}
}

// TestFastPathNASLengths: NAS-PDUs whose length determinants, and those
// of the open types around them, cross 127/128 (one or two octets,
// X.691 10.9.3.6-7) and 16383/16384 (fragmentation, left to the library).
func TestFastPathNASLengths(t *testing.T) {
	cell := testCell()
	var lengths []int
	for n := 0; n <= 140; n++ {
		lengths = append(lengths, n)
	}
	for n := 16340; n <= 16400; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 20000, 65535)
	// The PDUs are built as structs: the library cannot decode its own
	// encoding of a length that is an exact multiple of 16K (it writes no
	// final empty fragment, X.691 10.9.3.8.1), so no round trip through it.
	dl := decoded(t)(BuildDownlinkNASTransport(1, 2, []byte{0x7e}))
	ul := decoded(t)(BuildUplinkNASTransport(1, 2, []byte{0x7e}, cell))
	for _, n := range lengths {
		nas := bytes.Repeat([]byte{0x7e}, n)
		fits := n <= 16300 // the whole message's open type stays within 16383
		dl.InitiatingMessage.Value.DownlinkNASTransport.ProtocolIEs.List[2].Value.NASPDU.Value = nas
		checkSameAsLibrary(t, fmt.Sprintf("DL NAS %d", n), dl, fits)
		ul.InitiatingMessage.Value.UplinkNASTransport.ProtocolIEs.List[2].Value.NASPDU.Value = nas
		checkSameAsLibrary(t, fmt.Sprintf("UL NAS %d", n), ul, fits)
		if _, ok := encodeFast(dl); ok && n > perbits.MaxLength {
			t.Errorf("NAS of %d octets: fast path took a fragmented length", n)
		}
	}
}

var testTunnel = Tunnel{IPv4: netip.MustParseAddr("10.100.0.2"), TEID: 0x20}

func testCell() Cell {
	return Cell{TAI: domain.TAI{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, TAC: 1}, CellID: 0x123}
}

// TestFastPathUEIDs: AMF and RAN UE NGAP IDs at the edges of each octet
// count and of their ranges (TS 38.413 9.3.3.1-2); out of range, the
// library's error.
func TestFastPathUEIDs(t *testing.T) {
	amfIDs := []int64{0, 1, 255, 256, 65535, 65536, 1<<24 - 1, 1 << 24, 1<<32 - 1, 1 << 32, maxAMFUEID}
	ranIDs := []int64{0, 1, 255, 256, 65535, 65536, 1<<24 - 1, 1 << 24, maxRANUEID}
	for _, a := range amfIDs {
		for _, r := range ranIDs {
			pdu := decoded(t)(BuildDownlinkNASTransport(1, 1, []byte{0x7e, 0}))
			ies := pdu.InitiatingMessage.Value.DownlinkNASTransport.ProtocolIEs.List
			ies[0].Value.AMFUENGAPID.Value, ies[1].Value.RANUENGAPID.Value = a, r
			checkSameAsLibrary(t, fmt.Sprintf("ids %d/%d", a, r), pdu, true)
		}
	}
	for _, bad := range [][2]int64{{maxAMFUEID + 1, 1}, {-1, 1}, {1, maxRANUEID + 1}, {1, -1}} {
		pdu := decoded(t)(BuildDownlinkNASTransport(1, 1, []byte{0x7e, 0}))
		ies := pdu.InitiatingMessage.Value.DownlinkNASTransport.ProtocolIEs.List
		ies[0].Value.AMFUENGAPID.Value, ies[1].Value.RANUENGAPID.Value = bad[0], bad[1]
		checkSameAsLibrary(t, fmt.Sprintf("ids %d/%d", bad[0], bad[1]), pdu, false)
		if _, err := Encode(pdu); err == nil {
			t.Errorf("ids %v: encoded", bad)
		}
	}
}

// TestFastPathCriticality: every criticality on the message and on each IE
// (TS 38.413 10.3.4); the unknown value 3 is the library's business.
func TestFastPathCriticality(t *testing.T) {
	for c := aper.Enumerated(0); c <= 3; c++ {
		pdu := decoded(t)(BuildInitialContextSetupResponse(1, 2))
		pdu.SuccessfulOutcome.Criticality.Value = c
		checkSameAsLibrary(t, fmt.Sprintf("message criticality %d", c), pdu, c <= 2)
		pdu = decoded(t)(BuildInitialContextSetupResponse(1, 2))
		pdu.SuccessfulOutcome.Value.InitialContextSetupResponse.ProtocolIEs.List[1].Criticality.Value = c
		checkSameAsLibrary(t, fmt.Sprintf("IE criticality %d", c), pdu, c <= 2)
	}
}

// TestFastPathInitialContextSetupRequest: optional IEs present and absent,
// 1 to 8 allowed slices with and without SD, bit rates at their edges, and
// PDU sessions to activate (a Service Request, TS 23.502 4.2.3.2 step 12).
func TestFastPathInitialContextSetupRequest(t *testing.T) {
	caps := nasx.SecurityCapability{Raw: []byte{0xE0, 0xE0}}
	enc, integ := caps.NRBits()
	base := InitialContext{AMFUEID: 3, RANUEID: 4, GUAMI: testGUAMI, NREncryption: enc, NRIntegrity: integ,
		EUTRAEncryption: [2]byte{0xff, 0xff}, KgNB: bytes.Repeat([]byte{0xa5}, 32)}
	for n := 1; n <= 8; n++ {
		for _, rate := range []int64{0, 1, 255, 256, 1e9, maxBitRate} {
			for _, nas := range [][]byte{nil, {0x7e, 0x02}, make([]byte, 200)} {
				c := base
				c.AMBRUL, c.AMBRDL, c.NASPDU = rate, rate, nas
				for i := 0; i < n; i++ {
					s := models.Snssai{Sst: int32(i + 1)}
					if i%2 == 0 {
						s.Sd = fmt.Sprintf("%06x", i*0x10101)
					}
					c.Allowed = append(c.Allowed, s)
				}
				name := fmt.Sprintf("ICS %d slices, AMBR %d, NAS %d", n, rate, len(nas))
				checkSameAsLibrary(t, name, decoded(t)(BuildInitialContextSetupRequest(c)), true)
			}
		}
	}
	c := base
	c.Allowed = []models.Snssai{{Sst: 1, Sd: "010203"}}
	c.Sessions = []SessionResource{{ID: 1, SNSSAI: models.Snssai{Sst: 1}, Transfer: []byte{1, 2, 3}},
		{ID: 15, NASPDU: []byte{0x7e}, SNSSAI: models.Snssai{Sst: 1, Sd: "ffffff"}, Transfer: make([]byte, 130)}}
	checkSameAsLibrary(t, "ICS with sessions", decoded(t)(BuildInitialContextSetupRequest(c)), true)

	// Over the root range, the library encodes an extension: left to it.
	pdu := decoded(t)(BuildInitialContextSetupRequest(InitialContext{AMFUEID: 3, RANUEID: 4, GUAMI: testGUAMI,
		Allowed: []models.Snssai{{Sst: 1}}, KgNB: make([]byte, 32), AMBRUL: 1, AMBRDL: 1}))
	for _, ie := range pdu.InitiatingMessage.Value.InitialContextSetupRequest.ProtocolIEs.List {
		if a := ie.Value.UEAggregateMaximumBitRate; a != nil {
			a.UEAggregateMaximumBitRateDL.Value = maxBitRate + 1
		}
	}
	checkSameAsLibrary(t, "ICS AMBR over the root range", pdu, false)
}

// TestFastPathInitialUEMessage: with and without 5G-S-TMSI, every root RRC
// establishment cause (one more is the library's), a time stamp, and the
// largest cell identity.
func TestFastPathInitialUEMessage(t *testing.T) {
	stmsi := nasx.STMSI{SetID: 0x3FF, Pointer: 0x3F, TMSI: 0xFFFFFFFF}
	cell := testCell()
	cell.CellID = 1<<36 - 1
	for cause := aper.Enumerated(0); cause <= rrcCauses; cause++ {
		for _, s := range []*nasx.STMSI{nil, &stmsi} {
			pdu := decoded(t)(BuildInitialUEMessageWithCause(1<<32-1, []byte{0x7e, 0x00, 0x41}, cell, s, cause))
			checkSameAsLibrary(t, fmt.Sprintf("initial UE cause %d stmsi %v", cause, s != nil), pdu, cause < rrcCauses)
		}
	}
	pdu := decoded(t)(BuildInitialUEMessage(1, []byte{0x7e}, cell, nil))
	for _, ie := range pdu.InitiatingMessage.Value.InitialUEMessage.ProtocolIEs.List {
		if u := ie.Value.UserLocationInformation; u != nil {
			u.UserLocationInformationNR.TimeStamp = &ngapType.TimeStamp{Value: []byte{1, 2, 3, 4}}
		}
	}
	checkSameAsLibrary(t, "initial UE with time stamp", pdu, true)
}

// TestFastPathPDUSessionResources: 1, 2 and many sessions, NAS-PDU per
// session present and absent, and failed sessions in the response (left to
// the library).
func TestFastPathPDUSessionResources(t *testing.T) {
	for _, n := range []int{1, 2, 16, 256} {
		var sessions []SessionResource
		var results []RANSessionResult
		for i := 0; i < n; i++ {
			s := SessionResource{ID: int64(i), SNSSAI: models.Snssai{Sst: 1, Sd: "010203"}, Transfer: []byte{byte(i), 1, 2}}
			if i%2 == 1 {
				s.NASPDU = []byte{0x7e, byte(i)}
			}
			sessions = append(sessions, s)
			results = append(results, RANSessionResult{ID: uint8(i), DL: testTunnel, QFIs: []uint8{1}})
		}
		req := SessionResourceRequest{AMFUEID: 7, RANUEID: 9, Sessions: sessions}
		checkSameAsLibrary(t, fmt.Sprintf("setup request %d", n), decoded(t)(BuildPDUSessionResourceSetupRequest(req)), true)
		checkSameAsLibrary(t, fmt.Sprintf("setup response %d", n), decoded(t)(BuildRANSetupResponse(7, 9, results)), true)
	}
	cause := CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified)
	failed := decoded(t)(BuildRANSetupResponse(7, 9, []RANSessionResult{{ID: 1, DL: testTunnel, QFIs: []uint8{1}}, {ID: 2, Cause: &cause}}))
	checkSameAsLibrary(t, "setup response with a failed session", failed, false)
}

// TestOtherMessagesUseTheLibrary: messages outside the hot set still go
// through Encode and Decode unchanged.
func TestOtherMessagesUseTheLibrary(t *testing.T) {
	for name, b := range samples(t) {
		pdu := decoded(t)(b, nil)
		checkSameAsLibrary(t, name, pdu, false)
	}
	for name, b := range uplinkSamples(t) {
		pdu := decoded(t)(b, nil)
		checkSameAsLibrary(t, name, pdu, false)
	}
}

// TestFastPathPaging: 1 to 16 TAIs, every root DRX and priority, each
// optional IE present and absent; an extension DRX is the library's.
func TestFastPathPaging(t *testing.T) {
	stmsi := nasx.STMSI{SetID: 0x3FF, Pointer: 1, TMSI: 0xFFFFFFFF}
	for n := 1; n <= maxPagingTAIs; n++ {
		var tais []domain.TAI
		for i := 0; i < n; i++ {
			tais = append(tais, domain.TAI{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, TAC: domain.TAC(i * 4099)})
		}
		for drx := aper.Enumerated(0); drx <= pagingDRXs; drx++ {
			for prio := 0; prio <= pagingLevels; prio++ {
				d := drx
				p := Paging{STMSI: stmsi, TAIs: tais, DRX: &d, Priority: prio}
				if drx == pagingDRXs {
					p.DRX = nil
				}
				checkSameAsLibrary(t, fmt.Sprintf("paging %d TAIs DRX %d priority %d", n, drx, prio), decoded(t)(BuildPaging(p)), true)
			}
		}
	}
	d := aper.Enumerated(pagingDRXs)
	checkSameAsLibrary(t, "paging with an extension DRX", decoded(t)(BuildPaging(Paging{STMSI: stmsi, TAIs: []domain.TAI{testCell().TAI}, DRX: &d})), false)
}

// TestFastPathInitialContextSetupResponseWithSessions: a Service Request's
// answer with 1, 2 and 256 sessions set up; failed ones go to the library.
func TestFastPathInitialContextSetupResponseWithSessions(t *testing.T) {
	for _, n := range []int{1, 2, 256} {
		var results []RANSessionResult
		for i := 0; i < n; i++ {
			results = append(results, RANSessionResult{ID: uint8(i), DL: testTunnel, QFIs: []uint8{1, 2}})
		}
		checkSameAsLibrary(t, fmt.Sprintf("ICS response %d sessions", n), decoded(t)(BuildRANInitialContextSetupResponse(1, 2, results)), true)
	}
	cause := CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified)
	failed := []RANSessionResult{{ID: 1, DL: testTunnel, QFIs: []uint8{1}}, {ID: 2, Cause: &cause}}
	checkSameAsLibrary(t, "ICS response with a failed session", decoded(t)(BuildRANInitialContextSetupResponse(1, 2, failed)), false)
}

// TestFastPathUEContextRelease: every root value of every Cause group
// (TS 38.413 9.3.1.2) in the request and the command, the command by the
// ID pair and by the AMF's ID alone, the session lists; a value past a
// group's root is the library's.
func TestFastPathUEContextRelease(t *testing.T) {
	for group := ngapType.CausePresentRadioNetwork; group <= ngapType.CausePresentMisc; group++ {
		for v := aper.Enumerated(0); uint64(v) <= causeRoots[group]; v++ {
			cause := causeOf(group, v)
			root := uint64(v) < causeRoots[group]
			name := fmt.Sprintf("cause %d/%d", group, v)
			checkSameAsLibrary(t, name+" request", decoded(t)(BuildUEContextReleaseRequest(1, 2, cause)), root)
			checkSameAsLibrary(t, name+" command", decoded(t)(BuildUEContextReleaseCommand(maxAMFUEID, maxRANUEID, cause)), root)
			checkSameAsLibrary(t, name+" command by AMF ID", decoded(t)(BuildUEContextReleaseCommand(7, -1, cause)), root)
		}
	}
	cause := CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity)
	for _, ids := range [][]uint8{{0}, {1, 2}, {255, 15, 1}} {
		checkSameAsLibrary(t, fmt.Sprintf("request sessions %v", ids), decoded(t)(BuildUEContextReleaseRequestWithSessions(1, 2, cause, ids)), true)
		checkSameAsLibrary(t, fmt.Sprintf("complete sessions %v", ids), decoded(t)(BuildRANContextReleaseComplete(1, 2, ids)), true)
	}
	checkSameAsLibrary(t, "complete", decoded(t)(BuildUEContextReleaseComplete(1, 2)), true)
}

// TestFastPathPDUSessionResourceRelease: the release command with 1, 2 and
// 256 sessions, with and without its NAS-PDU, and the gNB's response.
func TestFastPathPDUSessionResourceRelease(t *testing.T) {
	tr, err := BuildPDUSessionResourceReleaseCommandTransfer(CauseNas(ngapType.CauseNasPresentNormalRelease))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2, 256} {
		var sessions []SessionResource
		var ids []uint8
		for i := 0; i < n; i++ {
			sessions = append(sessions, SessionResource{ID: int64(i), Transfer: tr})
			ids = append(ids, uint8(i))
		}
		for _, nas := range [][]byte{nil, {0x7e, 0x00, 0x68}} {
			req := SessionResourceRequest{AMFUEID: 5, RANUEID: 6, Sessions: sessions, NASPDU: nas}
			checkSameAsLibrary(t, fmt.Sprintf("release command %d sessions NAS %d", n, len(nas)), decoded(t)(BuildPDUSessionResourceReleaseCommand(req)), true)
		}
		checkSameAsLibrary(t, fmt.Sprintf("release response %d sessions", n), decoded(t)(BuildRANReleaseResponse(5, 6, ids)), true)
	}
}
