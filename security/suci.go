package security

import (
	"crypto/ecdh"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
)

// Protection scheme identifiers, TS 33.501 C.1 / TS 24.501 9.11.3.4.
const (
	SchemeNull     = 0x0
	SchemeProfileA = 0x1 // ECIES, Curve25519
	SchemeProfileB = 0x2 // ECIES, secp256r1, compressed ephemeral key
)

// ErrSUCIMAC means the scheme output's MAC tag did not verify: the SUCI
// was corrupted or concealed with another home network public key. The
// UDM answers 403 (TS 29.503 6.3.3.2.3).
var ErrSUCIMAC = errors.New("SUCI: MAC tag mismatch")

// ErrUnknownHNKey means no configured home network key has the scheme and
// key identifier of the SUCI.
var ErrUnknownHNKey = errors.New("SUCI: no home network key with this scheme and identifier")

// HomeNetworkKey is one SUCI private key of the home network with its
// public key identifier (TS 23.003 2.2B, 0..255).
type HomeNetworkKey struct {
	ID      uint8
	Scheme  uint8 // SchemeProfileA or SchemeProfileB
	Private []byte
}

// PublicKey is the key UEs conceal with, as provisioned on the USIM: 32
// bytes for Profile A, a 33-byte compressed point for Profile B.
func (k HomeNetworkKey) PublicKey() ([]byte, error) {
	return PublicKeyFromPrivate(k.Scheme, k.Private)
}

// HomeNetworkKeys is the set of SUCI keys a UDM (SIDF) holds.
type HomeNetworkKeys []HomeNetworkKey

// Find returns the key for a SUCI's protection scheme and key identifier.
func (ks HomeNetworkKeys) Find(scheme, keyID uint8) (HomeNetworkKey, error) {
	for _, k := range ks {
		if k.Scheme == scheme && k.ID == keyID {
			return k, nil
		}
	}
	return HomeNetworkKey{}, fmt.Errorf("%w (scheme %d, key %d)", ErrUnknownHNKey, scheme, keyID)
}

// PublicKeyFromPrivate derives the home network public key from its
// private key, so configuration needs only the private key and the UDM can
// export the public one for USIMs.
func PublicKeyFromPrivate(scheme uint8, private []byte) ([]byte, error) {
	key, err := parsePrivateKey(scheme, private)
	if err != nil {
		return nil, err
	}
	return encodePublicKey(scheme, key.PublicKey()), nil
}

// GenerateHomeNetworkKey draws a fresh private key for the scheme.
func GenerateHomeNetworkKey(scheme uint8, keyID uint8) (HomeNetworkKey, error) {
	curve, err := curveFor(scheme)
	if err != nil {
		return HomeNetworkKey{}, err
	}
	key, err := curve.GenerateKey(rand.Reader)
	if err != nil {
		return HomeNetworkKey{}, fmt.Errorf("SUCI: %w", err)
	}
	return HomeNetworkKey{ID: keyID, Scheme: scheme, Private: key.Bytes()}, nil
}

// ConcealSUCI is the UE side: it conceals the MSIN digits under the home
// network public key and returns the scheme output (TS 33.501 C.3.2,
// 6.12.2). ephPrivate injects the ephemeral private key (tests); nil draws
// a fresh one, as every real concealment must. The null scheme returns
// the BCD MSIN itself.
func ConcealSUCI(scheme uint8, hnPublic []byte, msin string, ephPrivate []byte) ([]byte, error) {
	input, err := MSINToBCD(msin)
	if err != nil {
		return nil, err
	}
	if scheme == SchemeNull {
		return input, nil
	}
	return EncryptSchemeInput(scheme, hnPublic, input, ephPrivate)
}

// EncryptSchemeInput runs ECIES encryption on a scheme input: the output
// is ephemeral public key || ciphertext || MAC tag (TS 33.501 C.3.2).
func EncryptSchemeInput(scheme uint8, hnPublic, input, ephPrivate []byte) ([]byte, error) {
	curve, err := curveFor(scheme)
	if err != nil {
		return nil, err
	}
	eph, err := ephemeralKey(scheme, curve, ephPrivate)
	if err != nil {
		return nil, err
	}
	peer, err := parsePublicKey(scheme, hnPublic)
	if err != nil {
		return nil, fmt.Errorf("home network %w", err)
	}
	shared, err := eph.ECDH(peer)
	if err != nil {
		return nil, fmt.Errorf("SUCI: ECDH: %w", err)
	}
	ephPublic := encodePublicKey(scheme, eph.PublicKey())
	keys := deriveECIESKeys(shared, ephPublic)
	ciphertext, err := keys.crypt(input)
	if err != nil {
		return nil, err
	}
	return concat(ephPublic, ciphertext, keys.tag(ciphertext)), nil
}

