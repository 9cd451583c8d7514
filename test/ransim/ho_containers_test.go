package ransim

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// The simulator's transparent containers dissect without error in
// Handover Required and Handover Request Acknowledge as the gNBs send them
// (tshark shows their RRC containers as octets).
func TestTransparentContainersDissectInTShark(t *testing.T) {
	for _, tool := range []string{"tshark", "text2pcap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	src := ngapx.Cell{TAI: domain.TAI{PLMN: testPLMN, TAC: 1}, CellID: 1 << 12}
	dst := ngapx.Cell{TAI: src.TAI, CellID: 2 << 12}
	s2t, err := sourceToTargetContainer(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	t2s, err := targetToSourceContainer()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ngapx.BuildHandoverRequiredTransfer(true)
	if err != nil {
		t.Fatal(err)
	}
	required, err := ngapx.BuildHandoverRequired(ngapx.HandoverRequired{UEIDs: ngapx.UEIDs{AMFUEID: 1, RANUEID: 2},
		Cause: handoverDesirable, Target: ngapx.Target{GNB: ngapx.GlobalGNBID{PLMN: testPLMN, ID: 2, Bits: 24}, TAI: dst.TAI},
		DirectForwarding: true, Sessions: []ngapx.SessionTransfer{{ID: 1, Transfer: tr}}, Container: s2t})
	if err != nil {
		t.Fatal(err)
	}
	ackTr, err := ngapx.BuildHandoverRequestAcknowledgeTransfer(ngapx.HandoverRequestAck{DL: testUPF, QFIs: []uint8{1}})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := ngapx.BuildHandoverRequestAcknowledge(ngapx.HandoverRequestAcknowledge{UEIDs: ngapx.UEIDs{AMFUEID: 1, RANUEID: 3},
		Admitted: []ngapx.SessionTransfer{{ID: 1, Transfer: ackTr}}, Container: t2s})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"HandoverRequired": required, "HandoverRequestAcknowledge": ack} {
		text := dissectNGAP(t, b)
		for _, want := range []string{name, "rRCContainer", "TransparentContainer"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: tshark does not show %s:\n%s", name, want, text)
			}
		}
		if strings.Contains(text, "Malformed") || strings.Contains(text, "[Expert Info (Error") {
			t.Errorf("%s: tshark flags it:\n%s", name, text)
		}
	}
}

// dissectNGAP runs one NGAP PDU through tshark in SCTP with PPID 60.
func dissectNGAP(t *testing.T, b []byte) string {
	t.Helper()
	var hex strings.Builder
	for i, x := range b {
		if i%16 == 0 {
			fmt.Fprintf(&hex, "\n%06x", i)
		}
		fmt.Fprintf(&hex, " %02x", x)
	}
	hex.WriteString("\n")
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
	return string(out)
}
