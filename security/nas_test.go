package security

import (
	"bytes"
	"errors"
	"testing"
)

func nasPair(t *testing.T, ea, ia uint8) (amf, ue *NASContext) {
	t.Helper()
	kamf := bytes.Repeat([]byte{0x42}, 32)
	return NewNASContext(kamf, ea, ia, Downlink), NewNASContext(kamf, ea, ia, Uplink)
}

// A plain 5GMM Registration Complete (TS 24.501 8.2.8).
var registrationComplete = []byte{0x7E, 0x00, 0x43}

func TestNASRoundTripBothDirectionsPastSQNWrap(t *testing.T) {
	for _, ea := range []uint8{NEA0, NEA2} {
		amf, ue := nasPair(t, ea, NIA2)
		for i := 0; i < 300; i++ {
			sht := uint8(IntegrityProtected + i%4)
			pdu, err := ue.Protect(registrationComplete, sht)
			if err != nil {
				t.Fatal(err)
			}
			got, gotSHT, err := amf.Unprotect(pdu)
			if err != nil || gotSHT != sht || !bytes.Equal(got, registrationComplete) {
				t.Fatalf("NEA%d uplink #%d: %x %d %v", ea, i, got, gotSHT, err)
			}
			down, _ := amf.Protect(registrationComplete, sht)
			if got, _, err := ue.Unprotect(down); err != nil || !bytes.Equal(got, registrationComplete) {
				t.Fatalf("NEA%d downlink #%d: %x %v", ea, i, got, err)
			}
		}
		if last := amf.LastRxCount(); last != 299 {
			t.Fatalf("uplink COUNT after 300 messages = %d, want 299", last)
		}
		if amf.NextTxCount() != 300 {
			t.Fatalf("downlink COUNT = %d, want 300", amf.NextTxCount())
		}
	}
}

func TestProtectedMessageLayout(t *testing.T) {
	amf, _ := nasPair(t, NEA2, NIA2)
	amf.ResumeCounts(0x0105, 0)
	pdu, _ := amf.Protect(registrationComplete, IntegrityProtectedAndCiphered)
	if len(pdu) != 7+len(registrationComplete) || pdu[0] != EPD5GMM || pdu[1] != 2 || pdu[6] != 0x05 {
		t.Fatalf("protected PDU %x: want 7E 02 MAC(4) SQN=05 message", pdu)
	}
}

// NEA0 leaves the message readable on the wire, NEA2 does not; header
// type 1 is never ciphered.
func TestCipheringFollowsAlgorithmAndHeaderType(t *testing.T) {
	for _, tc := range []struct {
		ea      uint8
		sht     uint8
		inClear bool
	}{{NEA0, IntegrityProtectedAndCiphered, true}, {NEA2, IntegrityProtectedAndCiphered, false}, {NEA2, IntegrityProtected, true}} {
		amf, _ := nasPair(t, tc.ea, NIA2)
		pdu, _ := amf.Protect(registrationComplete, tc.sht)
		if got := bytes.Equal(pdu[7:], registrationComplete); got != tc.inClear {
			t.Errorf("NEA%d header type %d: payload in clear = %v", tc.ea, tc.sht, got)
		}
	}
}

func TestNASRejectsForgeryReflectionAndReplay(t *testing.T) {
	amf, ue := nasPair(t, NEA2, NIA2)
	pdu, _ := ue.Protect(registrationComplete, IntegrityProtectedAndCiphered)
	forged := bytes.Clone(pdu)
	forged[len(forged)-1] ^= 0x01
	if _, _, err := amf.Unprotect(forged); !errors.Is(err, ErrNASMAC) {
		t.Fatalf("flipped bit: %v, want ErrNASMAC", err)
	}
	if _, _, err := amf.Unprotect(pdu); err != nil {
		t.Fatalf("genuine message after a forged one: %v", err)
	}
	if _, _, err := amf.Unprotect(pdu); !errors.Is(err, ErrNASReplay) {
		t.Fatalf("replay: %v, want ErrNASReplay", err)
	}
	fresh, _ := nasPair(t, NEA2, NIA2)
	down, _ := fresh.Protect(registrationComplete, IntegrityProtected)
	if _, _, err := fresh.Unprotect(down); !errors.Is(err, ErrNASMAC) {
		t.Fatalf("downlink message reflected as uplink: %v, want ErrNASMAC", err)
	}
	if _, _, err := amf.Unprotect(registrationComplete); !errors.Is(err, ErrNASNotProtected) {
		t.Fatalf("plain message: %v", err)
	}
}

