package security

import (
	"bytes"
	"errors"
	"testing"
)

var (
	testK   = []byte{0x46, 0x5b, 0x5c, 0xe8, 0xb1, 0x99, 0xb4, 0x9f, 0xaa, 0x5f, 0x0a, 0x2e, 0xe2, 0x38, 0xa6, 0xbc}
	testOPc = []byte{0xcd, 0x63, 0xcb, 0x71, 0x95, 0x4a, 0x9f, 0x4e, 0x48, 0xa5, 0x99, 0x4e, 0x37, 0xa0, 0x2b, 0xaf}
	amf5G   = []byte{0x80, 0x00} // separation bit set
	testSN  = ServingNetworkName("208", "93")
)

func sqnOf(v uint64) []byte {
	return []byte{byte(v >> 40), byte(v >> 32), byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
}

// 5G AKA end to end: the UE accepts the UDM's vector, its RES* equals
// XRES*, and both ends reach the same KAUSF, KSEAF, KAMF and NAS keys.
func TestAKANetworkAndUEAgreeOnKeys(t *testing.T) {
	av, err := GenerateAuthVector(testK, testOPc, sqnOf(0x21), amf5G, nil, testSN)
	if err != nil {
		t.Fatal(err)
	}
	ue, err := VerifyChallenge(testK, testOPc, av.RAND, av.AUTN, sqnOf(0x20))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ue.SQN, sqnOf(0x21)) {
		t.Fatalf("UE read SQN %x", ue.SQN)
	}
	resStar, _ := DeriveResStar(ue.CK, ue.IK, testSN, av.RAND, ue.RES)
	if !bytes.Equal(resStar, av.XRESStar) || len(resStar) != 16 {
		t.Fatalf("RES* %x != XRES* %x", resStar, av.XRESStar)
	}
	hres, _ := DeriveHResStar(av.RAND, resStar)
	hxres, _ := DeriveHResStar(av.RAND, av.XRESStar)
	if !bytes.Equal(hres, hxres) {
		t.Fatal("HRES* != HXRES*")
	}
	ueKeys := hierarchy(t, ue.CK, ue.IK, ue.SQNXorAK)
	netKAMF := kamfFrom(t, av.KAUSF)
	if !bytes.Equal(ueKeys, netKAMF) {
		t.Fatal("UE and network KAMF differ")
	}
}

func hierarchy(t *testing.T, ck, ik, sqnXorAK []byte) []byte {
	t.Helper()
	kausf, err := DeriveKAUSF(ck, ik, testSN, sqnXorAK)
	if err != nil {
		t.Fatal(err)
	}
	return kamfFrom(t, kausf)
}

func kamfFrom(t *testing.T, kausf []byte) []byte {
	t.Helper()
	kseaf, err := DeriveKSEAF(kausf, testSN)
	if err != nil {
		t.Fatal(err)
	}
	kamf, err := DeriveKAMF(kseaf, "imsi-208930000000001", []byte{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	return kamf
}

func TestAUTNFromAnotherKeyIsMACFailure(t *testing.T) {
	av, _ := GenerateAuthVector(testK, testOPc, sqnOf(0x21), amf5G, nil, testSN)
	other := bytes.Clone(testK)
	other[0] ^= 1
	if _, err := VerifyAUTN(other, testOPc, av.RAND, av.AUTN); !errors.Is(err, ErrMACFailure) {
		t.Fatalf("err = %v, want ErrMACFailure", err)
	}
	av.AUTN[15] ^= 1
	if _, err := VerifyChallenge(testK, testOPc, av.RAND, av.AUTN, sqnOf(0)); !errors.Is(err, ErrMACFailure) {
		t.Fatalf("flipped MAC-A: err = %v, want ErrMACFailure", err)
	}
}

// A stale or too-far SQN is a synchronisation failure, distinct from a MAC
// failure, and its AUTS lets the UDM recover SQN_MS (TS 33.102 6.3.5).
func TestStaleSQNGivesAUTSTheNetworkCanRead(t *testing.T) {
	sqnMS := sqnOf(0x1000)
	for _, sqn := range []uint64{0x1000, 0x0fff, 0x1000 + sqnDelta + 1} {
		av, _ := GenerateAuthVector(testK, testOPc, sqnOf(sqn), amf5G, nil, testSN)
		_, err := VerifyChallenge(testK, testOPc, av.RAND, av.AUTN, sqnMS)
		var sf *SynchFailure
		if !errors.Is(err, ErrSynchFailure) || !errors.As(err, &sf) || errors.Is(err, ErrMACFailure) {
			t.Fatalf("SQN %#x: err = %v, want a synch failure", sqn, err)
		}
		got, err := SQNFromAUTS(testK, testOPc, av.RAND, sf.AUTS)
		if err != nil || !bytes.Equal(got, sqnMS) {
			t.Fatalf("SQN_MS from AUTS = %x, %v; want %x", got, err, sqnMS)
		}
	}
}

func TestAUTSWithBadMACIsRejected(t *testing.T) {
	rnd := bytes.Repeat([]byte{9}, 16)
	auts, err := BuildAUTS(testK, testOPc, rnd, sqnOf(0x3e8))
	if err != nil || len(auts) != AUTSLen {
		t.Fatalf("AUTS %x, %v", auts, err)
	}
	auts[13] ^= 1
	if _, err := SQNFromAUTS(testK, testOPc, rnd, auts); !errors.Is(err, ErrMACFailure) {
		t.Fatalf("bad MAC-S: err = %v", err)
	}
	if _, err := SQNFromAUTS(testK, testOPc, rnd, auts[:5]); err == nil {
		t.Fatal("5-byte AUTS accepted")
	}
}

// TS 33.501 6.1.3.2: a vector without the AMF separation bit is not for 5G.
func TestAMFWithoutSeparationBitIsRejectedByUE(t *testing.T) {
	av, _ := GenerateAuthVector(testK, testOPc, sqnOf(0x21), []byte{0x00, 0x00}, nil, testSN)
	if _, err := VerifyChallenge(testK, testOPc, av.RAND, av.AUTN, sqnOf(0)); !errors.Is(err, ErrNon5GAuthentication) {
		t.Fatalf("err = %v, want ErrNon5GAuthentication", err)
	}
}

func TestAKARejectsBadLengths(t *testing.T) {
	if _, err := GenerateAuthVector(testK, testOPc, sqnOf(1), amf5G, []byte{1, 2}, testSN); err == nil {
		t.Error("2-byte RAND accepted")
	}
	if _, err := GenerateAuthVector(testK[:8], testOPc, sqnOf(1), amf5G, nil, testSN); err == nil {
		t.Error("8-byte K accepted")
	}
	if _, err := VerifyChallenge(testK, testOPc, make([]byte, 16), make([]byte, 15), sqnOf(0)); err == nil {
		t.Error("15-byte AUTN accepted")
	}
}
