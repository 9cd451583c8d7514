package domain

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/free5gc/aper"
	"github.com/free5gc/nas/nasType"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"
)

// NoSD is the SD value that means "no SD value associated with the SST"
// (TS 23.003 28.4.2): an S-NSSAI carrying it is the S-NSSAI without an SD.
const NoSD = "ffffff"

// SNSSAI is a network slice: an 8-bit SST and an optional 24-bit SD as 6 hex
// digits (TS 23.003 28.4.2, TS 29.571 5.4.4.2). Values made by NewSNSSAI,
// ParseSNSSAI and the From* conversions are canonical: SD lower case, and ""
// for both an absent SD and NoSD, so == compares them; Equal compares any two.
type SNSSAI struct {
	SST int    `yaml:"sst" json:"sst"`
	SD  string `yaml:"sd,omitempty" json:"sd,omitempty"`
}

// NewSNSSAI checks sst and sd and returns the canonical S-NSSAI.
func NewSNSSAI(sst int, sd string) (SNSSAI, error) {
	s := SNSSAI{SST: sst, SD: sd}
	if err := s.Validate(); err != nil {
		return SNSSAI{}, err
	}
	return s.canonical(), nil
}

// ParseSNSSAI reads the text form String writes: "1" (SST only) or
// "1/010203" (SST and SD), the form of the CLI and the provisioning API.
func ParseSNSSAI(v string) (SNSSAI, error) {
	sst, sd, hasSD := strings.Cut(v, "/")
	n, err := strconv.Atoi(sst)
	if err != nil || sst != strconv.Itoa(n) {
		return SNSSAI{}, fmt.Errorf("S-NSSAI %q: want SST or SST/SD, e.g. 1/010203, with SST a decimal number", v)
	}
	if hasSD && sd == "" {
		return SNSSAI{}, fmt.Errorf("S-NSSAI %q: SD after / is empty", v)
	}
	s, err := NewSNSSAI(n, sd)
	if err != nil {
		return SNSSAI{}, fmt.Errorf("S-NSSAI %q: %w", v, err)
	}
	return s, nil
}

// Validate says why s is not an S-NSSAI, or nil. NoSD is valid: it says
// "no SD" (TS 23.003 28.4.2).
func (s SNSSAI) Validate() error {
	if err := CheckSST(s.SST); err != nil {
		return err
	}
	return CheckSD(s.SD)
}

// CheckSST: the SST is one octet (TS 23.003 28.4.2).
func CheckSST(sst int) error {
	if sst < 0 || sst > 255 {
		return fmt.Errorf("SST %d: want 0..255 (TS 23.003 28.4.2)", sst)
	}
	return nil
}

// CheckSD: the SD is absent or 3 octets as 6 hex digits (TS 29.571 5.4.4.2).
func CheckSD(sd string) error {
	if sd == "" {
		return nil
	}
	if b, err := hex.DecodeString(sd); err != nil || len(b) != 3 {
		return fmt.Errorf("SD %q: want 6 hex digits (TS 29.571 5.4.4.2)", sd)
	}
	return nil
}

// HasSD says whether s carries an SD other than NoSD.
func (s SNSSAI) HasSD() bool { return s.canonical().SD != "" }

// String gives "1" or "1/010203", the form ParseSNSSAI reads.
func (s SNSSAI) String() string {
	if s.SD == "" {
		return strconv.Itoa(s.SST)
	}
	return fmt.Sprintf("%d/%s", s.SST, s.SD)
}

func (s SNSSAI) canonical() SNSSAI {
	s.SD = strings.ToLower(s.SD)
	if s.SD == NoSD {
		s.SD = ""
	}
	return s
}

// Equal is identity: same SST and same SD, where an absent SD and NoSD are
// the same "no SD" (TS 23.003 28.4.2) and hex case does not matter.
//
// It is also the match rule between plain S-NSSAIs: an S-NSSAI without an
// SD is a value of its own, not a wildcard for the SST (TS 23.501 5.15.2.1:
// an S-NSSAI is either a standardised SST alone or SST plus SD; TS 24.501
// 9.11.2.8 carries it as such), so a subscription to 1 does not allow
// 1/010203 and a request for 1 is not granted 1/010203. The only wildcard
// the specifications have is explicit, in an ExtSNSSAI (see ExtSNSSAI.Match).
func (s SNSSAI) Equal(t SNSSAI) bool {
	a, b := s.canonical(), t.canonical()
	return a.SST == b.SST && a.SD == b.SD
}

// ContainsSNSSAI says whether list holds an S-NSSAI Equal to s.
func ContainsSNSSAI(list []SNSSAI, s SNSSAI) bool {
	for _, x := range list {
		if x.Equal(s) {
			return true
		}
	}
	return false
}

// SameModelSNSSAI is Equal for two openapi Snssai values.
func SameModelSNSSAI(a, b models.Snssai) bool {
	return SNSSAI{SST: int(a.Sst), SD: a.Sd}.Equal(SNSSAI{SST: int(b.Sst), SD: b.Sd})
}

// ToModel gives the openapi Snssai (TS 29.571 5.4.4.2); "no SD" leaves sd out.
func (s SNSSAI) ToModel() models.Snssai {
	c := s.canonical()
	return models.Snssai{Sst: int32(c.SST), Sd: c.SD}
}