// TS 24.501 4.4.3.1: the receiver keeps the NAS overflow and bumps it when
// the SQN is below the last accepted SQN.
func TestReceiveCountEstimation(t *testing.T) {
	cases := []struct {
		next uint32
		sqn  uint8
		want uint32
	}{
		{0, 0, 0}, {0, 5, 5},
		{1, 1, 1}, {1, 0, 0}, // SQN equal to the last one: same COUNT, a replay
		{0x100, 0x00, 0x100}, {0x100, 0xFF, 0xFF},
		{0x1FF, 0x10, 0x210}, {0x1FF, 0xFF, 0x1FF},
	}
	for _, tc := range cases {
		r := NewReceiveCount(tc.next)
		if got := r.Estimate(tc.sqn); got != tc.want {
			t.Errorf("next %#x, SQN %#x: COUNT %#x, want %#x", tc.next, tc.sqn, got, tc.want)
		}
	}
	r := NewReceiveCount(0)
	if err := r.Accept(3); err != nil {
		t.Fatal(err)
	}
	if err := r.Accept(3); !errors.Is(err, ErrNASReplay) {
		t.Fatalf("same COUNT twice: %v", err)
	}
	if err := r.Accept(2); !errors.Is(err, ErrNASReplay) {
		t.Fatalf("older COUNT: %v", err)
	}
	if err := r.Accept(nasCountLimit); !errors.Is(err, ErrNASCountWrap) {
		t.Fatalf("COUNT past 24 bits: %v", err)
	}
}

// TS 33.401 C.2.1 (128-EIA2 test set 1) and C.1.1 (128-EEA2 test set 1,
// first 248 bits), through the functions Protect and Unprotect use.
func TestNIA2AndNEA2PublishedVectors(t *testing.T) {
	var key [16]byte
	copy(key[:], unhex(t, "d3c5d592327fb11c4035c6680af8c6d1"))
	mac, err := nasMAC(NIA2, key, 0x398a59b4, 0x1a, Downlink, unhex(t, "484583d5afe082ae"))
	if err != nil || !bytes.Equal(mac, unhex(t, "b93787e6")) {
		t.Fatalf("NIA2 MAC = %x, %v; want b93787e6", mac, err)
	}
	data := unhex(t, "981ba6824c1bfb1ab485472029b71d808ce33e2cc3c0b5fc1f3de8a6dc66b1")
	if err := nasCipher(NASKeys{EncAlg: NEA2, Enc: key}, 0x398a59b4, 0x15, Downlink, data); err != nil {
		t.Fatal(err)
	}
	if want := unhex(t, "e9fed8a63d155304d71df20bf3e82214b20ed7dad2f233dc3c22d7bdeeed8e"); !bytes.Equal(data, want) {
		t.Fatalf("NEA2 = %x, want %x", data, want)
	}
}

func TestProtectRejectsBadHeaderTypeAndCountWrap(t *testing.T) {
	amf, _ := nasPair(t, NEA2, NIA2)
	if _, err := amf.Protect(registrationComplete, PlainNAS); err == nil {
		t.Error("header type 0 accepted")
	}
	amf.ResumeCounts(nasCountLimit, 0)
	if _, err := amf.Protect(registrationComplete, IntegrityProtected); !errors.Is(err, ErrNASCountWrap) {
		t.Errorf("COUNT past 24 bits: %v", err)
	}
}
