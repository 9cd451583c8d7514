package security

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
)

// Results of the USIM's AUTN check (TS 33.102 6.3.3), each answered with a
// different 5GMM cause by the UE (TS 24.501 5.4.1.3.7).
var (
	// ErrMACFailure: MAC-A (or, at the home network, MAC-S) did not verify;
	// the peer does not hold the subscriber's key. 5GMM cause #20.
	ErrMACFailure = errors.New("AKA: MAC failure")
	// ErrSynchFailure: MAC-A verified but SQN is not fresh. The error is a
	// *SynchFailure carrying the AUTS. 5GMM cause #21.
	ErrSynchFailure = errors.New("AKA: synchronisation failure (SQN out of range)")
	// ErrNon5GAuthentication: the AMF separation bit of AUTN is 0, so the
	// vector was not made for 5G (TS 33.501 6.1.3.2). 5GMM cause #26.
	ErrNon5GAuthentication = errors.New("AKA: AMF separation bit is 0 (non-5G authentication)")
)

// sqnDelta bounds how far SQN may jump ahead of SQN_MS before the USIM
// treats it as out of range (TS 33.102 C.2.1, the limit Δ; 2^28 is the
// value of the TS 33.102 C.3 profile).
const sqnDelta = 1 << 28

// AuthVector is the 5G HE AV the UDM/ARPF hands the AUSF (TS 33.501
// 6.1.3.2 step 2: RAND, AUTN, XRES*, KAUSF). XRES, CK, IK and AK are kept
// for EAP-AKA' and for tests.
type AuthVector struct {
	RAND, AUTN, XRESStar, KAUSF []byte
	XRES, CK, IK, AK            []byte
}

// GenerateAuthVector builds a 5G HE AV for the subscriber's K, OPc, SQN and AMF:
// AUTN = SQN xor AK || AMF || MAC-A (TS 33.102 6.3.2), XRES* (TS 33.501
// A.4) and KAUSF (A.2). rnd nil draws a fresh random RAND. The AMF field
// should carry the separation bit (0x8000) or 5G UEs reject the vector.
func GenerateAuthVector(k, opc, sqn, amf, rnd []byte, servingNetworkName string) (*AuthVector, error) {
	m, err := NewMilenage(k, opc)
	if err != nil {
		return nil, err
	}
	if rnd == nil {
		if rnd, err = randomRAND(); err != nil {
			return nil, err
		}
	}
	macA, _, err := m.F1(rnd, sqn, amf)
	if err != nil {
		return nil, err
	}
	xres, ck, ik, ak, _, err := m.F2345(rnd)
	if err != nil {
		return nil, err
	}
	sqnXorAK := xorBytes(sqn, ak)
	av := &AuthVector{
		RAND: clone(rnd), AUTN: concat(sqnXorAK, amf, macA),
		XRES: xres, CK: ck, IK: ik, AK: ak,
	}
	if av.XRESStar, err = DeriveResStar(ck, ik, servingNetworkName, rnd, xres); err != nil {
		return nil, err
	}
	if av.KAUSF, err = DeriveKAUSF(ck, ik, servingNetworkName, sqnXorAK); err != nil {
		return nil, err
	}
	return av, nil
}

func randomRAND() ([]byte, error) {
	rnd := make([]byte, RANDLen)
	if _, err := rand.Read(rnd); err != nil {
		return nil, fmt.Errorf("AKA: random RAND: %w", err)
	}
	return rnd, nil
}

// AKAResponse is what the USIM returns for an accepted challenge, plus what
// the ME needs for RES* and KAUSF (TS 33.501 6.1.3.2 step 7).
type AKAResponse struct {
	RES, CK, IK []byte
	SQN         []byte // the network's SQN: the caller stores it as the new SQN_MS
	SQNXorAK    []byte // the first 6 bytes of AUTN, input of KAUSF (A.2)
}

// SynchFailure is the error of a challenge whose MAC verified but whose
// SQN was not fresh; AUTS goes into the Authentication Failure message.
type SynchFailure struct {
	AUTS []byte
}

func (e *SynchFailure) Error() string { return ErrSynchFailure.Error() }

// Is makes errors.Is(err, ErrSynchFailure) hold.
func (e *SynchFailure) Is(target error) bool { return target == ErrSynchFailure }

// VerifyAUTN is the USIM's MAC check (TS 33.102 6.3.3): it recovers SQN
// with AK, verifies MAC-A (ErrMACFailure otherwise) and returns RES, CK, IK
// and SQN, leaving the freshness check to the caller. VerifyChallenge does
// all the UE's checks.
func VerifyAUTN(k, opc, rnd, autn []byte) (*AKAResponse, error) {
	if len(autn) != AUTNLen {
		return nil, fmt.Errorf("AKA: AUTN must be 16 bytes, got %d", len(autn))
	}
	m, err := NewMilenage(k, opc)
	if err != nil {
		return nil, err
	}
	return m.verifyAUTN(rnd, autn)
}

