package ngapx

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
)

// PLMN gives the NGAP PLMN identity (TS 38.413 9.3.3.5), the same BCD as NAS.
func PLMN(mcc, mnc string) (ngapType.PLMNIdentity, error) {
	b, err := nasx.EncodePLMN(mcc, mnc)
	return ngapType.PLMNIdentity{Value: aper.OctetString(b[:])}, err
}

// DecodePLMN reads an NGAP PLMN identity.
func DecodePLMN(p ngapType.PLMNIdentity) (mcc, mnc string, err error) {
	if len(p.Value) != 3 {
		return "", "", fmt.Errorf("PLMN identity of %d octets", len(p.Value))
	}
	return nasx.DecodePLMN(p.Value)
}

// TAC gives the 3-octet TAC (TS 38.413 9.3.3.10).
func TAC(tac uint32) ngapType.TAC {
	return ngapType.TAC{Value: aper.OctetString{byte(tac >> 16), byte(tac >> 8), byte(tac)}}
}

// DecodeTAC reads a TAC.
func DecodeTAC(t ngapType.TAC) (uint32, error) {
	if len(t.Value) != 3 {
		return 0, fmt.Errorf("TAC of %d octets", len(t.Value))
	}
	return uint32(t.Value[0])<<16 | uint32(t.Value[1])<<8 | uint32(t.Value[2]), nil
}

// ParseTACString reads the config's 6-hex-digit TAC.
func ParseTACString(s string) (uint32, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 3 {
		return 0, fmt.Errorf("TAC %q: want 6 hex digits", s)
	}
	return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]), nil
}

// TAI gives an NGAP TAI.
func TAI(t nasx.TAI) (ngapType.TAI, error) {
	p, err := PLMN(t.MCC, t.MNC)
	return ngapType.TAI{PLMNIdentity: p, TAC: TAC(t.TAC)}, err
}

// DecodeTAI reads an NGAP TAI.
func DecodeTAI(t ngapType.TAI) (nasx.TAI, error) {
	mcc, mnc, err := DecodePLMN(t.PLMNIdentity)
	if err != nil {
		return nasx.TAI{}, err
	}
	tac, err := DecodeTAC(t.TAC)
	return nasx.TAI{MCC: mcc, MNC: mnc, TAC: tac}, err
}

// SNSSAI gives an NGAP S-NSSAI (TS 38.413 9.3.1.24).
func SNSSAI(s models.Snssai) (ngapType.SNSSAI, error) {
	if s.Sst < 0 || s.Sst > 255 {
		return ngapType.SNSSAI{}, fmt.Errorf("SST %d out of range", s.Sst)
	}
	out := ngapType.SNSSAI{SST: ngapType.SST{Value: aper.OctetString{byte(s.Sst)}}}
	if s.Sd != "" {
		sd, err := hex.DecodeString(s.Sd)
		if err != nil || len(sd) != 3 {
			return out, fmt.Errorf("SD %q: want 6 hex digits", s.Sd)
		}
		out.SD = &ngapType.SD{Value: sd}
	}
	return out, nil
}

// DecodeSNSSAI reads an NGAP S-NSSAI.
func DecodeSNSSAI(s ngapType.SNSSAI) (models.Snssai, error) {
	if len(s.SST.Value) != 1 {
		return models.Snssai{}, fmt.Errorf("SST of %d octets", len(s.SST.Value))
	}
	out := models.Snssai{Sst: int32(s.SST.Value[0])}
	if s.SD != nil {
		if len(s.SD.Value) != 3 {
			return out, fmt.Errorf("SD of %d octets", len(s.SD.Value))
		}
		out.Sd = hex.EncodeToString(s.SD.Value)
	}
	return out, nil
}

// GUAMI is PLMN plus AMF identifier (TS 23.003 2.10.1).
type GUAMI struct {
	MCC, MNC string
	RegionID uint8
	SetID    uint16 // 10 bits
	Pointer  uint8  // 6 bits
}

// ToNGAP gives the NGAP GUAMI (TS 38.413 9.3.3.3).
func (g GUAMI) ToNGAP() (ngapType.GUAMI, error) {
	p, err := PLMN(g.MCC, g.MNC)
	return ngapType.GUAMI{
		PLMNIdentity: p,
		AMFRegionID:  ngapType.AMFRegionID{Value: aper.BitString{Bytes: []byte{g.RegionID}, BitLength: 8}},
		AMFSetID:     ngapType.AMFSetID{Value: aper.BitString{Bytes: []byte{byte(g.SetID >> 2), byte(g.SetID << 6)}, BitLength: 10}},
		AMFPointer:   ngapType.AMFPointer{Value: aper.BitString{Bytes: []byte{g.Pointer << 2}, BitLength: 6}},
	}, err
}

