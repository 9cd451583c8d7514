package ransim

// Handover through scripted AMFs on two fake associations: what the
// source and target gNBs send (TS 38.413 8.4), where the UE is served
// afterwards, and that every failure leaves it with the source.

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"testing"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// targetGNB is a second gNB (ID 2, N3 10.100.0.3) on a fake association
// whose other end is a second scripted AMF; the first already ran NG Setup.
func targetGNB(t *testing.T) (*GNB, *scriptedAMF) {
	conn := newFakeConn()
	cfg := GNBConfig{PLMN: testPLMN, TAC: 1, ID: 2, N3: netip.MustParseAddr("10.100.0.3"),
		SNSSAIs: []models.Snssai{testSlice}, Log: slog.New(slog.DiscardHandler)}
	g := newGNB(cfg, conn, "fake")
	go g.readLoop()
	t.Cleanup(func() { g.Close() })
	return g, &scriptedAMF{t: t, conn: conn}
}

// hoScene is a registered UE with PDU session 1 on a source gNB, and
// a target gNB to move it to.
type hoScene struct {
	src, dst       *GNB
	amfSrc, amfDst *scriptedAMF
	ue             *UE
	ranID          int64 // at the source
}

func newHOScene(t *testing.T) hoScene {
	src, amfSrc := connectScripted(t)
	dst, amfDst := targetGNB(t)
	ue, ranID := amfSrc.register(src, "208930000000021")
	if res, _ := amfSrc.establish(ue, ranID); res.err != nil {
		t.Fatal(res.err)
	}
	return hoScene{src: src, dst: dst, amfSrc: amfSrc, amfDst: amfDst, ue: ue, ranID: ranID}
}

func (sc hoScene) run(f func(ctx context.Context) (any, error)) chan error {
	done := make(chan error, 1)
	go func() { _, err := f(context.Background()); done <- err }()
	return done
}

func (sc hoScene) xn() chan error {
	return sc.run(func(ctx context.Context) (any, error) { return sc.ue.HandoverXn(ctx, sc.dst) })
}

func (sc hoScene) n2(o N2Options) chan error {
	return sc.run(func(ctx context.Context) (any, error) { return sc.ue.HandoverN2(ctx, sc.dst, o) })
}

var testNH = bytes.Repeat([]byte{0x5A}, 32)

// releaseAtSource is the AMF ending the UE's context at the source after
// the handover; the source answers, and the UE — now at the target — is
// not told its connection ended.
func (sc hoScene) releaseAtSource(t *testing.T) {
	t.Helper()
	sc.amfSrc.send(ngapx.BuildUEContextReleaseCommand(testAMFUEID, sc.ranID,
		ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentSuccessfulHandover)))
	sc.amfSrc.next("UEContextReleaseComplete")
}

// servedBy checks the UE's gNB and that its session's tunnel is there.
func (sc hoScene) servedBy(t *testing.T, g *GNB) {
	t.Helper()
	s := sc.ue.Session(1)
	if sc.ue.GNB() != g || s == nil || s.Tunnel == nil || s.Tunnel.p != g.up || g.tunnel(sc.ue, 1) != s.Tunnel {
		t.Fatalf("the UE is served by gNB %d, its session's tunnel at %v; want gNB %d", sc.ue.GNB().ID(), s.Tunnel.p.Addr(), g.ID())
	}
}

