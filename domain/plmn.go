package domain

import (
	"fmt"
	"strings"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"
)

// PLMN is a PLMN identity: a 3-digit MCC and a 2- or 3-digit MNC (TS 23.003
// 2.2, 12.1). Both stay digit strings: a leading zero and the MNC's length
// belong to the identity, so MNC "03" and "003" are two networks.
//
// Equality is ==, and it is also the only match: a PLMN identity has no
// wildcard (TS 23.003 12.1).
type PLMN struct {
	MCC string `yaml:"mcc" json:"mcc"`
	MNC string `yaml:"mnc" json:"mnc"`
}

// NewPLMN checks MCC and MNC and returns them as a PLMN.
func NewPLMN(mcc, mnc string) (PLMN, error) {
	p := PLMN{MCC: mcc, MNC: mnc}
	return p, p.Validate()
}

// ParsePLMN reads the "<MCC><MNC>" form the SBI uses in resource URIs (e.g.
// servingPlmnId, TS 29.505 5.2.2): 5 digits carry a 2-digit MNC, 6 digits a
// 3-digit one.
func ParsePLMN(s string) (PLMN, error) {
	if len(s) != 5 && len(s) != 6 {
		return PLMN{}, fmt.Errorf("PLMN %q: want MCC and MNC, 5 or 6 digits (TS 23.003 2.2)", s)
	}
	return NewPLMN(s[:3], s[3:])
}

// Validate says why p is not a PLMN identity, or nil.
func (p PLMN) Validate() error {
	if err := CheckMCC(p.MCC); err != nil {
		return err
	}
	return CheckMNC(p.MNC)
}

// CheckMCC: an MCC is 3 decimal digits (TS 23.003 2.2).
func CheckMCC(mcc string) error {
	if len(mcc) != 3 || !isDigits(mcc) {
		return fmt.Errorf("MCC %q: want 3 decimal digits (TS 23.003 2.2)", mcc)
	}
	return nil
}

// CheckMNC: an MNC is 2 or 3 decimal digits (TS 23.003 2.2).
func CheckMNC(mnc string) error {
	if (len(mnc) != 2 && len(mnc) != 3) || !isDigits(mnc) {
		return fmt.Errorf("MNC %q: want 2 or 3 decimal digits (TS 23.003 2.2)", mnc)
	}
	return nil
}

// String gives MCC followed by MNC, e.g. "20893", the form ParsePLMN reads.
func (p PLMN) String() string { return p.MCC + p.MNC }

// ToModel gives the openapi PlmnId (TS 29.571 5.4.4.3).
func (p PLMN) ToModel() models.PlmnId { return models.PlmnId{Mcc: p.MCC, Mnc: p.MNC} }

// ToModelNid gives the openapi PlmnIdNid without a NID (TS 29.571 5.4.4.28):
// a PLMN, not a stand-alone non-public network.
func (p PLMN) ToModelNid() models.PlmnIdNid { return models.PlmnIdNid{Mcc: p.MCC, Mnc: p.MNC} }

// PLMNFromModel reads an openapi PlmnId; a missing one is an error.
func PLMNFromModel(m *models.PlmnId) (PLMN, error) {
	if m == nil {
		return PLMN{}, fmt.Errorf("PLMN missing")
	}
	return NewPLMN(m.Mcc, m.Mnc)
}

// PLMNFromModelNid reads an openapi PlmnIdNid; a NID names a stand-alone
// non-public network (TS 23.501 5.30.2), which this core does not serve.
func PLMNFromModelNid(m *models.PlmnIdNid) (PLMN, error) {
	if m == nil {
		return PLMN{}, fmt.Errorf("PLMN missing")
	}
	if m.Nid != "" {
		return PLMN{}, fmt.Errorf("PLMN %s%s with NID %q: non-public networks are not served", m.Mcc, m.Mnc, m.Nid)
	}
	return NewPLMN(m.Mcc, m.Mnc)
}

// ToNAS packs p into the 3-octet BCD PLMN identity NAS and NGAP share
// (TS 24.008 10.5.1.13, TS 24.501 9.11.3.4, TS 38.413 9.3.3.5):
// MCC2|MCC1, MNC3|MCC3 (MNC3 = F for a 2-digit MNC), MNC2|MNC1.
func (p PLMN) ToNAS() ([3]byte, error) {
	var out [3]byte
	if err := p.Validate(); err != nil {
		return out, err
	}
	d := func(s string, i int) byte { return s[i] - '0' }
	mnc3 := byte(0xF)
	if len(p.MNC) == 3 {
		mnc3 = d(p.MNC, 2)
	}
	out[0] = d(p.MCC, 1)<<4 | d(p.MCC, 0)
	out[1] = mnc3<<4 | d(p.MCC, 2)
	out[2] = d(p.MNC, 1)<<4 | d(p.MNC, 0)
	return out, nil
}

// PLMNFromNAS is the inverse of ToNAS; it reads the first 3 octets of b.
func PLMNFromNAS(b []byte) (PLMN, error) {
	if len(b) < 3 {
		return PLMN{}, fmt.Errorf("PLMN identity of %d octets, want 3", len(b))
	}
	ds := []byte{b[0] & 0xF, b[0] >> 4, b[1] & 0xF, b[2] & 0xF, b[2] >> 4}
	for _, x := range ds {
		if x > 9 {
			return PLMN{}, fmt.Errorf("PLMN identity %x: digit %X is not BCD", b[:3], x)
		}
	}
	p := PLMN{MCC: string([]byte{'0' + ds[0], '0' + ds[1], '0' + ds[2]}), MNC: string([]byte{'0' + ds[3], '0' + ds[4]})}
	switch m3 := b[1] >> 4; {
	case m3 == 0xF:
	case m3 <= 9:
		p.MNC += string('0' + m3)
	default:
		return PLMN{}, fmt.Errorf("PLMN identity %x: MNC digit 3 is %X", b[:3], m3)
	}
	return p, nil
}

// ToNGAP gives the NGAP PLMN Identity (TS 38.413 9.3.3.5), the BCD of ToNAS.
func (p PLMN) ToNGAP() (ngapType.PLMNIdentity, error) {
	b, err := p.ToNAS()
	if err != nil {
		return ngapType.PLMNIdentity{}, err
	}
	return ngapType.PLMNIdentity{Value: aper.OctetString(b[:])}, nil
}

// PLMNFromNGAP reads an NGAP PLMN Identity, exactly 3 octets.
func PLMNFromNGAP(x ngapType.PLMNIdentity) (PLMN, error) {
	if len(x.Value) != 3 {
		return PLMN{}, fmt.Errorf("PLMN identity of %d octets, want 3", len(x.Value))
	}
	return PLMNFromNAS(x.Value)
}

// parsePLMNAnd reads "<MCC><MNC>-<local part>", the text form of the
// identifiers made of a PLMN and a part local to it (TAI, GUAMI), parsing
// the local part with parseLocal; on error both results are zero.
func parsePLMNAnd[T any](what, localForm, s string, parseLocal func(string) (T, error)) (PLMN, T, error) {
	var zero T
	plmn, local, ok := strings.Cut(s, "-")
	if !ok {
		return PLMN{}, zero, fmt.Errorf("%s %q: want <MCC><MNC>-%s", what, s, localForm)
	}
	p, err := ParsePLMN(plmn)
	if err != nil {
		return PLMN{}, zero, fmt.Errorf("%s %q: %w", what, s, err)
	}
	l, err := parseLocal(local)
	if err != nil {
		return PLMN{}, zero, fmt.Errorf("%s %q: %w", what, s, err)
	}
	return p, l, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
