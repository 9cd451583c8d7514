package domain

import "testing"

func TestParseSUPI(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"imsi-208930000000001", true},
		{"imsi-208931", true},
		{"imsi-20893", false},
		{"imsi-2089300000000011", false},
		{"IMSI-208930000000001", false},
		{"nai-user@example.org", false},
		{"208930000000001", false},
		{"imsi-20893000000000x", false},
	} {
		s, err := ParseSUPI(c.in)
		if (err == nil) != c.ok {
			t.Errorf("ParseSUPI(%q) error %v, want ok=%v", c.in, err, c.ok)
		}
		if c.ok && (s.String() != c.in || s.IMSIDigits() != c.in[5:]) {
			t.Errorf("ParseSUPI(%q) = %q, digits %q", c.in, s, s.IMSIDigits())
		}
	}
}

// The MNC length, not the digits, splits an IMSI (TS 23.003 2.2).
func TestIMSISplitByMNCLength(t *testing.T) {
	s := SUPI("imsi-208930000000001")
	two, err := s.IMSI(2)
	if err != nil || two.PLMN != (PLMN{"208", "93"}) || two.MSIN != "0000000001" {
		t.Errorf("2-digit MNC split = %+v, %v", two, err)
	}
	three, err := s.IMSI(3)
	if err != nil || three.PLMN != (PLMN{"208", "930"}) || three.MSIN != "000000001" {
		t.Errorf("3-digit MNC split = %+v, %v", three, err)
	}
	if two.SUPI() != s || three.SUPI() != s || two.String() != "208930000000001" {
		t.Error("split does not give the SUPI back")
	}
	if _, err := s.IMSI(4); err == nil {
		t.Error("MNC length 4 accepted")
	}
	if i, err := IMSIOf("208930000000001", PLMN{"208", "93"}); err != nil || i.MSIN != "0000000001" {
		t.Errorf("IMSIOf home = %+v, %v", i, err)
	}
	if _, err := IMSIOf("001010000000001", PLMN{"208", "93"}); err == nil {
		t.Error("IMSIOf accepted an IMSI of another PLMN")
	}
	if err := (IMSI{PLMN{"208", "93"}, ""}).Validate(); err == nil {
		t.Error("IMSI without MSIN valid")
	}
	if err := (IMSI{PLMN{"208", "93"}, "00000000001"}).Validate(); err == nil {
		t.Error("16-digit IMSI valid")
	}
}
