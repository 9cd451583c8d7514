package domain

import (
	"encoding/hex"
	"fmt"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"
)

// TAC is a 5GS tracking area code, 24 bits (TS 23.003 19.4.2.3, TS 38.413
// 9.3.3.10).
type TAC uint32

// MaxTAC is the largest 24-bit TAC.
const MaxTAC TAC = 0xFFFFFF

// ParseTAC reads a TAC as 6 hex digits, the form of the config and of the
// SBI's Tac for a 5GS TAC (TS 29.571 5.4.2).
func ParseTAC(s string) (TAC, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 3 {
		return 0, fmt.Errorf("want 6 hex digits for a 5GS TAC (TS 29.571 5.4.2), got %q", s)
	}
	return TAC(b[0])<<16 | TAC(b[1])<<8 | TAC(b[2]), nil
}

// Validate says why t does not fit 24 bits, or nil.
func (t TAC) Validate() error {
	if t > MaxTAC {
		return fmt.Errorf("TAC %x: wider than 24 bits (TS 23.003 19.4.2.3)", uint32(t))
	}
	return nil
}

// String gives the 6 hex digits ParseTAC reads.
func (t TAC) String() string { return fmt.Sprintf("%06x", uint32(t)) }

func (t TAC) octets() []byte { return []byte{byte(t >> 16), byte(t >> 8), byte(t)} }

// ToNGAP gives the NGAP TAC, 3 octets (TS 38.413 9.3.3.10).
func (t TAC) ToNGAP() (ngapType.TAC, error) {
	if err := t.Validate(); err != nil {
		return ngapType.TAC{}, err
	}
	return ngapType.TAC{Value: aper.OctetString(t.octets())}, nil
}

// TACFromNGAP reads an NGAP TAC, exactly 3 octets.
func TACFromNGAP(x ngapType.TAC) (TAC, error) {
	if len(x.Value) != 3 {
		return 0, fmt.Errorf("TAC of %d octets, want 3", len(x.Value))
	}
	return TAC(x.Value[0])<<16 | TAC(x.Value[1])<<8 | TAC(x.Value[2]), nil
}

// TAI is a tracking area identity: PLMN and TAC (TS 23.003 19.4.2.3).
// Equality is ==; it is also the match (a TAI has no wildcard).
type TAI struct {
	PLMN PLMN
	TAC  TAC
}

// ParseTAI reads "<MCC><MNC>-<TAC>", the form String writes, e.g. "20893-000001".
func ParseTAI(s string) (TAI, error) {
	p, t, err := parsePLMNAnd("TAI", "<TAC>, e.g. 20893-000001", s, ParseTAC)
	return TAI{PLMN: p, TAC: t}, err
}

// String gives "<MCC><MNC>-<TAC>", the form ParseTAI reads.
func (t TAI) String() string { return t.PLMN.String() + "-" + t.TAC.String() }

// Validate says why t is not a TAI, or nil.
func (t TAI) Validate() error {
	if err := t.PLMN.Validate(); err != nil {
		return err
	}
	return t.TAC.Validate()
}

// ToModel gives the openapi Tai (TS 29.571 5.4.4.4) with a 6-digit TAC.
func (t TAI) ToModel() models.Tai {
	p := t.PLMN.ToModel()
	return models.Tai{PlmnId: &p, Tac: t.TAC.String()}
}

// TAIFromModel reads an openapi Tai. A TAI with a NID belongs to a
// stand-alone non-public network, which this core does not serve.
func TAIFromModel(m *models.Tai) (TAI, error) {
	if m == nil {
		return TAI{}, fmt.Errorf("TAI missing")
	}
	if m.Nid != "" {
		return TAI{}, fmt.Errorf("TAI with NID %q: non-public networks are not served", m.Nid)
	}
	p, err := PLMNFromModel(m.PlmnId)
	if err != nil {
		return TAI{}, fmt.Errorf("TAI: %w", err)
	}
	tac, err := ParseTAC(m.Tac)
	if err != nil {
		return TAI{}, fmt.Errorf("TAI: %w", err)
	}
	return TAI{PLMN: p, TAC: tac}, nil
}

// ToNGAP gives the NGAP TAI (TS 38.413 9.3.3.11).
func (t TAI) ToNGAP() (ngapType.TAI, error) {
	p, err := t.PLMN.ToNGAP()
	if err != nil {
		return ngapType.TAI{}, err
	}
	tac, err := t.TAC.ToNGAP()
	return ngapType.TAI{PLMNIdentity: p, TAC: tac}, err
}

// TAIFromNGAP reads an NGAP TAI.
func TAIFromNGAP(x ngapType.TAI) (TAI, error) {
	p, err := PLMNFromNGAP(x.PLMNIdentity)
	if err != nil {
		return TAI{}, err
	}
	tac, err := TACFromNGAP(x.TAC)
	if err != nil {
		return TAI{}, err
	}
	return TAI{PLMN: p, TAC: tac}, nil
}

