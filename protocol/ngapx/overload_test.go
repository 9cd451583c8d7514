package ngapx

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/free5gc/ngap/ngapType"
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
	var hex strings.Builder
	for _, b := range [][]byte{start, stop} {
		for i, x := range b {
			if i%16 == 0 {
				fmt.Fprintf(&hex, "\n%06x", i)
			}
			fmt.Fprintf(&hex, " %02x", x)
		}
		hex.WriteString("\n")
	}
	dir := t.TempDir()
	in, pcap := filepath.Join(dir, "ngap.txt"), filepath.Join(dir, "ngap.pcap")
	if err := os.WriteFile(in, []byte(hex.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("text2pcap", "-q", "-S", "38412,38412,60", in, pcap).CombinedOutput(); err != nil {
		t.Fatalf("text2pcap: %v %s", err, out)
	}
	out, err := exec.Command("tshark", "-r", pcap, "-V").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v %s", err, out)
	}
	text := string(out)
	for _, want := range []string{"OverloadStart", "reject-non-emergency-mo-dt", "TrafficLoadReductionIndication: 30", "OverloadStop"} {
		if !strings.Contains(text, want) {
			t.Errorf("tshark shows no %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Malformed") || strings.Contains(text, "Expert Info (Error") {
		t.Fatalf("tshark flags the message:\n%s", text)
	}
}
