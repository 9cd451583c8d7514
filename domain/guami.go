package domain

import (
	"encoding/hex"
	"fmt"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"
)

// AMFID is the AMF identifier inside a GUAMI: AMF Region ID (8 bits), AMF
// Set ID (10 bits) and AMF Pointer (6 bits) (TS 23.003 2.10.1).
type AMFID struct {
	RegionID uint8
	SetID    uint16
	Pointer  uint8
}

// NewAMFID checks the three parts, given as ints as a config holds them.
func NewAMFID(region, set, pointer int) (AMFID, error) {
	if region < 0 || region > 0xFF || set < 0 || set > 0x3FF || pointer < 0 || pointer > 0x3F {
		return AMFID{}, fmt.Errorf("AMF ID region %d, set %d, pointer %d: want 0..255, 0..1023, 0..63 (TS 23.003 2.10.1)", region, set, pointer)
	}
	return AMFID{RegionID: uint8(region), SetID: uint16(set), Pointer: uint8(pointer)}, nil
}

// ParseAMFID reads the 6 hex digits of the SBI's AmfId (TS 29.571 5.4.2).
func ParseAMFID(s string) (AMFID, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 3 {
		return AMFID{}, fmt.Errorf("AMF ID %q: want 6 hex digits (TS 29.571 5.4.2 AmfId)", s)
	}
	return AMFIDFromNAS(b)
}

// ToNAS gives the AMF ID's 3 octets as a 5G-GUTI carries them (TS 24.501
// figure 9.11.3.4.1) and AmfId spells them in hex: the region, then the set
// (10 bits) and the pointer (6 bits).
func (a AMFID) ToNAS() ([3]byte, error) {
	if err := a.Validate(); err != nil {
		return [3]byte{}, err
	}
	sp := a.SetID<<6 | uint16(a.Pointer)
	return [3]byte{a.RegionID, byte(sp >> 8), byte(sp)}, nil
}

// AMFIDFromNAS reads the 3 octets ToNAS gives.
func AMFIDFromNAS(b []byte) (AMFID, error) {
	if len(b) != 3 {
		return AMFID{}, fmt.Errorf("AMF ID of %d octets, want 3", len(b))
	}
	return AMFID{RegionID: b[0], SetID: uint16(b[1])<<2 | uint16(b[2]>>6), Pointer: b[2] & 0x3F}, nil
}

// Validate says why a does not fit its bit widths, or nil.
func (a AMFID) Validate() error {
	_, err := NewAMFID(int(a.RegionID), int(a.SetID), int(a.Pointer))
	return err
}

// String gives the 6 hex digits ParseAMFID reads.
func (a AMFID) String() string {
	return fmt.Sprintf("%02x%04x", a.RegionID, a.SetID<<6|uint16(a.Pointer&0x3F))
}

// RegionIDString gives the AMF Region ID as the SBI's AmfRegionId, 2 hex
// digits (TS 29.571 5.4.2), as an AMF's NRF profile lists it.
func (a AMFID) RegionIDString() string { return fmt.Sprintf("%02x", a.RegionID) }

// SetIDString gives the AMF Set ID as the SBI's AmfSetId, 3 hex digits
// (TS 29.571 5.4.2).
func (a AMFID) SetIDString() string { return fmt.Sprintf("%03x", a.SetID) }

// ngapSetID and ngapPointer are the NGAP bit strings of the AMF Set ID and
// AMF Pointer (TS 38.413 9.3.3.12, 9.3.3.19), left-aligned as APER wants.
func ngapSetID(set uint16) ngapType.AMFSetID {
	return ngapType.AMFSetID{Value: aper.BitString{Bytes: []byte{byte(set >> 2), byte(set << 6)}, BitLength: 10}}
}

func ngapPointer(p uint8) ngapType.AMFPointer {
	return ngapType.AMFPointer{Value: aper.BitString{Bytes: []byte{p << 2}, BitLength: 6}}
}

// SetIDFromNGAP reads an NGAP AMF Set ID, 10 bits.
func SetIDFromNGAP(x ngapType.AMFSetID) (uint16, error) {
	if x.Value.BitLength != 10 || len(x.Value.Bytes) != 2 {
		return 0, fmt.Errorf("AMF Set ID of %d bits, want 10", x.Value.BitLength)
	}
	return uint16(x.Value.Bytes[0])<<2 | uint16(x.Value.Bytes[1]>>6), nil
}

// PointerFromNGAP reads an NGAP AMF Pointer, 6 bits.
func PointerFromNGAP(x ngapType.AMFPointer) (uint8, error) {
	if x.Value.BitLength != 6 || len(x.Value.Bytes) != 1 {
		return 0, fmt.Errorf("AMF Pointer of %d bits, want 6", x.Value.BitLength)
	}
	return x.Value.Bytes[0] >> 2, nil
}

// GUAMI is the globally unique AMF identifier: PLMN and AMF ID (TS 23.003
// 2.10.1). Equality is ==; it is also the match (a GUAMI has no wildcard).
type GUAMI struct {
	PLMN  PLMN
	AMFID AMFID
}

