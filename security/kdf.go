package security

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
)

// FC values of the TS 33.501 Annex A derivations (TS 33.220 Annex A.2 registry).
const (
	fcKAUSF   = 0x6A // A.2
	fcRESStar = 0x6B // A.4
	fcKSEAF   = 0x6C // A.6
	fcKAMF    = 0x6D // A.7
	fcAlgKey  = 0x69 // A.8
	fcKgNB    = 0x6E // A.9
)

// Algorithm type distinguishers, TS 33.501 A.8 Table A.8-1.
const (
	NASEncAlgDistinguisher = 0x01 // N-NAS-enc-alg
	NASIntAlgDistinguisher = 0x02 // N-NAS-int-alg
)

// Access type distinguishers of KgNB/KN3IWF, TS 33.501 A.9 Table A.9-1.
const (
	AccessType3GPP    = 0x01
	AccessTypeNon3GPP = 0x02
)

// Key lengths of the 5G hierarchy (TS 33.501 Annex A: 256-bit keys).
const (
	KAUSFLen = 32
	KSEAFLen = 32
	KAMFLen  = 32
)

// KDF is the generic key derivation function of TS 33.220 B.2:
// HMAC-SHA-256(key, FC || P0 || L0 || P1 || L1 ...), where each Li is the
// two-byte big-endian length of Pi. Omitting the lengths yields wrong keys
// without any error, which is why the test pins them.
func KDF(key []byte, fc byte, params ...[]byte) ([]byte, error) {
	for i, p := range params {
		if len(p) > 0xFFFF {
			return nil, fmt.Errorf("KDF: parameter P%d of %d bytes does not fit its 2-byte length", i, len(p))
		}
	}
	return kdf(key, fc, params...), nil
}

// kdf is KDF for parameters whose lengths the caller knows fit.
func kdf(key []byte, fc byte, params ...[]byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte{fc})
	var length [2]byte
	for _, p := range params {
		mac.Write(p)
		binary.BigEndian.PutUint16(length[:], uint16(len(p)))
		mac.Write(length[:])
	}
	return mac.Sum(nil)
}

// ServingNetworkName is the serving network name of TS 24.501 9.12.1 used
// by A.2, A.4 and A.6: "5G:mnc<MNC>.mcc<MCC>.3gppnetwork.org" with a
// 2-digit MNC padded by a leading zero.
func ServingNetworkName(mcc, mnc string) string {
	if len(mnc) == 2 {
		mnc = "0" + mnc
	}
	return "5G:mnc" + mnc + ".mcc" + mcc + ".3gppnetwork.org"
}

// Each Annex A key comes in two forms: DeriveX checks the input lengths
// and returns an error (use it on values received from a peer); X is the
// unchecked form for values this node produced itself, as the AMF and the
// UE simulator use it.

// KAUSF derives KAUSF from CK || IK (TS 33.501 A.2): P0 = serving network
// name, P1 = SQN xor AK.
func KAUSF(ck, ik []byte, servingNetworkName string, sqnXorAK []byte) []byte {
	return kdf(concat(ck, ik), fcKAUSF, []byte(servingNetworkName), sqnXorAK)
}

// DeriveKAUSF is KAUSF with CK, IK (16 bytes) and SQN xor AK (6) checked.
func DeriveKAUSF(ck, ik []byte, servingNetworkName string, sqnXorAK []byte) ([]byte, error) {
	if err := checkCKIK(ck, ik); err != nil {
		return nil, err
	}
	if len(sqnXorAK) != SQNLen {
		return nil, fmt.Errorf("KAUSF: SQN xor AK must be 6 bytes, got %d", len(sqnXorAK))
	}
	if err := checkName(servingNetworkName); err != nil {
		return nil, err
	}
	return KAUSF(ck, ik, servingNetworkName, sqnXorAK), nil
}

// ResStar derives RES* (UE) or XRES* (UDM) from CK || IK: P0 = serving
// network name, P1 = RAND, P2 = RES; the 128 least significant bits of the
// output (TS 33.501 A.4).
func ResStar(ck, ik []byte, servingNetworkName string, rnd, res []byte) []byte {
	return kdf(concat(ck, ik), fcRESStar, []byte(servingNetworkName), rnd, res)[16:]
}

// DeriveResStar is ResStar with CK, IK, RAND and RES (4..16 bytes, TS
// 33.102 6.3.7) checked.
func DeriveResStar(ck, ik []byte, servingNetworkName string, rnd, res []byte) ([]byte, error) {
	if err := checkCKIK(ck, ik); err != nil {
		return nil, err
	}
	if len(rnd) != RANDLen || len(res) < 4 || len(res) > 16 {
		return nil, fmt.Errorf("RES*: want RAND 16 and RES 4..16 bytes, got %d and %d", len(rnd), len(res))
	}
	if err := checkName(servingNetworkName); err != nil {
		return nil, err
	}
	return ResStar(ck, ik, servingNetworkName, rnd, res), nil
}

// HResStar derives HRES* (SEAF) or HXRES* (AUSF): the 128 least
// significant bits of SHA-256(RAND || RES*) (TS 33.501 A.5). A RES* of the
// wrong length just gives a value that matches no HXRES*.
func HResStar(rnd, resStar []byte) []byte {
	sum := sha256.Sum256(concat(rnd, resStar))
	return clone(sum[16:])
}

