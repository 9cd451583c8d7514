package pfcpx

import (
	"errors"
	"net/netip"
	"reflect"
	"testing"

	"github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/upf/rules"
)

var (
	smfAddr = netip.MustParseAddr("10.0.0.1")
	gnbAddr = netip.MustParseAddr("10.100.0.2")
	ueAddr  = netip.MustParseAddr("10.60.0.7")
)

// aSession is a PDU session as the SMF builds it: uplink PDRs sharing one
// F-TEID to choose (CHID 1), a downlink PDR per QoS flow, FARs that
// forward, tunnel and buffer, QERs with rates, a URR with a threshold.
func aSession() *rules.Session {
	return &rules.Session{CPSEID: 0x1234, CPAddr: smfAddr, Rules: rules.Rules{
		PDRs: []rules.PDR{
			{ID: 1, Precedence: 255, Source: rules.Access, LocalFTEID: &rules.FTEID{Choose: true, ChooseID: 1},
				UEIPv4: ueAddr, NetworkInstance: "internet", OuterHeaderRemoval: true, FARID: 1, QERIDs: []uint32{1}, URRIDs: []uint32{1}},
			{ID: 2, Precedence: 255, Source: rules.Core, UEIPv4: ueAddr, NetworkInstance: "internet", FARID: 2, QERIDs: []uint32{1}, URRIDs: []uint32{1}},
			{ID: 3, Precedence: 10, Source: rules.Access, LocalFTEID: &rules.FTEID{Choose: true, ChooseID: 1}, UEIPv4: ueAddr, QFI: 5,
				SDFFilters:         []string{"permit out 17 from 10.200.0.2 5201 to assigned", "permit out 6 from 10.200.0.2 to assigned"},
				OuterHeaderRemoval: true, FARID: 1, QERIDs: []uint32{1, 2}},
			{ID: 4, Precedence: 10, Source: rules.Core, UEIPv4: ueAddr,
				SDFFilters: []string{"permit out 17 from 10.200.0.2 5201 to assigned"}, FARID: 3, QERIDs: []uint32{2}},
		},
		FARs: []rules.FAR{
			{ID: 1, Action: rules.ActionForward, Destination: rules.Core, NetworkInstance: "internet"},
			{ID: 2, Action: rules.ActionForward, Destination: rules.Access, OuterHeader: &rules.OuterHeader{TEID: 0xabcd, PeerIPv4: gnbAddr}},
			{ID: 3, Action: rules.ActionBuffer | rules.ActionNotify, Destination: rules.Access},
			{ID: 4, Action: rules.ActionDrop},
		},
		QERs: []rules.QER{
			{ID: 1, QFI: 9, GateULOpen: true, GateDLOpen: true, MBRUL: 100_000_000, MBRDL: 200_000_000},
			{ID: 2, QFI: 5, GateULOpen: true, GateDLOpen: false, MBRUL: 7_000_000, MBRDL: 7_000_000, GBRUL: 4_000_000, GBRDL: 4_000_000, Weight: 3},
		},
		URRs: []rules.URR{{ID: 1, VolumeThreshold: 1 << 30}, {ID: 2}},
	}}
}

func encodeDecode(t *testing.T, m *Message) *Message {
	t.Helper()
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatalf("decode what we encoded: %v", err)
	}
	return got
}

// A session goes to PFCP and back unchanged: what UPF-C installs is what
// the SMF asked for.
func TestSessionRoundTrip(t *testing.T) {
	want := aSession()
	body, err := EstablishmentRequestOf(smfAddr, want)
	if err != nil {
		t.Fatal(err)
	}
	m := encodeDecode(t, &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_ESTABLISHMENT_REQUEST, SequenceNumber: 7}, Body: body})
	if m.Header.SequenceNumber != 7 || m.Header.S != 1 {
		t.Fatalf("header %+v", m.Header)
	}
	req, ok := m.Body.(*SessionEstablishmentRequest)
	if !ok {
		t.Fatalf("body %T", m.Body)
	}
	if len(req.CreatePDR[2].PDI.SDFFilter) != 2 {
		t.Fatalf("PDR 3 carries %d SDF filters on the wire, want 2", len(req.CreatePDR[2].PDI.SDFFilter))
	}
	got, err := SessionOf(req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip changed the session:\n got %+v\nwant %+v", got, want)
	}
	if a, ok := NodeAddr(req.NodeID); !ok || a != smfAddr {
		t.Fatalf("node ID %v", req.NodeID)
	}
}

