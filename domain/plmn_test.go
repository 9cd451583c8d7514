package domain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/free5gc/openapi/models"
)

func TestParsePLMN(t *testing.T) {
	cases := []parseCase[PLMN]{
		{"20893", PLMN{"208", "93"}, ""},
		{"001001", PLMN{"001", "001"}, ""},
		{"2089", PLMN{}, "5 or 6 digits"},
		{"2089312", PLMN{}, "5 or 6 digits"},
		{"20a93", PLMN{}, "MCC"},
		{"208 9", PLMN{}, "MNC"},
		{"", PLMN{}, "5 or 6 digits"},
	}
	checkParse(t, "ParsePLMN", ParsePLMN, cases)
}

// A 2-digit and a 3-digit MNC with the same value are two networks.
func TestPLMNEqualityKeepsMNCLength(t *testing.T) {
	if (PLMN{"208", "93"}) == (PLMN{"208", "093"}) {
		t.Fatal("MNC 93 and 093 compare equal")
	}
}

// TS 24.008 10.5.1.13 / TS 38.413 9.3.3.5: 208/93 is 02 F8 39, 310/410 is 13 00 14.
func TestPLMNToNASAndBack(t *testing.T) {
	for _, c := range []struct {
		p    PLMN
		want []byte
	}{
		{PLMN{"208", "93"}, []byte{0x02, 0xF8, 0x39}},
		{PLMN{"310", "410"}, []byte{0x13, 0x00, 0x14}},
		{PLMN{"001", "01"}, []byte{0x00, 0xF1, 0x10}},
	} {
		b, err := c.p.ToNAS()
		if err != nil || !bytes.Equal(b[:], c.want) {
			t.Errorf("%s ToNAS = %x, %v; want %x", c.p, b, err, c.want)
		}
		back, err := PLMNFromNAS(b[:])
		if err != nil || back != c.p {
			t.Errorf("%x back = %+v, %v", b, back, err)
		}
		n, err := c.p.ToNGAP()
		if err != nil {
			t.Fatal(err)
		}
		if back, err := PLMNFromNGAP(n); err != nil || back != c.p {
			t.Errorf("%s NGAP round trip = %+v, %v", c.p, back, err)
		}
		m := c.p.ToModel()
		if back, err := PLMNFromModel(&m); err != nil || back != c.p {
			t.Errorf("%s model round trip = %+v, %v", c.p, back, err)
		}
		nid := c.p.ToModelNid()
		if back, err := PLMNFromModelNid(&nid); err != nil || back != c.p {
			t.Errorf("%s PlmnIdNid round trip = %+v, %v", c.p, back, err)
		}
	}
}

func TestPLMNRefusesBadForms(t *testing.T) {
	for name, err := range map[string]error{
		"non-BCD digit":      first(PLMNFromNAS([]byte{0x0A, 0xF8, 0x39})),
		"bad MNC digit 3":    first(PLMNFromNAS([]byte{0x02, 0xA8, 0x39})),
		"short octets":       first(PLMNFromNAS([]byte{0x02})),
		"4-digit MNC":        first(NewPLMN("208", "9393")),
		"nil model":          first(PLMNFromModel(nil)),
		"model with NID":     first(PLMNFromModelNid(&models.PlmnIdNid{Mcc: "208", Mnc: "93", Nid: "0123456789a"})),
		"ToNAS of a bad MCC": second(PLMN{"2O8", "93"}.ToNAS()),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func first[T any](_ T, err error) error  { return err }
func second[T any](_ T, err error) error { return err }

// parseCase is one input of a parser's table test: what it reads as, or
// words its error must contain.
type parseCase[T comparable] struct {
	in      string
	want    T
	wantErr string
}

// checkParse runs parse over cases; what it accepts must read back the same
// from its String form.
func checkParse[T interface {
	comparable
	String() string
}](t *testing.T, name string, parse func(string) (T, error), cases []parseCase[T]) {
	t.Helper()
	for _, c := range cases {
		got, err := parse(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s(%q) error %v, want one naming %q", name, c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s(%q) = %+v, %v; want %+v", name, c.in, got, err, c.want)
			continue
		}
		if back, err := parse(got.String()); err != nil || back != got {
			t.Errorf("%s(%q): String %q reads back as %+v, %v", name, c.in, got.String(), back, err)
		}
	}
}
