package security

import (
	"crypto/subtle"
	"errors"
	"fmt"

	nassec "github.com/free5gc/nas/security"
)

// Security header types of a 5GMM message, TS 24.501 9.3.1.
const (
	PlainNAS                         = 0x0
	IntegrityProtected               = 0x1
	IntegrityProtectedAndCiphered    = 0x2
	IntegrityProtectedNewContext     = 0x3 // Security Mode Command
	IntegrityProtectedCipheredNewCtx = 0x4 // Security Mode Complete
)

// EPD5GMM is the extended protocol discriminator of 5GMM (TS 24.007 11.2.3.1.1A).
const EPD5GMM = 0x7E

// Algorithm identities (TS 33.501 5.11.1.1, 5.11.1.2) this layer is tested
// with; the free5GC library also runs NEA1/NEA3 and NIA1/NIA3.
const (
	NEA0 = nassec.AlgCiphering128NEA0
	NEA2 = nassec.AlgCiphering128NEA2
	NIA0 = nassec.AlgIntegrity128NIA0
	NIA2 = nassec.AlgIntegrity128NIA2
)

// Direction is the DIRECTION input of the NAS algorithms (TS 33.501 D.2.1,
// D.3.1: 0 uplink, 1 downlink).
type Direction uint8

const (
	Uplink   Direction = 0
	Downlink Direction = 1
)

// bearer3GPP is the BEARER input for NAS over 3GPP access: the NAS
// connection identifier (TS 33.501 6.4.3.1), 1 for 3GPP access as UEs and
// deployed cores use it.
const bearer3GPP = nassec.Bearer3GPP

// A NAS COUNT is 24 bits, NAS overflow (16) || NAS SQN (8), used as a 32-bit
// algorithm input with 8 zero bits on top (TS 24.501 4.4.3.1).
const nasCountLimit = 1 << 24

// Layout of a security protected 5GMM message (TS 24.501 9.1.1): EPD,
// security header type, 4-byte MAC, 1-byte SQN, then the plain 5GMM
// message (itself at least EPD, header type and message type).
const (
	secHeaderLen  = 7
	minPlain5GMM  = 3
	macOffset     = 2
	sqnOffset     = 6
	messageOffset = 7
)

// Errors of NAS unprotection; the receiver discards such a message
// (TS 24.501 4.4.4.2, 4.4.4.3).
var (
	ErrNASMAC          = errors.New("NAS: integrity check failed")
	ErrNASReplay       = errors.New("NAS: replayed NAS COUNT")
	ErrNASNotProtected = errors.New("NAS: message is not security protected")
	ErrNASCountWrap    = errors.New("NAS: NAS COUNT would wrap; a new key is needed")
)

// SecuredNAS is a parsed security protected 5GMM message.
type SecuredNAS struct {
	HeaderType uint8
	MAC        [4]byte
	SQN        uint8
	Message    []byte // the plain 5GMM message, ciphered for header types 2 and 4
}

// Ciphered says whether the header type carries a ciphered message
// (TS 24.501 9.3.1).
func (s SecuredNAS) Ciphered() bool {
	return s.HeaderType == IntegrityProtectedAndCiphered || s.HeaderType == IntegrityProtectedCipheredNewCtx
}

// SecurityHeaderType reads the security header type of a 5GMM PDU (0 for a
// plain message).
func SecurityHeaderType(pdu []byte) (uint8, error) {
	if len(pdu) < 2 {
		return 0, fmt.Errorf("NAS: %d bytes is too short for a 5GMM header", len(pdu))
	}
	if pdu[0] != EPD5GMM {
		return 0, fmt.Errorf("NAS: EPD 0x%02x is not 5GMM", pdu[0])
	}
	// The high half octet is spare (TS 24.501 9.3.1).
	return pdu[1] & 0x0F, nil
}

// ParseSecuredNAS splits a security protected 5GMM message; it neither
// checks the MAC nor deciphers.
func ParseSecuredNAS(pdu []byte) (SecuredNAS, error) {
	sht, err := SecurityHeaderType(pdu)
	if err != nil {
		return SecuredNAS{}, err
	}
	if sht == PlainNAS {
		return SecuredNAS{}, ErrNASNotProtected
	}
	if sht > IntegrityProtectedCipheredNewCtx {
		return SecuredNAS{}, fmt.Errorf("NAS: security header type %d is reserved", sht)
	}
	if len(pdu) < secHeaderLen+minPlain5GMM {
		return SecuredNAS{}, fmt.Errorf("NAS: protected message of %d bytes is too short", len(pdu))
	}
	s := SecuredNAS{HeaderType: sht, SQN: pdu[sqnOffset], Message: pdu[messageOffset:]}
	copy(s.MAC[:], pdu[macOffset:sqnOffset])
	return s, nil
}

