package nasx

import (
	"reflect"
	"testing"

	"github.com/free5gc/nas/nasType"
)

// A Modification Command with a new Session-AMBR, a changed flow ("modify
// existing", TS 24.501 9.11.4.12) and a removed rule and flow reads back
// at the UE as the SMF wrote it.
func TestModificationCommandCarriesAMBRAndFlowOperations(t *testing.T) {
	flows := []QoSFlow{{QFI: 2, Operation: FlowOpModify, FiveQI: 1, GFBRUp: 4e6, GFBRDown: 4e6, MFBRUp: 7e6, MFBRDown: 7e6},
		{QFI: 3, Operation: FlowOpDelete}}
	b, err := BuildPDUSessionModificationCommand(ModificationCommand{PDUSessionID: 5,
		AMBR: &SessionAMBR{UplinkBps: 10e6, DownlinkBps: 20e6}, Rules: []QoSRule{{ID: 3, Operation: RuleOpDelete}}, Flows: flows})
	if err != nil {
		t.Fatal(err)
	}
	g, err := ParseGSMAtUE(b)
	if err != nil || g.Modify == nil || g.SessionID != 5 {
		t.Fatalf("%v %+v", err, g)
	}
	if a := g.Modify.AMBR; a == nil || a.UplinkBps != 10e6 || a.DownlinkBps != 20e6 {
		t.Fatalf("Session-AMBR %+v", a)
	}
	if len(g.Modify.QoSFlows) != 2 || g.Modify.QoSFlows[0].OperationCode != nasType.OperationCodeModifyExistingQoSFlowDescription ||
		g.Modify.QoSFlows[1].OperationCode != nasType.OperationCodeDeleteExistingQoSFlowDescription {
		t.Fatalf("flow descriptions at the UE %+v", g.Modify.QoSFlows)
	}
	if len(g.Modify.QoSRules) != 1 || g.Modify.QoSRules[0].Operation != nasType.OperationCodeDeleteExistingQoSRule {
		t.Fatalf("rules at the UE %+v", g.Modify.QoSRules)
	}
	raw, err := EncodeQoSFlows(flows)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseQoSFlows(raw)
	if err != nil || !reflect.DeepEqual(back, flows) {
		t.Fatalf("flow round trip %v\n got %+v\nwant %+v", err, back, flows)
	}
	// An AMBR-only command (the policy changed nothing else) is valid too.
	if _, err := BuildPDUSessionModificationCommand(ModificationCommand{PDUSessionID: 5, AMBR: &SessionAMBR{UplinkBps: 1e6, DownlinkBps: 1e6}}); err != nil {
		t.Fatal(err)
	}
}

func TestModificationCommandRefusesWhatItCannotCarry(t *testing.T) {
	for name, c := range map[string]ModificationCommand{
		"AMBR one way":  {PDUSessionID: 5, AMBR: &SessionAMBR{UplinkBps: 1e6}},
		"flow opcode 5": {PDUSessionID: 5, Flows: []QoSFlow{{QFI: 2, Operation: 5, FiveQI: 9}}},
		"flow QFI 0":    {PDUSessionID: 5, Flows: []QoSFlow{{Operation: FlowOpModify, FiveQI: 9}}},
		"modify QFI 64": {PDUSessionID: 5, Flows: []QoSFlow{{QFI: 64, Operation: FlowOpModify, FiveQI: 9}}},
	} {
		if _, err := BuildPDUSessionModificationCommand(c); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}
