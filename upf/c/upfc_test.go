package upfc

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"
	"github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/upf/rules"
)

var (
	n3Addr  = netip.MustParseAddr("10.100.0.1") // the default upf.n3.ip
	gnbAddr = netip.MustParseAddr("10.100.0.2")
	dnAddr  = "10.200.0.2"
)

func testConfig(t testing.TB) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir, cfg.LogDir = t.TempDir(), t.TempDir()
	cfg.SBI.Transport = "tcp"
	cfg.UPF.C.PFCPAddr = "127.0.0.1:0"
	return cfg
}

// startUPFC runs UPF-C with cfg over table until the test ends.
func startUPFC(t testing.TB, cfg *config.Config, table rules.Table) *NF {
	t.Helper()
	env := nf.NewEnv(cfg, logging.Discard(), sbi.NewTCP(), models.NrfNfManagementNfType_UPF)
	u, err := NewWithOptions(env, Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Stop(context.Background()) })
	return u
}

func newClient(t *testing.T) *pfcpx.Client {
	t.Helper()
	c := pfcpx.NewClient(pfcpx.ClientConfig{NodeID: netip.MustParseAddr("127.0.0.1"), UDPAddr: "127.0.0.1:0"})
	t.Cleanup(func() { c.Close() })
	return c
}

// pduSession is one PDU session as the SMF builds it (TS 23.502 4.3.2.2.1
// step 10a): uplink and downlink PDRs of the default QoS flow, the
// uplink F-TEID chosen by UPF-C (CHID 1), a session QER and a URR.
func pduSession(ue string) *rules.Session {
	ip := netip.MustParseAddr(ue)
	return &rules.Session{Rules: rules.Rules{
		PDRs: []rules.PDR{
			{ID: 1, Precedence: 255, Source: rules.Access, LocalFTEID: &rules.FTEID{Choose: true, ChooseID: 1}, UEIPv4: ip,
				NetworkInstance: "internet", OuterHeaderRemoval: true, FARID: 1, QERIDs: []uint32{1}, URRIDs: []uint32{1}},
			{ID: 2, Precedence: 255, Source: rules.Core, UEIPv4: ip, NetworkInstance: "internet", FARID: 2, QERIDs: []uint32{1}, URRIDs: []uint32{1}},
		},
		FARs: []rules.FAR{
			{ID: 1, Action: rules.ActionForward, Destination: rules.Core, NetworkInstance: "internet"},
			{ID: 2, Action: rules.ActionForward, Destination: rules.Access, OuterHeader: &rules.OuterHeader{TEID: 0x100, PeerIPv4: gnbAddr}},
		},
		QERs: []rules.QER{{ID: 1, QFI: 9, GateULOpen: true, GateDLOpen: true, MBRUL: 100_000_000, MBRDL: 200_000_000}},
		URRs: []rules.URR{{ID: 1}},
	}}
}

// qosFlow is what a network-requested modification adds: a QoS flow with
// an SDF filter, uplink on the session's tunnel (same CHID), downlink
// into it with QFI 5.
func qosFlow() rules.Rules {
	return rules.Rules{
		PDRs: []rules.PDR{
			{ID: 3, Precedence: 10, Source: rules.Access, LocalFTEID: &rules.FTEID{Choose: true, ChooseID: 1}, QFI: 5,
				SDFFilters: []string{"permit out 17 from " + dnAddr + " 5201 to assigned"}, OuterHeaderRemoval: true, FARID: 1, QERIDs: []uint32{2}, URRIDs: []uint32{2}},
			{ID: 4, Precedence: 10, Source: rules.Core, UEIPv4: netip.MustParseAddr("10.60.0.1"),
				SDFFilters: []string{"permit out 17 from " + dnAddr + " 5201 to assigned"}, FARID: 2, QERIDs: []uint32{2}, URRIDs: []uint32{2}},
		},
		QERs: []rules.QER{{ID: 2, QFI: 5, GateULOpen: true, GateDLOpen: true, MBRUL: 7_000_000, MBRDL: 7_000_000, GBRUL: 4_000_000, GBRDL: 4_000_000}},
		URRs: []rules.URR{{ID: 2}},
	}
}

