package ngapx

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/internal/tsharkcap"
	"github.com/l25gc/l25gc/protocol/nasx"
)

// modifyAll is a transfer with every part the SMF sends: a new AMBR, a GBR
// flow changed, a flow released (TS 38.413 9.3.4.3).
var modifyAll = ModifyRequestTransfer{AMBR: &AMBR{Down: 20e6, Up: 10e6},
	AddOrModify: []FlowQoS{{QFI: 2, FiveQI: 1, ARPPriority: 2, GBR: true, GFBRUp: 4e6, GFBRDown: 4e6, MFBRUp: 7e6, MFBRDown: 7e6}},
	Release:     []uint8{3}}

// The SMF's modify transfer reads back as written, at the SMF's parser and
// at the gNB's (ransim's), which both see the new AMBR.
func TestModifyRequestTransferRoundTrip(t *testing.T) {
	for name, in := range map[string]ModifyRequestTransfer{
		"all":          modifyAll,
		"AMBR only":    {AMBR: &AMBR{Down: 1e9, Up: 5e8}},
		"release only": {Release: []uint8{4, 5}},
	} {
		b, err := BuildModifyRequestTransfer(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := ParseModifyRequestTransfer(b)
		if err != nil || !reflect.DeepEqual(out, in) {
			t.Fatalf("%s: %v\n got %+v\nwant %+v", name, err, out, in)
		}
		ran, err := ranSideModifyRequestTransfer(b)
		if err != nil || !reflect.DeepEqual(ran.AMBR, in.AMBR) || !reflect.DeepEqual(ran.AddOrModify, in.AddOrModify) || !reflect.DeepEqual(ran.Release, in.Release) {
			t.Fatalf("%s at the gNB: %v %+v", name, err, ran)
		}
	}
	for name, bad := range map[string]ModifyRequestTransfer{
		"empty":         {},
		"AMBR one way":  {AMBR: &AMBR{Down: 1e6}},
		"bad ARP level": {AddOrModify: []FlowQoS{{QFI: 2, FiveQI: 9, ARPPriority: 0}}},
	} {
		if _, err := BuildModifyRequestTransfer(bad); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}

// A PDU Session Resource Modify Request carrying that transfer and a
// Modification Command with the new Session-AMBR and a "modify existing"
// QoS flow description dissects in tshark without error, and tshark reads
// the values the SMF meant (DESIGN.md: every message dissects cleanly).
func TestModifyRequestWithAMBRDissectsInTShark(t *testing.T) {
	for _, tool := range []string{"tshark", "text2pcap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	cmd, err := nasx.BuildPDUSessionModificationCommand(nasx.ModificationCommand{PDUSessionID: 1,
		AMBR:  &nasx.SessionAMBR{UplinkBps: 10e6, DownlinkBps: 20e6},
		Rules: []nasx.QoSRule{{ID: 3, Operation: nasx.RuleOpDelete}},
		Flows: []nasx.QoSFlow{{QFI: 2, Operation: nasx.FlowOpModify, FiveQI: 1, GFBRUp: 4e6, GFBRDown: 4e6, MFBRUp: 7e6, MFBRDown: 7e6},
			{QFI: 3, Operation: nasx.FlowOpDelete}}})
	if err != nil {
		t.Fatal(err)
	}
	dl, err := nasx.BuildDLNASTransport(nasx.DLNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: cmd, PDUSessionID: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := BuildModifyRequestTransfer(modifyAll)
	if err != nil {
		t.Fatal(err)
	}
	text := tsharkcap.DissectNGAP(t, encodeTest(t, modifyRequestPDU(dl, tr)))
	if os.Getenv("SHOW") != "" {
		t.Log(text)
	}
	for _, want := range []string{"PDUSessionResourceModifyRequestTransfer", "pDUSessionAggregateMaximumBitRateDL: 20000000",
		"pDUSessionAggregateMaximumBitRateUL: 10000000", "QosFlowAddOrModifyRequestItem", "guaranteedFlowBitRateDL: 4000000",
		"QosFlowToReleaseList", "PDU session modification command", "Session-AMBR", "Modify existing QoS flow description",
		"Delete existing QoS flow description", "Delete existing QoS rule"} {
		if !strings.Contains(text, want) {
			t.Errorf("tshark shows no %q", want)
		}
	}
	if strings.Contains(text, "Malformed") || strings.Contains(text, "Expert Info (Error") {
		t.Fatalf("tshark flags the message:\n%s", text)
	}
}

// FuzzModifyRequestTransfer: the modify transfer reaches the gNB as opaque
// octets; neither reading of it panics.
func FuzzModifyRequestTransfer(f *testing.F) {
	if b, err := BuildModifyRequestTransfer(modifyAll); err == nil {
		f.Add(b)
	}
	if b, err := BuildModifyRequestTransfer(ModifyRequestTransfer{AMBR: &AMBR{Down: 1, Up: 1}}); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseModifyRequestTransfer(b)
		_, _ = ranSideModifyRequestTransfer(b)
	})
}

// The gNB's answer lists the flows it failed (TS 38.413 9.3.4.4), which
// the SMF takes back from the UPF.
func TestModifyResponseTransferCarriesFailedFlows(t *testing.T) {
	in := ModifyResponse{QFIs: []uint8{2}, FailedQFIs: []uint8{3, 4}}
	b, err := BuildPDUSessionResourceModifyResponseTransfer(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ParsePDUSessionResourceModifyResponseTransfer(b)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Fatalf("%v: got %+v, want %+v", err, out, in)
	}
}