// Update IEs replace the rule they name; Remove names IDs.
func TestModificationRoundTrip(t *testing.T) {
	s := aSession()
	mod := &rules.Modification{
		Create: rules.Rules{PDRs: s.PDRs[2:], QERs: s.QERs[1:]},
		Update: rules.Rules{PDRs: s.PDRs[:1], FARs: s.FARs[1:2], QERs: s.QERs[:1], URRs: s.URRs[:1]},
		Remove: rules.RuleIDs{PDRs: []uint16{9}, FARs: []uint32{8}, QERs: []uint32{7}, URRs: []uint32{6}},
	}
	body, err := ModificationRequestOf(mod)
	if err != nil {
		t.Fatal(err)
	}
	m := encodeDecode(t, &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_MODIFICATION_REQUEST, SEID: 42}, Body: body})
	req := m.Body.(*SessionModificationRequest)
	if m.Header.SEID != 42 {
		t.Fatalf("SEID %d", m.Header.SEID)
	}
	created, err := RulesOf(req.CreatePDR, req.CreateFAR, req.CreateQER, req.CreateURR)
	if err != nil || !reflect.DeepEqual(created, mod.Create) {
		t.Fatalf("created %+v (%v), want %+v", created, err, mod.Create)
	}
	var pdr rules.PDR
	var far rules.FAR
	var qer rules.QER
	var urr rules.URR
	if err := errors.Join(PatchPDR(&pdr, req.UpdatePDR[0]), PatchFAR(&far, req.UpdateFAR[0]), PatchQER(&qer, req.UpdateQER[0]), PatchURR(&urr, req.UpdateURR[0])); err != nil {
		t.Fatal(err)
	}
	pdr.ID, far.ID, qer.ID, urr.ID = req.UpdatePDR[0].PDRID.RuleId, req.UpdateFAR[0].FARID.FarIdValue, req.UpdateQER[0].QERID.QERID, req.UpdateURR[0].URRID.UrrIdValue
	if !reflect.DeepEqual([]any{pdr, far, qer, urr}, []any{s.PDRs[0], s.FARs[1], s.QERs[0], s.URRs[0]}) {
		t.Fatalf("updates did not replace the rules: %+v %+v %+v %+v", pdr, far, qer, urr)
	}
	if req.RemovePDR[0].PDRID.RuleId != 9 || req.RemoveFAR[0].FARID.FarIdValue != 8 || req.RemoveQER[0].QERID.QERID != 7 || req.RemoveURR[0].URRID.UrrIdValue != 6 {
		t.Fatalf("removes %+v", req)
	}
}

// MBR and GBR travel in kbit/s (TS 29.244 8.2.8): bit/s round up, never
// down, and rates beyond 40 bits of kbit/s are refused.
func TestRatesInKbpsRoundUp(t *testing.T) {
	for bps, kbps := range map[uint64]uint64{0: 0, 1: 1, 999: 1, 1000: 1, 1001: 2, 2_500_500: 2501, 10_000_000_000: 10_000_000} {
		if got := KbpsOf(bps); got != kbps {
			t.Errorf("KbpsOf(%d) = %d, want %d", bps, got, kbps)
		}
	}
	ie, err := QERIEOf(rules.QER{ID: 1, MBRUL: 1500, MBRDL: 3000, GBRUL: 1})
	if err != nil {
		t.Fatal(err)
	}
	var q rules.QER
	if err := PatchQER(&q, ie); err != nil {
		t.Fatal(err)
	}
	if q.MBRUL != 2000 || q.MBRDL != 3000 || q.GBRUL != 1000 || q.GBRDL != 0 {
		t.Fatalf("after the wire: %+v", q)
	}
	if _, err := QERIEOf(rules.QER{ID: 1, MBRDL: maxRate + 1}); err == nil {
		t.Fatal("a rate beyond 40 bits of kbit/s encoded")
	}
	if _, err := QERIEOf(rules.QER{ID: 1, MBRDL: maxRate}); err != nil {
		t.Fatalf("the largest rate: %v", err)
	}
}

