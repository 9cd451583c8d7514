package security

import (
	"bytes"
	"errors"
	"testing"
)

func TestSUCIRoundTripWithFreshEphemeralKeys(t *testing.T) {
	for _, scheme := range []uint8{SchemeProfileA, SchemeProfileB} {
		key, err := GenerateHomeNetworkKey(scheme, 7)
		if err != nil {
			t.Fatal(err)
		}
		public, _ := key.PublicKey()
		keys := HomeNetworkKeys{{ID: 1, Scheme: SchemeProfileA, Private: bytes.Repeat([]byte{1}, 32)}, key}
		for _, msin := range []string{"0000000001", "123456789"} {
			first, err := ConcealSUCI(scheme, public, msin, nil)
			if err != nil {
				t.Fatal(err)
			}
			second, _ := ConcealSUCI(scheme, public, msin, nil)
			if bytes.Equal(first, second) {
				t.Fatalf("scheme %d: two concealments of one MSIN are equal (SUCI must not be linkable)", scheme)
			}
			got, err := DeconcealSUCI(scheme, 7, first, keys)
			if err != nil || got != msin {
				t.Fatalf("scheme %d: MSIN %q, %v; want %q", scheme, got, err, msin)
			}
		}
	}
}

func TestNullSchemeCarriesTheBCDMSIN(t *testing.T) {
	out, err := ConcealSUCI(SchemeNull, nil, "0000000001", nil)
	if err != nil || !bytes.Equal(out, []byte{0x00, 0x00, 0x00, 0x00, 0x10}) {
		t.Fatalf("null scheme output %x, %v", out, err)
	}
	if msin, err := DeconcealSUCI(SchemeNull, 0, out, nil); err != nil || msin != "0000000001" {
		t.Fatalf("null scheme MSIN %q, %v", msin, err)
	}
}

func TestDeconcealSUCIErrorsSayWhatFailed(t *testing.T) {
	key, _ := GenerateHomeNetworkKey(SchemeProfileB, 1)
	public, _ := key.PublicKey()
	out, _ := ConcealSUCI(SchemeProfileB, public, "0123456789", nil)
	keys := HomeNetworkKeys{key}

	if _, err := DeconcealSUCI(SchemeProfileB, 2, out, keys); !errors.Is(err, ErrUnknownHNKey) {
		t.Errorf("unknown key id: %v", err)
	}
	if _, err := DeconcealSUCI(SchemeProfileA, 1, out, keys); !errors.Is(err, ErrUnknownHNKey) {
		t.Errorf("other scheme: %v", err)
	}
	if _, err := DeconcealSUCI(SchemeProfileB, 1, out[:40], keys); err == nil {
		t.Error("truncated output accepted")
	}
	offCurve := bytes.Clone(out)
	offCurve[0] = 0x04 // neither 0x02 nor 0x03: not a compressed point
	if _, err := DeconcealSUCI(SchemeProfileB, 1, offCurve, keys); err == nil || errors.Is(err, ErrSUCIMAC) {
		t.Errorf("bad ephemeral point: %v", err)
	}
	otherKey, _ := GenerateHomeNetworkKey(SchemeProfileB, 1)
	if _, err := DeconcealSUCI(SchemeProfileB, 1, out, HomeNetworkKeys{otherKey}); !errors.Is(err, ErrSUCIMAC) {
		t.Errorf("wrong private key: %v, want ErrSUCIMAC", err)
	}
	if _, err := DeconcealSUCI(3, 1, out, keys); err == nil {
		t.Error("scheme 3 accepted")
	}
}

func TestMSINAndBCDSchemeInput(t *testing.T) {
	cases := []struct {
		msin string
		bcd  []byte
	}{
		{"0000000001", []byte{0x00, 0x00, 0x00, 0x00, 0x10}},
		{"123", []byte{0x21, 0xF3}}, // odd count: F filler in the last high nibble
		{"001002086", []byte{0x00, 0x01, 0x20, 0x80, 0xF6}},
	}
	for _, tc := range cases {
		if got, err := MSINToBCD(tc.msin); err != nil || !bytes.Equal(got, tc.bcd) {
			t.Errorf("MSINToBCD(%q) = %x, %v; want %x", tc.msin, got, err, tc.bcd)
		}
		if got, err := BCDToMSIN(tc.bcd); err != nil || got != tc.msin {
			t.Errorf("BCDToMSIN(%x) = %q, %v; want %q", tc.bcd, got, err, tc.msin)
		}
	}
	for _, bad := range [][]byte{{}, {0xFA}, {0x1A}, {0xF1, 0x22}} {
		if _, err := BCDToMSIN(bad); err == nil {
			t.Errorf("BCDToMSIN(%x) accepted", bad)
		}
	}
	for _, bad := range []string{"", "12a", "-1"} {
		if _, err := MSINToBCD(bad); err == nil {
			t.Errorf("MSINToBCD(%q) accepted", bad)
		}
	}
}

func TestPublicKeyFromPrivateRejectsBadKeys(t *testing.T) {
	if _, err := PublicKeyFromPrivate(SchemeProfileA, make([]byte, 31)); err == nil {
		t.Error("31-byte X25519 key accepted")
	}
	if _, err := PublicKeyFromPrivate(SchemeProfileB, make([]byte, 32)); err == nil {
		t.Error("zero P-256 scalar accepted")
	}
	if _, err := PublicKeyFromPrivate(SchemeNull, make([]byte, 32)); err == nil {
		t.Error("null scheme has no key")
	}
}
