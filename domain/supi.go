package domain

import (
	"fmt"
	"strings"
)

// IMSI is an IMSI split into its PLMN and MSIN (TS 23.003 2.2): MCC 3
// digits, MNC 2 or 3, MSIN the rest, 15 digits at most. The digits alone do
// not say where the MNC ends; the home network knows its MNC length, so the
// split takes it as an argument.
type IMSI struct {
	PLMN PLMN
	MSIN string
}

// maxIMSIDigits: an IMSI is not longer than 15 digits (TS 23.003 2.2).
const maxIMSIDigits = 15

// ParseIMSI splits the digits of an IMSI whose MNC has mncLen digits.
func ParseIMSI(digits string, mncLen int) (IMSI, error) {
	if mncLen != 2 && mncLen != 3 {
		return IMSI{}, fmt.Errorf("IMSI %q: MNC length %d, want 2 or 3 (TS 23.003 2.2)", digits, mncLen)
	}
	if !isDigits(digits) || len(digits) > maxIMSIDigits || len(digits) <= 3+mncLen {
		return IMSI{}, fmt.Errorf("IMSI %q: want MCC, MNC and MSIN, at most %d decimal digits (TS 23.003 2.2)", digits, maxIMSIDigits)
	}
	return IMSI{PLMN: PLMN{MCC: digits[:3], MNC: digits[3 : 3+mncLen]}, MSIN: digits[3+mncLen:]}, nil
}

// IMSIOf splits the digits of an IMSI of the home network home: its MNC
// length splits them, and an IMSI of another PLMN is an error.
func IMSIOf(digits string, home PLMN) (IMSI, error) {
	i, err := ParseIMSI(digits, len(home.MNC))
	if err != nil {
		return IMSI{}, err
	}
	if i.PLMN != home {
		return IMSI{}, fmt.Errorf("IMSI %s is not of PLMN %s", digits, home)
	}
	return i, nil
}

// Validate says why i is not an IMSI, or nil.
func (i IMSI) Validate() error {
	if err := i.PLMN.Validate(); err != nil {
		return fmt.Errorf("IMSI: %w", err)
	}
	_, err := ParseIMSI(i.String(), len(i.PLMN.MNC))
	return err
}

// String gives the IMSI's digits.
func (i IMSI) String() string { return i.PLMN.String() + i.MSIN }

// SUPI gives the IMSI-based SUPI "imsi-<digits>" (TS 23.003 2.2A).
func (i IMSI) SUPI() SUPI { return SUPI(imsiPrefix + i.String()) }

// SUPI is a subscription permanent identifier in its SBI form (TS 29.571
// 5.3.2 Supi). This core serves IMSI-based SUPIs, "imsi-<IMSI digits>"
// (TS 23.003 2.2A, 28.7.2). Equality is ==, and it is also the match.
type SUPI string

const imsiPrefix = "imsi-"

// ParseSUPI checks an IMSI-based SUPI: "imsi-" and an IMSI (CheckIMSI).
func ParseSUPI(s string) (SUPI, error) {
	digits, ok := strings.CutPrefix(s, imsiPrefix)
	if !ok {
		return "", fmt.Errorf("SUPI %q: want imsi-<IMSI digits> (TS 23.003 2.2A; other SUPI types are not served)", s)
	}
	if err := CheckIMSI(digits); err != nil {
		return "", fmt.Errorf("SUPI %q: %w", s, err)
	}
	return SUPI(s), nil
}

// CheckIMSI checks IMSI digits whose MNC length is not known: 6 to 15
// decimal digits, an MCC, an MNC of at least 2 and an MSIN of at least 1
// (TS 23.003 2.2).
func CheckIMSI(digits string) error {
	if !isDigits(digits) || len(digits) < 6 || len(digits) > maxIMSIDigits {
		return fmt.Errorf("IMSI %q: want 6 to %d decimal digits (TS 23.003 2.2)", digits, maxIMSIDigits)
	}
	return nil
}

// Validate says why s is not a SUPI this core serves, or nil.
func (s SUPI) Validate() error {
	_, err := ParseSUPI(string(s))
	return err
}

// String gives the SBI form.
func (s SUPI) String() string { return string(s) }

// IMSIDigits gives the IMSI of an IMSI-based SUPI, "" for any other string.
func (s SUPI) IMSIDigits() string {
	d, ok := strings.CutPrefix(string(s), imsiPrefix)
	if !ok {
		return ""
	}
	return d
}

// IMSI splits the SUPI's IMSI with an MNC of mncLen digits.
func (s SUPI) IMSI(mncLen int) (IMSI, error) {
	if err := s.Validate(); err != nil {
		return IMSI{}, err
	}
	return ParseIMSI(s.IMSIDigits(), mncLen)
}
