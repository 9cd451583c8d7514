package security

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
)

var (
	testK   = mustHex("465b5ce8b199b49faa5f0a2ee238a6bc")
	testOPc = mustHex("cd63cb71954a9f4e48a5994e37a02baf")
	testSN  = ServingNetworkName("208", "93")
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestServingNetworkNamePadsTwoDigitMNC(t *testing.T) {
	if testSN != "5G:mnc093.mcc208.3gppnetwork.org" {
		t.Fatal(testSN)
	}
}

// The KDF appends each parameter's two-byte length (TS 33.220 B.2).
func TestKDFAppendsLengths(t *testing.T) {
	key := []byte("k")
	m := hmac.New(sha256.New, key)
	m.Write([]byte{0x6C, 'a', 'b', 'c', 0, 3, 0xFF, 0, 1})
	if got := KDF(key, 0x6C, []byte("abc"), []byte{0xFF}); !bytes.Equal(got, m.Sum(nil)) {
		t.Fatalf("KDF = %x", got)
	}
}

// 5G AKA end to end: the AV the UDM makes is accepted by the USIM, whose
// RES* matches XRES*, and both sides reach the same KAUSF, KSEAF and KAMF.
func TestAKANetworkAndUSIMAgree(t *testing.T) {
	sqn, amf := mustHex("000000000021"), mustHex("8000")
	av, err := GenerateAuthVector(testK, testOPc, sqn, amf, nil, testSN)
	if err != nil {
		t.Fatal(err)
	}
	ue, err := VerifyAUTN(testK, testOPc, av.RAND, av.AUTN)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ue.SQN, sqn) {
		t.Fatalf("USIM read SQN %x, want %x", ue.SQN, sqn)
	}
	resStar := ResStar(ue.CK, ue.IK, testSN, av.RAND, ue.RES)
	if !bytes.Equal(resStar, av.XRESStar) || len(resStar) != 16 {
		t.Fatalf("RES* %x != XRES* %x", resStar, av.XRESStar)
	}
	if !bytes.Equal(HResStar(av.RAND, resStar), HResStar(av.RAND, av.XRESStar)) {
		t.Fatal("HRES* differs")
	}
	kausf := KAUSF(ue.CK, ue.IK, testSN, ue.SQNXorAK)
	if !bytes.Equal(kausf, av.KAUSF) {
		t.Fatal("KAUSF differs")
	}
	kamfNet := KAMF(KSEAF(av.KAUSF, testSN), "208930000000001", []byte{0, 0})
	kamfUE := KAMF(KSEAF(kausf, testSN), "208930000000001", []byte{0, 0})
	if !bytes.Equal(kamfNet, kamfUE) || len(kamfNet) != 32 {
		t.Fatal("KAMF differs")
	}
	if bytes.Equal(KgNB(kamfNet, 0, AccessType3GPP), KgNB(kamfNet, 1, AccessType3GPP)) {
		t.Fatal("KgNB ignores the uplink COUNT")
	}
}

func TestAUTNWithWrongKeyIsMACFailure(t *testing.T) {
	av, _ := GenerateAuthVector(testK, testOPc, mustHex("000000000021"), mustHex("8000"), nil, testSN)
	other := bytes.Clone(testK)
	other[0] ^= 1
	if _, err := VerifyAUTN(other, testOPc, av.RAND, av.AUTN); !errors.Is(err, ErrMACFailure) {
		t.Fatalf("err = %v, want ErrMACFailure", err)
	}
}

func TestResynchronisation(t *testing.T) {
	rnd := mustHex("23553cbe9637a89d218ae64dae47bf35")
	sqnMS := mustHex("0000000003e8")
	auts, err := BuildAUTS(testK, testOPc, rnd, sqnMS)
	if err != nil || len(auts) != AUTSLen {
		t.Fatalf("AUTS %x %v", auts, err)
	}
	got, err := SQNFromAUTS(testK, testOPc, rnd, auts)
	if err != nil || !bytes.Equal(got, sqnMS) {
		t.Fatalf("SQN_MS = %x, %v; want %x", got, err, sqnMS)
	}
	auts[13] ^= 1
	if _, err := SQNFromAUTS(testK, testOPc, rnd, auts); !errors.Is(err, ErrMACFailure) {
		t.Fatalf("bad MAC-S: err = %v", err)
	}
	if _, err := SQNFromAUTS(testK, testOPc, rnd, auts[:5]); err == nil {
		t.Fatal("short AUTS accepted")
	}
}
