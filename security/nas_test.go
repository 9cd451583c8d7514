package security

import (
	"bytes"
	"errors"
	"testing"

	nassec "github.com/free5gc/nas/security"
)

func nasPair(ea, ia uint8) (amf, ue *NASContext) {
	kamf := bytes.Repeat([]byte{0x42}, 32)
	return NewNASContext(kamf, ea, ia, Downlink), NewNASContext(kamf, ea, ia, Uplink)
}

// A 5GMM Registration Complete, as plain bytes.
var plain5GMM = []byte{0x7E, 0x00, 0x43}

func TestNASRoundTripBothDirections(t *testing.T) {
	for _, ea := range []uint8{nassec.AlgCiphering128NEA0, nassec.AlgCiphering128NEA2} {
		amf, ue := nasPair(ea, nassec.AlgIntegrity128NIA2)
		for i := 0; i < 300; i++ { // past an SQN wrap
			pdu, err := ue.Protect(plain5GMM, IntegrityProtectedAndCiphered)
			if err != nil {
				t.Fatal(err)
			}
			got, sht, err := amf.Unprotect(pdu)
			if err != nil || sht != IntegrityProtectedAndCiphered || !bytes.Equal(got, plain5GMM) {
				t.Fatalf("ea %d uplink #%d: %x %d %v", ea, i, got, sht, err)
			}
		}
		if amf.LastRxCount() != 299 {
			t.Fatalf("uplink COUNT after 300 messages = %d, want 299", amf.LastRxCount())
		}
		pdu, _ := amf.Protect(plain5GMM, IntegrityProtectedAndCiphered)
		ciphered := !bytes.Contains(pdu[7:], plain5GMM[1:])
		if ciphered != (ea == nassec.AlgCiphering128NEA2) {
			t.Fatalf("ea %d: payload ciphered = %v", ea, ciphered)
		}
		if got, _, err := ue.Unprotect(pdu); err != nil || !bytes.Equal(got, plain5GMM) {
			t.Fatalf("downlink: %x %v", got, err)
		}
	}
}

func TestNASRejectsTamperingAndReplay(t *testing.T) {
	amf, ue := nasPair(nassec.AlgCiphering128NEA2, nassec.AlgIntegrity128NIA2)
	pdu, _ := ue.Protect(plain5GMM, IntegrityProtected)
	bad := bytes.Clone(pdu)
	bad[len(bad)-1] ^= 1
	if _, _, err := amf.Unprotect(bad); !errors.Is(err, ErrNASMAC) {
		t.Fatalf("flipped bit: %v, want ErrNASMAC", err)
	}
	if _, _, err := amf.Unprotect(pdu); err != nil {
		t.Fatalf("genuine message after a forged one: %v", err)
	}
	if _, _, err := amf.Unprotect(pdu); !errors.Is(err, ErrNASReplay) {
		t.Fatalf("replay: %v, want ErrNASReplay", err)
	}
	// A message protected in the downlink direction is not a valid uplink one.
	down, _ := amf.Protect(plain5GMM, IntegrityProtected)
	if _, _, err := amf.Unprotect(down); err == nil {
		t.Fatal("reflected downlink message accepted as uplink")
	}
	if _, _, err := amf.Unprotect(plain5GMM); !errors.Is(err, ErrNASNotProt) {
		t.Fatalf("plain: %v", err)
	}
}

func FuzzUnprotectNAS(f *testing.F) {
	amf, ue := nasPair(nassec.AlgCiphering128NEA2, nassec.AlgIntegrity128NIA2)
	seed, _ := ue.Protect(plain5GMM, IntegrityProtectedAndCiphered)
	f.Add(seed)
	f.Add(plain5GMM)
	f.Add([]byte{0x7E, 0x04})
	f.Fuzz(func(t *testing.T, pdu []byte) {
		_, _, _ = amf.Unprotect(pdu)
	})
}

func FuzzDeconcealSUCI(f *testing.F) {
	key := HomeNetworkKey{ID: 1, Scheme: SchemeProfileB, Private: mustHex("f1ab1074477ebcc7f554ea1c5fc368b1616730155e0041ac447d6301975fecda")}
	pub, _ := key.PublicKey()
	seed, _ := ConcealSUCI(SchemeProfileB, pub, []byte{0, 1, 0x20, 0x80, 0xF6}, nil)
	f.Add(seed, true)
	f.Add(make([]byte, 40), false)
	f.Fuzz(func(t *testing.T, out []byte, profileB bool) {
		k := key
		if !profileB {
			k = HomeNetworkKey{ID: 1, Scheme: SchemeProfileA, Private: bytes.Repeat([]byte{7}, 32)}
		}
		_, _ = DeconcealSUCI(k, out)
	})
}