// Usage reports carry bytes and packets both ways.
func TestUsageReportsRoundTrip(t *testing.T) {
	want := []rules.Usage{{URRID: 1, UplinkBytes: 1000, DownlinkBytes: 2000, UplinkPackets: 3, DownlinkPackets: 4}, {URRID: 2}}
	body := &SessionDeletionResponse{Cause: &pfcpType.Cause{CauseValue: CauseAccepted},
		UsageReport: UsageReportsOf(want, pfcpType.UsageReportTrigger{Termr: true}, 0)}
	m := encodeDecode(t, &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_DELETION_RESPONSE}, Body: body})
	if got := UsagesOf(m.Body.(*SessionDeletionResponse).UsageReport); !reflect.DeepEqual(got, want) {
		t.Fatalf("usage %+v, want %+v", got, want)
	}
}

// The accepted establishment response gives the SMF its UP SEID and the
// F-TEIDs UPF-C chose; a rejection becomes its cause.
func TestResponses(t *testing.T) {
	rsp := &SessionEstablishmentResponse{Cause: &pfcpType.Cause{CauseValue: CauseAccepted},
		UPFSEID: fseidOf(77, smfAddr),
		CreatedPDR: []*CreatedPDR{
			{PDRID: &pfcpType.PacketDetectionRuleID{RuleId: 1}, LocalFTEID: &pfcpType.FTEID{V4: true, Teid: 5, Ipv4Address: ip4(gnbAddr)}},
			{PDRID: &pfcpType.PacketDetectionRuleID{RuleId: 3}, LocalFTEID: &pfcpType.FTEID{V4: true, Teid: 5, Ipv4Address: ip4(gnbAddr)}},
		}}
	m := encodeDecode(t, &Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_ESTABLISHMENT_RESPONSE}, Body: rsp})
	e, err := EstablishedOf(m.Body.(*SessionEstablishmentResponse))
	if err != nil {
		t.Fatal(err)
	}
	want := rules.FTEID{TEID: 5, IPv4: gnbAddr}
	if e.UPSEID != 77 || len(e.FTEIDs) != 2 || e.FTEIDs[1] != want || e.FTEIDs[3] != want {
		t.Fatalf("established %+v", e)
	}

	rej := RejectionOf(pfcp.Header{MessageType: pfcp.PFCP_SESSION_ESTABLISHMENT_REQUEST, SequenceNumber: 3},
		RuleFailure(RulePDR, 4, "no FAR"), smfAddr, 0x1234)
	m = encodeDecode(t, rej)
	r := m.Body.(*SessionEstablishmentResponse)
	perr := ResponseError(r.Cause, r.OffendingIE, r.FailedRuleID)
	if m.Header.SEID != 0x1234 || m.Header.SequenceNumber != 3 || perr == nil || perr.Cause != CauseRuleFailure ||
		perr.Rule == nil || *perr.Rule != (FailedRule{Type: RulePDR, ID: 4}) {
		t.Fatalf("rejection %+v: %v", m.Header, perr)
	}
	var ce *rules.CauseError
	if !errors.As(perr.CauseError(), &ce) || ce.Cause != 73 {
		t.Fatalf("as rules.CauseError: %v", perr.CauseError())
	}
}
