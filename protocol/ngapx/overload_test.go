package ngapx

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/free5gc/ngap/ngapType"
	"github.com/l25gc/l25gc/internal/tsharkcap"
)

// Overload Start and Stop survive encode/decode and read as what was asked.
func TestOverloadStartAndStopRoundTrip(t *testing.T) {
	for _, want := range []Overload{
		{Action: OverloadRejectNonEmergencyMODT},
		{Action: OverloadRejectRRCSignalling, Reduction: 50},
	} {
		b, err := BuildOverloadStart(want)
		if err != nil {
			t.Fatal(err)
		}
		pdu, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Summarize(pdu)
		if err != nil || s.Name != "OverloadStart" || s.Procedure != ngapType.ProcedureCodeOverloadStart || s.UEAssociated() {
			t.Fatalf("summary %+v %v", s, err)
		}
		got, err := ParseOverloadStart(pdu)
		if err != nil || got != want {
			t.Fatalf("parsed %+v %v, want %+v", got, err, want)
		}
	}
	if _, err := BuildOverloadStart(Overload{Reduction: 100}); err == nil {
		t.Fatal("reduction 100 % accepted")
	}
	b, err := BuildOverloadStop()
	if err != nil {
		t.Fatal(err)
	}
	pdu, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := Summarize(pdu); s.Name != "OverloadStop" || s.Procedure != ngapType.ProcedureCodeOverloadStop {
		t.Fatalf("summary %+v", s)
	}
	if _, err := ParseOverloadStart(pdu); err == nil {
		t.Fatal("Overload Stop parsed as Start")
	}
}

// Overload Start and Stop dissect in tshark without error (DESIGN.md:
// every NGAP message the system sends).
func TestOverloadMessagesDissectInTShark(t *testing.T) {
	for _, tool := range []string{"tshark", "text2pcap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	start, err := BuildOverloadStart(Overload{Action: OverloadRejectNonEmergencyMODT, Reduction: 30})
	if err != nil {
		t.Fatal(err)
	}
	stop, err := BuildOverloadStop()
	if err != nil {
		t.Fatal(err)
	}
	text := tsharkcap.DissectNGAP(t, start, stop)
	for _, want := range []string{"OverloadStart", "reject-non-emergency-mo-dt", "TrafficLoadReductionIndication: 30", "OverloadStop"} {
		if !strings.Contains(text, want) {
			t.Errorf("tshark shows no %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Malformed") || strings.Contains(text, "Expert Info (Error") {
		t.Fatalf("tshark flags the message:\n%s", text)
	}
}
