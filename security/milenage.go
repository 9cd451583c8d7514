package security

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
)

// Lengths of the Milenage parameters, TS 35.206 2.
const (
	KeyLen  = 16
	RANDLen = 16
	SQNLen  = 6
	AMFLen  = 2
	AUTNLen = 16
	AUTSLen = 14
)

// ErrMACFailure means the network's MAC-A (or the UE's MAC-S) did not verify:
// the peer does not hold the subscriber's key (TS 33.102 6.3.3).
var ErrMACFailure = errors.New("MAC failure")

// Milenage holds one subscriber's K and OPc and computes f1..f5* (TS 35.206 4.1).
type Milenage struct {
	block cipher.Block
	opc   [16]byte
}

// NewMilenage prepares the functions for key k and OPc.
func NewMilenage(k, opc []byte) (*Milenage, error) {
	if len(k) != KeyLen || len(opc) != KeyLen {
		return nil, fmt.Errorf("milenage: K and OPc must be 16 bytes, got %d and %d", len(k), len(opc))
	}
	b, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	m := &Milenage{block: b}
	copy(m.opc[:], opc)
	return m, nil
}

// DeriveOPc computes OPc = E_K(OP) xor OP (TS 35.206 4.1).
func DeriveOPc(k, op []byte) ([]byte, error) {
	if len(k) != KeyLen || len(op) != KeyLen {
		return nil, fmt.Errorf("milenage: K and OP must be 16 bytes, got %d and %d", len(k), len(op))
	}
	b, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 16)
	b.Encrypt(out, op)
	subtle.XORBytes(out, out, op)
	return out, nil
}

// temp is E_K(RAND xor OPc), shared by all functions.
func (m *Milenage) temp(rnd []byte) [16]byte {
	var in, out [16]byte
	subtle.XORBytes(in[:], rnd, m.opc[:])
	m.block.Encrypt(out[:], in[:])
	return out
}

// out computes OUTi = E_K(rot(x xor OPc, r) xor c) xor OPc with c the
// constant whose last byte is cLast (TS 35.206 4.1, r in bytes).
func (m *Milenage) out(x [16]byte, rBytes int, cLast byte) [16]byte {
	var xo, rot, res [16]byte
	subtle.XORBytes(xo[:], x[:], m.opc[:])
	for i := range rot {
		rot[i] = xo[(i+rBytes)%16]
	}
	rot[15] ^= cLast
	m.block.Encrypt(res[:], rot[:])
	subtle.XORBytes(res[:], res[:], m.opc[:])
	return res
}

// F1 returns MAC-A (f1) and MAC-S (f1*).
func (m *Milenage) F1(rnd, sqn, amf []byte) (macA, macS []byte, err error) {
	if len(rnd) != RANDLen || len(sqn) != SQNLen || len(amf) != AMFLen {
		return nil, nil, fmt.Errorf("milenage f1: bad lengths RAND %d SQN %d AMF %d", len(rnd), len(sqn), len(amf))
	}
	temp := m.temp(rnd)
	var in1 [16]byte
	copy(in1[0:6], sqn)
	copy(in1[6:8], amf)
	copy(in1[8:14], sqn)
	copy(in1[14:16], amf)
	// OUT1 = E_K(TEMP xor rot(IN1 xor OPc, r1)) xor OPc, r1 = 64 bits, c1 = 0.
	var x, rot, out [16]byte
	subtle.XORBytes(x[:], in1[:], m.opc[:])
	for i := range rot {
		rot[i] = x[(i+8)%16]
	}
	subtle.XORBytes(rot[:], rot[:], temp[:])
	m.block.Encrypt(out[:], rot[:])
	subtle.XORBytes(out[:], out[:], m.opc[:])
	return out[0:8:8], out[8:16:16], nil
}

