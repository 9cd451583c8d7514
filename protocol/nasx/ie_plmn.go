package nasx

import (
	"fmt"

	"github.com/free5gc/openapi/models"
)

// EncodePLMN packs MCC and MNC digits into the 3-octet BCD PLMN identity
// shared by NAS and NGAP (TS 24.501 9.11.3.4 / TS 24.008 10.5.1.13,
// TS 38.413 9.3.3.5): MCC2|MCC1, MNC3|MCC3 (MNC3 = F for 2 digits), MNC2|MNC1.
func EncodePLMN(mcc, mnc string) ([3]byte, error) {
	var out [3]byte
	if len(mcc) != 3 || (len(mnc) != 2 && len(mnc) != 3) || !digits(mcc) || !digits(mnc) {
		return out, fmt.Errorf("plmn %q/%q: MCC must be 3 digits and MNC 2 or 3", mcc, mnc)
	}
	d := func(s string, i int) byte { return s[i] - '0' }
	mnc3 := byte(0xF)
	if len(mnc) == 3 {
		mnc3 = d(mnc, 2)
	}
	out[0] = d(mcc, 1)<<4 | d(mcc, 0)
	out[1] = mnc3<<4 | d(mcc, 2)
	out[2] = d(mnc, 1)<<4 | d(mnc, 0)
	return out, nil
}

// DecodePLMN is the inverse of EncodePLMN.
func DecodePLMN(b []byte) (mcc, mnc string, err error) {
	if len(b) < 3 {
		return "", "", fmt.Errorf("plmn: %d octets, want 3", len(b))
	}
	ds := []byte{b[0] & 0xF, b[0] >> 4, b[1] & 0xF, b[2] & 0xF, b[2] >> 4}
	for _, x := range ds {
		if x > 9 {
			return "", "", fmt.Errorf("plmn %x: digit %X is not BCD", b[:3], x)
		}
	}
	mcc = string([]byte{'0' + ds[0], '0' + ds[1], '0' + ds[2]})
	mnc = string([]byte{'0' + ds[3], '0' + ds[4]})
	switch m3 := b[1] >> 4; {
	case m3 == 0xF:
	case m3 <= 9:
		mnc += string('0' + m3)
	default:
		return "", "", fmt.Errorf("plmn %x: MNC digit 3 is %X", b[:3], m3)
	}
	return mcc, mnc, nil
}

// PLMNModel decodes a BCD PLMN into the openapi model.
func PLMNModel(b []byte) (models.PlmnId, error) {
	mcc, mnc, err := DecodePLMN(b)
	return models.PlmnId{Mcc: mcc, Mnc: mnc}, err
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// bcdDigits decodes swapped-nibble BCD digits, stopping at an F filler.
func bcdDigits(b []byte) (string, error) {
	out := make([]byte, 0, 2*len(b))
	for _, x := range b {
		for _, n := range []byte{x & 0xF, x >> 4} {
			if n == 0xF {
				return string(out), nil
			}
			if n > 9 {
				return "", fmt.Errorf("BCD %x: nibble %X", b, n)
			}
			out = append(out, '0'+n)
		}
	}
	return string(out), nil
}

// encodeBCD packs digits as swapped-nibble BCD, filling an odd tail with F.
func encodeBCD(s string) ([]byte, error) {
	if !digits(s) {
		return nil, fmt.Errorf("BCD %q: not digits", s)
	}
	out := make([]byte, (len(s)+1)/2)
	for i := 0; i < len(s); i++ {
		n := s[i] - '0'
		if i%2 == 0 {
			out[i/2] = 0xF0 | n
		} else {
			out[i/2] = out[i/2]&0x0F | n<<4
		}
	}
	return out, nil
}

// TAI is a tracking area identity: PLMN and 24-bit TAC (TS 23.003 19.4.2.3).
type TAI struct {
	MCC, MNC string
	TAC      uint32
}

// EncodeTAIList gives the value part of a 5GS tracking area identity list
// (TS 24.501 9.11.3.9) as one partial list per PLMN of type 00 (TACs not
// consecutive), at most 16 TACs each.
func EncodeTAIList(tais []TAI) ([]byte, error) {
	var out []byte
	for len(tais) > 0 {
		plmn := tais[0]
		var tacs []uint32
		rest := tais[:0:0]
		for _, t := range tais {
			if t.MCC == plmn.MCC && t.MNC == plmn.MNC && len(tacs) < 16 {
				tacs = append(tacs, t.TAC)
			} else {
				rest = append(rest, t)
			}
		}
		p, err := EncodePLMN(plmn.MCC, plmn.MNC)
		if err != nil {
			return nil, err
		}
		out = append(out, byte(len(tacs)-1)) // type of list 00, number of elements - 1
		out = append(out, p[:]...)
		for _, tac := range tacs {
			out = append(out, byte(tac>>16), byte(tac>>8), byte(tac))
		}
		tais = rest
	}
	return out, nil
}