func causeOf(err error) uint8 {
	var ce *rules.CauseError
	if errors.As(err, &ce) {
		return ce.Cause
	}
	return 0
}

// A PDU session's rules reach the table as the SMF sent them, with the
// F-TEID UPF-C chose on N3; a modification adds a QoS flow on the same
// tunnel and reports the usage of the URR it removes; deletion empties
// the table and reports the rest.
func TestSessionLifecycle(t *testing.T) {
	table := rules.NewMemTable()
	u := startUPFC(t, testConfig(t), table)
	upf := u.N4Addrs()[0]
	c := newClient(t)
	ctx := context.Background()

	s := pduSession("10.60.0.1")
	est, err := c.Establish(ctx, upf, s)
	if err != nil {
		t.Fatal(err)
	}
	tunnel := est.FTEIDs[1]
	if tunnel.IPv4 != n3Addr || tunnel.TEID == 0 || len(est.FTEIDs) != 1 {
		t.Fatalf("F-TEIDs %+v, want one on %v", est.FTEIDs, n3Addr)
	}
	got, ok := table.Session(est.UPSEID)
	if !ok {
		t.Fatalf("session %#x not in the table", est.UPSEID)
	}
	want := s.Clone()
	want.UPSEID, want.CPAddr = est.UPSEID, netip.MustParseAddr("127.0.0.1")
	want.PDRs[0].LocalFTEID = &rules.FTEID{TEID: tunnel.TEID, IPv4: n3Addr, ChooseID: 1}
	if !equalSessions(got, want) {
		t.Fatalf("table holds\n %+v\nwant\n %+v", got, want)
	}

	// Add a QoS flow; its uplink PDR shares the session's tunnel (CHID 1).
	table.Count(est.UPSEID, rules.Usage{URRID: 1, UplinkBytes: 500, UplinkPackets: 5})
	flow := qosFlow()
	if _, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Create: flow}); err != nil {
		t.Fatal(err)
	}
	got, _ = table.Session(est.UPSEID)
	if len(got.PDRs) != 4 || *got.PDRs[2].LocalFTEID != *got.PDRs[0].LocalFTEID {
		t.Fatalf("after adding a QoS flow: %+v", got.PDRs)
	}
	// Move the downlink tunnel (e.g. after a handover) and drop the flow.
	table.Count(est.UPSEID, rules.Usage{URRID: 2, DownlinkBytes: 700, DownlinkPackets: 7})
	far := s.FARs[1]
	far.OuterHeader = &rules.OuterHeader{TEID: 0x200, PeerIPv4: netip.MustParseAddr("10.100.0.3")}
	usage, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{far}},
		Remove: rules.RuleIDs{PDRs: []uint16{3, 4}, QERs: []uint32{2}, URRs: []uint32{2}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(usage) != 1 || usage[0] != (rules.Usage{URRID: 2, DownlinkBytes: 700, DownlinkPackets: 7}) {
		t.Fatalf("usage of the removed URR: %+v", usage)
	}
	got, _ = table.Session(est.UPSEID)
	if len(got.PDRs) != 2 || len(got.QERs) != 1 || *got.FARs[1].OuterHeader != *far.OuterHeader {
		t.Fatalf("after the update: %+v", got)
	}

	usage, err = c.Delete(ctx, upf, est.UPSEID)
	if err != nil {
		t.Fatal(err)
	}
	if len(usage) != 1 || usage[0] != (rules.Usage{URRID: 1, UplinkBytes: 500, UplinkPackets: 5}) {
		t.Fatalf("usage at deletion: %+v", usage)
	}
	if left, _ := table.Sessions(); len(left) != 0 || u.Server().Sessions() != 0 {
		t.Fatalf("sessions left: %d in the table, %d in UPF-C", len(left), u.Server().Sessions())
	}
	if n := metricValue(u.Server().cfg.Metrics.sessions); n != 0 {
		t.Fatalf("sessions gauge %v after deletion", n)
	}
	if n := metricValue(u.Server().cfg.Metrics.messages.WithLabelValues("out", "session_establishment_response", "1")); n != 1 {
		t.Fatalf("accepted establishment responses counted: %v", n)
	}
}

