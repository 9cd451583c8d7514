package security

import (
	"bytes"
	"testing"
)

// TS 24.501 4.4.6: the UE ciphers the full initial message with the COUNT
// of the initial message that carries it; the AMF, having verified that
// message, deciphers with the same COUNT.
func TestNASMessageContainerRoundTrip(t *testing.T) {
	kamf := bytes.Repeat([]byte{0x42}, 32)
	ue := NewNASContext(kamf, NEA2, NIA2, Uplink)
	amf := NewNASContext(kamf, NEA2, NIA2, Downlink)
	// A few messages first, so the COUNT is not 0.
	for i := 0; i < 3; i++ {
		pdu, err := ue.Protect([]byte{0x7e, 0x00, 0x43}, IntegrityProtectedAndCiphered)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := amf.Unprotect(pdu); err != nil {
			t.Fatal(err)
		}
	}
	full := []byte{0x7e, 0x00, 0x41, 0x01, 0x00, 0x01, 0xf2, 0x10, 0x01, 0x00}
	c, err := ue.CipherContainer(full)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(c, full) {
		t.Fatal("NEA2 left the container in clear")
	}
	outer := append([]byte{0x7e, 0x00, 0x41, 0x71, 0x00, byte(len(c))}, c...)
	pdu, err := ue.Protect(outer, IntegrityProtected)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := amf.Unprotect(pdu); err != nil {
		t.Fatal(err)
	}
	got, err := amf.DecipherContainer(c)
	if err != nil || !bytes.Equal(got, full) {
		t.Fatalf("deciphered % x, %v; want % x", got, err, full)
	}
}