// F2345 returns RES (f2), CK (f3), IK (f4), AK (f5) and AK* (f5*).
func (m *Milenage) F2345(rnd []byte) (res, ck, ik, ak, akStar []byte, err error) {
	if len(rnd) != RANDLen {
		return nil, nil, nil, nil, nil, fmt.Errorf("milenage: RAND must be 16 bytes, got %d", len(rnd))
	}
	temp := m.temp(rnd)
	// TEMP xor OPc is taken inside out(): pass TEMP.
	o2 := m.out(temp, 0, 1)  // r2 = 0, c2 = 1
	o3 := m.out(temp, 4, 2)  // r3 = 32, c3 = 2
	o4 := m.out(temp, 8, 4)  // r4 = 64, c4 = 4
	o5 := m.out(temp, 12, 8) // r5 = 96, c5 = 8
	return clone(o2[8:16]), clone(o3[:]), clone(o4[:]), clone(o2[0:6]), clone(o5[0:6]), nil
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// AuthVector is the 5G HE AV the UDM hands the AUSF (TS 33.501 6.1.3.2 step 2).
type AuthVector struct {
	RAND, AUTN, XRESStar, KAUSF []byte
	// RES, CK, IK are kept for EAP-AKA' and for tests.
	XRES, CK, IK []byte
}

// GenerateAuthVector builds a 5G HE AV for SQN (TS 33.501 6.1.3.2, A.2, A.4).
// rnd may be nil for a fresh random RAND.
func GenerateAuthVector(k, opc, sqn, amf, rnd []byte, servingNetworkName string) (*AuthVector, error) {
	m, err := NewMilenage(k, opc)
	if err != nil {
		return nil, err
	}
	if rnd == nil {
		rnd = make([]byte, RANDLen)
		if _, err := rand.Read(rnd); err != nil {
			return nil, err
		}
	}
	macA, _, err := m.F1(rnd, sqn, amf)
	if err != nil {
		return nil, err
	}
	res, ck, ik, ak, _, err := m.F2345(rnd)
	if err != nil {
		return nil, err
	}
	sqnXorAK := make([]byte, SQNLen)
	subtle.XORBytes(sqnXorAK, sqn, ak)
	autn := append(append(clone(sqnXorAK), amf...), macA...)
	return &AuthVector{
		RAND: clone(rnd), AUTN: autn, XRES: res, CK: ck, IK: ik,
		XRESStar: ResStar(ck, ik, servingNetworkName, rnd, res),
		KAUSF:    KAUSF(ck, ik, servingNetworkName, sqnXorAK),
	}, nil
}

// AKAResponse is what the USIM computes from a verified challenge.
type AKAResponse struct {
	RES, CK, IK []byte
	SQN         []byte // the network's SQN, for the UE's freshness check
	SQNXorAK    []byte // from AUTN, needed for KAUSF on the UE side
}

// VerifyAUTN is the USIM side of AKA (TS 33.102 6.3.3): it checks MAC-A and
// returns RES, CK, IK and the SQN for the caller's freshness check.
// A wrong MAC returns ErrMACFailure (the UE answers with 5GMM cause #20).
func VerifyAUTN(k, opc, rnd, autn []byte) (*AKAResponse, error) {
	if len(autn) != AUTNLen {
		return nil, fmt.Errorf("AUTN must be 16 bytes, got %d", len(autn))
	}
	m, err := NewMilenage(k, opc)
	if err != nil {
		return nil, err
	}
	res, ck, ik, ak, _, err := m.F2345(rnd)
	if err != nil {
		return nil, err
	}
	sqn := make([]byte, SQNLen)
	subtle.XORBytes(sqn, autn[0:6], ak)
	macA, _, err := m.F1(rnd, sqn, autn[6:8])
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(macA, autn[8:16]) != 1 {
		return nil, ErrMACFailure
	}
	return &AKAResponse{RES: res, CK: ck, IK: ik, SQN: sqn, SQNXorAK: clone(autn[0:6])}, nil
}

// resyncAMF is the dummy AMF of f1* in re-synchronisation (TS 33.102 6.3.3).
var resyncAMF = []byte{0, 0}

// BuildAUTS is the USIM's synchronisation failure answer: AUTS = SQN_MS xor
// AK* || MAC-S (TS 33.102 6.3.3).
func BuildAUTS(k, opc, rnd, sqnMS []byte) ([]byte, error) {
	m, err := NewMilenage(k, opc)
	if err != nil {
		return nil, err
	}
	_, _, _, _, akStar, err := m.F2345(rnd)
	if err != nil {
		return nil, err
	}
	_, macS, err := m.F1(rnd, sqnMS, resyncAMF)
	if err != nil {
		return nil, err
	}
	auts := make([]byte, SQNLen, AUTSLen)
	subtle.XORBytes(auts, sqnMS, akStar)
	return append(auts, macS...), nil
}

// SQNFromAUTS is the home network's side of re-synchronisation (TS 33.102
// 6.3.5): it verifies MAC-S and returns SQN_MS. A bad MAC-S returns ErrMACFailure.
func SQNFromAUTS(k, opc, rnd, auts []byte) ([]byte, error) {
	if len(auts) != AUTSLen {
		return nil, fmt.Errorf("AUTS must be 14 bytes, got %d", len(auts))
	}
	m, err := NewMilenage(k, opc)
	if err != nil {
		return nil, err
	}
	_, _, _, _, akStar, err := m.F2345(rnd)
	if err != nil {
		return nil, err
	}
	sqnMS := make([]byte, SQNLen)
	subtle.XORBytes(sqnMS, auts[0:6], akStar)
	_, macS, err := m.F1(rnd, sqnMS, resyncAMF)
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(macS, auts[6:14]) != 1 {
		return nil, ErrMACFailure
	}
	return sqnMS, nil
}
