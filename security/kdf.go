package security

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// FC values of the TS 33.501 Annex A derivations.
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
	NASEncAlgDistinguisher = 0x01
	NASIntAlgDistinguisher = 0x02
)

// AccessType3GPP is the access type distinguisher of KgNB (TS 33.501 A.9).
const AccessType3GPP = 0x01

// KDF is the generic key derivation function of TS 33.220 B.2:
// HMAC-SHA-256(key, FC || P0 || L0 || P1 || L1 ...), where each Li is the
// two-byte length of Pi. Omitting the lengths yields wrong keys silently.
func KDF(key []byte, fc byte, params ...[]byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte{fc})
	var l [2]byte
	for _, p := range params {
		mac.Write(p)
		binary.BigEndian.PutUint16(l[:], uint16(len(p)))
		mac.Write(l[:])
	}
	return mac.Sum(nil)
}

// ServingNetworkName is the SN name of TS 24.501 9.12.1: a 2-digit MNC is
// padded with a leading zero.
func ServingNetworkName(mcc, mnc string) string {
	if len(mnc) == 2 {
		mnc = "0" + mnc
	}
	return fmt.Sprintf("5G:mnc%s.mcc%s.3gppnetwork.org", mnc, mcc)
}

// KAUSF derives KAUSF from CK||IK (TS 33.501 A.2).
func KAUSF(ck, ik []byte, snName string, sqnXorAK []byte) []byte {
	return KDF(concat(ck, ik), fcKAUSF, []byte(snName), sqnXorAK)
}

// ResStar derives RES* (UE) or XRES* (UDM): the 128 least significant bits
// of the KDF output (TS 33.501 A.4).
func ResStar(ck, ik []byte, snName string, rnd, res []byte) []byte {
	return KDF(concat(ck, ik), fcRESStar, []byte(snName), rnd, res)[16:]
}

// HResStar derives HRES*/HXRES*: the 128 least significant bits of
// SHA-256(RAND || RES*) (TS 33.501 A.5).
func HResStar(rnd, resStar []byte) []byte {
	sum := sha256.Sum256(concat(rnd, resStar))
	return clone(sum[16:])
}

// KSEAF derives the anchor key (TS 33.501 A.6).
func KSEAF(kausf []byte, snName string) []byte {
	return KDF(kausf, fcKSEAF, []byte(snName))
}

// KAMF derives KAMF from KSEAF (TS 33.501 A.7). supi is the SUPI value
// without its type prefix: the IMSI digits for an IMSI-based SUPI.
func KAMF(kseaf []byte, supi string, abba []byte) []byte {
	return KDF(kseaf, fcKAMF, []byte(supi), abba)
}

// NASKeys derives KNASenc and KNASint from KAMF for the chosen algorithm
// identities: the 128 least significant bits of each KDF output (TS 33.501 A.8).
func NASKeys(kamf []byte, encAlg, intAlg uint8) (knasEnc, knasInt [16]byte) {
	copy(knasEnc[:], KDF(kamf, fcAlgKey, []byte{NASEncAlgDistinguisher}, []byte{encAlg})[16:])
	copy(knasInt[:], KDF(kamf, fcAlgKey, []byte{NASIntAlgDistinguisher}, []byte{intAlg})[16:])
	return knasEnc, knasInt
}

// KgNB derives the key the AMF hands the gNB from the uplink NAS COUNT of
// the message that established the NAS security context (TS 33.501 A.9).
func KgNB(kamf []byte, ulNASCount uint32, accessType byte) []byte {
	var count [4]byte
	binary.BigEndian.PutUint32(count[:], ulNASCount)
	return KDF(kamf, fcKgNB, count[:], []byte{accessType})
}

func concat(a, b []byte) []byte {
	out := make([]byte, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}
