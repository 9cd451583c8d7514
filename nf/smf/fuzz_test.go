package smf

import (
	"context"
	"net/netip"
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
)

// fuzzSMF is an SMF with a fake UPF and no reachable peers: what the
// fuzzer drives stays inside the SMF.
func fuzzSMF(f *testing.F) *NF {
	cfg := config.Default()
	cfg.DataDir = f.TempDir()
	client := sbi.NewClient(sbi.NewTCP().RoundTripper(), nil)
	env := &nf.Env{Config: cfg, Log: logging.Discard(), Registry: prometheus.NewRegistry(), Client: client,
		NRF: sbi.NewNRFClient(client, "http://127.0.0.1:1", models.NrfNfManagementNfType_SMF)}
	n, err := NewWithOptions(env, Options{N4: newFakeN4(), LeaseDir: "-"})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { n.Stop(context.Background()) })
	return n
}

// activeContext is an established, activated session at the fake UPF.
func activeContext(n *NF) *smContext {
	c := &smContext{supi: subscribed, psi: 1, dnn: "internet", snssai: slice1, state: stateActive,
		flows: []qosFlow{{QFI: 1, FiveQI: 9, ARP: arpOrDefault(nil), RuleID: 1, Precedence: 255}}, ambrUp: 1e8, ambrDown: 2e8}
	c.pool, _ = n.pools.of("internet")
	n.ctxs.add(c)
	c.ueIP, _ = c.pool.allocate(c.owner())
	est, _ := n.n4.Establish(context.Background(), n.upf, c.sessionRules(n.cpAddr))
	c.upSEID, c.ul = est.UPSEID, ngapx.Tunnel{IPv4: netip.MustParseAddr(upfN3), TEID: est.FTEIDs[1].TEID}
	return c
}

// FuzzUpdateSMContext: whatever 5GSM message or N2 SM information the AMF
// relays, the SMF answers or refuses it and never panics.
func FuzzUpdateSMContext(f *testing.F) {
	n := fuzzSMF(f)
	types := []models.N2SmInfoType{"", models.N2SmInfoType_PDU_RES_SETUP_RSP, models.N2SmInfoType_PDU_RES_SETUP_FAIL,
		models.N2SmInfoType_PDU_RES_MOD_RSP, models.N2SmInfoType_PDU_RES_MOD_FAIL, models.N2SmInfoType_PDU_RES_REL_RSP}
	rsp, _ := ngapx.BuildPDUSessionResourceSetupResponseTransfer(ngapx.SetupResponse{DL: ngapx.Tunnel{IPv4: netip.MustParseAddr(gnbN3), TEID: 7}, QFIs: []uint8{1}})
	mod, _ := ngapx.BuildPDUSessionResourceModifyResponseTransfer(ngapx.ModifyResponse{QFIs: []uint8{2}})
	rules, _ := nasx.EncodeQoSRules([]nasx.QoSRule{{ID: 1, Operation: nasx.RuleOpCreate, Precedence: 9, QFI: 1,
		Filters: []nasx.PacketFilter{{ID: 1, Direction: nasx.FilterBidirectional, Protocol: 6, RemotePort: 80}}}})
	f.Add(uint8(0), gsmMsg(1, 1, nas.MsgTypePDUSessionModificationRequest, append([]byte{0x7A, 0, byte(len(rules))}, rules...)...))
	f.Add(uint8(0), gsmMsg(1, 1, nas.MsgTypePDUSessionReleaseRequest, 0x59, 0x24))
	f.Add(uint8(1), rsp)
	f.Add(uint8(3), mod)
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		c := activeContext(n)
		d := &models.SmfPduSessionSmContextUpdateData{N2SmInfoType: types[int(kind)%len(types)]}
		var n1, n2 []byte
		if d.N2SmInfoType == "" {
			n1 = b
		} else {
			n2 = b
		}
		_, _ = n.update(context.Background(), c, d, n1, n2)
		n.teardown(context.Background(), c, "fuzz")
	})
}

// FuzzHandoverUpdate: whatever Path Switch or N2 handover transfer the AMF
// relays, at whichever step, the SMF answers or refuses it, never panics,
// and a session that did not complete a handover keeps its tunnel.
func FuzzHandoverUpdate(f *testing.F) {
	n := fuzzSMF(f)
	steps := []models.SmfPduSessionSmContextUpdateData{
		{N2SmInfoType: models.N2SmInfoType_PATH_SWITCH_REQ},
		{HoState: models.HoState_PREPARING, N2SmInfoType: models.N2SmInfoType_HANDOVER_REQUIRED, TargetId: &models.NgRanTargetId{}},
		{HoState: models.HoState_PREPARED, N2SmInfoType: models.N2SmInfoType_HANDOVER_REQ_ACK},
		{HoState: models.HoState_PREPARED, N2SmInfoType: models.N2SmInfoType_HANDOVER_RES_ALLOC_FAIL},
		{N2SmInfoType: models.N2SmInfoType_HANDOVER_RES_ALLOC_FAIL},
		{N2SmInfoType: models.N2SmInfoType_PATH_SWITCH_SETUP_FAIL, FailedToBeSwitched: true},
	}
	target := ngapx.Tunnel{IPv4: netip.MustParseAddr("10.100.0.3"), TEID: 8}
	ps, _ := ngapx.BuildPathSwitchRequestTransfer(ngapx.PathSwitchRequest{DL: target, QFIs: []uint8{1}})
	rqd, _ := ngapx.BuildHandoverRequiredTransfer(false)
	ack, _ := ngapx.BuildHandoverRequestAcknowledgeTransfer(ngapx.HandoverRequestAck{DL: target, DLForwarding: &target, QFIs: []uint8{1}})
	f.Add(uint8(0), ps)
	f.Add(uint8(1), rqd)
	f.Add(uint8(2), ack)
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		c := activeContext(n)
		c.dl = ngapx.Tunnel{IPv4: netip.MustParseAddr(gnbN3), TEID: 7}
		if kind%8 >= 2 {
			// The later steps run on a prepared handover.
			_, _ = n.update(context.Background(), c, &steps[1], nil, rqd)
		}
		d := steps[int(kind)%len(steps)]
		_, err := n.update(context.Background(), c, &d, nil, b)
		if err != nil && c.dl.TEID != 7 && c.state == stateActive {
			t.Fatalf("a refused step moved the downlink to %+v", c.dl)
		}
		n.teardown(context.Background(), c, "fuzz")
	})
}
