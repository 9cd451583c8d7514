package security

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"sync"

	nassec "github.com/free5gc/nas/security"
)

// Security header types of a 5GMM message, TS 24.501 9.3.1.
const (
	PlainNAS                         = 0
	IntegrityProtected               = 1
	IntegrityProtectedAndCiphered    = 2
	IntegrityProtectedNewContext     = 3 // Security Mode Command
	IntegrityProtectedCipheredNewCtx = 4 // Security Mode Complete
)

// EPD5GMM is the extended protocol discriminator of 5GMM, TS 24.007 11.2.3.1.1A.
const EPD5GMM = 0x7E

// nasBearer is the BEARER input of the NAS algorithms for 3GPP access. It is
// what deployed cores and UEs use (TS 33.501 6.4.3.1: the NAS connection
// identifier).
const nasBearer = nassec.Bearer3GPP

// Direction of a NAS message (TS 33.501 D.2: 0 uplink, 1 downlink).
type Direction uint8

const (
	Uplink   Direction = 0
	Downlink Direction = 1
)

// Errors of NAS unprotection; the receiver discards the message (TS 24.501 4.4.4.3).
var (
	ErrNASMAC     = errors.New("NAS: integrity check failed")
	ErrNASReplay  = errors.New("NAS: replayed COUNT")
	ErrNASNotProt = errors.New("NAS: message is not security protected")
)

// NASContext is one side's 5G NAS security context: keys, algorithms and
// the two COUNTs (TS 33.501 6.4.3). The AMF sends downlink and receives
// uplink; the UE the reverse. Safe for concurrent use.
type NASContext struct {
	EncAlg, IntAlg uint8
	knasEnc        [16]byte
	knasInt        [16]byte
	tx             Direction

	mu      sync.Mutex
	txCount uint32 // COUNT of the next message sent
	rxCount uint32 // COUNT of the last accepted message
	rxAny   bool   // whether any message was accepted yet
}

// NewNASContext derives the NAS keys from KAMF (TS 33.501 A.8) for the
// chosen algorithms; tx is the direction this side sends in.
func NewNASContext(kamf []byte, encAlg, intAlg uint8, tx Direction) *NASContext {
	enc, integ := NASKeys(kamf, encAlg, intAlg)
	return &NASContext{EncAlg: encAlg, IntAlg: intAlg, knasEnc: enc, knasInt: integ, tx: tx}
}

func (d Direction) other() Direction { return 1 - d }

// Protect wraps a plain 5GMM message with header type sht: ciphered for
// types 2 and 4, MAC over SQN || message (TS 24.501 4.4.3.3), with the next
// COUNT of this side.
func (c *NASContext) Protect(plain []byte, sht uint8) ([]byte, error) {
	if sht < IntegrityProtected || sht > IntegrityProtectedCipheredNewCtx {
		return nil, fmt.Errorf("NAS: cannot protect with security header type %d", sht)
	}
	c.mu.Lock()
	count := c.txCount
	c.txCount++
	c.mu.Unlock()

	body := make([]byte, 1+len(plain))
	body[0] = byte(count) // SQN: the 8 least significant bits of COUNT
	copy(body[1:], plain)
	if sht == IntegrityProtectedAndCiphered || sht == IntegrityProtectedCipheredNewCtx {
		if err := nassec.NASEncrypt(c.EncAlg, c.knasEnc, count, nasBearer, uint8(c.tx), body[1:]); err != nil {
			return nil, fmt.Errorf("NAS: cipher: %w", err)
		}
	}
	mac, err := nassec.NASMacCalculate(c.IntAlg, c.knasInt, count, nasBearer, uint8(c.tx), body)
	if err != nil {
		return nil, fmt.Errorf("NAS: MAC: %w", err)
	}
	out := make([]byte, 0, 6+len(body))
	out = append(out, EPD5GMM, sht)
	out = append(out, mac...)
	return append(out, body...), nil
}

// SecurityHeaderType reads the header type of a 5GMM PDU (0 for plain).
func SecurityHeaderType(pdu []byte) (uint8, error) {
	if len(pdu) < 3 {
		return 0, fmt.Errorf("NAS: %d bytes is too short", len(pdu))
	}
	if pdu[0] != EPD5GMM {
		return 0, fmt.Errorf("NAS: EPD 0x%02x is not 5GMM", pdu[0])
	}
	return pdu[1] & 0x0F, nil
}

// Unprotect verifies a received protected PDU against the estimated COUNT,
// rejects replays (TS 33.501 6.4.3.2: a COUNT is accepted once), deciphers
// when the header says so, and returns the plain 5GMM message.
func (c *NASContext) Unprotect(pdu []byte) (plain []byte, sht uint8, err error) {
	sht, err = SecurityHeaderType(pdu)
	if err != nil {
		return nil, 0, err
	}
	if sht == PlainNAS {
		return nil, 0, ErrNASNotProt
	}
	if sht > IntegrityProtectedCipheredNewCtx || len(pdu) < 8 {
		return nil, sht, fmt.Errorf("NAS: bad security header type %d or length %d", sht, len(pdu))
	}
	mac, body := pdu[2:6], pdu[6:]

	c.mu.Lock()
	defer c.mu.Unlock()
	count := c.estimateRx(body[0])
	if c.rxAny && count <= c.rxCount {
		return nil, sht, ErrNASReplay
	}
	want, err := nassec.NASMacCalculate(c.IntAlg, c.knasInt, count, nasBearer, uint8(c.tx.other()), body)
	if err != nil {
		return nil, sht, fmt.Errorf("NAS: MAC: %w", err)
	}
	if c.IntAlg != nassec.AlgIntegrity128NIA0 && subtle.ConstantTimeCompare(want, mac) != 1 {
		return nil, sht, ErrNASMAC
	}
	plain = clone(body[1:])
	if sht == IntegrityProtectedAndCiphered || sht == IntegrityProtectedCipheredNewCtx {
		if err := nassec.NASEncrypt(c.EncAlg, c.knasEnc, count, nasBearer, uint8(c.tx.other()), plain); err != nil {
			return nil, sht, fmt.Errorf("NAS: decipher: %w", err)
		}
	}
	c.rxCount, c.rxAny = count, true
	return plain, sht, nil
}

// estimateRx rebuilds the 24-bit COUNT from the received 8-bit SQN: the
// overflow counter advances when the SQN wraps (TS 24.501 4.4.3.1).
func (c *NASContext) estimateRx(sqn byte) uint32 {
	if !c.rxAny {
		return uint32(sqn)
	}
	overflow := c.rxCount >> 8
	if uint32(sqn) < c.rxCount&0xFF {
		overflow++
	}
	return overflow<<8 | uint32(sqn)
}

// LastRxCount is the COUNT of the last accepted received message (the
// uplink COUNT the AMF feeds into KgNB, TS 33.501 A.9).
func (c *NASContext) LastRxCount() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rxCount
}

// NextTxCount is the COUNT the next sent message will carry.
func (c *NASContext) NextTxCount() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.txCount
}
