package security

import (
	"bytes"
	"testing"
)

// FuzzDeconcealSUCI proves that no scheme output, scheme or key identifier
// makes the SIDF panic.
func FuzzDeconcealSUCI(f *testing.F) {
	keys := HomeNetworkKeys{
		{ID: 1, Scheme: SchemeProfileA, Private: unhex(f, "c53c22208b61860b06c62e5406a7b330c2b577aa5558981510d128247d38bd1d")},
		{ID: 2, Scheme: SchemeProfileB, Private: unhex(f, "f1ab1074477ebcc7f554ea1c5fc368b1616730155e0041ac447d6301975fecda")},
	}
	for _, k := range keys {
		public, _ := k.PublicKey()
		out, _ := ConcealSUCI(k.Scheme, public, "0123456789", nil)
		f.Add(k.Scheme, k.ID, out)
	}
	f.Add(uint8(SchemeNull), uint8(0), []byte{0x21, 0xF3})
	f.Add(uint8(SchemeProfileB), uint8(2), append([]byte{0x03}, bytes.Repeat([]byte{0xFF}, 45)...))
	f.Add(uint8(SchemeProfileA), uint8(1), make([]byte, 41))
	f.Add(uint8(0x0F), uint8(9), []byte{})
	f.Fuzz(func(t *testing.T, scheme, keyID uint8, out []byte) {
		msin, err := DeconcealSUCI(scheme, keyID, out, keys)
		if err == nil && msin == "" {
			t.Fatal("empty MSIN without an error")
		}
	})
}

// FuzzUnprotectNAS proves that no received PDU makes Unprotect panic, and
// that nothing but a genuine message is accepted.
func FuzzUnprotectNAS(f *testing.F) {
	kamf := bytes.Repeat([]byte{0x42}, 32)
	ue := NewNASContext(kamf, NEA2, NIA2, Uplink)
	for sht := uint8(IntegrityProtected); sht <= IntegrityProtectedCipheredNewCtx; sht++ {
		pdu, _ := ue.Protect(registrationComplete, sht)
		f.Add(pdu)
	}
	f.Add(registrationComplete)
	f.Add([]byte{0x7E, 0x04})
	f.Add([]byte{0x7E, 0x0F, 0, 0, 0, 0, 0, 0x7E, 0, 0x41})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, pdu []byte) {
		amf := NewNASContext(kamf, NEA2, NIA2, Downlink)
		plain, _, err := amf.Unprotect(pdu)
		if err == nil && len(plain) != len(pdu)-secHeaderLen {
			t.Fatalf("accepted %x as %x", pdu, plain)
		}
	})
}