// ParseGUAMI reads "<MCC><MNC>-<AMF ID>", the form String writes, e.g. "20893-cafe00".
func ParseGUAMI(s string) (GUAMI, error) {
	p, a, err := parsePLMNAnd("GUAMI", "<AMF ID>, e.g. 20893-cafe00", s, ParseAMFID)
	return GUAMI{PLMN: p, AMFID: a}, err
}

// String gives "<MCC><MNC>-<AMF ID>", the form ParseGUAMI reads.
func (g GUAMI) String() string { return g.PLMN.String() + "-" + g.AMFID.String() }

// Validate says why g is not a GUAMI, or nil.
func (g GUAMI) Validate() error {
	if err := g.PLMN.Validate(); err != nil {
		return err
	}
	return g.AMFID.Validate()
}

// ToNAS gives the 6 octets of the GUAMI inside a 5G-GUTI (TS 24.501
// figure 9.11.3.4.1): the BCD PLMN, then the AMF ID.
func (g GUAMI) ToNAS() ([]byte, error) {
	p, err := g.PLMN.ToNAS()
	if err != nil {
		return nil, err
	}
	a, err := g.AMFID.ToNAS()
	if err != nil {
		return nil, err
	}
	return append(p[:], a[:]...), nil
}

// GUAMIFromNAS reads the 6 octets ToNAS gives.
func GUAMIFromNAS(b []byte) (GUAMI, error) {
	if len(b) != 6 {
		return GUAMI{}, fmt.Errorf("GUAMI of %d octets, want 6", len(b))
	}
	p, err := PLMNFromNAS(b[:3])
	if err != nil {
		return GUAMI{}, err
	}
	a, err := AMFIDFromNAS(b[3:])
	return GUAMI{PLMN: p, AMFID: a}, err
}

// ToModel gives the openapi Guami (TS 29.571 5.4.4.3).
func (g GUAMI) ToModel() models.Guami {
	p := g.PLMN.ToModelNid()
	return models.Guami{PlmnId: &p, AmfId: g.AMFID.String()}
}

// GUAMIFromModel reads an openapi Guami.
func GUAMIFromModel(m *models.Guami) (GUAMI, error) {
	if m == nil {
		return GUAMI{}, fmt.Errorf("GUAMI missing")
	}
	p, err := PLMNFromModelNid(m.PlmnId)
	if err != nil {
		return GUAMI{}, fmt.Errorf("GUAMI: %w", err)
	}
	a, err := ParseAMFID(m.AmfId)
	if err != nil {
		return GUAMI{}, fmt.Errorf("GUAMI: %w", err)
	}
	return GUAMI{PLMN: p, AMFID: a}, nil
}

// SameModelGUAMI is == for two openapi Guami values; AmfId hex case does
// not matter. Values that are no GUAMI are the same as nothing.
func SameModelGUAMI(a, b *models.Guami) bool {
	x, errA := GUAMIFromModel(a)
	y, errB := GUAMIFromModel(b)
	return errA == nil && errB == nil && x == y
}

// ToNGAP gives the NGAP GUAMI (TS 38.413 9.3.3.3).
func (g GUAMI) ToNGAP() (ngapType.GUAMI, error) {
	if err := g.AMFID.Validate(); err != nil {
		return ngapType.GUAMI{}, err
	}
	p, err := g.PLMN.ToNGAP()
	if err != nil {
		return ngapType.GUAMI{}, err
	}
	return ngapType.GUAMI{
		PLMNIdentity: p,
		AMFRegionID:  ngapType.AMFRegionID{Value: aper.BitString{Bytes: []byte{g.AMFID.RegionID}, BitLength: 8}},
		AMFSetID:     ngapSetID(g.AMFID.SetID),
		AMFPointer:   ngapPointer(g.AMFID.Pointer),
	}, nil
}

// GUAMIFromNGAP reads an NGAP GUAMI.
func GUAMIFromNGAP(x ngapType.GUAMI) (GUAMI, error) {
	p, err := PLMNFromNGAP(x.PLMNIdentity)
	if err != nil {
		return GUAMI{}, err
	}
	r := x.AMFRegionID.Value
	if r.BitLength != 8 || len(r.Bytes) != 1 {
		return GUAMI{}, fmt.Errorf("AMF Region ID of %d bits, want 8", r.BitLength)
	}
	set, err := SetIDFromNGAP(x.AMFSetID)
	if err != nil {
		return GUAMI{}, err
	}
	ptr, err := PointerFromNGAP(x.AMFPointer)
	if err != nil {
		return GUAMI{}, err
	}
	return GUAMI{PLMN: p, AMFID: AMFID{RegionID: r.Bytes[0], SetID: set, Pointer: ptr}}, nil
}

// ToNGAPSetPointer gives the AMF Set ID and AMF Pointer bit strings a
// 5G-S-TMSI carries (TS 38.413 9.3.3.20).
func (a AMFID) ToNGAPSetPointer() (ngapType.AMFSetID, ngapType.AMFPointer) {
	return ngapSetID(a.SetID), ngapPointer(a.Pointer)
}
