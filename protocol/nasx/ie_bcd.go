package nasx

import "fmt"

// BCD digit strings of the mobile identities (SUCI routing indicator and
// MSIN, IMEI): TS 24.008 10.5.1.4, TS 24.501 9.11.3.4. PLMN identities are
// BCD too, but domain.PLMN packs those.

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
