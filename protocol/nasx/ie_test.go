package nasx

import (
	"bytes"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
)

// The SUCI string of TS 23.003 28.7.3: null scheme output is the MSIN digits.
func TestSUCIString(t *testing.T) {
	const s = "suci-0-208-93-0000-0-0-0000000001"
	b, err := EncodeSUCI(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x01, 0x02, 0xF8, 0x39, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10}
	if !bytes.Equal(b, want) {
		t.Fatalf("EncodeSUCI = %x, want %x", b, want)
	}
	id, err := ParseMobileIdentity(b)
	if err != nil || id.Type != IdentitySUCI || id.SUCI != s {
		t.Fatalf("parse = %+v %v", id, err)
	}
	if supi, ok := NullSchemeSUPI(s); !ok || supi != "imsi-208930000000001" {
		t.Fatalf("SUPI %q", supi)
	}
	const a = "suci-0-208-93-0000-1-1-b2e92f836055a255837debf850b528997ce0201cb82adfe4be1f587d07d8457dcb02352410cddd9e730ef3fa87"
	b, _ = EncodeSUCI(a)
	if id, err := ParseMobileIdentity(b); err != nil || id.SUCI != a {
		t.Fatalf("profile A SUCI round trip: %q %v", id.SUCI, err)
	}
}

func TestGUTIAndSTMSI(t *testing.T) {
	g := GUTI{GUAMI: testGUAMI(1), TMSI: 0xdeadbeef}
	b, err := EncodeGUTI(g)
	if err != nil {
		t.Fatal(err)
	}
	id, err := ParseMobileIdentity(b)
	if err != nil || id.Type != IdentityGUTI || id.GUTI != g {
		t.Fatalf("GUTI round trip: %+v %v", id, err)
	}
	id, err = ParseMobileIdentity(EncodeSTMSI(g.STMSI()))
	if err != nil || id.STMSI != g.STMSI() {
		t.Fatalf("5G-S-TMSI round trip: %+v %v", id, err)
	}
	if _, err := ParseMobileIdentity(b[:5]); err == nil {
		t.Fatal("short GUTI accepted")
	}
}

// testGUAMI is the GUAMI of the test AMF (region CA, set 3F8) with pointer.
func testGUAMI(pointer uint8) domain.GUAMI {
	return domain.GUAMI{PLMN: domain.PLMN{MCC: "208", MNC: "93"}, AMFID: domain.AMFID{RegionID: 0xCA, SetID: 0x3F8, Pointer: pointer}}
}

func TestNSSAI(t *testing.T) {
	in := []models.Snssai{{Sst: 1, Sd: "010203"}, {Sst: 2}}
	b, err := nssaiOctets(in)
	if err != nil || !bytes.Equal(b, []byte{4, 1, 1, 2, 3, 1, 2}) {
		t.Fatalf("nssaiOctets = %x %v", b, err)
	}
	out, err := NSSAIModels(b)
	if err != nil || len(out) != 2 || out[0] != in[0] || out[1] != in[1] {
		t.Fatalf("NSSAIModels = %+v %v", out, err)
	}
	if _, err := NSSAIModels([]byte{9, 1}); err == nil {
		t.Fatal("overrun accepted")
	}
}

func TestNetworkNamePacksGSM7(t *testing.T) {
	// "L25GC+": 6 septets = 42 bits in 6 octets, 6 spare bits.
	b := NetworkName("L25GC+")
	if b[0] != 0x86 || len(b) != 7 {
		t.Fatalf("octet 3 %#x len %d", b[0], len(b))
	}
	if b[1] != 'L'|('2'<<7)&0xFF {
		t.Fatalf("first octet %#x", b[1])
	}
}

func TestTimers(t *testing.T) {
	if v := GPRSTimer3(54 * time.Minute); v>>5 != 0 || v&0x1F != 6 { // 6 x 10 min (rounded up)
		t.Fatalf("T3512 54min = %08b", v)
	}
	if v := GPRSTimer3(60 * time.Second); v != 0b011<<5|30 {
		t.Fatalf("60 s = %08b", v)
	}
}

func TestSecurityCapability(t *testing.T) {
	c := SecurityCapability{Raw: []byte{0xE0, 0x60}} // EA0-2, IA1-2
	if !c.SupportsEA(EA2) || !c.SupportsEA(EA0) || c.SupportsEA(EA3) || !c.SupportsIA(IA2) || c.SupportsIA(IA0) {
		t.Fatal("capability bits misread")
	}
	enc, integ := c.NRBits()
	if enc[0] != 0xC0 || integ[0] != 0xC0 {
		t.Fatalf("NR bits %x %x", enc, integ)
	}
	a, ok := SelectAlgorithm([]uint8{IA3, IA2}, c.SupportsIA)
	if !ok || a != IA2 {
		t.Fatal("selection")
	}
}

func TestNetworkNameRoundTrip(t *testing.T) {
	for _, name := range []string{"L25GC+ Core", "L25GC", "a", "12345678"} {
		if got := DecodeNetworkName(NetworkName(name)); got != name {
			t.Errorf("DecodeNetworkName(NetworkName(%q)) = %q", name, got)
		}
	}
}

func TestIMEISVRoundTrip(t *testing.T) {
	b, err := EncodeIMEISV("4370816125816151")
	if err != nil {
		t.Fatal(err)
	}
	id, err := ParseMobileIdentity(b)
	if err != nil || id.Type != IdentityIMEISV || id.PEI != "imeisv-4370816125816151" {
		t.Fatalf("IMEISV read back as %+v, %v", id, err)
	}
	if _, err := EncodeIMEISV("43708161258161"); err == nil {
		t.Fatal("a 14-digit IMEISV was encoded")
	}
	b, err = EncodePEI(IdentityIMEI, "437081612581612")
	if err != nil {
		t.Fatal(err)
	}
	if id, err := ParseMobileIdentity(b); err != nil || id.Type != IdentityIMEI || id.PEI != "imei-437081612581612" {
		t.Fatalf("IMEI read back as %+v, %v", id, err)
	}
}