// TS 23.502 4.9.1.2.2, TS 38.413 8.4.4: the target asks for the path
// switch with the DL tunnel it allocated, for the UE the source's AMF UE
// NGAP ID names; after the Acknowledge the UE and its NAS are at the target.
func TestXnHandoverMovesTheUEToTheTarget(t *testing.T) {
	sc := newHOScene(t)
	done := sc.xn()
	req, err := ngapx.ParsePathSwitchRequest(sc.amfDst.next("PathSwitchRequest"))
	if err != nil {
		t.Fatal(err)
	}
	if req.SourceAMFUEID != testAMFUEID || req.Cell != sc.dst.cell || len(req.ToSwitch) != 1 || req.ToSwitch[0].ID != 1 {
		t.Fatalf("Path Switch Request %+v: want the source's AMF UE NGAP ID, the target's cell, session 1", req)
	}
	tr, err := ngapx.ParsePathSwitchRequestTransfer(req.ToSwitch[0].Transfer)
	if err != nil || tr.DL.IPv4 != sc.dst.up.Addr() || tr.DL.TEID == 0 || len(tr.QFIs) != 1 {
		t.Fatalf("Path Switch Request Transfer %+v (%v): want a DL tunnel at the target's N3 with QFI 1", tr, err)
	}
	ackTr := sc.amfDst.built(ngapx.BuildPathSwitchRequestAcknowledgeTransfer(nil))
	sc.amfDst.send(ngapx.BuildPathSwitchRequestAcknowledge(ngapx.PathSwitchRequestAcknowledge{AMFUEID: testAMFUEID + 1,
		RANUEID: req.RANUEID, Security: ngapx.SecurityContext{NCC: 1, NH: testNH},
		Switched: []ngapx.SessionTransfer{{ID: 1, Transfer: ackTr}}, Allowed: []models.Snssai{testSlice}}))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sc.servedBy(t, sc.dst)
	if sc.ue.Session(1).Tunnel.DLTEID != tr.DL.TEID {
		t.Fatal("the session's tunnel is not the one announced in the path switch")
	}
	sc.releaseAtSource(t)
	if len(sc.ue.inbox) != 0 {
		t.Fatal("the source's release reached the UE, which is at the target")
	}
	// The UE's NAS now goes through the target, with the AMF UE NGAP ID
	// of the Acknowledge.
	go func() { _, _ = sc.ue.ReleasePDUSession(context.Background(), 1) }()
	ul := sc.amfDst.next("UplinkNASTransport")
	for _, ie := range ul.InitiatingMessage.Value.UplinkNASTransport.ProtocolIEs.List {
		if ie.Value.AMFUENGAPID != nil && ie.Value.AMFUENGAPID.Value != testAMFUEID+1 {
			t.Fatalf("uplink NAS with AMF UE NGAP ID %d, want the Acknowledge's", ie.Value.AMFUENGAPID.Value)
		}
	}
}

// TS 38.413 8.4.4.3: Path Switch Request Failure — the UE stays with the
// source and the target keeps nothing.
func TestPathSwitchFailureLeavesTheUEWithTheSource(t *testing.T) {
	sc := newHOScene(t)
	done := sc.xn()
	req, err := ngapx.ParsePathSwitchRequest(sc.amfDst.next("PathSwitchRequest"))
	if err != nil {
		t.Fatal(err)
	}
	fail := sc.amfDst.built(ngapx.BuildPathSwitchRequestSetupFailedTransfer(ngapx.CauseMisc(ngapType.CauseMiscPresentUnspecified)))
	sc.amfDst.send(ngapx.BuildPathSwitchRequestFailure(ngapx.PathSwitchRequestFailure{AMFUEID: testAMFUEID, RANUEID: req.RANUEID,
		Released: []ngapx.SessionTransfer{{ID: 1, Transfer: fail}}}))
	if err := <-done; !errors.Is(err, ErrPathSwitchRequestFailure) {
		t.Fatalf("handover ended with %v, want Path Switch Request Failure", err)
	}
	sc.servedBy(t, sc.src)
	if sc.dst.up.Tunnels() != 0 || sc.dst.stillConnected() != 0 {
		t.Fatalf("the target keeps %d tunnels, %d UEs", sc.dst.up.Tunnels(), sc.dst.stillConnected())
	}
	if sc.ue.Session(1).Tunnel.forwarding() {
		t.Fatal("the source still forwards the UE's packets")
	}
}

// handoverRequest is the AMF's Handover Request to the target for the
// scene's session (the SMF's setup transfer with the UPF's tunnel).
func (sc hoScene) handoverRequest(t *testing.T) []byte {
	setup := sc.amfDst.built(ngapx.BuildPDUSessionResourceSetupRequestTransfer(ngapx.SetupRequestTransfer{
		UL: testUPF, Flows: []ngapx.FlowQoS{{QFI: 1, FiveQI: 9, ARPPriority: 8}}, AMBRDown: 1e9, AMBRUp: 1e9}))
	return sc.amfDst.built(ngapx.BuildHandoverRequest(ngapx.HandoverRequest{AMFUEID: testAMFUEID + 1,
		Cause:  ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHandoverDesirableForRadioReason),
		AMBRUL: 1e9, AMBRDL: 1e9, SecurityCaps: ueSecurityCapabilities, Security: ngapx.SecurityContext{NCC: 2, NH: testNH},
		Sessions: []ngapx.SessionResource{{ID: 1, SNSSAI: testSlice, Transfer: setup}},
		Allowed:  []models.Snssai{testSlice}, Container: []byte{0}, GUAMI: testGUAMI}))
}