// Sessions get distinct SEIDs and TEIDs; an F-TEID the SMF chose that
// another session holds is refused.
func TestAllocationsAreUnique(t *testing.T) {
	table := rules.NewMemTable()
	u := startUPFC(t, testConfig(t), table)
	c := newClient(t)
	ctx := context.Background()
	seids, teids := map[uint64]bool{}, map[uint32]bool{}
	for i := range 20 {
		est, err := c.Establish(ctx, u.N4Addrs()[0], pduSession(netip.AddrFrom4([4]byte{10, 60, 0, byte(i + 1)}).String()))
		if err != nil {
			t.Fatal(err)
		}
		if seids[est.UPSEID] || teids[est.FTEIDs[1].TEID] {
			t.Fatalf("session %d reuses SEID %#x or TEID %#x", i, est.UPSEID, est.FTEIDs[1].TEID)
		}
		seids[est.UPSEID], teids[est.FTEIDs[1].TEID] = true, true
	}
	s := pduSession("10.60.1.1")
	for teid := range teids {
		s.PDRs[0].LocalFTEID = &rules.FTEID{TEID: teid, IPv4: n3Addr}
		break
	}
	// PDR 1 asks for a free TEID, PDR 3 for one another session holds.
	free := rules.FTEID{TEID: 0xfff0, IPv4: n3Addr}
	taken := *s.PDRs[0].LocalFTEID
	s.PDRs[0].LocalFTEID = &free
	s.PDRs = append(s.PDRs, rules.PDR{ID: 3, Precedence: 9, Source: rules.Access, LocalFTEID: &taken, FARID: 1})
	if _, err := c.Establish(ctx, u.N4Addrs()[0], s); causeOf(err) != pfcpx.CauseRuleFailure {
		t.Fatalf("an F-TEID another session holds: %v, want cause 73", err)
	}
	// The refused request kept nothing: the free TEID is still free.
	s = pduSession("10.60.1.2")
	s.PDRs[0].LocalFTEID = &free
	if est, err := c.Establish(ctx, u.N4Addrs()[0], s); err != nil || est.FTEIDs[1] != (rules.FTEID{}) {
		t.Fatalf("the TEID of a refused establishment stayed taken: %v (created F-TEIDs %+v)", err, est)
	}
}

