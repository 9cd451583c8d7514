package config

import (
	"strings"
	"testing"
)

// PLMN and SNSSAI are the domain package's types: the file keeps its shape,
// a wrong shape still says what is wanted, and the domain's reasons name the
// file, line and field.
func TestDomainFieldsKeepTheirFileShape(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"scalar for the PLMN", "plmn: 5\n", `node.yaml:1: plmn: want a mapping, got "5"`},
		{"list for an S-NSSAI", "snssais:\n  - [1]\n", "node.yaml:2: snssais[0]: want a mapping, got a list"},
		{"MNC of 4 digits", "plmn: {mcc: \"208\", mnc: \"9300\"}\n", `node.yaml:1: plmn.mnc: MNC "9300": want 2 or 3 decimal digits (TS 23.003 2.2)`},
		{"MCC of letters", "plmn:\n  mcc: abc\n", `node.yaml:2: plmn.mcc: MCC "abc": want 3 decimal digits`},
		{"SST of 9 bits", "snssais: [{sst: 256}]\n", "node.yaml:1: snssais[0].sst: SST 256: want 0..255 (TS 23.003 28.4.2)"},
		{"SD of 4 digits", "snssais:\n  - sst: 1\n    sd: \"0102\"\n", `node.yaml:3: snssais[0].sd: SD "0102": want 6 hex digits`},
		{"subscriber SD in upper case FFFFFF", subscriberRange("208930000000001", 1) + "    snssais: [{sst: 1, sd: FFFFFF}]\n",
			"subscribers[0].snssais[0].sd: FFFFFF means no SD"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("node.yaml", []byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want it to contain %q", err, c.want)
			}
		})
	}
	cfg, err := Parse("node.yaml", []byte("plmn: {mcc: \"001\", mnc: \"001\"}\nsnssais: [{sst: 2}, {sst: 1, sd: ABCDEF}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PLMN.String() != "001001" || cfg.SNSSAIs[0].String() != "2" || !cfg.SNSSAIs[1].Equal(SNSSAI{SST: 1, SD: "abcdef"}) {
		t.Errorf("read %s %v", cfg.PLMN, cfg.SNSSAIs)
	}
}