func (m *Milenage) verifyAUTN(rnd, autn []byte) (*AKAResponse, error) {
	res, ck, ik, ak, _, err := m.F2345(rnd)
	if err != nil {
		return nil, err
	}
	sqnXorAK, amf, mac := autn[0:6], autn[6:8], autn[8:16]
	sqn := xorBytes(sqnXorAK, ak)
	if err := m.checkMAC(rnd, sqn, amf, mac, false); err != nil {
		return nil, err
	}
	return &AKAResponse{RES: res, CK: ck, IK: ik, SQN: sqn, SQNXorAK: clone(sqnXorAK)}, nil
}

// VerifyChallenge is the whole UE side of 5G AKA: the USIM checks MAC-A,
// then that SQN is fresh against sqnMS, the highest SQN it accepted so far
// (TS 33.102 6.3.3); then the ME checks the AMF separation bit (TS 33.501
// 6.1.3.2). Failures are ErrMACFailure, a *SynchFailure (errors.Is
// ErrSynchFailure) carrying AUTS, or ErrNon5GAuthentication.
func VerifyChallenge(k, opc, rnd, autn, sqnMS []byte) (*AKAResponse, error) {
	if len(autn) != AUTNLen || len(sqnMS) != SQNLen {
		return nil, fmt.Errorf("AKA: want AUTN 16 and SQN_MS 6 bytes, got %d and %d", len(autn), len(sqnMS))
	}
	m, err := NewMilenage(k, opc)
	if err != nil {
		return nil, err
	}
	resp, err := m.verifyAUTN(rnd, autn)
	if err != nil {
		return nil, err
	}
	if !sqnFresh(resp.SQN, sqnMS) {
		return nil, m.synchFailure(rnd, sqnMS)
	}
	// TS 33.501 6.1.3.2 / TS 33.102 Annex H: bit 0 of AMF is the separation bit.
	if autn[6]&0x80 == 0 {
		return nil, ErrNon5GAuthentication
	}
	return resp, nil
}

// checkMAC compares MAC-A (or MAC-S when star) in constant time.
func (m *Milenage) checkMAC(rnd, sqn, amf, got []byte, star bool) error {
	macA, macS, err := m.F1(rnd, sqn, amf)
	if err != nil {
		return err
	}
	want := macA
	if star {
		want = macS
	}
	if subtle.ConstantTimeCompare(want, got) != 1 {
		return ErrMACFailure
	}
	return nil
}

func (m *Milenage) synchFailure(rnd, sqnMS []byte) error {
	auts, err := m.auts(rnd, sqnMS)
	if err != nil {
		return err
	}
	return &SynchFailure{AUTS: auts}
}

// sqnFresh is the USIM's range check (TS 33.102 6.3.3, C.2.1): SQN must be
// above SQN_MS, by at most Δ.
func sqnFresh(sqn, sqnMS []byte) bool {
	s, ms := sqnValue(sqn), sqnValue(sqnMS)
	return s > ms && s-ms <= sqnDelta
}

// sqnValue reads a 48-bit SQN as an integer.
func sqnValue(sqn []byte) uint64 {
	var b [8]byte
	copy(b[2:], sqn)
	return binary.BigEndian.Uint64(b[:])
}

// resyncAMF is the dummy AMF f1* uses for AUTS (TS 33.102 6.3.3).
var resyncAMF = []byte{0x00, 0x00}

// BuildAUTS is the USIM's re-synchronisation token: AUTS = SQN_MS xor AK*
// || MAC-S, with MAC-S = f1*(SQN_MS, RAND, AMF = 0x0000) (TS 33.102 6.3.3).
func BuildAUTS(k, opc, rnd, sqnMS []byte) ([]byte, error) {
	m, err := NewMilenage(k, opc)
	if err != nil {
		return nil, err
	}
	return m.auts(rnd, sqnMS)
}

func (m *Milenage) auts(rnd, sqnMS []byte) ([]byte, error) {
	_, _, _, _, akStar, err := m.F2345(rnd)
	if err != nil {
		return nil, err
	}
	_, macS, err := m.F1(rnd, sqnMS, resyncAMF)
	if err != nil {
		return nil, err
	}
	return concat(xorBytes(sqnMS, akStar), macS), nil
}

// SQNFromAUTS is the home network side of re-synchronisation (TS 33.102
// 6.3.5): it recovers SQN_MS from AUTS with AK* and verifies MAC-S against
// the RAND of the failed challenge. A bad MAC-S is ErrMACFailure; the
// UDM then keeps its SQN.
func SQNFromAUTS(k, opc, rnd, auts []byte) (sqnMS []byte, err error) {
	if len(auts) != AUTSLen {
		return nil, fmt.Errorf("AKA: AUTS must be 14 bytes, got %d", len(auts))
	}
	m, err := NewMilenage(k, opc)
	if err != nil {
		return nil, err
	}
	_, _, _, _, akStar, err := m.F2345(rnd)
	if err != nil {
		return nil, err
	}
	sqnMS = xorBytes(auts[0:6], akStar)
	if err := m.checkMAC(rnd, sqnMS, resyncAMF, auts[6:14], true); err != nil {
		return nil, err
	}
	return sqnMS, nil
}

// xorBytes returns a xor b for equal-length slices.
func xorBytes(a, b []byte) []byte {
	out := make([]byte, len(a))
	subtle.XORBytes(out, a, b)
	return out
}

func concat(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