// Every refusal carries its PFCP cause, and a refused request changes
// nothing.
func TestCauses(t *testing.T) {
	table := rules.NewMemTable()
	cfg := testConfig(t)
	cfg.UPF.MaxSessions = 2
	u := startUPFC(t, cfg, table)
	upf := u.N4Addrs()[0]
	c := newClient(t)
	ctx := context.Background()
	est, err := c.Establish(ctx, upf, pduSession("10.60.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	installs := table.Installs()
	bad := func(edit func(*rules.Session)) *rules.Session {
		s := pduSession("10.60.0.2")
		edit(s)
		return s
	}
	for _, c2 := range []struct {
		name  string
		do    func() error
		cause uint8
	}{
		{"modify an unknown session", func() error {
			_, err := c.Modify(ctx, upf, 0xdead, &rules.Modification{})
			return err
		}, pfcpx.CauseSessionNotFound},
		{"delete an unknown session", func() error { _, err := c.Delete(ctx, upf, 0xdead); return err }, pfcpx.CauseSessionNotFound},
		{"PDR naming a FAR the session lacks", func() error {
			_, err := c.Establish(ctx, upf, bad(func(s *rules.Session) { s.PDRs[1].FARID = 9 }))
			return err
		}, pfcpx.CauseRuleFailure},
		{"PDR naming a QER the session lacks", func() error {
			_, err := c.Establish(ctx, upf, bad(func(s *rules.Session) { s.PDRs[1].QERIDs = []uint32{9} }))
			return err
		}, pfcpx.CauseRuleFailure},
		{"two PDRs with one ID", func() error {
			_, err := c.Establish(ctx, upf, bad(func(s *rules.Session) { s.PDRs[1].ID = 1 }))
			return err
		}, pfcpx.CauseRuleFailure},
		{"uplink PDR without F-TEID", func() error {
			_, err := c.Establish(ctx, upf, bad(func(s *rules.Session) { s.PDRs[0].LocalFTEID = nil }))
			return err
		}, pfcpx.CauseConditionalIEMissing},
		{"downlink PDR without UE address", func() error {
			_, err := c.Establish(ctx, upf, bad(func(s *rules.Session) { s.PDRs[1].UEIPv4 = netip.Addr{} }))
			return err
		}, pfcpx.CauseConditionalIEMissing},
		{"forwarding to the gNB without a tunnel", func() error {
			_, err := c.Establish(ctx, upf, bad(func(s *rules.Session) { s.FARs[1].OuterHeader = nil }))
			return err
		}, pfcpx.CauseConditionalIEMissing},
		{"remove a PDR the session lacks", func() error {
			_, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Remove: rules.RuleIDs{PDRs: []uint16{9}}})
			return err
		}, pfcpx.CauseRuleFailure},
		{"update a FAR the session lacks", func() error {
			_, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{{ID: 9, Action: rules.ActionDrop}}}})
			return err
		}, pfcpx.CauseRuleFailure},
		{"remove a FAR a PDR still names", func() error {
			_, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Remove: rules.RuleIDs{FARs: []uint32{2}}})
			return err
		}, pfcpx.CauseRuleFailure},
		{"create a PDR ID the session has", func() error {
			_, err := c.Modify(ctx, upf, est.UPSEID, &rules.Modification{Create: rules.Rules{PDRs: pduSession("10.60.0.1").PDRs[1:]}})
			return err
		}, pfcpx.CauseRuleFailure},
	} {
		t.Run(c2.name, func(t *testing.T) {
			if err := c2.do(); causeOf(err) != c2.cause {
				t.Fatalf("got %v, want cause %d (%s)", err, c2.cause, pfcpx.CauseName(c2.cause))
			}
			if table.Installs() != installs || u.Server().Sessions() != 1 {
				t.Fatalf("a refused request changed the sessions (%d installs, %d sessions)", table.Installs()-installs, u.Server().Sessions())
			}
		})
	}
	// upf.max_sessions 2: the third session finds no room (TS 29.244
	// 8.2.1: 75 No resources available).
	if _, err := c.Establish(ctx, upf, pduSession("10.60.0.2")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Establish(ctx, upf, pduSession("10.60.0.3")); causeOf(err) != pfcpx.CauseNoResources {
		t.Fatalf("a session beyond upf.max_sessions: %v, want cause 75", err)
	}
}

// rawPeer talks PFCP to UPF-C byte by byte, as a faulty SMF would.
type rawPeer struct {
	t    *testing.T
	pc   net.PacketConn
	upf  net.Addr
	seq  uint32
	last []byte
}

func newRawPeer(t *testing.T, upf string) *rawPeer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	_, addr, err := pfcpx.ParseAddr(upf)
	if err != nil {
		t.Fatal(err)
	}
	return &rawPeer{t: t, pc: pc, upf: addr}
}

// send encodes m with the next sequence number and returns the answer.
func (p *rawPeer) send(m *pfcpx.Message) *pfcpx.Message {
	p.t.Helper()
	p.seq++
	m.Header.SequenceNumber = p.seq
	b, err := pfcpx.Encode(m)
	if err != nil {
		p.t.Fatal(err)
	}
	p.last = b
	return p.sendBytes(b)
}

func (p *rawPeer) sendBytes(b []byte) *pfcpx.Message {
	p.t.Helper()
	if _, err := p.pc.WriteTo(b, p.upf); err != nil {
		p.t.Fatal(err)
	}
	return p.read()
}

func (p *rawPeer) read() *pfcpx.Message {
	p.t.Helper()
	buf := make([]byte, 65535)
	p.pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err := p.pc.ReadFrom(buf)
	if err != nil {
		p.t.Fatalf("no answer from UPF-C: %v", err)
	}
	m, err := pfcpx.Decode(buf[:n])
	if err != nil {
		p.t.Fatalf("UPF-C's answer does not decode: %v", err)
	}
	return m
}