// ToNAS gives the 6 value octets of a 5GS tracking area identity IE
// (TS 24.501 9.11.3.8): the BCD PLMN, then the TAC.
func (t TAI) ToNAS() ([]byte, error) {
	p, err := t.PLMN.ToNAS()
	if err != nil {
		return nil, err
	}
	if err := t.TAC.Validate(); err != nil {
		return nil, err
	}
	return append(p[:], t.TAC.octets()...), nil
}

// TAIFromNAS reads the 6 value octets of a 5GS tracking area identity IE.
func TAIFromNAS(b []byte) (TAI, error) {
	if len(b) != 6 {
		return TAI{}, fmt.Errorf("5GS TAI of %d octets, want 6 (TS 24.501 9.11.3.8)", len(b))
	}
	p, err := PLMNFromNAS(b[:3])
	if err != nil {
		return TAI{}, err
	}
	return TAI{PLMN: p, TAC: TAC(b[3])<<16 | TAC(b[4])<<8 | TAC(b[5])}, nil
}

// TAIListToNAS gives the value part of a 5GS tracking area identity list
// (TS 24.501 9.11.3.9): one partial list of type 00 (TACs not consecutive)
// per PLMN, at most 16 TACs each, PLMNs in the order they first appear.
func TAIListToNAS(tais []TAI) ([]byte, error) {
	var out []byte
	for len(tais) > 0 {
		plmn := tais[0].PLMN
		var tacs []TAC
		rest := tais[:0:0]
		for _, t := range tais {
			if t.PLMN == plmn && len(tacs) < 16 {
				tacs = append(tacs, t.TAC)
			} else {
				rest = append(rest, t)
			}
		}
		p, err := plmn.ToNAS()
		if err != nil {
			return nil, err
		}
		out = append(out, byte(len(tacs)-1)) // type of list 00, number of elements - 1
		out = append(out, p[:]...)
		for _, tac := range tacs {
			if err := tac.Validate(); err != nil {
				return nil, err
			}
			out = append(out, tac.octets()...)
		}
		tais = rest
	}
	return out, nil
}

// TAIListFromNAS reads a 5GS tracking area identity list (TS 24.501
// 9.11.3.9) of any of its three partial list types: 00 (one PLMN, separate
// TACs), 01 (one PLMN, consecutive TACs from the first) and 10 (a TAI each).
func TAIListFromNAS(b []byte) ([]TAI, error) {
	var out []TAI
	for len(b) > 0 {
		kind, n := b[0]>>5&0x3, int(b[0]&0x1F)+1
		var err error
		var part []TAI
		switch kind {
		case 0:
			part, b, err = taisOneOfEach(b[1:], n)
		case 1:
			part, b, err = taisConsecutive(b[1:], n)
		case 2:
			part, b, err = taisEach(b[1:], n)
		default:
			err = fmt.Errorf("TAI list: partial list type %d is reserved (TS 24.501 9.11.3.9)", kind)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return out, nil
}

// taisOneOfEach reads a partial list of type 00: a PLMN and n TACs.
func taisOneOfEach(b []byte, n int) ([]TAI, []byte, error) {
	if len(b) < 3+3*n {
		return nil, nil, fmt.Errorf("TAI list: partial list of %d TACs overruns %d octets", n, len(b))
	}
	p, err := PLMNFromNAS(b)
	if err != nil {
		return nil, nil, err
	}
	out := make([]TAI, n)
	for i := range out {
		o := b[3+3*i:]
		out[i] = TAI{PLMN: p, TAC: TAC(o[0])<<16 | TAC(o[1])<<8 | TAC(o[2])}
	}
	return out, b[3+3*n:], nil
}

// taisConsecutive reads a partial list of type 01: a PLMN, a first TAC and
// the n-1 TACs after it.
func taisConsecutive(b []byte, n int) ([]TAI, []byte, error) {
	if len(b) < 6 {
		return nil, nil, fmt.Errorf("TAI list: consecutive partial list overruns %d octets", len(b))
	}
	first, err := TAIFromNAS(b[:6])
	if err != nil {
		return nil, nil, err
	}
	if first.TAC+TAC(n-1) > MaxTAC {
		return nil, nil, fmt.Errorf("TAI list: %d TACs from %s go past %s", n, first.TAC, MaxTAC)
	}
	out := make([]TAI, n)
	for i := range out {
		out[i] = TAI{PLMN: first.PLMN, TAC: first.TAC + TAC(i)}
	}
	return out, b[6:], nil
}

// taisEach reads a partial list of type 10: n whole TAIs.
func taisEach(b []byte, n int) ([]TAI, []byte, error) {
	if len(b) < 6*n {
		return nil, nil, fmt.Errorf("TAI list: partial list of %d TAIs overruns %d octets", n, len(b))
	}
	out := make([]TAI, n)
	for i := range out {
		t, err := TAIFromNAS(b[6*i : 6*i+6])
		if err != nil {
			return nil, nil, err
		}
		out[i] = t
	}
	return out, b[6*n:], nil
}