// SNSSAIFromModel checks an openapi Snssai and returns it canonical.
func SNSSAIFromModel(m models.Snssai) (SNSSAI, error) {
	return NewSNSSAI(int(m.Sst), m.Sd)
}

// SNSSAIsToModels converts a list with ToModel.
func SNSSAIsToModels(list []SNSSAI) []models.Snssai {
	out := make([]models.Snssai, len(list))
	for i, s := range list {
		out[i] = s.ToModel()
	}
	return out
}

// SNSSAIsFromModels converts a list with SNSSAIFromModel.
func SNSSAIsFromModels(list []models.Snssai) ([]SNSSAI, error) {
	out := make([]SNSSAI, len(list))
	for i, m := range list {
		s, err := SNSSAIFromModel(m)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// ToNAS gives the value octets of an S-NSSAI IE (TS 24.501 9.11.2.8): SST,
// and the 3-octet SD when there is one. Mapped HPLMN values are not sent by
// a home-network-only core.
func (s SNSSAI) ToNAS() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	c := s.canonical()
	out := []byte{byte(c.SST)}
	if c.SD == "" {
		return out, nil
	}
	sd, _ := hex.DecodeString(c.SD) // checked by Validate
	return append(out, sd...), nil
}

// SNSSAIFromNAS reads the value octets of an S-NSSAI IE (TS 24.501
// 9.11.2.8): 1 (SST), 2 (SST, mapped HPLMN SST), 4 (SST, SD), 5 (and mapped
// SST) or 8 (and mapped SD) octets; the mapped HPLMN values are ignored.
func SNSSAIFromNAS(b []byte) (SNSSAI, error) {
	switch len(b) {
	case 1, 2:
		return SNSSAI{SST: int(b[0])}, nil
	case 4, 5, 8:
		return SNSSAI{SST: int(b[0]), SD: hex.EncodeToString(b[1:4])}.canonical(), nil
	}
	return SNSSAI{}, fmt.Errorf("S-NSSAI of %d octets, want 1, 2, 4, 5 or 8 (TS 24.501 9.11.2.8)", len(b))
}

// ToNASType gives the free5GC nasType form of the S-NSSAI IE with iei.
func (s SNSSAI) ToNASType(iei uint8) (nasType.SNSSAI, error) {
	v, err := s.ToNAS()
	if err != nil {
		return nasType.SNSSAI{}, err
	}
	out := nasType.SNSSAI{Iei: iei, Len: uint8(len(v))}
	copy(out.Octet[:], v)
	return out, nil
}

// SNSSAIFromNASType reads the free5GC nasType form of an S-NSSAI IE.
func SNSSAIFromNASType(x nasType.SNSSAI) (SNSSAI, error) {
	if int(x.Len) > len(x.Octet) {
		return SNSSAI{}, fmt.Errorf("S-NSSAI of %d octets, want at most %d", x.Len, len(x.Octet))
	}
	return SNSSAIFromNAS(x.Octet[:x.Len])
}

// NSSAIToNAS gives the value part of an NSSAI IE (TS 24.501 9.11.3.37), as
// in Allowed, Configured and Requested NSSAI: length-prefixed S-NSSAIs.
func NSSAIToNAS(list []SNSSAI) ([]byte, error) {
	var out []byte
	for _, s := range list {
		v, err := s.ToNAS()
		if err != nil {
			return nil, err
		}
		out = append(out, byte(len(v)))
		out = append(out, v...)
	}
	return out, nil
}

// NSSAIFromNAS is the inverse of NSSAIToNAS.
func NSSAIFromNAS(b []byte) ([]SNSSAI, error) {
	var out []SNSSAI
	for len(b) > 0 {
		n := int(b[0])
		if 1+n > len(b) {
			return nil, fmt.Errorf("NSSAI: S-NSSAI length %d overruns %d octets", n, len(b)-1)
		}
		s, err := SNSSAIFromNAS(b[1 : 1+n])
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		b = b[1+n:]
	}
	return out, nil
}

// ToNGAP gives the NGAP S-NSSAI (TS 38.413 9.3.1.24); "no SD" leaves SD out.
func (s SNSSAI) ToNGAP() (ngapType.SNSSAI, error) {
	v, err := s.ToNAS()
	if err != nil {
		return ngapType.SNSSAI{}, err
	}
	out := ngapType.SNSSAI{SST: ngapType.SST{Value: aper.OctetString(v[:1])}}
	if len(v) == 4 {
		out.SD = &ngapType.SD{Value: aper.OctetString(v[1:4])}
	}
	return out, nil
}

// SNSSAIFromNGAP reads an NGAP S-NSSAI: a 1-octet SST and an optional
// 3-octet SD (TS 38.413 9.3.1.24).
func SNSSAIFromNGAP(x ngapType.SNSSAI) (SNSSAI, error) {
	if len(x.SST.Value) != 1 {
		return SNSSAI{}, fmt.Errorf("SST of %d octets, want 1", len(x.SST.Value))
	}
	s := SNSSAI{SST: int(x.SST.Value[0])}
	if x.SD != nil {
		if len(x.SD.Value) != 3 {
			return SNSSAI{}, fmt.Errorf("SD of %d octets, want 3", len(x.SD.Value))
		}
		s.SD = hex.EncodeToString(x.SD.Value)
	}
	return s.canonical(), nil
}