func (p *rawPeer) associate() {
	p.t.Helper()
	rsp := p.send(&pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_ASSOCIATION_SETUP_REQUEST},
		Body: &pfcp.PFCPAssociationSetupRequest{NodeID: pfcpx.NodeIDOf(netip.MustParseAddr("127.0.0.1")),
			RecoveryTimeStamp: &pfcpType.RecoveryTimeStamp{RecoveryTimeStamp: time.Now()}}})
	if pfcpx.CauseOf(rsp) != pfcpx.CauseAccepted {
		p.t.Fatalf("association: %+v", rsp.Body)
	}
	if f := rsp.Body.(*pfcp.PFCPAssociationSetupResponse).UPFunctionFeatures; f == nil || f.SupportedFeatures&pfcpType.UpFunctionFeaturesFtup == 0 {
		p.t.Fatalf("UP function features %+v, want FTUP", f)
	}
}

func establishment(t *testing.T, s *rules.Session, edit func(*pfcpx.SessionEstablishmentRequest)) *pfcpx.Message {
	t.Helper()
	if s.CPSEID == 0 {
		s.CPSEID = 77
	}
	body, err := pfcpx.EstablishmentRequestOf(netip.MustParseAddr("127.0.0.1"), s)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(body)
	}
	return &pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_ESTABLISHMENT_REQUEST}, Body: body}
}

// What the SMF's client never sends, UPF-C still answers with the cause
// TS 29.244 gives it, naming the IE at fault.
func TestMalformedRequestsGetTheirCause(t *testing.T) {
	table := rules.NewMemTable()
	u := startUPFC(t, testConfig(t), table)
	p := newRawPeer(t, u.N4Addrs()[0])

	// No association yet: 72.
	rsp := p.send(establishment(t, pduSession("10.60.0.1"), nil))
	if pfcpx.CauseOf(rsp) != pfcpx.CauseNoAssociation || rsp.Header.SEID != 77 {
		t.Fatalf("establishment without association: cause %d SEID %d, want 72 and the CP SEID 77", pfcpx.CauseOf(rsp), rsp.Header.SEID)
	}
	p.associate()

	for _, c := range []struct {
		name  string
		m     *pfcpx.Message
		cause uint8
		ie    uint16
	}{
		{"no Node ID", establishment(t, pduSession("10.60.0.1"), func(r *pfcpx.SessionEstablishmentRequest) { r.NodeID = nil }), pfcpx.CauseMandatoryIEMissing, pfcpx.IENodeID},
		{"no CP F-SEID", establishment(t, pduSession("10.60.0.1"), func(r *pfcpx.SessionEstablishmentRequest) { r.CPFSEID = nil }), pfcpx.CauseMandatoryIEMissing, pfcpx.IEFSEID},
		{"PDR without PDI", establishment(t, pduSession("10.60.0.1"), func(r *pfcpx.SessionEstablishmentRequest) { r.CreatePDR[0].PDI = nil }), pfcpx.CauseMandatoryIEMissing, pfcpx.IEPDI},
		{"FAR without apply action", establishment(t, pduSession("10.60.0.1"), func(r *pfcpx.SessionEstablishmentRequest) { r.CreateFAR[1].ApplyAction = nil }), pfcpx.CauseMandatoryIEMissing, pfcpx.IEApplyAction},
		{"association without Node ID", &pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_ASSOCIATION_SETUP_REQUEST},
			Body: &pfcp.PFCPAssociationSetupRequest{RecoveryTimeStamp: &pfcpType.RecoveryTimeStamp{RecoveryTimeStamp: time.Now()}}}, pfcpx.CauseMandatoryIEMissing, pfcpx.IENodeID},
		{"association without Recovery Time Stamp", &pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_ASSOCIATION_SETUP_REQUEST},
			Body: &pfcp.PFCPAssociationSetupRequest{NodeID: pfcpx.NodeIDOf(netip.MustParseAddr("127.0.0.1"))}}, pfcpx.CauseMandatoryIEMissing, pfcpx.IERecoveryTimeStamp},
	} {
		t.Run(c.name, func(t *testing.T) {
			rsp := p.send(c.m)
			var off uint16
			switch b := rsp.Body.(type) {
			case *pfcpx.SessionEstablishmentResponse:
				if b.OffendingIE != nil {
					off = b.OffendingIE.TypeOfOffendingIe
				}
			}
			if c.m.Header.MessageType == pfcp.PFCP_ASSOCIATION_SETUP_REQUEST {
				off = c.ie // the Association Setup Response has no Offending IE (TS 29.244 7.4.4.2)
			}
			if pfcpx.CauseOf(rsp) != c.cause || off != c.ie {
				t.Fatalf("cause %d offending IE %d, want %d and %d", pfcpx.CauseOf(rsp), off, c.cause, c.ie)
			}
		})
	}

	// Modification IEs: an Update PDR without its ID.
	est := p.send(establishment(t, pduSession("10.60.0.1"), nil))
	seid := est.Body.(*pfcpx.SessionEstablishmentResponse).UPFSEID.Seid
	rsp = p.send(&pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_MODIFICATION_REQUEST, SEID: seid},
		Body: &pfcpx.SessionModificationRequest{UpdatePDR: []*pfcpx.PDRIE{{Precedence: &pfcpType.Precedence{PrecedenceValue: 1}}}}})
	if b := rsp.Body.(*pfcpx.SessionModificationResponse); pfcpx.CauseOf(rsp) != pfcpx.CauseMandatoryIEMissing || b.OffendingIE == nil || b.OffendingIE.TypeOfOffendingIe != pfcpx.IEPDRID {
		t.Fatalf("Update PDR without PDR ID: %+v", rsp.Body)
	}
	if rsp.Header.SEID != 77 {
		t.Fatalf("modification response SEID %d, want the CP SEID 77", rsp.Header.SEID)
	}

	// Bytes that are no PFCP, then a message with a broken IE: UPF-C
	// answers what it can and goes on serving.
	p.pc.WriteTo([]byte("GET / HTTP/1.1\r\n\r\n"), p.upf)
	broken := establishment(t, pduSession("10.60.0.9"), nil)
	broken.Header.SequenceNumber = 500
	b, _ := pfcpx.Encode(broken)
	b = append(b[:len(b)-3], 0xff, 0xff, 0xff) // the last IE's end overwritten
	rsp = p.sendBytes(b)
	if c := pfcpx.CauseOf(rsp); c != pfcpx.CauseMandatoryIEIncorrect && c != pfcpx.CauseInvalidLength {
		t.Fatalf("a broken IE: cause %d", c)
	}
	if u.Server().Sessions() != 1 {
		t.Fatalf("%d sessions, want the one established", u.Server().Sessions())
	}
	if rsp := p.send(&pfcpx.Message{Header: pfcp.Header{MessageType: pfcp.PFCP_SESSION_DELETION_REQUEST, SEID: seid}, Body: &pfcpx.SessionDeletionRequest{}}); pfcpx.CauseOf(rsp) != pfcpx.CauseAccepted {
		t.Fatalf("UPF-C stopped serving after malformed input: %+v", rsp.Body)
	}
}