// ephemeralKey parses an injected ephemeral private key or draws one.
func ephemeralKey(scheme uint8, curve ecdh.Curve, raw []byte) (*ecdh.PrivateKey, error) {
	if raw == nil {
		key, err := curve.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("SUCI: ephemeral key: %w", err)
		}
		return key, nil
	}
	return parsePrivateKey(scheme, raw)
}

// DeconcealSUCI is the home network side (SIDF, TS 33.501 6.12.2, C.3.3):
// it finds the key by scheme and key identifier, verifies the MAC tag
// before deciphering, and returns the MSIN digits. The null scheme output
// is the BCD MSIN. A wrong tag is ErrSUCIMAC.
func DeconcealSUCI(scheme, keyID uint8, schemeOutput []byte, keys HomeNetworkKeys) (msin string, err error) {
	input := schemeOutput
	if scheme != SchemeNull {
		key, err := keys.Find(scheme, keyID)
		if err != nil {
			return "", err
		}
		if input, err = DecryptSchemeOutput(key, schemeOutput); err != nil {
			return "", err
		}
	}
	return BCDToMSIN(input)
}

// DecryptSchemeOutput runs ECIES decryption (TS 33.501 C.3.3): split the
// output into ephemeral key, ciphertext and tag, derive the keys from the
// shared secret, check the tag, decipher.
func DecryptSchemeOutput(key HomeNetworkKey, schemeOutput []byte) ([]byte, error) {
	ephLen := ephemeralKeyLen(key.Scheme)
	if len(schemeOutput) < ephLen+1+eciesTagLen {
		return nil, fmt.Errorf("SUCI: scheme output of %d bytes is too short for scheme %d", len(schemeOutput), key.Scheme)
	}
	private, err := parsePrivateKey(key.Scheme, key.Private)
	if err != nil {
		return nil, err
	}
	ephPublic := schemeOutput[:ephLen]
	ciphertext := schemeOutput[ephLen : len(schemeOutput)-eciesTagLen]
	tag := schemeOutput[len(schemeOutput)-eciesTagLen:]
	peer, err := parsePublicKey(key.Scheme, ephPublic)
	if err != nil {
		return nil, fmt.Errorf("ephemeral %w", err)
	}
	shared, err := private.ECDH(peer)
	if err != nil {
		return nil, fmt.Errorf("SUCI: ECDH: %w", err)
	}
	keys := deriveECIESKeys(shared, ephPublic)
	if subtle.ConstantTimeCompare(keys.tag(ciphertext), tag) != 1 {
		return nil, ErrSUCIMAC
	}
	return keys.crypt(ciphertext)
}

// MSINToBCD encodes MSIN digits as the SUCI scheme input: two digits per
// octet, the first in the low nibble, an odd count filled with 0xF in the
// last high nibble (TS 24.501 9.11.3.4, TS 33.501 C.3.1).
func MSINToBCD(msin string) ([]byte, error) {
	if msin == "" {
		return nil, errors.New("MSIN: empty")
	}
	out := make([]byte, 0, (len(msin)+1)/2)
	for i := 0; i < len(msin); i += 2 {
		low, err := bcdDigit(msin, i)
		if err != nil {
			return nil, err
		}
		high := byte(0xF)
		if i+1 < len(msin) {
			if high, err = bcdDigit(msin, i+1); err != nil {
				return nil, err
			}
		}
		out = append(out, high<<4|low)
	}
	return out, nil
}

func bcdDigit(s string, i int) (byte, error) {
	if s[i] < '0' || s[i] > '9' {
		return 0, fmt.Errorf("MSIN %q: %q at %d is not a digit", s, s[i], i)
	}
	return s[i] - '0', nil
}

// BCDToMSIN decodes a scheme input (swapped-nibble BCD, 0xF filler only in
// the last high nibble) back to the MSIN digits.
func BCDToMSIN(bcd []byte) (string, error) {
	if len(bcd) == 0 {
		return "", errors.New("BCD MSIN: empty")
	}
	var s strings.Builder
	for i, octet := range bcd {
		low, high := octet&0x0F, octet>>4
		last := i == len(bcd)-1
		if low > 9 || high > 9 && !(high == 0xF && last) {
			return "", fmt.Errorf("BCD MSIN: octet %d (0x%02x) is not two digits", i, octet)
		}
		s.WriteByte('0' + low)
		if high != 0xF {
			s.WriteByte('0' + high)
		}
	}
	return s.String(), nil
}