// Model gives the openapi GUAMI (TS 29.571 5.4.4.3).
func (g GUAMI) Model() models.Guami {
	return models.Guami{PlmnId: &models.PlmnIdNid{Mcc: g.MCC, Mnc: g.MNC},
		AmfId: nasx.GUAMIString(g.RegionID, g.SetID, g.Pointer)}
}

// DecodeFiveGSTMSI reads the 5G-S-TMSI of an Initial UE Message (TS 38.413 9.3.3.20).
func DecodeFiveGSTMSI(s ngapType.FiveGSTMSI) (nasx.STMSI, error) {
	set, ptr, tmsi := s.AMFSetID.Value, s.AMFPointer.Value, s.FiveGTMSI.Value
	if set.BitLength != 10 || len(set.Bytes) < 2 || ptr.BitLength != 6 || len(ptr.Bytes) < 1 || len(tmsi) != 4 {
		return nasx.STMSI{}, fmt.Errorf("5G-S-TMSI malformed")
	}
	return nasx.STMSI{SetID: uint16(set.Bytes[0])<<2 | uint16(set.Bytes[1]>>6), Pointer: ptr.Bytes[0] >> 2,
		TMSI: binary.BigEndian.Uint32(tmsi)}, nil
}

// FiveGSTMSI gives the NGAP 5G-S-TMSI.
func FiveGSTMSI(s nasx.STMSI) ngapType.FiveGSTMSI {
	t := make([]byte, 4)
	binary.BigEndian.PutUint32(t, s.TMSI)
	return ngapType.FiveGSTMSI{
		AMFSetID:   ngapType.AMFSetID{Value: aper.BitString{Bytes: []byte{byte(s.SetID >> 2), byte(s.SetID << 6)}, BitLength: 10}},
		AMFPointer: ngapType.AMFPointer{Value: aper.BitString{Bytes: []byte{s.Pointer << 2}, BitLength: 6}},
		FiveGTMSI:  ngapType.FiveGTMSI{Value: t},
	}
}

// Cause constructors (TS 38.413 9.3.1.2).
func CauseMisc(v aper.Enumerated) ngapType.Cause {
	return ngapType.Cause{Present: ngapType.CausePresentMisc, Misc: &ngapType.CauseMisc{Value: v}}
}

// CauseProtocol is a protocol cause, e.g. transfer-syntax-error.
func CauseProtocol(v aper.Enumerated) ngapType.Cause {
	return ngapType.Cause{Present: ngapType.CausePresentProtocol, Protocol: &ngapType.CauseProtocol{Value: v}}
}

// CauseNas is a NAS cause, e.g. deregister.
func CauseNas(v aper.Enumerated) ngapType.Cause {
	return ngapType.Cause{Present: ngapType.CausePresentNas, Nas: &ngapType.CauseNas{Value: v}}
}

// CauseRadioNetwork is a radio network layer cause.
func CauseRadioNetwork(v aper.Enumerated) ngapType.Cause {
	return ngapType.Cause{Present: ngapType.CausePresentRadioNetwork, RadioNetwork: &ngapType.CauseRadioNetwork{Value: v}}
}

// CauseString renders a cause for logs.
func CauseString(c *ngapType.Cause) string {
	if c == nil {
		return "none"
	}
	switch c.Present {
	case ngapType.CausePresentRadioNetwork:
		if c.RadioNetwork != nil {
			return fmt.Sprintf("radioNetwork(%d)", c.RadioNetwork.Value)
		}
	case ngapType.CausePresentTransport:
		if c.Transport != nil {
			return fmt.Sprintf("transport(%d)", c.Transport.Value)
		}
	case ngapType.CausePresentNas:
		if c.Nas != nil {
			return fmt.Sprintf("nas(%d)", c.Nas.Value)
		}
	case ngapType.CausePresentProtocol:
		if c.Protocol != nil {
			return fmt.Sprintf("protocol(%d)", c.Protocol.Value)
		}
	case ngapType.CausePresentMisc:
		if c.Misc != nil {
			return fmt.Sprintf("misc(%d)", c.Misc.Value)
		}
	}
	return "unknown"
}