// A retransmitted establishment (same sequence number and bytes, its
// answer lost) gets the first answer again and installs nothing twice
// (TS 29.244 6.4).
func TestRetransmittedRequestAppliedOnce(t *testing.T) {
	table := rules.NewMemTable()
	u := startUPFC(t, testConfig(t), table)
	p := newRawPeer(t, u.N4Addrs()[0])
	p.associate()
	first := p.send(establishment(t, pduSession("10.60.0.1"), nil))
	again := p.sendBytes(p.last)
	if table.Installs() != 1 || u.Server().Sessions() != 1 {
		t.Fatalf("a retransmission was applied again: %d installs, %d sessions", table.Installs(), u.Server().Sessions())
	}
	a, b := first.Body.(*pfcpx.SessionEstablishmentResponse), again.Body.(*pfcpx.SessionEstablishmentResponse)
	if a.UPFSEID.Seid != b.UPFSEID.Seid || first.Header.SequenceNumber != again.Header.SequenceNumber {
		t.Fatalf("the retransmission got another answer: SEID %d vs %d", a.UPFSEID.Seid, b.UPFSEID.Seid)
	}
	// A new request (next sequence number) with the same content is a
	// second session.
	p.send(establishment(t, pduSession("10.60.0.2"), nil))
	if table.Installs() != 2 {
		t.Fatalf("%d installs after a second establishment", table.Installs())
	}
}

