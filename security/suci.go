package security

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Protection scheme identifiers, TS 33.501 C.1 / TS 24.501 9.11.3.4.
const (
	SchemeNull     = 0
	SchemeProfileA = 1 // ECIES, X25519
	SchemeProfileB = 2 // ECIES, P-256, compressed ephemeral key
)

// ECIES parameters of TS 33.501 C.3.4: AES-128-CTR, HMAC-SHA-256 with an
// 8-byte tag, ANSI X9.63 KDF with SHA-256.
const (
	encKeyLen = 16
	icbLen    = 16
	macKeyLen = 32
	macTagLen = 8
)

// ErrSUCIMAC means the scheme output's MAC tag did not verify: corrupted, or
// concealed with another home network public key.
var ErrSUCIMAC = errors.New("SUCI: MAC tag mismatch")

// HomeNetworkKey is one SUCI private key of the home network.
type HomeNetworkKey struct {
	ID      int // home network public key identifier
	Scheme  int // SchemeProfileA or SchemeProfileB
	Private []byte
}

// PublicKey returns the public key UEs conceal with: 32 bytes for Profile A,
// 33 bytes (compressed) for Profile B.
func (k HomeNetworkKey) PublicKey() ([]byte, error) {
	priv, err := privateKey(k.Scheme, k.Private)
	if err != nil {
		return nil, err
	}
	pub := priv.PublicKey().Bytes()
	if k.Scheme == SchemeProfileB {
		return compressP256(pub), nil
	}
	return pub, nil
}

func curve(scheme int) (ecdh.Curve, error) {
	switch scheme {
	case SchemeProfileA:
		return ecdh.X25519(), nil
	case SchemeProfileB:
		return ecdh.P256(), nil
	}
	return nil, fmt.Errorf("SUCI: protection scheme %d is not ECIES Profile A or B", scheme)
}

func privateKey(scheme int, raw []byte) (*ecdh.PrivateKey, error) {
	c, err := curve(scheme)
	if err != nil {
		return nil, err
	}
	k, err := c.NewPrivateKey(raw)
	if err != nil {
		return nil, fmt.Errorf("SUCI: home network private key: %w", err)
	}
	return k, nil
}

// publicKey parses a peer public key as sent in SUCI: Profile B keys are
// compressed points (TS 33.501 C.3.4.2) that crypto/ecdh wants uncompressed.
func publicKey(scheme int, raw []byte) (*ecdh.PublicKey, error) {
	c, err := curve(scheme)
	if err != nil {
		return nil, err
	}
	if scheme == SchemeProfileB {
		if len(raw) != 33 {
			return nil, fmt.Errorf("SUCI: Profile B public key must be 33 bytes (compressed), got %d", len(raw))
		}
		x, y := elliptic.UnmarshalCompressed(elliptic.P256(), raw)
		if x == nil {
			return nil, errors.New("SUCI: Profile B public key is not a point of P-256")
		}
		raw = elliptic.Marshal(elliptic.P256(), x, y) //nolint:staticcheck // only to re-encode a checked point
	}
	k, err := c.NewPublicKey(raw)
	if err != nil {
		return nil, fmt.Errorf("SUCI: public key: %w", err)
	}
	return k, nil
}

func compressP256(uncompressed []byte) []byte {
	x, y := elliptic.Unmarshal(elliptic.P256(), uncompressed) //nolint:staticcheck // encoding only
	return elliptic.MarshalCompressed(elliptic.P256(), x, y)
}

// eciesKeys derives the encryption key, ICB and MAC key from the shared
// secret with the ANSI X9.63 KDF, SharedInfo = the ephemeral public key as
// sent (TS 33.501 C.3.4.1/C.3.4.2).
func eciesKeys(shared, ephPub []byte) (encKey, icb, macKey []byte) {
	need := encKeyLen + icbLen + macKeyLen
	var out []byte
	for counter := uint32(1); len(out) < need; counter++ {
		h := sha256.New()
		h.Write(shared)
		_ = binary.Write(h, binary.BigEndian, counter)
		h.Write(ephPub)
		out = h.Sum(out)
	}
	return out[:encKeyLen], out[encKeyLen : encKeyLen+icbLen], out[encKeyLen+icbLen : need]
}

func aesCTR(key, icb, in []byte) []byte {
	b, _ := aes.NewCipher(key) // key length is fixed above
	out := make([]byte, len(in))
	cipher.NewCTR(b, icb).XORKeyStream(out, in)
	return out
}

func macTag(macKey, ciphertext []byte) []byte {
	m := hmac.New(sha256.New, macKey)
	m.Write(ciphertext)
	return m.Sum(nil)[:macTagLen]
}