// handoverRequired reads the source's Handover Required and checks it
// names the target (TS 38.413 9.2.3.1).
func (sc hoScene) handoverRequired(t *testing.T) ngapx.HandoverRequired {
	t.Helper()
	r, err := ngapx.ParseHandoverRequired(sc.amfSrc.next("HandoverRequired"))
	if err != nil {
		t.Fatal(err)
	}
	want := ngapx.GlobalGNBID{PLMN: testPLMN, ID: 2, Bits: 24}
	if r.AMFUEID != testAMFUEID || r.RANUEID != sc.ranID || r.Target.GNB != want || r.Target.TAI != (domain.TAI{PLMN: testPLMN, TAC: 1}) ||
		len(r.Sessions) != 1 || r.Sessions[0].ID != 1 {
		t.Fatalf("Handover Required %+v: want the UE, target %v, session 1", r, want)
	}
	return r
}

// TS 23.502 4.9.1.3, TS 38.413 8.4.1-8.4.3, 8.4.6: the whole N2 handover;
// the target offers a DL forwarding tunnel, the source reports its PDCP
// state, the target notifies with its new RAN UE NGAP ID.
func TestN2HandoverMovesTheUEToTheTarget(t *testing.T) {
	sc := newHOScene(t)
	done := sc.n2(N2Options{})
	sc.handoverRequired(t)
	sc.amfDst.send(sc.handoverRequest(t), nil)
	ack, err := ngapx.ParseHandoverRequestAcknowledge(sc.amfDst.next("HandoverRequestAcknowledge"))
	if err != nil || ack.AMFUEID != testAMFUEID+1 || len(ack.Admitted) != 1 || len(ack.Container) == 0 {
		t.Fatalf("Handover Request Acknowledge %+v (%v): want session 1 admitted and a container", ack, err)
	}
	at, err := ngapx.ParseHandoverRequestAcknowledgeTransfer(ack.Admitted[0].Transfer)
	if err != nil || at.DL.IPv4 != sc.dst.up.Addr() || at.DLForwarding == nil || at.DLForwarding.TEID == at.DL.TEID {
		t.Fatalf("Acknowledge Transfer %+v (%v): want DL and DL forwarding tunnels at the target", at, err)
	}
	cmdTr := sc.amfSrc.built(ngapx.BuildHandoverCommandTransfer(ngapx.HandoverCommand{DLForwarding: at.DLForwarding, ForwardQFIs: []uint8{1}}))
	sc.amfSrc.send(ngapx.BuildHandoverCommand(ngapx.HandoverCommandMsg{UEIDs: ngapx.UEIDs{AMFUEID: testAMFUEID, RANUEID: sc.ranID},
		Sessions: []ngapx.SessionTransfer{{ID: 1, Transfer: cmdTr}}, Container: ack.Container}))
	status, err := ngapx.ParseUplinkRANStatusTransfer(sc.amfSrc.next("UplinkRANStatusTransfer"))
	if err != nil || len(ngapx.DRBCounts(status.Container)) != 1 {
		t.Fatalf("Uplink RAN Status Transfer %+v (%v): want one DRB, the session's", status, err)
	}
	// TS 38.413 8.4.7: relayed to the target, which waits for it before
	// the UE arrives.
	sc.amfDst.send(ngapx.BuildDownlinkRANStatusTransfer(ngapx.RANStatusTransfer{
		UEIDs: ngapx.UEIDs{AMFUEID: ack.AMFUEID, RANUEID: ack.RANUEID}, Container: status.Container}))
	notify, cell, err := ngapx.ParseHandoverNotify(sc.amfDst.next("HandoverNotify"))
	if err != nil || notify.AMFUEID != testAMFUEID+1 || notify.RANUEID != ack.RANUEID || cell != sc.dst.cell {
		t.Fatalf("Handover Notify %+v at %+v (%v): want the Acknowledge's IDs and the target's cell", notify, cell, err)
	}
	sc.releaseAtSource(t)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sc.servedBy(t, sc.dst)
	if len(sc.ue.inbox) != 0 {
		t.Fatal("the source's release reached the UE, which is at the target")
	}
}

