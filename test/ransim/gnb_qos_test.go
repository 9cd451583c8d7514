package ransim

import (
	"context"
	"testing"

	"github.com/free5gc/nas/nasType"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// A network-requested modification as the SMF now builds it (TS 23.502
// 4.3.3.2): a new Session-AMBR and a GBR flow, then the same flow's rates
// changed ("modify existing"). The gNB answers Modify Response, the UE
// Modification Complete, and both record the new AMBR and rates.
func TestModificationRecordsTheNewAMBRAndFlowRates(t *testing.T) {
	g, amf := connectScripted(t)
	ue, ranID := amf.register(g, "208930000000031")
	res, _ := amf.establish(ue, ranID)
	if res.err != nil {
		t.Fatal(res.err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ue.Serve(ctx) }()

	gbr := ngapx.FlowQoS{QFI: 5, FiveQI: 1, ARPPriority: 2, GBR: true, GFBRUp: 2e6, GFBRDown: 2e6, MFBRUp: 5e6, MFBRDown: 5e6}
	rule := nasx.QoSRule{ID: 5, Operation: nasx.RuleOpCreate, Precedence: 10, QFI: 5,
		Filters: []nasx.PacketFilter{{ID: 1, Direction: nasx.FilterBidirectional, Protocol: 17, LocalPort: 5001}}}
	amf.modify(t, ranID, nasx.ModificationCommand{PDUSessionID: 1, AMBR: &nasx.SessionAMBR{UplinkBps: 12e6, DownlinkBps: 24e6},
		Rules: []nasx.QoSRule{rule}, Flows: []nasx.QoSFlow{{QFI: 5, Operation: nasx.FlowOpCreate, FiveQI: 1, GFBRUp: 2e6, GFBRDown: 2e6, MFBRUp: 5e6, MFBRDown: 5e6}}},
		ngapx.ModifyRequestTransfer{AMBR: &ngapx.AMBR{Down: 24e6, Up: 12e6}, AddOrModify: []ngapx.FlowQoS{gbr}})
	gbr.GFBRUp, gbr.GFBRDown, gbr.MFBRUp, gbr.MFBRDown = 4e6, 4e6, 7e6, 7e6
	amf.modify(t, ranID, nasx.ModificationCommand{PDUSessionID: 1,
		Flows: []nasx.QoSFlow{{QFI: 5, Operation: nasx.FlowOpModify, FiveQI: 1, GFBRUp: 4e6, GFBRDown: 4e6, MFBRUp: 7e6, MFBRDown: 7e6}}},
		ngapx.ModifyRequestTransfer{AddOrModify: []ngapx.FlowQoS{gbr}})
	stop()
	if err := <-served; err != nil {
		t.Fatal(err)
	}

	s := ue.Session(1)
	ue.sessMu.Lock()
	ambr, flows := s.AMBR, s.QoSFlows
	ue.sessMu.Unlock()
	if ambr.UplinkBps != 12e6 || ambr.DownlinkBps != 24e6 {
		t.Fatalf("UE's Session-AMBR %+v", ambr)
	}
	if len(flows) != 2 || flows[1].QFI != 5 || gfbrDown(flows[1]) != 4e6 {
		t.Fatalf("UE's flows %+v", flows)
	}
	q := s.Tunnel.RANQoS()
	f, ok := q.Flow(5)
	if q.AMBR != (ngapx.AMBR{Down: 24e6, Up: 12e6}) || !ok || f.GFBRDown != 4e6 || f.MFBRUp != 7e6 {
		t.Fatalf("gNB's QoS %+v", q)
	}
	if _, ok := q.Flow(1); !ok {
		t.Fatalf("gNB lost the default flow: %+v", q)
	}
}

// modify sends one PDU Session Resource Modify Request with the command
// and the transfer and waits for both answers.
func (a *scriptedAMF) modify(t *testing.T, ranID int64, cmd nasx.ModificationCommand, tr ngapx.ModifyRequestTransfer) {
	t.Helper()
	n1 := a.protectedDL(1, a.built(nasx.BuildPDUSessionModificationCommand(cmd)))
	n2 := a.built(ngapx.BuildModifyRequestTransfer(tr))
	a.send(ngapx.BuildPDUSessionResourceModifyRequest(ngapx.SessionResourceRequest{AMFUEID: testAMFUEID, RANUEID: ranID,
		Sessions: []ngapx.SessionResource{{ID: 1, NASPDU: n1, Transfer: n2}}}))
	a.next("PDUSessionResourceModifyResponse")
	if _, sm := a.uplinkGSM(); sm.PDUSessionModificationComplete == nil {
		t.Fatal("no Modification Complete")
	}
}

func gfbrDown(d nasType.QoSFlowDesc) uint64 {
	for _, p := range d.Parameters {
		if v, ok := p.(*nasType.QoSFlowGFBRDownlink); ok {
			return nasx.BitRate(uint8(v.Unit), v.Value)
		}
	}
	return 0
}
