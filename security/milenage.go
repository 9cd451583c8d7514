package security

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"fmt"
)

// Lengths of the AKA parameters, TS 33.102 6.3.7 and TS 35.206 2.
const (
	KeyLen  = 16 // K, OP, OPc, CK, IK
	RANDLen = 16
	SQNLen  = 6
	AMFLen  = 2
	MACLen  = 8 // MAC-A, MAC-S
	AUTNLen = SQNLen + AMFLen + MACLen
	AUTSLen = SQNLen + MACLen
)

// Milenage holds one subscriber's K and OPc and computes the functions
// f1, f1*, f2, f3, f4, f5 and f5* of TS 35.206 4.1.
type Milenage struct {
	block cipher.Block
	opc   [16]byte
}

// NewMilenage prepares the functions for key k and OPc (both 16 bytes).
func NewMilenage(k, opc []byte) (*Milenage, error) {
	if len(k) != KeyLen || len(opc) != KeyLen {
		return nil, fmt.Errorf("milenage: K and OPc must be 16 bytes, got %d and %d", len(k), len(opc))
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("milenage: %w", err)
	}
	m := &Milenage{block: block}
	copy(m.opc[:], opc)
	return m, nil
}

// DeriveOPc computes OPc = E_K(OP) xor OP (TS 35.206 4.1), so that
// subscriber records can hold either OP or OPc.
func DeriveOPc(k, op []byte) ([]byte, error) {
	if len(k) != KeyLen || len(op) != KeyLen {
		return nil, fmt.Errorf("milenage: K and OP must be 16 bytes, got %d and %d", len(k), len(op))
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("milenage: %w", err)
	}
	opc := make([]byte, KeyLen)
	block.Encrypt(opc, op)
	subtle.XORBytes(opc, opc, op)
	return opc, nil
}

// F1 returns MAC-A = f1 and MAC-S = f1* (TS 35.206 4.1: the two halves of
// OUT1). The network and the USIM call it with the AMF of AUTN; AUTS uses
// the dummy AMF 0x0000 (TS 33.102 6.3.3).
func (m *Milenage) F1(rnd, sqn, amf []byte) (macA, macS []byte, err error) {
	if len(rnd) != RANDLen || len(sqn) != SQNLen || len(amf) != AMFLen {
		return nil, nil, fmt.Errorf("milenage f1: want RAND 16, SQN 6, AMF 2 bytes, got %d, %d, %d",
			len(rnd), len(sqn), len(amf))
	}
	temp := m.temp(rnd)
	// IN1 = SQN || AMF || SQN || AMF.
	var in1 [16]byte
	copy(in1[0:6], sqn)
	copy(in1[6:8], amf)
	copy(in1[8:14], sqn)
	copy(in1[14:16], amf)
	// OUT1 = E_K(TEMP xor rot(IN1 xor OPc, r1) xor c1) xor OPc, r1 = 64, c1 = 0.
	out1 := m.out(in1, temp, 8, 0)
	return clone(out1[0:8]), clone(out1[8:16]), nil
}

// F2345 returns RES = f2, CK = f3, IK = f4, AK = f5 and AK* = f5*
// (TS 35.206 4.1: OUT2..OUT5 from TEMP with r2..r5 and c2..c5).
func (m *Milenage) F2345(rnd []byte) (res, ck, ik, ak, akStar []byte, err error) {
	if len(rnd) != RANDLen {
		return nil, nil, nil, nil, nil, fmt.Errorf("milenage: RAND must be 16 bytes, got %d", len(rnd))
	}
	temp := m.temp(rnd)
	var zero [16]byte
	out2 := m.out(temp, zero, 0, 1)  // r2 = 0, c2 = ...01
	out3 := m.out(temp, zero, 4, 2)  // r3 = 32, c3 = ...02
	out4 := m.out(temp, zero, 8, 4)  // r4 = 64, c4 = ...04
	out5 := m.out(temp, zero, 12, 8) // r5 = 96, c5 = ...08
	return clone(out2[8:16]), clone(out3[:]), clone(out4[:]), clone(out2[0:6]), clone(out5[0:6]), nil
}

// temp is TEMP = E_K(RAND xor OPc), the common input of all functions.
func (m *Milenage) temp(rnd []byte) [16]byte {
	var in, out [16]byte
	subtle.XORBytes(in[:], rnd, m.opc[:])
	m.block.Encrypt(out[:], in[:])
	return out
}

// out computes E_K(rot(x xor OPc, rBytes) xor add xor c) xor OPc, where c
// is the constant whose last byte is cLast (TS 35.206 4.1; the rotations
// r1..r5 are whole bytes). f1 adds TEMP after the rotation; f2..f5 rotate
// TEMP itself and add nothing.
func (m *Milenage) out(x, add [16]byte, rBytes int, cLast byte) [16]byte {
	var xored, rotated, result [16]byte
	subtle.XORBytes(xored[:], x[:], m.opc[:])
	for i := range rotated {
		rotated[i] = xored[(i+rBytes)%16]
	}
	subtle.XORBytes(rotated[:], rotated[:], add[:])
	rotated[15] ^= cLast
	m.block.Encrypt(result[:], rotated[:])
	subtle.XORBytes(result[:], result[:], m.opc[:])
	return result
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }
