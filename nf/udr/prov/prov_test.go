package prov

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/security"
)

var defaults = Defaults{SNSSAIs: []SNSSAI{{SST: 1, SD: "010203"}, {SST: 1, SD: "112233"}}, DNNs: []string{"internet"}}

func TestValidateNamesTheField(t *testing.T) {
	good := Subscriber{IMSI: "208930000000001", K: strings.Repeat("ab", 16), OPc: strings.Repeat("cd", 16)}.WithDefaults(defaults)
	if err := good.Validate(); err != nil {
		t.Fatalf("valid subscriber rejected: %v", err)
	}
	cases := map[string]func(s *Subscriber){
		"imsi":    func(s *Subscriber) { s.IMSI = "20893x" },
		"k":       func(s *Subscriber) { s.K = "00" },
		"opc, op": func(s *Subscriber) { s.OP = s.OPc },
		"opc:":    func(s *Subscriber) { s.OPc = "" },
		"sqn":     func(s *Subscriber) { s.SQN = "1" },
		"amf":     func(s *Subscriber) { s.AMF = "80000" },
		"snssais": func(s *Subscriber) { s.SNSSAIs = []SNSSAI{{SST: 300}} },
		"dnns":    func(s *Subscriber) { s.DNNs = []string{""} },
	}
	for field, breakIt := range cases {
		s := good
		breakIt(&s)
		if err := s.Validate(); err == nil || !strings.HasPrefix(err.Error(), field) {
			t.Errorf("broken %s: error %v, want one starting with %q", field, err, field)
		}
	}
}

func TestRangeIMSIs(t *testing.T) {
	r := Range{Subscriber: Subscriber{IMSI: "208930000000099"}, Count: 3}
	got, err := r.IMSIs()
	if err != nil || strings.Join(got, ",") != "208930000000099,208930000000100,208930000000101" {
		t.Fatalf("IMSIs = %v, %v", got, err)
	}
	if _, err := (Range{Subscriber: Subscriber{IMSI: "999999999999999"}, Count: 2}).IMSIs(); err == nil {
		t.Fatal("a range past 15 digits was accepted")
	}
}

// OP given: the stored OPc is E_K(OP) xor OP, and the API shows OP back.
func TestRecordRoundTripWithOP(t *testing.T) {
	s := Subscriber{IMSI: "208930000000001", K: "8baf473f2f8fd09487cccbd7097c6862", OP: "cdc202d5123e20f62b6d676ac72cb318", SQN: "000000000020"}.WithDefaults(defaults)
	rec, err := ToRecord(s, "20893")
	if err != nil {
		t.Fatal(err)
	}
	k, _ := hex.DecodeString(s.K)
	op, _ := hex.DecodeString(s.OP)
	opc, _ := security.DeriveOPc(k, op)
	if rec.Auth.EncOpcKey != hex.EncodeToString(opc) || rec.UeID != "imsi-208930000000001" || rec.ServingPlmnID != "20893" {
		t.Fatalf("record auth = %+v", rec.Auth)
	}
	if len(rec.SM) != 2 || rec.SM[1].DnnConfigurations["internet"].Var5gQosProfile.Var5qi != 9 {
		t.Fatalf("record SM data = %+v", rec.SM)
	}
	if _, ok := rec.SMFSelection.SubscribedSnssaiInfos["01112233"]; !ok {
		t.Fatalf("SMF selection keys = %v, want 01112233", rec.SMFSelection.SubscribedSnssaiInfos)
	}
	back := FromRecord(rec)
	if back.OP != s.OP || back.OPc != "" || back.SQN != s.SQN || len(back.SNSSAIs) != 2 || back.DNNs[0] != "internet" || back.AMBR == nil {
		t.Fatalf("FromRecord = %+v", back)
	}
}