// UPF-C killed and started again over the same tables serves the
// sessions it finds there: the SMF modifies and deletes them by their UP
// SEIDs, and new sessions get SEIDs and TEIDs none of them has.
func TestRestartRecoversSessionsFromTheTable(t *testing.T) {
	table := rules.NewMemTable() // outlives both UPF-Cs, as shared memory does
	cfg := testConfig(t)
	first := startUPFC(t, cfg, table)
	upf := first.N4Addrs()[0]
	c := newClient(t)
	ctx := context.Background()
	var before []*rules.Established
	for _, ue := range []string{"10.60.0.1", "10.60.0.2"} {
		est, err := c.Establish(ctx, upf, pduSession(ue))
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, est)
	}
	first.Stop(ctx)

	cfg.UPF.C.PFCPAddr = strings.TrimPrefix(upf, "udp:")
	second := startUPFC(t, cfg, table)
	if second.Server().Sessions() != 2 {
		t.Fatalf("the restarted UPF-C serves %d sessions, want the 2 of the table", second.Server().Sessions())
	}
	if _, err := c.Modify(ctx, upf, before[0].UPSEID, &rules.Modification{Create: qosFlow()}); err != nil {
		t.Fatalf("modify a recovered session: %v", err)
	}
	if s, _ := table.Session(before[0].UPSEID); len(s.PDRs) != 4 || s.PDRs[2].LocalFTEID.TEID != before[0].FTEIDs[1].TEID {
		t.Fatalf("the recovered session's new QoS flow is not on its tunnel: %+v", s.PDRs)
	}
	// The association went with the old process: the client sets it up
	// again on cause 72 and the establishment goes through.
	est, err := c.Establish(ctx, upf, pduSession("10.60.0.3"))
	if err != nil {
		t.Fatalf("establish after the restart: %v", err)
	}
	for _, b := range before {
		if est.UPSEID == b.UPSEID || est.FTEIDs[1].TEID == b.FTEIDs[1].TEID {
			t.Fatalf("new session SEID %#x TEID %#x collides with a recovered one %+v", est.UPSEID, est.FTEIDs[1].TEID, b)
		}
	}
	if _, err := c.Delete(ctx, upf, before[1].UPSEID); err != nil {
		t.Fatalf("delete a recovered session: %v", err)
	}
	if left, _ := table.Sessions(); len(left) != 2 {
		t.Fatalf("%d sessions in the table, want 2", len(left))
	}
}

// Releasing the association deletes the SMF's sessions (TS 29.244
// 6.2.8.3).
func TestAssociationReleaseDeletesSessions(t *testing.T) {
	table := rules.NewMemTable()
	u := startUPFC(t, testConfig(t), table)
	c := newClient(t)
	ctx := context.Background()
	if _, err := c.Establish(ctx, u.N4Addrs()[0], pduSession("10.60.0.1")); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, u.N4Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	if left, _ := table.Sessions(); len(left) != 0 {
		t.Fatalf("%d sessions left after the association's release", len(left))
	}
	if _, err := c.Heartbeat(ctx, u.N4Addrs()[0]); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
}

func equalSessions(a, b rules.Session) bool { return reflect.DeepEqual(a, b) }

// Many sessions established at once from one client (the SMF serving
// many UEs): every one succeeds with its own SEID and tunnel.
func TestConcurrentEstablishments(t *testing.T) {
	table := rules.NewMemTable()
	u := startUPFC(t, testConfig(t), table)
	c := newClient(t)
	const n = 200
	type result struct {
		est *rules.Established
		err error
	}
	results := make(chan result, n)
	for i := range n {
		go func() {
			est, err := c.Establish(context.Background(), u.N4Addrs()[0], pduSession(netip.AddrFrom4([4]byte{10, 60, byte(i >> 8), byte(i + 1)}).String()))
			results <- result{est, err}
		}()
	}
	seids, teids := map[uint64]bool{}, map[uint32]bool{}
	for range n {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		if seids[r.est.UPSEID] || teids[r.est.FTEIDs[1].TEID] {
			t.Fatalf("SEID %#x or TEID %#x given twice", r.est.UPSEID, r.est.FTEIDs[1].TEID)
		}
		seids[r.est.UPSEID], teids[r.est.FTEIDs[1].TEID] = true, true
	}
	if list, _ := table.Sessions(); len(list) != n {
		t.Fatalf("%d sessions in the table, want %d", len(list), n)
	}
}
