package nasx

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/free5gc/openapi/models"
)

// EncodeSNSSAI gives the value octets of one S-NSSAI (TS 24.501 9.11.2.8):
// SST, and the 3-octet SD when present. Mapped HPLMN values are not used by a
// home-network-only core.
func EncodeSNSSAI(s models.Snssai) ([]byte, error) {
	if s.Sst < 0 || s.Sst > 255 {
		return nil, fmt.Errorf("S-NSSAI SST %d out of range", s.Sst)
	}
	if s.Sd == "" {
		return []byte{byte(s.Sst)}, nil
	}
	sd, err := hex.DecodeString(s.Sd)
	if err != nil || len(sd) != 3 {
		return nil, fmt.Errorf("S-NSSAI SD %q: want 6 hex digits", s.Sd)
	}
	return append([]byte{byte(s.Sst)}, sd...), nil
}

// DecodeSNSSAI decodes the value octets of one S-NSSAI (length 1, 2, 4, 5 or 8).
func DecodeSNSSAI(b []byte) (models.Snssai, error) {
	switch len(b) {
	case 1, 2: // SST [mapped HPLMN SST]
		return models.Snssai{Sst: int32(b[0])}, nil
	case 4, 5, 8: // SST SD [mapped SST [mapped SD]]
		return models.Snssai{Sst: int32(b[0]), Sd: hex.EncodeToString(b[1:4])}, nil
	}
	return models.Snssai{}, fmt.Errorf("S-NSSAI of %d octets", len(b))
}

// EncodeNSSAI gives the value part of an NSSAI IE (TS 24.501 9.11.3.37):
// length-prefixed S-NSSAIs, as in Allowed, Configured and Requested NSSAI.
func EncodeNSSAI(list []models.Snssai) ([]byte, error) {
	var out []byte
	for _, s := range list {
		v, err := EncodeSNSSAI(s)
		if err != nil {
			return nil, err
		}
		out = append(out, byte(len(v)))
		out = append(out, v...)
	}
	return out, nil
}

// DecodeNSSAI is the inverse of EncodeNSSAI.
func DecodeNSSAI(b []byte) ([]models.Snssai, error) {
	var out []models.Snssai
	for len(b) > 0 {
		n := int(b[0])
		if 1+n > len(b) {
			return nil, fmt.Errorf("NSSAI: S-NSSAI length %d overruns %d octets", n, len(b)-1)
		}
		s, err := DecodeSNSSAI(b[1 : 1+n])
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		b = b[1+n:]
	}
	return out, nil
}

// SameSNSSAI compares slices ignoring SD case.
func SameSNSSAI(a, b models.Snssai) bool {
	return a.Sst == b.Sst && strings.EqualFold(a.Sd, b.Sd)
}