// TS 23.502 4.9.1.3.4: the target refuses (Handover Failure), the AMF
// answers the source with Handover Preparation Failure; the UE stays.
func TestRefusedN2HandoverLeavesTheUEWithTheSource(t *testing.T) {
	sc := newHOScene(t)
	sc.dst.SetTargetBehaviour(TargetRefuses)
	done := sc.n2(N2Options{})
	sc.handoverRequired(t)
	sc.amfDst.send(sc.handoverRequest(t), nil)
	if _, _, err := ngapx.ParseHandoverFailure(sc.amfDst.next("HandoverFailure")); err != nil {
		t.Fatal(err)
	}
	sc.amfSrc.send(ngapx.BuildHandoverPreparationFailure(ngapx.HandoverPreparationFailure{
		UEIDs: ngapx.UEIDs{AMFUEID: testAMFUEID, RANUEID: sc.ranID},
		Cause: ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHoFailureInTarget5GCNgranNodeOrTargetSystem)}))
	if err := <-done; !errors.Is(err, ErrHandoverPreparationFailure) {
		t.Fatalf("handover ended with %v, want Handover Preparation Failure", err)
	}
	sc.servedBy(t, sc.src)
	if sc.dst.up.Tunnels() != 0 {
		t.Fatalf("the refusing target holds %d tunnels", sc.dst.up.Tunnels())
	}
}

// TS 38.413 8.4.5: the source cancels after the command; the AMF releases
// what the target prepared, and the UE stays with the source.
func TestCancelledN2HandoverLeavesTheUEWithTheSource(t *testing.T) {
	sc := newHOScene(t)
	done := sc.n2(N2Options{Cancel: true})
	sc.handoverRequired(t)
	sc.amfDst.send(sc.handoverRequest(t), nil)
	ack, err := ngapx.ParseHandoverRequestAcknowledge(sc.amfDst.next("HandoverRequestAcknowledge"))
	if err != nil {
		t.Fatal(err)
	}
	sc.amfSrc.send(ngapx.BuildHandoverCommand(ngapx.HandoverCommandMsg{UEIDs: ngapx.UEIDs{AMFUEID: testAMFUEID, RANUEID: sc.ranID},
		Container: ack.Container}))
	if _, _, err := ngapx.ParseHandoverCancel(sc.amfSrc.next("HandoverCancel")); err != nil {
		t.Fatal(err)
	}
	sc.amfSrc.send(ngapx.BuildHandoverCancelAcknowledge(ngapx.UEIDs{AMFUEID: testAMFUEID, RANUEID: sc.ranID}))
	if err := <-done; !errors.Is(err, ErrHandoverCancelled) {
		t.Fatalf("handover ended with %v, want cancelled", err)
	}
	sc.amfDst.send(ngapx.BuildUEContextReleaseCommand(ack.AMFUEID, ack.RANUEID,
		ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHandoverCancelled)))
	sc.amfDst.next("UEContextReleaseComplete")
	sc.servedBy(t, sc.src)
	if sc.dst.up.Tunnels() != 0 || sc.dst.stillConnected() != 0 {
		t.Fatalf("after the release the target keeps %d tunnels, %d UEs", sc.dst.up.Tunnels(), sc.dst.stillConnected())
	}
}

// TS 38.413 8.7.5: an AMF that does not know the UE answers the Path Switch
// Request with Error Indication; the handover ends with its cause at once
// and the UE stays with the source.
func TestErrorIndicationEndsAPathSwitch(t *testing.T) {
	sc := newHOScene(t)
	done := sc.xn()
	req, err := ngapx.ParsePathSwitchRequest(sc.amfDst.next("PathSwitchRequest"))
	if err != nil {
		t.Fatal(err)
	}
	sc.amfDst.send(ngapx.BuildErrorIndication(-1, req.RANUEID, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownLocalUENGAPID)))
	err = <-done
	if err == nil || !strings.Contains(err.Error(), "Error Indication") {
		t.Fatalf("handover ended with %v, want the Error Indication", err)
	}
	sc.servedBy(t, sc.src)
}
