package upfc

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/internal/tsharkcap"
	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/upf/rules"
	"github.com/l25gc/l25gc/upf/shm"
)

// What UPF-C and the SMF's client put on the wire is PFCP as Wireshark
// reads it (DESIGN.md "Correctness bar"): every message of a session's
// life, and rejections with their Offending IE, dissect without a
// malformed packet or an error.
func TestWireDissectsWithoutMalformedPackets(t *testing.T) {
	table := newFakeUserPlane()
	cfg := testConfig(t)
	cfg.UPF.C.PFCPAddr = freeUDPAddr(t)
	u := startUPFC(t, cfg, table)
	_, portStr, _ := net.SplitHostPort(cfg.UPF.C.PFCPAddr)
	port, _ := strconv.Atoi(portStr)
	capt := tsharkcap.Start(t, port)
	capt.Read = []string{"-d", "udp.port==" + portStr + ",pfcp"} // PFCP off its port 8805

	upf := u.N4Addrs()[0]
	c := newClient(t)
	ctx := context.Background()
	if _, err := c.Heartbeat(ctx, upf); err != nil {
		t.Fatal(err)
	}
	s := pduSession("10.60.0.1")
	s.URRs[0].VolumeThreshold = 1 << 20
	s.QERs[0].Weight = 1 // smf.qos.weights: the vendor-specific QER weight IE in every flow QER
	est, err := c.Establish(ctx, upf, s)
	if err != nil {
		t.Fatal(err)
	}
	table.Count(est.UPSEID, rules.Usage{URRID: 2, UplinkBytes: 10, DownlinkBytes: 20, UplinkPackets: 1, DownlinkPackets: 2})
	flow := qosFlow()
	flow.QERs[0].Weight = 3
	if _, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Create: flow}); err != nil {
		t.Fatal(err)
	}
	buffer := s.FARs[1]
	buffer.Action = rules.ActionBuffer | rules.ActionNotify
	flow.QERs[0].Weight = 2
	if _, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{buffer}, QERs: flow.QERs},
		Remove: rules.RuleIDs{PDRs: []uint16{3, 4}, URRs: []uint32{2}}}); err != nil {
		t.Fatal(err)
	}
	if got := installedWeights(t, table); got[1] != 1 || got[2] != 2 {
		t.Fatalf("QER weights in the table %v, want QER 1 weighing 1 and QER 2 (updated from 3) 2", got)
	}
	// Paging's Session Report (DLDR), then a path switch with SNDEM.
	sink := newReportSink(pfcpx.CauseAccepted)
	c.OnReport(sink.handle)
	table.notes <- shm.Note{UPSEID: est.UPSEID, PDRID: 2, QFI: 9}
	sink.wait(t)
	moved := s.FARs[1]
	moved.OuterHeader = &rules.OuterHeader{TEID: 0x300, PeerIPv4: gnbAddr}
	moved.SendEndMarker = true
	if _, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{moved}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Remove: rules.RuleIDs{FARs: []uint32{1}}}); causeOf(err) == 0 {
		t.Fatal("a FAR a PDR names was removed")
	}
	p := newRawPeer(t, upf)
	p.send(establishment(t, pduSession("10.60.0.2"), nil)) // no association: 72
	p.associate()
	p.send(establishment(t, pduSession("10.60.0.2"), func(r *pfcpx.SessionEstablishmentRequest) { r.CreatePDR[0].PDI = nil }))
	if _, err := c.Delete(ctx, upf, est.UPSEID); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, upf); err != nil {
		t.Fatal(err)
	}

	capt.Stop()
	capt.RequireClean(t)
	types := strings.Fields(capt.Tshark(t, "-Y", "pfcp", "-T", "fields", "-e", "pfcp.msg_type"))
	t.Logf("PFCP message types on the wire: %v", types)
	if testing.Verbose() {
		t.Logf("a Session Establishment Request as tshark reads it:\n%s", tsharkcap.Tail([]byte(capt.Tshark(t, "-V", "-Y", "pfcp.msg_type==50")), 5000))
	}
	// the weight IEs (QER 1 at establishment, QER 2 created and updated)
	// dissect as an enterprise's IE, with our Enterprise ID and 2 octets
	ids := strings.Fields(capt.Tshark(t, "-Y", "pfcp.enterprise_ie == 32769", "-T", "fields", "-e", "pfcp.enterprise_id", "-e", "pfcp.enterprise_ie_data"))
	t.Logf("enterprise IEs (ID, data): %v", ids)
	if want := []string{"32473", "0001", "32473", "0003", "32473", "0002"}; !slices.Equal(ids, want) {
		t.Errorf("QER weight IEs as tshark reads them %v, want %v", ids, want)
	}
	for _, want := range []string{"1", "2", "5", "6", "9", "10", "50", "51", "52", "53", "54", "55", "56", "57"} {
		if !slices.Contains(types, want) {
			t.Errorf("no PFCP message of type %s captured (got %v)", want, types)
		}
	}
}

// installedWeights are the weights of the QERs of the table's one session.
func installedWeights(t *testing.T, table rules.Table) map[uint32]uint16 {
	t.Helper()
	ss, err := table.Sessions()
	if err != nil || len(ss) != 1 {
		t.Fatalf("sessions %+v (%v), want one", ss, err)
	}
	out := map[uint32]uint16{}
	for _, q := range ss[0].QERs {
		out[q.ID] = q.Weight
	}
	return out
}
