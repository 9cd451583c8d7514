package domain

import (
	"bytes"
	"testing"

	"github.com/free5gc/openapi/models"
)

func TestParseSNSSAI(t *testing.T) {
	cases := []parseCase[SNSSAI]{
		{"1", SNSSAI{SST: 1}, ""},
		{"1/010203", SNSSAI{SST: 1, SD: "010203"}, ""},
		{"255/ABCDEF", SNSSAI{SST: 255, SD: "abcdef"}, ""},
		{"1/FFFFFF", SNSSAI{SST: 1}, ""}, // TS 23.003 28.4.2: no SD
		{"256", SNSSAI{}, "0..255"},
		{"-1", SNSSAI{}, "0..255"},
		{"1/0102", SNSSAI{}, "6 hex digits"},
		{"1/", SNSSAI{}, "empty"},
		{"x/010203", SNSSAI{}, "decimal"},
		{"01", SNSSAI{}, "decimal"},
		{"", SNSSAI{}, "decimal"},
	}
	checkParse(t, "ParseSNSSAI", ParseSNSSAI, cases)
}

// Equality is identity: SD absent == SD ffffff (TS 23.003 28.4.2), hex case
// ignored; SST only and SST with an SD are different slices.
func TestSNSSAIEqual(t *testing.T) {
	cases := []struct {
		a, b SNSSAI
		want bool
	}{
		{SNSSAI{1, ""}, SNSSAI{1, ""}, true},
		{SNSSAI{1, ""}, SNSSAI{1, "ffffff"}, true},
		{SNSSAI{1, "FFFFFF"}, SNSSAI{1, ""}, true},
		{SNSSAI{1, "0a0B0c"}, SNSSAI{1, "0A0b0C"}, true},
		{SNSSAI{1, ""}, SNSSAI{1, "010203"}, false},
		{SNSSAI{1, "010203"}, SNSSAI{1, ""}, false},
		{SNSSAI{1, "010203"}, SNSSAI{2, "010203"}, false},
		{SNSSAI{1, "010203"}, SNSSAI{1, "010204"}, false},
	}
	for _, c := range cases {
		if got := c.a.Equal(c.b); got != c.want {
			t.Errorf("%+v Equal %+v = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := SameModelSNSSAI(c.a.ToModel(), c.b.ToModel()); got != c.want {
			t.Errorf("model %+v same as %+v = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	list := []SNSSAI{{1, "010203"}, {2, ""}}
	if !ContainsSNSSAI(list, SNSSAI{2, "FFFFFF"}) || ContainsSNSSAI(list, SNSSAI{1, ""}) {
		t.Error("ContainsSNSSAI does not follow Equal")
	}
}

// The match rule: plain entries match only themselves; an entry without an
// SD is not a wildcard (TS 23.501 5.15.2.1); wildcards and ranges exist
// only when the entry declares them (TS 29.571 SnssaiExtension).
func TestExtSNSSAIMatch(t *testing.T) {
	sstOnly := ExtSNSSAI{SNSSAI: SNSSAI{SST: 1}}
	withSD := ExtSNSSAI{SNSSAI: SNSSAI{SST: 1, SD: "010203"}}
	wild := ExtSNSSAI{SNSSAI: SNSSAI{SST: 1}, WildcardSD: true}
	ranged := ExtSNSSAI{SNSSAI: SNSSAI{SST: 1}, SDRanges: []SDRange{{Start: "000100", End: "0001ff"}}}
	toTheTop := ExtSNSSAI{SNSSAI: SNSSAI{SST: 1}, SDRanges: []SDRange{{Start: "fffff0", End: "ffffff"}}}
	cases := []struct {
		name  string
		entry ExtSNSSAI
		req   SNSSAI
		want  bool
	}{
		{"SST-only entry, SST-only request", sstOnly, SNSSAI{1, ""}, true},
		{"SST-only entry, request with SD ffffff", sstOnly, SNSSAI{1, "ffffff"}, true},
		{"SST-only entry is no SD wildcard", sstOnly, SNSSAI{1, "010203"}, false},
		{"entry with SD, request without", withSD, SNSSAI{1, ""}, false},
		{"entry with SD, same SD in upper case", withSD, SNSSAI{1, "010203"}, true},
		{"entry with SD, other SST", withSD, SNSSAI{2, "010203"}, false},
		{"wildcard SD, any SD", wild, SNSSAI{1, "abcdef"}, true},
		{"wildcard SD, no SD", wild, SNSSAI{1, ""}, true},
		{"wildcard SD, other SST", wild, SNSSAI{2, "abcdef"}, false},
		{"SD range, inside", ranged, SNSSAI{1, "000150"}, true},
		{"SD range, at the end", ranged, SNSSAI{1, "0001FF"}, true},
		{"SD range, outside", ranged, SNSSAI{1, "000200"}, false},
		{"SD range, no SD outside", ranged, SNSSAI{1, ""}, false},
		{"SD range to ffffff covers no SD", toTheTop, SNSSAI{1, ""}, true},
	}
	for _, c := range cases {
		if got := c.entry.Match(c.req); got != c.want {
			t.Errorf("%s: Match = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMatchModelSNSSAI(t *testing.T) {
	for _, c := range []struct {
		entry models.ExtSnssai
		req   models.Snssai
		want  bool
	}{
		{models.ExtSnssai{Sst: 1, Sd: "112233"}, models.Snssai{Sst: 1, Sd: "112233"}, true},
		{models.ExtSnssai{Sst: 1, Sd: "112233"}, models.Snssai{Sst: 1}, false},
		{models.ExtSnssai{Sst: 1}, models.Snssai{Sst: 1, Sd: "FFFFFF"}, true},
		{models.ExtSnssai{Sst: 1, WildcardSd: true}, models.Snssai{Sst: 1, Sd: "abcdef"}, true},
		{models.ExtSnssai{Sst: 1, Sd: "010203", WildcardSd: true}, models.Snssai{Sst: 1, Sd: "abcdef"}, true},
		{models.ExtSnssai{Sst: 1, SdRanges: []models.SdRange{{Start: "000000", End: "00ffff"}}}, models.Snssai{Sst: 1, Sd: "001234"}, true},
		{models.ExtSnssai{Sst: 1, Sd: "11223"}, models.Snssai{Sst: 1, Sd: "11223"}, false}, // not an SD
		{models.ExtSnssai{Sst: 1, WildcardSd: true}, models.Snssai{Sst: 1, Sd: "zz"}, false},
	} {
		if got := MatchModelSNSSAI(c.entry, c.req); got != c.want {
			t.Errorf("%+v Match %+v = %v, want %v", c.entry, c.req, got, c.want)
		}
	}
}

func TestExtSNSSAIModelRoundTrip(t *testing.T) {
	for _, e := range []ExtSNSSAI{
		{SNSSAI: SNSSAI{SST: 1, SD: "010203"}},
		{SNSSAI: SNSSAI{SST: 2}, WildcardSD: true},
		{SNSSAI: SNSSAI{SST: 3}, SDRanges: []SDRange{{"000001", "00000f"}}},
	} {
		back, err := ExtSNSSAIFromModel(e.ToModel())
		if err != nil || back.SNSSAI != e.SNSSAI || back.WildcardSD != e.WildcardSD || len(back.SDRanges) != len(e.SDRanges) {
			t.Errorf("%+v round trip = %+v, %v", e, back, err)
		}
	}
	for name, m := range map[string]models.ExtSnssai{
		"range backwards": {Sst: 1, SdRanges: []models.SdRange{{Start: "000010", End: "000001"}}},
		"range not hex":   {Sst: 1, SdRanges: []models.SdRange{{Start: "00001", End: "zz"}}},
		"SST 300":         {Sst: 300},
	} {
		if _, err := ExtSNSSAIFromModel(m); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Wire forms: TS 24.501 9.11.2.8 (NAS), 9.11.3.37 (NSSAI), TS 38.413
// 9.3.1.24 (NGAP), TS 29.571 5.4.4.2 (SBI); "no SD" never goes out as ffffff.
func TestSNSSAIConversions(t *testing.T) {
	for _, c := range []struct {
		s   SNSSAI
		nas []byte
	}{
		{SNSSAI{SST: 1}, []byte{1}},
		{SNSSAI{SST: 1, SD: "ffffff"}, []byte{1}},
		{SNSSAI{SST: 1, SD: "010203"}, []byte{1, 1, 2, 3}},
		{SNSSAI{SST: 255, SD: "ABCDEF"}, []byte{255, 0xab, 0xcd, 0xef}},
	} {
		want, _ := NewSNSSAI(c.s.SST, c.s.SD)
		nas, err := c.s.ToNAS()
		if err != nil || !bytes.Equal(nas, c.nas) {
			t.Errorf("%+v ToNAS = %x, %v; want %x", c.s, nas, err, c.nas)
		}
		if back, err := SNSSAIFromNAS(nas); err != nil || back != want {
			t.Errorf("%+v NAS round trip = %+v, %v", c.s, back, err)
		}
		nt, err := c.s.ToNASType(0x22)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := SNSSAIFromNASType(nt); err != nil || back != want || nt.Iei != 0x22 {
			t.Errorf("%+v nasType round trip = %+v, %v", c.s, back, err)
		}
		ng, err := c.s.ToNGAP()
		if err != nil {
			t.Fatal(err)
		}
		if back, err := SNSSAIFromNGAP(ng); err != nil || back != want {
			t.Errorf("%+v NGAP round trip = %+v, %v", c.s, back, err)
		}
		if m := c.s.ToModel(); m.Sd != want.SD {
			t.Errorf("%+v model sd %q, want %q", c.s, m.Sd, want.SD)
		} else if back, err := SNSSAIFromModel(m); err != nil || back != want {
			t.Errorf("%+v model round trip = %+v, %v", c.s, back, err)
		}
	}
	// Mapped HPLMN values are read past, not kept.
	if s, err := SNSSAIFromNAS([]byte{1, 1, 2, 3, 9, 4, 5, 6}); err != nil || s != (SNSSAI{1, "010203"}) {
		t.Errorf("8-octet S-NSSAI = %+v, %v", s, err)
	}
	if s, err := SNSSAIFromNAS([]byte{1, 0xff, 0xff, 0xff}); err != nil || s != (SNSSAI{SST: 1}) {
		t.Errorf("SD ffffff on the wire = %+v, %v; want no SD", s, err)
	}
	list := []SNSSAI{{1, "010203"}, {2, ""}}
	b, err := NSSAIToNAS(list)
	if err != nil || !bytes.Equal(b, []byte{4, 1, 1, 2, 3, 1, 2}) {
		t.Fatalf("NSSAI = %x, %v", b, err)
	}
	if back, err := NSSAIFromNAS(b); err != nil || len(back) != 2 || back[0] != list[0] || back[1] != list[1] {
		t.Errorf("NSSAI round trip = %+v, %v", back, err)
	}
	ms := SNSSAIsToModels(list)
	if back, err := SNSSAIsFromModels(ms); err != nil || len(back) != 2 || back[1] != list[1] {
		t.Errorf("model list round trip = %+v, %v", back, err)
	}
}

func TestSNSSAIRefusesBadForms(t *testing.T) {
	for name, err := range map[string]error{
		"NAS of 3 octets":     first(SNSSAIFromNAS([]byte{1, 2, 3})),
		"NAS of 0 octets":     first(SNSSAIFromNAS(nil)),
		"NSSAI overrun":       first(NSSAIFromNAS([]byte{4, 1, 2})),
		"model SST 256":       first(SNSSAIFromModel(models.Snssai{Sst: 256})),
		"model SD not hex":    first(SNSSAIFromModel(models.Snssai{Sst: 1, Sd: "01020g"})),
		"ToNAS of SD 4 digit": first(SNSSAI{1, "0102"}.ToNAS()),
		"ToNGAP of SST -1":    first(SNSSAI{-1, ""}.ToNGAP()),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
