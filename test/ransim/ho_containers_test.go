package ransim

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/internal/tsharkcap"
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
		text := tsharkcap.DissectNGAP(t, b)
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