// ProtectNAS builds a security protected 5GMM message from a plain one
// with the sender's COUNT: cipher first (header types 2 and 4), then the
// MAC over SQN || message (TS 24.501 4.4.3.3, 4.4.5).
func ProtectNAS(keys NASKeys, count uint32, dir Direction, sht uint8, plain []byte) ([]byte, error) {
	if sht < IntegrityProtected || sht > IntegrityProtectedCipheredNewCtx {
		return nil, fmt.Errorf("NAS: cannot protect with security header type %d", sht)
	}
	if count >= nasCountLimit {
		return nil, ErrNASCountWrap
	}
	s := SecuredNAS{HeaderType: sht, SQN: uint8(count), Message: clone(plain)}
	if s.Ciphered() {
		if err := nasCipher(keys, count, bearer3GPP, dir, s.Message); err != nil {
			return nil, err
		}
	}
	mac, err := nasMAC(keys.IntAlg, keys.Int, count, bearer3GPP, dir, s.sqnAndMessage())
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, secHeaderLen+len(plain))
	out = append(out, EPD5GMM, sht)
	out = append(out, mac...)
	out = append(out, s.SQN)
	return append(out, s.Message...), nil
}

// UnprotectNAS verifies the MAC of a received message under the COUNT the
// receiver estimated (see ReceiveCount) and deciphers it when the header
// type says so. It does not check for replay: ReceiveCount.Accept does.
func UnprotectNAS(keys NASKeys, count uint32, dir Direction, s SecuredNAS) ([]byte, error) {
	want, err := nasMAC(keys.IntAlg, keys.Int, count, bearer3GPP, dir, s.sqnAndMessage())
	if err != nil {
		return nil, err
	}
	// NIA0 has no MAC (TS 33.501 D.1): its 32 bits are zero and not checked.
	if keys.IntAlg != NIA0 && subtle.ConstantTimeCompare(want, s.MAC[:]) != 1 {
		return nil, ErrNASMAC
	}
	plain := clone(s.Message)
	if s.Ciphered() {
		if err := nasCipher(keys, count, bearer3GPP, dir, plain); err != nil {
			return nil, err
		}
	}
	return plain, nil
}

// sqnAndMessage is the MAC input: SQN || (ciphered) message (TS 24.501 4.4.3.3).
func (s SecuredNAS) sqnAndMessage() []byte {
	return concat([]byte{s.SQN}, s.Message)
}

// nasMAC computes the 32-bit NAS-MAC; NIA0 gives zeros (TS 33.501 D.1).
func nasMAC(alg uint8, key [16]byte, count uint32, bearer uint8, dir Direction, msg []byte) ([]byte, error) {
	if alg == NIA0 {
		return make([]byte, 4), nil
	}
	mac, err := nassec.NASMacCalculate(alg, key, count, bearer, uint8(dir), msg)
	if err != nil {
		return nil, fmt.Errorf("NAS: integrity algorithm %d: %w", alg, err)
	}
	return mac, nil
}

// nasCipher enciphers or deciphers in place; NEA0 leaves data in clear.
func nasCipher(keys NASKeys, count uint32, bearer uint8, dir Direction, data []byte) error {
	if keys.EncAlg == NEA0 || len(data) == 0 {
		return nil
	}
	if err := nassec.NASEncrypt(keys.EncAlg, keys.Enc, count, bearer, uint8(dir), data); err != nil {
		return fmt.Errorf("NAS: ciphering algorithm %d: %w", keys.EncAlg, err)
	}
	return nil
}

// ReceiveCount tracks the NAS COUNT of one receive direction (the uplink
// COUNT at the AMF). The zero value expects COUNT 0 next, as after a new
// NAS security context (TS 33.501 6.4.3.1). Not safe for concurrent use.
type ReceiveCount struct {
	next uint32 // the lowest COUNT still acceptable
}

// NewReceiveCount resumes tracking at a stored COUNT (the next one expected).
func NewReceiveCount(next uint32) ReceiveCount { return ReceiveCount{next: next} }

// Estimate rebuilds the 24-bit COUNT from the 8-bit SQN of a received
// message: the NAS overflow of the last accepted COUNT, plus one when the
// SQN is below the last accepted SQN, i.e. has wrapped (TS 24.501 4.4.3.1).
func (r *ReceiveCount) Estimate(sqn uint8) uint32 {
	if r.next == 0 {
		return uint32(sqn)
	}
	last := r.next - 1
	overflow := last >> 8
	if uint32(sqn) < last&0xFF {
		overflow++
	}
	return overflow<<8 | uint32(sqn)
}

// Accept records a verified message's COUNT. A COUNT at or below the last
// accepted one is a replay (TS 33.501 6.4.3.2: a NAS COUNT is accepted
// only once); a COUNT past 24 bits means the key must change.
func (r *ReceiveCount) Accept(count uint32) error {
	if count < r.next {
		return ErrNASReplay
	}
	if count >= nasCountLimit {
		return ErrNASCountWrap
	}
	r.next = count + 1
	return nil
}

// Last is the COUNT of the last accepted message; ok is false before any.
func (r *ReceiveCount) Last() (count uint32, ok bool) {
	if r.next == 0 {
		return 0, false
	}
	return r.next - 1, true
}

// Next is the lowest COUNT that is still acceptable.
func (r *ReceiveCount) Next() uint32 { return r.next }
