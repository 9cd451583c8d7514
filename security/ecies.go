package security

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// ECIES parameters common to Profiles A and B (TS 33.501 C.3.4.1,
// C.3.4.2): ANSI X9.63 KDF with SHA-256, AES-128 in CTR mode, HMAC-SHA-256
// with the tag truncated to 64 bits.
const (
	eciesEncKeyLen = 16
	eciesICBLen    = 16
	eciesMACKeyLen = 32
	eciesTagLen    = 8
)

// Public key sizes as sent in the scheme output: X25519 keys are 32 bytes;
// Profile B uses compressed P-256 points (C.3.4.2: point compression true).
const (
	x25519KeyLen        = 32
	p256CompressedLen   = 33
	p256UncompressedLen = 65
)

// eciesKeys are the keys the X9.63 KDF derives from the ECDH shared secret.
type eciesKeys struct {
	encKey, icb, macKey []byte
}

// deriveECIESKeys runs the ANSI X9.63 KDF (SEC 1 3.6.1): SHA-256(Z ||
// counter || SharedInfo) for counter = 1, 2, ..., with SharedInfo the
// ephemeral public key as sent (TS 33.501 C.3.4.1), and splits the output
// into the encryption key, the ICB and the MAC key.
func deriveECIESKeys(shared, ephPublic []byte) eciesKeys {
	const need = eciesEncKeyLen + eciesICBLen + eciesMACKeyLen
	out := make([]byte, 0, need+sha256.Size)
	var counter [4]byte
	for i := uint32(1); len(out) < need; i++ {
		binary.BigEndian.PutUint32(counter[:], i)
		h := sha256.New()
		h.Write(shared)
		h.Write(counter[:])
		h.Write(ephPublic)
		out = h.Sum(out)
	}
	return eciesKeys{
		encKey: out[:eciesEncKeyLen],
		icb:    out[eciesEncKeyLen : eciesEncKeyLen+eciesICBLen],
		macKey: out[eciesEncKeyLen+eciesICBLen : need],
	}
}

// crypt is AES-128-CTR with the ICB as initial counter block; it both
// enciphers and deciphers.
func (k eciesKeys) crypt(in []byte) ([]byte, error) {
	block, err := aes.NewCipher(k.encKey)
	if err != nil {
		return nil, fmt.Errorf("SUCI: %w", err)
	}
	out := make([]byte, len(in))
	cipher.NewCTR(block, k.icb).XORKeyStream(out, in)
	return out, nil
}

// tag is HMAC-SHA-256 over the ciphertext, truncated to 8 bytes.
func (k eciesKeys) tag(ciphertext []byte) []byte {
	mac := hmac.New(sha256.New, k.macKey)
	mac.Write(ciphertext)
	return mac.Sum(nil)[:eciesTagLen]
}

// curveFor maps a protection scheme to its ECDH curve (TS 33.501 C.3.4).
func curveFor(scheme uint8) (ecdh.Curve, error) {
	switch scheme {
	case SchemeProfileA:
		return ecdh.X25519(), nil
	case SchemeProfileB:
		return ecdh.P256(), nil
	}
	return nil, fmt.Errorf("SUCI: protection scheme %d is not ECIES Profile A or B", scheme)
}

func parsePrivateKey(scheme uint8, raw []byte) (*ecdh.PrivateKey, error) {
	curve, err := curveFor(scheme)
	if err != nil {
		return nil, err
	}
	key, err := curve.NewPrivateKey(raw)
	if err != nil {
		return nil, fmt.Errorf("SUCI: private key for scheme %d: %w", scheme, err)
	}
	return key, nil
}

// parsePublicKey reads a public key in its scheme-output form: 32 bytes
// for X25519, a 33-byte compressed point for P-256.
func parsePublicKey(scheme uint8, raw []byte) (*ecdh.PublicKey, error) {
	curve, err := curveFor(scheme)
	if err != nil {
		return nil, err
	}
	if scheme == SchemeProfileB {
		if raw, err = decompressP256(raw); err != nil {
			return nil, err
		}
	}
	key, err := curve.NewPublicKey(raw)
	if err != nil {
		return nil, fmt.Errorf("SUCI: public key for scheme %d: %w", scheme, err)
	}
	return key, nil
}

// encodePublicKey gives a public key in its scheme-output form.
func encodePublicKey(scheme uint8, key *ecdh.PublicKey) []byte {
	raw := key.Bytes()
	if scheme == SchemeProfileB {
		return compressP256(raw)
	}
	return raw
}

// compressP256 turns the SEC 1 uncompressed point 0x04 || X || Y that
// crypto/ecdh produces into 0x02/0x03 || X, the prefix giving Y's parity
// (SEC 1 2.3.3).
func compressP256(uncompressed []byte) []byte {
	const coordLen = 32
	out := make([]byte, p256CompressedLen)
	out[0] = 0x02 | uncompressed[p256UncompressedLen-1]&1
	copy(out[1:], uncompressed[1:1+coordLen])
	return out
}

// decompressP256 recovers Y from a compressed point (SEC 1 2.3.4);
// elliptic.UnmarshalCompressed also checks that the point is on the curve.
func decompressP256(compressed []byte) ([]byte, error) {
	if len(compressed) != p256CompressedLen {
		return nil, fmt.Errorf("SUCI: Profile B public key must be a 33-byte compressed point, got %d bytes", len(compressed))
	}
	x, y := elliptic.UnmarshalCompressed(elliptic.P256(), compressed)
	if x == nil {
		return nil, errors.New("SUCI: Profile B public key is not a point on P-256")
	}
	out := make([]byte, p256UncompressedLen)
	out[0] = 0x04
	x.FillBytes(out[1:33])
	y.FillBytes(out[33:65])
	return out, nil
}

// ephemeralKeyLen is the length of the ephemeral public key that opens
// the scheme output.
func ephemeralKeyLen(scheme uint8) int {
	if scheme == SchemeProfileB {
		return p256CompressedLen
	}
	return x25519KeyLen
}
