package gtpu

import (
	"bytes"
	"errors"
	"net/netip"
	"reflect"
	"testing"
)

// An uplink G-PDU as a gNB sends it on N3: E flag, the optional fields,
// one PDU Session Container of UL PDU SESSION INFORMATION with QFI 9
// (TS 29.281 5.1, 5.2.1; TS 38.415 5.5.2.2), worked out octet by octet.
var ulVector = []byte{
	0x34, 0xFF, 0x00, 0x0A, 0x01, 0x02, 0x03, 0x04, // v1 PT E, G-PDU, length 10, TEID
	0x00, 0x00, 0x00, 0x85, // sequence, N-PDU, next: PDU Session Container
	0x01, 0x10, 0x09, 0x00, // length 1 (4 octets), UL type 1, QFI 9, no next
	'a', 'b',
}

func TestUplinkGPDUMatchesTheSpecLayout(t *testing.T) {
	b, err := GPDU(0x01020304, ULPDUSessionInformation, 9, []byte("ab")).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, ulVector) {
		t.Fatalf("encoded\n% x\nwant\n% x", b, ulVector)
	}
	m, err := Parse(ulVector)
	if err != nil {
		t.Fatal(err)
	}
	if m.Type != TypeGPDU || m.TEID != 0x01020304 || m.Session == nil || m.Session.PDUType != ULPDUSessionInformation ||
		m.Session.QFI != 9 || string(m.Payload) != "ab" {
		t.Fatalf("parsed %+v session %+v", m, m.Session)
	}
}

func TestDownlinkContainerWithRQIAndPPIRoundTrips(t *testing.T) {
	in := &Message{Type: TypeGPDU, TEID: 7, Payload: []byte{0x45, 0, 0, 20},
		Session:    &PDUSessionInfo{PDUType: DLPDUSessionInformation, QFI: 63, RQI: true, HasPPI: true, PPI: 5},
		Extensions: []Extension{{Type: ExtUDPPort, Content: []byte{0x08, 0x68}}}}
	b, err := in.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// PPP adds an octet: the container pads to two 4-octet units.
	if b[12] != 2 || b[13] != 0x00 || b[14] != 0x80|0x40|63 || b[15] != 5<<5 {
		t.Fatalf("container octets % x", b[12:20])
	}
	out, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if out.Session.QFI != 63 || !out.Session.RQI || !out.Session.HasPPI || out.Session.PPI != 5 {
		t.Fatalf("session %+v", out.Session)
	}
	if !reflect.DeepEqual(out.Extensions, in.Extensions) || !bytes.Equal(out.Payload, in.Payload) {
		t.Fatalf("extensions %+v payload % x", out.Extensions, out.Payload)
	}
}

func TestGPDUWithoutExtensionsHasAnEightOctetHeader(t *testing.T) {
	b, err := (&Message{Type: TypeGPDU, TEID: 1, Payload: []byte{1, 2, 3}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, []byte{0x30, 0xFF, 0, 3, 0, 0, 0, 1, 1, 2, 3}) {
		t.Fatalf("% x", b)
	}
}

func TestEchoResponseAnswersTheRequestsSequence(t *testing.T) {
	req, err := Parse(must(EchoRequest(0x1234).Marshal()))
	if err != nil {
		t.Fatal(err)
	}
	if !req.HasSeq || req.Seq != 0x1234 || req.TEID != 0 {
		t.Fatalf("Echo Request %+v: want S flag, sequence 0x1234, TEID 0 (TS 29.281 5.1)", req)
	}
	b := must(EchoResponse(req).Marshal())
	// 8 + seq/N-PDU/next + Recovery IE (type 14, value 0)
	if !bytes.Equal(b, []byte{0x32, 2, 0, 6, 0, 0, 0, 0, 0x12, 0x34, 0, 0, 14, 0}) {
		t.Fatalf("Echo Response % x", b)
	}
	resp, err := Parse(b)
	if err != nil || resp.Type != TypeEchoResponse || resp.Seq != 0x1234 {
		t.Fatalf("%+v, %v", resp, err)
	}
}

func TestErrorIndicationNamesTheTEIDAndPeer(t *testing.T) {
	addr := netip.MustParseAddr("10.100.0.2")
	b := must(ErrorIndication(0xDEADBEEF, addr).Marshal())
	m, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Type != TypeErrorIndication || m.TEID != 0 || m.TEIDDataI != 0xDEADBEEF || m.PeerAddress != addr {
		t.Fatalf("%+v", m)
	}
	if _, err := Parse(b[:len(b)-4]); err == nil {
		t.Fatal("an Error Indication cut short parsed")
	}
}

func TestMalformedInputIsAnError(t *testing.T) {
	cases := map[string][]byte{
		"short":                    {0x30, 0xFF, 0},
		"version 2":                {0x50, 0xFF, 0, 0, 0, 0, 0, 1},
		"GTP prime":                {0x20, 0xFF, 0, 0, 0, 0, 0, 1},
		"length beyond":            {0x30, 0xFF, 0, 9, 0, 0, 0, 1, 1},
		"optional cut":             {0x34, 0xFF, 0, 2, 0, 0, 0, 1, 0, 0},
		"zero-length extension":    {0x34, 0xFF, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0x85, 0, 0, 0, 0},
		"extension beyond":         {0x34, 0xFF, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0x85, 2, 0, 0, 0},
		"reserved PDU type":        {0x34, 0xFF, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0x85, 1, 0x20, 1, 0},
		"echo response no IE":      {0x32, 2, 0, 4, 0, 0, 0, 0, 0, 1, 0, 0},
		"error indication no peer": {0x32, 26, 0, 9, 0, 0, 0, 0, 0, 1, 0, 0, 16, 0, 0, 0, 1},
	}
	for name, b := range cases {
		if _, err := Parse(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err %v, want ErrMalformed", name, err)
		}
	}
}

func TestEncoderRefusesWhatTheSpecForbids(t *testing.T) {
	if _, err := GPDU(1, ULPDUSessionInformation, 64, nil).Marshal(); err == nil {
		t.Error("QFI 64 encoded")
	}
	if _, err := (&Message{Type: TypeGPDU, Extensions: []Extension{{Type: 0x40, Content: []byte{1}}}}).Marshal(); err == nil {
		t.Error("extension of 3 octets encoded")
	}
	if _, err := (&Message{Type: TypeErrorIndication}).Marshal(); err == nil {
		t.Error("Error Indication without peer address encoded")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
