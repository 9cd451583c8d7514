package security

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"testing"
)

func TestServingNetworkNamePadsTwoDigitMNC(t *testing.T) {
	if got := ServingNetworkName("208", "93"); got != "5G:mnc093.mcc208.3gppnetwork.org" {
		t.Fatalf("2-digit MNC: %q", got)
	}
	if got := ServingNetworkName("310", "410"); got != "5G:mnc410.mcc310.3gppnetwork.org" {
		t.Fatalf("3-digit MNC: %q", got)
	}
}

// TS 33.220 B.2: S = FC || P0 || L0 || P1 || L1, each L a 2-byte length.
func TestKDFAppendsTwoByteLengths(t *testing.T) {
	key := []byte("key")
	p0 := bytes.Repeat([]byte{'a'}, 300) // L0 = 0x012C exercises the high byte
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte{0x6C})
	mac.Write(p0)
	mac.Write([]byte{0x01, 0x2C, 0xFF, 0x00, 0x01})
	got, err := KDF(key, 0x6C, p0, []byte{0xFF})
	if err != nil || !bytes.Equal(got, mac.Sum(nil)) {
		t.Fatalf("KDF = %x, %v", got, err)
	}
}

// An independent published vector for the same KDF: RFC 5448 section 6
// (EAP-AKA' test case 1) derives CK' || IK' with FC 0x20 over the access
// network name "WLAN" and SQN xor AK.
func TestKDFRFC5448TestCase1(t *testing.T) {
	ckik := unhex(t, "5349fbe098649f948f5d2e973a81c00f"+"9744871ad32bf9bbd1dd5ce54e3e2e5a")
	got, err := KDF(ckik, 0x20, []byte("WLAN"), unhex(t, "bb52e91c747a"))
	want := unhex(t, "0093962d0dd84aa5684b045c9edffa04"+"ccfc230ca74fcc96c0a5d61164f5a76c")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("CK'||IK' = %x, %v; want %x", got, err, want)
	}
}

// Each Annex A derivation is the KDF with its FC and parameters; these pin
// FC, parameter order and which half of the output is kept.
func TestAnnexADerivationsUseTheirFCAndParameters(t *testing.T) {
	ck, ik := bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 16)
	sn, rnd, res := ServingNetworkName("208", "93"), bytes.Repeat([]byte{3}, 16), bytes.Repeat([]byte{4}, 8)
	sqnXorAK, k32 := bytes.Repeat([]byte{5}, 6), bytes.Repeat([]byte{6}, 32)
	kdf := func(key []byte, fc byte, p ...[]byte) []byte {
		out, _ := KDF(key, fc, p...)
		return out
	}
	cases := []struct {
		name string
		got  func() ([]byte, error)
		want []byte
	}{
		{"KAUSF A.2", func() ([]byte, error) { return DeriveKAUSF(ck, ik, sn, sqnXorAK) },
			kdf(concat(ck, ik), 0x6A, []byte(sn), sqnXorAK)},
		{"RES* A.4", func() ([]byte, error) { return DeriveResStar(ck, ik, sn, rnd, res) },
			kdf(concat(ck, ik), 0x6B, []byte(sn), rnd, res)[16:]},
		{"KSEAF A.6", func() ([]byte, error) { return DeriveKSEAF(k32, sn) }, kdf(k32, 0x6C, []byte(sn))},
		{"KAMF A.7", func() ([]byte, error) { return DeriveKAMF(k32, "imsi-208930000000001", []byte{0, 0}) },
			kdf(k32, 0x6D, []byte("208930000000001"), []byte{0, 0})},
		{"KgNB A.9", func() ([]byte, error) { return DeriveKgNB(k32, 0x01020304, AccessType3GPP) },
			kdf(k32, 0x6E, []byte{1, 2, 3, 4}, []byte{0x01})},
	}
	for _, tc := range cases {
		got, err := tc.got()
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s = %x, %v; want %x", tc.name, got, err, tc.want)
		}
	}
	nas, err := DeriveNASKeys(k32, NEA2, NIA2)
	if err != nil || !bytes.Equal(nas.Enc[:], kdf(k32, 0x69, []byte{0x01}, []byte{NEA2})[16:]) ||
		!bytes.Equal(nas.Int[:], kdf(k32, 0x69, []byte{0x02}, []byte{NIA2})[16:]) {
		t.Errorf("NAS keys A.8 = %+v, %v", nas, err)
	}
}

// A.5: HXRES* is the low 128 bits of SHA-256(RAND || XRES*).
func TestHResStarIsLeastSignificantHalf(t *testing.T) {
	rnd, resStar := bytes.Repeat([]byte{7}, 16), bytes.Repeat([]byte{8}, 16)
	sum := sha256.Sum256(concat(rnd, resStar))
	got, err := DeriveHResStar(rnd, resStar)
	if err != nil || !bytes.Equal(got, sum[16:]) {
		t.Fatalf("HRES* = %x, %v; want %x", got, err, sum[16:])
	}
}

func TestDerivationsRejectWrongLengths(t *testing.T) {
	short := []byte{1, 2, 3}
	if _, err := DeriveKAUSF(short, short, "sn", short); err == nil {
		t.Error("KAUSF accepted a 3-byte CK")
	}
	if _, err := DeriveKAMF(short, "imsi-1", []byte{0, 0}); err == nil {
		t.Error("KAMF accepted a 3-byte KSEAF")
	}
	if _, err := DeriveNASKeys(short, NEA2, NIA2); err == nil {
		t.Error("NAS keys accepted a 3-byte KAMF")
	}
	if _, err := DeriveHResStar(short, short); err == nil {
		t.Error("HRES* accepted a 3-byte RAND")
	}
	if _, err := KDF(short, 0x6A, make([]byte, 0x10000)); err == nil {
		t.Error("KDF accepted a parameter whose length does not fit 2 bytes")
	}
}
