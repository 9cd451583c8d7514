package domain

import (
	"bytes"
	"testing"

	"github.com/free5gc/openapi/models"
)

func TestParseTAI(t *testing.T) {
	cases := []parseCase[TAI]{
		{"20893-000001", TAI{PLMN{"208", "93"}, 1}, ""},
		{"310410-abcdef", TAI{PLMN{"310", "410"}, 0xabcdef}, ""},
		{"20893", TAI{}, "want <MCC><MNC>-<TAC>"},
		{"20893-0001", TAI{}, "6 hex digits"},
		{"2089-000001", TAI{}, "5 or 6 digits"},
		{"20893-00000g", TAI{}, "6 hex digits"},
	}
	checkParse(t, "ParseTAI", ParseTAI, cases)
	if (TAI{PLMN{"208", "93"}, 1}) == (TAI{PLMN{"208", "93"}, 2}) {
		t.Error("TAIs of two TACs compare equal")
	}
}

func TestTAIConversions(t *testing.T) {
	tai := TAI{PLMN{"208", "93"}, 0x000102}
	nas, err := tai.ToNAS()
	if err != nil || !bytes.Equal(nas, []byte{0x02, 0xF8, 0x39, 0x00, 0x01, 0x02}) {
		t.Fatalf("ToNAS = %x, %v", nas, err)
	}
	if back, err := TAIFromNAS(nas); err != nil || back != tai {
		t.Errorf("NAS round trip = %+v, %v", back, err)
	}
	ng, err := tai.ToNGAP()
	if err != nil {
		t.Fatal(err)
	}
	if back, err := TAIFromNGAP(ng); err != nil || back != tai {
		t.Errorf("NGAP round trip = %+v, %v", back, err)
	}
	m := tai.ToModel()
	if m.Tac != "000102" || m.PlmnId.Mcc != "208" {
		t.Errorf("model = %+v", m)
	}
	if back, err := TAIFromModel(&m); err != nil || back != tai {
		t.Errorf("model round trip = %+v, %v", back, err)
	}
	for name, err := range map[string]error{
		"TAC of 25 bits":     first(TAC(1 << 24).ToNGAP()),
		"model without PLMN": first(TAIFromModel(&models.Tai{Tac: "000001"})),
		"model 4-digit TAC":  first(TAIFromModel(&models.Tai{PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}, Tac: "0001"})),
		"NAS of 5 octets":    first(TAIFromNAS(nas[:5])),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TS 24.501 9.11.3.9: the list groups TACs per PLMN, 16 per partial list,
// and every partial list type reads back.
func TestTAIListNAS(t *testing.T) {
	home, other := PLMN{"208", "93"}, PLMN{"001", "01"}
	var tais []TAI
	for i := range 17 {
		tais = append(tais, TAI{home, TAC(i)})
	}
	tais = append(tais, TAI{other, 7})
	b, err := TAIListToNAS(tais)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 15 || b[1+3+16*3] != 0 { // 16 TACs, then 1
		t.Fatalf("partial list headers %x", b)
	}
	back, err := TAIListFromNAS(b)
	if err != nil || len(back) != len(tais) {
		t.Fatalf("round trip = %d TAIs, %v", len(back), err)
	}
	for _, want := range tais {
		found := false
		for _, got := range back {
			found = found || got == want
		}
		if !found {
			t.Errorf("%s lost", want)
		}
	}
	consecutive := []byte{0x20 | 2, 0x02, 0xF8, 0x39, 0, 0, 5} // type 01, 3 TACs from 5
	if got, err := TAIListFromNAS(consecutive); err != nil || len(got) != 3 || got[2] != (TAI{home, 7}) {
		t.Errorf("type 01 = %+v, %v", got, err)
	}
	each := append([]byte{0x40 | 0}, 0x00, 0xF1, 0x10, 0, 0, 9) // type 10, one TAI
	if got, err := TAIListFromNAS(each); err != nil || len(got) != 1 || got[0] != (TAI{other, 9}) {
		t.Errorf("type 10 = %+v, %v", got, err)
	}
	if _, err := TAIListFromNAS([]byte{0x60, 0, 0, 0}); err == nil {
		t.Error("reserved list type 11 accepted")
	}
	if _, err := TAIListFromNAS([]byte{0x20, 0x02, 0xF8, 0x39, 0xff, 0xff, 0xff}); err != nil {
		t.Errorf("one consecutive TAC at the top: %v", err)
	}
	if _, err := TAIListFromNAS([]byte{0x21, 0x02, 0xF8, 0x39, 0xff, 0xff, 0xff}); err == nil {
		t.Error("consecutive TACs past 24 bits accepted")
	}
}