// ConcealSUCI computes the scheme output for plaintext (the BCD MSIN) under
// the home network public key: ephemeral public key || ciphertext || MAC tag
// (TS 33.501 C.3.2). ephPriv may be nil for a fresh ephemeral key; tests pass
// the published one. The null scheme returns the plaintext.
func ConcealSUCI(scheme int, hnPub, plaintext, ephPriv []byte) ([]byte, error) {
	if scheme == SchemeNull {
		return clone(plaintext), nil
	}
	c, err := curve(scheme)
	if err != nil {
		return nil, err
	}
	var eph *ecdh.PrivateKey
	if ephPriv == nil {
		eph, err = c.GenerateKey(rand.Reader)
	} else {
		eph, err = c.NewPrivateKey(ephPriv)
	}
	if err != nil {
		return nil, fmt.Errorf("SUCI: ephemeral key: %w", err)
	}
	peer, err := publicKey(scheme, hnPub)
	if err != nil {
		return nil, err
	}
	shared, err := eph.ECDH(peer)
	if err != nil {
		return nil, fmt.Errorf("SUCI: ECDH: %w", err)
	}
	ephPub := eph.PublicKey().Bytes()
	if scheme == SchemeProfileB {
		ephPub = compressP256(ephPub)
	}
	encKey, icb, macKey := eciesKeys(shared, ephPub)
	ct := aesCTR(encKey, icb, plaintext)
	out := append(clone(ephPub), ct...)
	return append(out, macTag(macKey, ct)...), nil
}

// DeconcealSUCI recovers the plaintext (BCD MSIN) from a scheme output with
// the home network private key (TS 33.501 C.3.3). It checks the MAC tag
// before deciphering.
func DeconcealSUCI(key HomeNetworkKey, output []byte) ([]byte, error) {
	ephLen := 32
	if key.Scheme == SchemeProfileB {
		ephLen = 33
	}
	if len(output) < ephLen+macTagLen+1 {
		return nil, fmt.Errorf("SUCI: scheme output of %d bytes is too short for scheme %d", len(output), key.Scheme)
	}
	priv, err := privateKey(key.Scheme, key.Private)
	if err != nil {
		return nil, err
	}
	ephPub := output[:ephLen]
	peer, err := publicKey(key.Scheme, ephPub)
	if err != nil {
		return nil, err
	}
	shared, err := priv.ECDH(peer)
	if err != nil {
		return nil, fmt.Errorf("SUCI: ECDH: %w", err)
	}
	ct := output[ephLen : len(output)-macTagLen]
	tag := output[len(output)-macTagLen:]
	encKey, icb, macKey := eciesKeys(shared, ephPub)
	if subtle.ConstantTimeCompare(macTag(macKey, ct), tag) != 1 {
		return nil, ErrSUCIMAC
	}
	return aesCTR(encKey, icb, ct), nil
}

// MSINToBCD encodes MSIN digits as the SUCI scheme input: two digits per
// octet, the first in the low nibble, an odd count padded with 0xF
// (TS 24.501 9.11.3.4).
func MSINToBCD(msin string) ([]byte, error) {
	out := make([]byte, 0, (len(msin)+1)/2)
	for i := 0; i < len(msin); i += 2 {
		lo, ok := digit(msin[i])
		if !ok {
			return nil, fmt.Errorf("MSIN %q: not a digit at %d", msin, i)
		}
		hi := byte(0xF)
		if i+1 < len(msin) {
			if hi, ok = digit(msin[i+1]); !ok {
				return nil, fmt.Errorf("MSIN %q: not a digit at %d", msin, i+1)
			}
		}
		out = append(out, hi<<4|lo)
	}
	return out, nil
}

// BCDToMSIN decodes a scheme output plaintext back to digits.
func BCDToMSIN(b []byte) (string, error) {
	var s strings.Builder
	for i, o := range b {
		lo, hi := o&0x0F, o>>4
		if lo > 9 {
			return "", fmt.Errorf("BCD MSIN: bad digit %x in octet %d", lo, i)
		}
		s.WriteByte('0' + lo)
		if hi == 0xF {
			if i != len(b)-1 {
				return "", fmt.Errorf("BCD MSIN: filler before the last octet")
			}
			break
		}
		if hi > 9 {
			return "", fmt.Errorf("BCD MSIN: bad digit %x in octet %d", hi, i)
		}
		s.WriteByte('0' + hi)
	}
	return s.String(), nil
}

func digit(c byte) (byte, bool) {
	if c < '0' || c > '9' {
		return 0, false
	}
	return c - '0', true
}