// DeriveHResStar is HResStar with RAND and RES* (16 bytes each) checked.
func DeriveHResStar(rnd, resStar []byte) ([]byte, error) {
	if len(rnd) != RANDLen || len(resStar) != 16 {
		return nil, fmt.Errorf("HRES*: want RAND 16 and RES* 16 bytes, got %d and %d", len(rnd), len(resStar))
	}
	return HResStar(rnd, resStar), nil
}

// KSEAF derives the anchor key from KAUSF: P0 = serving network name
// (TS 33.501 A.6).
func KSEAF(kausf []byte, servingNetworkName string) []byte {
	return kdf(kausf, fcKSEAF, []byte(servingNetworkName))
}

// DeriveKSEAF is KSEAF with KAUSF (32 bytes) checked.
func DeriveKSEAF(kausf []byte, servingNetworkName string) ([]byte, error) {
	if len(kausf) != KAUSFLen {
		return nil, fmt.Errorf("KSEAF: KAUSF must be 32 bytes, got %d", len(kausf))
	}
	if err := checkName(servingNetworkName); err != nil {
		return nil, err
	}
	return KSEAF(kausf, servingNetworkName), nil
}

// KAMF derives KAMF from KSEAF: P0 = SUPI, P1 = ABBA (TS 33.501 A.7). For
// an IMSI-based SUPI, P0 is the IMSI digits (A.7.0), so an "imsi-" prefix
// is dropped; other SUPI types are used as given.
func KAMF(kseaf []byte, supi string, abba []byte) []byte {
	return kdf(kseaf, fcKAMF, []byte(strings.TrimPrefix(supi, "imsi-")), abba)
}

// DeriveKAMF is KAMF with KSEAF (32 bytes), SUPI and ABBA (at least 2
// bytes, TS 24.501 9.11.3.10) checked.
func DeriveKAMF(kseaf []byte, supi string, abba []byte) ([]byte, error) {
	if len(kseaf) != KSEAFLen {
		return nil, fmt.Errorf("KAMF: KSEAF must be 32 bytes, got %d", len(kseaf))
	}
	if len(abba) < 2 || len(abba) > 0xFFFF {
		return nil, fmt.Errorf("KAMF: ABBA must be at least 2 bytes, got %d", len(abba))
	}
	if digits := strings.TrimPrefix(supi, "imsi-"); digits == "" || len(digits) > 0xFFFF {
		return nil, fmt.Errorf("KAMF: bad SUPI %q", supi)
	}
	return KAMF(kseaf, supi, abba), nil
}

// NASKeys is the key material of one NAS security context: the chosen
// algorithms (TS 33.501 5.11.1) and KNASenc/KNASint.
type NASKeys struct {
	EncAlg, IntAlg uint8
	Enc, Int       [16]byte
}

// NASKeysFromKAMF derives KNASenc and KNASint from KAMF: P0 = algorithm
// type distinguisher, P1 = algorithm identity; each key is the 128 least
// significant bits of the 256-bit output (TS 33.501 A.8).
func NASKeysFromKAMF(kamf []byte, encAlg, intAlg uint8) NASKeys {
	keys := NASKeys{EncAlg: encAlg, IntAlg: intAlg}
	copy(keys.Enc[:], kdf(kamf, fcAlgKey, []byte{NASEncAlgDistinguisher}, []byte{encAlg})[16:])
	copy(keys.Int[:], kdf(kamf, fcAlgKey, []byte{NASIntAlgDistinguisher}, []byte{intAlg})[16:])
	return keys
}

// DeriveNASKeys is NASKeysFromKAMF with KAMF (32 bytes) checked.
func DeriveNASKeys(kamf []byte, encAlg, intAlg uint8) (NASKeys, error) {
	if len(kamf) != KAMFLen {
		return NASKeys{}, fmt.Errorf("NAS keys: KAMF must be 32 bytes, got %d", len(kamf))
	}
	return NASKeysFromKAMF(kamf, encAlg, intAlg), nil
}

// KgNB derives KgNB from KAMF: P0 = the uplink NAS COUNT (4 bytes) of the
// message that activated the context, P1 = access type distinguisher
// (TS 33.501 A.9, 6.8.1.2.1).
func KgNB(kamf []byte, ulNASCount uint32, accessType uint8) []byte {
	var count [4]byte
	binary.BigEndian.PutUint32(count[:], ulNASCount)
	return kdf(kamf, fcKgNB, count[:], []byte{accessType})
}

// DeriveKgNB is KgNB with KAMF (32 bytes) checked.
func DeriveKgNB(kamf []byte, ulNASCount uint32, accessType uint8) ([]byte, error) {
	if len(kamf) != KAMFLen {
		return nil, fmt.Errorf("KgNB: KAMF must be 32 bytes, got %d", len(kamf))
	}
	return KgNB(kamf, ulNASCount, accessType), nil
}

func checkCKIK(ck, ik []byte) error {
	if len(ck) != KeyLen || len(ik) != KeyLen {
		return fmt.Errorf("CK and IK must be 16 bytes, got %d and %d", len(ck), len(ik))
	}
	return nil
}

// checkName rejects a serving network name too long for its 2-byte length.
func checkName(name string) error {
	if len(name) > 0xFFFF {
		return fmt.Errorf("serving network name of %d bytes is too long", len(name))
	}
	return nil
}
