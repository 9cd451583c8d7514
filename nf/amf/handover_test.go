package amf

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/security"
)

// The second gNB of the handover tests: ID 2 in the test PLMN, serving TA 1.
var (
	targetGNB  = ngapx.GlobalGNBID{PLMN: testPLMN, ID: 2, Bits: 24}
	targetCell = ngapx.Cell{TAI: domain.TAI{PLMN: testPLMN, TAC: 1}, CellID: 0x200}
)

// connectTarget brings up the second gNB's association with NG Setup.
func (h *harness) connectTarget() *gnbSide {
	g := h.connect()
	g.send(must2(h.t)(ngapx.BuildNGSetupRequest(ngapx.GNB{PLMN: testPLMN, ID: targetGNB.ID, TACs: []domain.TAC{1},
		SNSSAIs: []models.Snssai{slice1}})))
	g.expect("NGSetupResponse")
	return g
}

// expectPDU reads the next message the AMF sent, which must be name, as the gNB decodes it.
func (g *gnbSide) expectPDU(name string) *ngapType.NGAPPDU {
	g.t.Helper()
	select {
	case m := <-g.conn.out:
		pdu, err := ngapx.Decode(m.b)
		if err != nil {
			g.t.Fatalf("AMF sent undecodable NGAP: %v", err)
		}
		if s, _ := ngapx.Summarize(pdu); s.Name != name {
			g.t.Fatalf("AMF sent %s, want %s", s.Name, name)
		}
		return pdu
	case <-time.After(10 * time.Second): // bounds a failing test only
		g.t.Fatalf("no %s from the AMF", name)
	}
	return nil
}

// quiet checks the gNB got nothing more (after the AMF answered a later
// message of the same UE, so anything sent would already be queued).
func (g *gnbSide) quiet() {
	g.t.Helper()
	select {
	case m := <-g.conn.out:
		pdu, _ := ngapx.Decode(m.b)
		s, _ := ngapx.Summarize(pdu)
		g.t.Fatalf("gNB got an unexpected %s (cause %s)", s.Name, ngapx.CauseString(s.Cause))
	default:
	}
}

// smfAnswers sets the fake SMF's answer to UpdateSMContext: hoState and
// N2 SM information of type typ.
func smfAnswers(smf *fakeSMF, hoState models.HoState, typ models.N2SmInfoType, n2 []byte) {
	body := models.SmContextUpdatedData{HoState: hoState, N2SmInfoType: typ}
	var parts []sbi.Part
	if n2 != nil {
		body.N2SmInfo = &models.RefToBinaryData{ContentId: "n2"}
		parts = append(parts, sbi.Part{ContentID: "n2", ContentType: sbi.ContentTypeNGAP, Data: n2})
	}
	smf.set("modify", smfReply{status: 200, body: body, parts: parts})
}

// deregisterVia: the UE's NAS still works on the gNB it is on (TS 24.501
// 5.5.2.2): a deregistration is accepted there.
func (u *testUE) deregisterVia(g *gnbSide, ranID int64) {
	u.t.Helper()
	u.g, u.ranID = g, ranID
	u.up(u.deregistrationRequest(false))
	if m := u.dl("DownlinkNASTransport"); m.DeregistrationAcceptUEOriginatingDeregistration == nil {
		u.t.Fatal("want Deregistration Accept")
	}
}

// firstNH is the NH of NCC 1 the UE derives itself (TS 33.501 A.10) from
// KAMF and the KgNB of its Initial Context Setup (A.9, uplink COUNT 0 of
// the Security Mode Complete).
func (u *testUE) firstNH() []byte {
	nh, err := security.KDF(u.kamf, 0x6F, security.KgNB(u.kamf, 0, security.AccessType3GPP))
	if err != nil {
		u.t.Fatal(err)
	}
	return nh
}

var (
	psrTransfer = []byte{0x00, 0x1f, 0x0a} // opaque to the AMF: the gNB's and SMF's codecs read them
	ackTransfer = []byte{0x00, 0xac}
	rqdTransfer = []byte{0x00}
	hoReq       = []byte{0x00, 0x03, 0x00, 0x8b}
	hoAck       = []byte{0x00, 0x07, 0xc0}
	hoCmd       = []byte{0x01}
)

func pathSwitch(t *testing.T, amfID, ranID int64, id uint8) []byte {
	return must2(t)(ngapx.BuildPathSwitchRequest(ngapx.PathSwitchRequestMsg{RANUEID: ranID, SourceAMFUEID: amfID, Cell: targetCell,
		SecurityCaps: ngapx.SecurityCapabilities{NREncryption: [2]byte{0xE0}, NRIntegrity: [2]byte{0xE0}},
		ToSwitch:     []ngapx.SessionTransfer{{ID: int64(id), Transfer: psrTransfer}}}))
}

// TS 23.502 4.9.1.2.2: the SMF switches the session, the target gets the
// acknowledgement with a fresh {NH, NCC}, the source is released, and the
// UE's NAS runs on the target from then on.
func TestXnHandover(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000301", 5)
	g2 := h.connectTarget()
	smfAnswers(smf, "", models.N2SmInfoType_PATH_SWITCH_REQ_ACK, ackTransfer)
	g2.send(pathSwitch(t, ue.amfID, 50, 5))

	c := smf.expect("modify")
	if c.update.N2SmInfoType != models.N2SmInfoType_PATH_SWITCH_REQ || !bytes.Equal(c.n2, psrTransfer) || !c.update.ToBeSwitched {
		t.Fatalf("SMF got %s toBeSwitched %v with % x", c.update.N2SmInfoType, c.update.ToBeSwitched, c.n2)
	}
	ack, err := ngapx.ParsePathSwitchRequestAcknowledge(g2.expectPDU("PathSwitchRequestAcknowledge"))
	switch {
	case err != nil:
		t.Fatal(err)
	case ack.AMFUEID != ue.amfID || ack.RANUEID != 50:
		t.Fatalf("acknowledge for %d/%d", ack.AMFUEID, ack.RANUEID)
	case len(ack.Switched) != 1 || ack.Switched[0].ID != 5 || !bytes.Equal(ack.Switched[0].Transfer, ackTransfer):
		t.Fatalf("switched %+v", ack.Switched)
	case ack.Security.NCC != 1 || !bytes.Equal(ack.Security.NH, ue.firstNH()):
		t.Fatalf("security context NCC %d NH %x, want 1 and the UE's own NH", ack.Security.NCC, ack.Security.NH)
	case ack.SecurityCaps == nil:
		t.Fatal("the target reported other capabilities than the UE's: the AMF's copy must come back")
	}
	rel := g.expect("UEContextReleaseCommand")
	wantCause(t, rel, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentSuccessfulHandover))
	if rel.AMFUEID != ue.amfID || rel.RANUEID != 1 {
		t.Fatalf("source released %d/%d", rel.AMFUEID, rel.RANUEID)
	}
	g.send(releaseComplete(t, ue.amfID, 1)) // ends the old leg only

	ue.deregisterVia(g2, 50)
	smf.expect("release")
	g.quiet()
	h.wantMetric("l25gc_amf_handovers_total", map[string]string{"kind": "xn", "outcome": "succeeded"}, 1, "Xn handovers completed")
}

// A Path Switch Request naming no UE the AMF knows gets Path Switch
// Request Failure (TS 38.413 8.4.4.3), every session released.
func TestPathSwitchForUnknownUE(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	_ = g
	g2 := h.connectTarget()
	g2.send(pathSwitch(t, 4242, 51, 3))
	f, err := ngapx.ParsePathSwitchRequestFailure(g2.expectPDU("PathSwitchRequestFailure"))
	if err != nil || f.AMFUEID != 4242 || f.RANUEID != 51 || len(f.Released) != 1 || f.Released[0].ID != 3 {
		t.Fatalf("failure %+v, %v", f, err)
	}
	cause, err := ngapx.ParsePathSwitchRequestSetupFailedTransfer(f.Released[0].Transfer)
	if err != nil || cause.RadioNetwork == nil || cause.RadioNetwork.Value != ngapType.CauseRadioNetworkPresentUnknownLocalUENGAPID {
		t.Fatalf("released with %+v, %v", cause, err)
	}
	h.wantMetric("l25gc_amf_handovers_total", map[string]string{"kind": "xn", "outcome": "failed", "reason": "unknown-ue"}, 1, "refused path switches")
}

// The SMF cannot switch the only session: Path Switch Request Failure with
// the SMF's transfer, and the UE stays served by the source.
func TestPathSwitchNothingSwitched(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000302", 1)
	g2 := h.connectTarget()
	refusal := []byte{0x00, 0x00}
	smfAnswers(smf, "", models.N2SmInfoType_PATH_SWITCH_SETUP_FAIL, refusal)
	g2.send(pathSwitch(t, ue.amfID, 52, 1))
	smf.expect("modify")
	f, err := ngapx.ParsePathSwitchRequestFailure(g2.expectPDU("PathSwitchRequestFailure"))
	if err != nil || f.AMFUEID != ue.amfID || len(f.Released) != 1 || !bytes.Equal(f.Released[0].Transfer, refusal) {
		t.Fatalf("failure %+v, %v", f, err)
	}
	ue.deregisterVia(g, 1)
	g2.quiet()
	h.wantMetric("l25gc_amf_handovers_total", map[string]string{"kind": "xn", "outcome": "failed", "reason": "no-session-switched"}, 1, "failed path switches")
}

// n2Required is the source's Handover Required towards the second gNB.
func n2Required(t *testing.T, ue *testUE, id uint8, target ngapx.GlobalGNBID) []byte {
	return must2(t)(ngapx.BuildHandoverRequired(ngapx.HandoverRequired{UEIDs: ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: ue.ranID},
		Cause:  ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHandoverDesirableForRadioReason),
		Target: ngapx.Target{GNB: target, TAI: targetCell.TAI}, Sessions: []ngapx.SessionTransfer{{ID: int64(id), Transfer: rqdTransfer}},
		Container: []byte("source to target")}))
}

// prepareN2 runs an N2 handover up to the Handover Request at the target
// and checks the SMF's PREPARING update and the request.
func prepareN2(t *testing.T, g, g2 *gnbSide, ue *testUE, smf *fakeSMF, id uint8) ngapx.HandoverRequest {
	t.Helper()
	smfAnswers(smf, models.HoState_PREPARING, models.N2SmInfoType_PDU_RES_SETUP_REQ, hoReq)
	g.send(n2Required(t, ue, id, targetGNB))
	c := smf.expect("modify")
	u := c.update
	switch {
	case u.HoState != models.HoState_PREPARING || u.N2SmInfoType != models.N2SmInfoType_HANDOVER_REQUIRED || !bytes.Equal(c.n2, rqdTransfer):
		t.Fatalf("SMF got hoState %s %s with % x", u.HoState, u.N2SmInfoType, c.n2)
	case u.TargetId == nil || u.TargetId.RanNodeId == nil || u.TargetId.RanNodeId.GNbId == nil ||
		u.TargetId.RanNodeId.GNbId.GNBValue != "000002" || u.TargetId.RanNodeId.GNbId.BitLength != 24:
		t.Fatalf("targetId %+v", u.TargetId)
	}
	req, err := ngapx.ParseHandoverRequest(g2.expectPDU("HandoverRequest"))
	switch {
	case err != nil:
		t.Fatal(err)
	case req.AMFUEID != ue.amfID || len(req.Sessions) != 1 || req.Sessions[0].ID != int64(id) || !bytes.Equal(req.Sessions[0].Transfer, hoReq):
		t.Fatalf("handover request for %d with %+v", req.AMFUEID, req.Sessions)
	case !domain.SameModelSNSSAI(req.Sessions[0].SNSSAI, slice1) || req.GUAMI != testGUAMI || string(req.Container) != "source to target":
		t.Fatalf("S-NSSAI %+v GUAMI %+v container %q", req.Sessions[0].SNSSAI, req.GUAMI, req.Container)
	case req.Security.NCC != 1 || !bytes.Equal(req.Security.NH, ue.firstNH()):
		t.Fatalf("security context NCC %d", req.Security.NCC)
	}
	return req
}

func n2Ack(t *testing.T, amfID, ranID int64, id uint8) []byte {
	return must2(t)(ngapx.BuildHandoverRequestAcknowledge(ngapx.HandoverRequestAcknowledge{UEIDs: ngapx.UEIDs{AMFUEID: amfID, RANUEID: ranID},
		Admitted: []ngapx.SessionTransfer{{ID: int64(id), Transfer: hoAck}}, Container: []byte("target to source")}))
}

// TS 23.502 4.9.1.3: preparation, execution and completion; the RAN
// status goes from source to target; the UE's NAS then runs on the target.
func TestN2Handover(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000303", 5)
	g2 := h.connectTarget()
	prepareN2(t, g, g2, ue, smf, 5)

	smfAnswers(smf, models.HoState_PREPARED, models.N2SmInfoType_HANDOVER_CMD, hoCmd)
	g2.send(n2Ack(t, ue.amfID, 60, 5))
	if c := smf.expect("modify"); c.update.HoState != models.HoState_PREPARED || c.update.N2SmInfoType != models.N2SmInfoType_HANDOVER_REQ_ACK ||
		!bytes.Equal(c.n2, hoAck) {
		t.Fatalf("SMF got hoState %s %s", c.update.HoState, c.update.N2SmInfoType)
	}
	cmd, err := ngapx.ParseHandoverCommand(g.expectPDU("HandoverCommand"))
	if err != nil || cmd.AMFUEID != ue.amfID || cmd.RANUEID != 1 || len(cmd.Sessions) != 1 || !bytes.Equal(cmd.Sessions[0].Transfer, hoCmd) ||
		string(cmd.Container) != "target to source" {
		t.Fatalf("handover command %+v, %v", cmd, err)
	}

	counts, _ := ngapx.RANStatusContainer([]ngapx.DRBCount{{DRB: 1, ULPDCPSN: 7, DLPDCPSN: 9}})
	g.send(must2(t)(ngapx.BuildUplinkRANStatusTransfer(ngapx.RANStatusTransfer{UEIDs: ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: 1}, Container: counts})))
	down, err := ngapx.ParseDownlinkRANStatusTransfer(g2.expectPDU("DownlinkRANStatusTransfer"))
	if err != nil || down.RANUEID != 60 || ngapx.DRBCounts(down.Container)[0].DLPDCPSN != 9 {
		t.Fatalf("relayed status %+v, %v", down, err)
	}

	smf.set("modify", smfReply{status: 204})
	g2.send(must2(t)(ngapx.BuildHandoverNotify(ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: 60}, targetCell)))
	if c := smf.expect("modify"); c.update.HoState != models.HoState_COMPLETED {
		t.Fatalf("SMF got hoState %s, want COMPLETED", c.update.HoState)
	}
	rel := g.expect("UEContextReleaseCommand")
	wantCause(t, rel, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentSuccessfulHandover))
	// A status transfer the source sent before it heard of its release
	// is dropped quietly (checked by g.quiet below).
	g.send(must2(t)(ngapx.BuildUplinkRANStatusTransfer(ngapx.RANStatusTransfer{UEIDs: ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: 1}, Container: counts})))
	g.send(releaseComplete(t, ue.amfID, 1))

	ue.deregisterVia(g2, 60)
	smf.expect("release")
	g.quiet()
	h.wantMetric("l25gc_amf_handovers_total", map[string]string{"kind": "n2", "outcome": "succeeded"}, 1, "N2 handovers completed")
}

// expectCancelled reads the SMF's CANCELLED update.
func expectCancelled(t *testing.T, smf *fakeSMF) {
	t.Helper()
	if c := smf.expect("modify"); c.update.HoState != models.HoState_CANCELLED {
		t.Fatalf("SMF got hoState %s, want CANCELLED", c.update.HoState)
	}
}

// TS 38.413 8.4.5: the source cancels while the target prepares; the SMF
// cancels, the target releases its context, the source is acknowledged
// and still serves the UE.
func TestN2HandoverCancel(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000304", 5)
	g2 := h.connectTarget()
	prepareN2(t, g, g2, ue, smf, 5)
	smf.set("modify", smfReply{status: 204})
	g.send(must2(t)(ngapx.BuildHandoverCancel(ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: 1},
		ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHandoverCancelled))))
	expectCancelled(t, smf)
	wantCause(t, g2.expect("UEContextReleaseCommand"), ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHandoverCancelled))
	if ack := g.expect("HandoverCancelAcknowledge"); ack.AMFUEID != ue.amfID || ack.RANUEID != 1 {
		t.Fatalf("cancel acknowledged for %d/%d", ack.AMFUEID, ack.RANUEID)
	}
	g2.send(releaseComplete(t, ue.amfID, 61)) // the target's context is gone; nothing else happens
	ue.deregisterVia(g, 1)
	g2.quiet()
	h.wantMetric("l25gc_amf_handovers_total", map[string]string{"kind": "n2", "outcome": "failed", "reason": "cancelled"}, 1, "cancelled handovers")
}

// TS 38.413 8.4.2.3: the target refuses; the source hears Handover
// Preparation Failure with the target's cause and keeps the UE.
func TestN2HandoverTargetFailure(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000305", 5)
	g2 := h.connectTarget()
	prepareN2(t, g, g2, ue, smf, 5)
	smf.set("modify", smfReply{status: 204})
	refused := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentNoRadioResourcesAvailableInTargetCell)
	g2.send(must2(t)(ngapx.BuildHandoverFailure(ue.amfID, refused)))
	wantCause(t, g.expect("HandoverPreparationFailure"), refused)
	expectCancelled(t, smf)
	ue.deregisterVia(g, 1)
	g2.quiet()
	h.wantMetric("l25gc_amf_handovers_total", map[string]string{"kind": "n2", "outcome": "failed", "reason": "target-refused"}, 1, "refused handovers")
}

// A target that never answers: TNGRELOCprep ends the preparation with
// Handover Preparation Failure, the SMF cancels, the target is told to
// release what it may have set up, and the UE stays with the source.
func TestN2HandoverTargetSilent(t *testing.T) {
	// Long enough for the SMF's answer and the Handover Request on a loaded machine.
	h, g := newSetUpHarness(t, func(c *config.Config) { c.AMF.NGAP.TNGRELOCprep = time.Second })
	smf, _ := h.withSMF()
	ue := h.newUE(g, "0000000306", 1)
	establishOn(t, h, g, ue, smf, 5)
	g2 := h.connectTarget()
	prepareN2(t, g, g2, ue, smf, 5)
	smf.set("modify", smfReply{status: 204})
	wantCause(t, g.expect("HandoverPreparationFailure"), ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentTngrelocprepExpiry))
	expectCancelled(t, smf)
	g2.expect("UEContextReleaseCommand")
	ue.deregisterVia(g, 1)
	h.wantMetric("l25gc_amf_handovers_total", map[string]string{"kind": "n2", "outcome": "failed", "reason": "prep-timeout"}, 1, "timed-out preparations")
}

// establishOn registers the UE on g and brings its PDU session up with the fake SMF.
func establishOn(t *testing.T, h *harness, g *gnbSide, ue *testUE, smf *fakeSMF, id uint8) {
	t.Helper()
	ue.register()
	addSession(t, h, g, ue, smf, id)
}

// A target the AMF has no association with: Handover Preparation Failure
// (unknown target ID), no SMF is asked.
func TestN2HandoverUnknownTarget(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000307", 5)
	g.send(n2Required(t, ue, 5, ngapx.GlobalGNBID{PLMN: testPLMN, ID: 0x77, Bits: 24}))
	wantCause(t, g.expect("HandoverPreparationFailure"), ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownTargetID))
	ue.deregisterVia(g, 1)
	smf.expect("release")
	smf.none()
	h.wantMetric("l25gc_amf_handovers_total", map[string]string{"kind": "n2", "outcome": "failed", "reason": "unknown-target"}, 1, "handovers to unknown targets")
}

// Malformed handover IEs: a Handover Required without its Target ID gets
// Handover Preparation Failure with a protocol cause; a Handover Notify
// or Handover Required for an unknown AMF UE NGAP ID, Error Indication;
// a Handover Notify with no handover running, Error Indication. The UE is
// unharmed.
func TestMalformedHandoverMessages(t *testing.T) {
	h, g, ue, _ := establishedUE(t, "0000000308", 5)
	g2 := h.connectTarget()

	pdu, err := ngapx.Decode(n2Required(t, ue, 5, targetGNB))
	if err != nil {
		t.Fatal(err)
	}
	m := pdu.InitiatingMessage.Value.HandoverRequired
	kept := m.ProtocolIEs.List[:0]
	for _, ie := range m.ProtocolIEs.List {
		if ie.Value.TargetID == nil {
			kept = append(kept, ie)
		}
	}
	m.ProtocolIEs.List = kept
	g.send(must2(t)(ngapx.Encode(pdu)))
	wantCause(t, g.expect("HandoverPreparationFailure"), ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorReject))

	g2.send(must2(t)(ngapx.BuildHandoverNotify(ngapx.UEIDs{AMFUEID: 9999, RANUEID: 3}, targetCell)))
	wantCause(t, g2.expect("ErrorIndication"), ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownLocalUENGAPID))

	g2.send(must2(t)(ngapx.BuildHandoverNotify(ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: 3}, targetCell)))
	wantCause(t, g2.expect("ErrorIndication"), ngapx.CauseProtocol(ngapType.CauseProtocolPresentMessageNotCompatibleWithReceiverState))

	// The source's Handover Required on the wrong RAN UE NGAP ID.
	ue.ranID = 77
	g.send(n2Required(t, ue, 5, targetGNB))
	wantCause(t, g.expect("ErrorIndication"), ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentInconsistentRemoteUENGAPID))

	ue.deregisterVia(g, 1)
}

// No Handover Notify within TNGRELOCoverall: the target's context is
// released, the SMF cancels, and the UE stays with the source.
func TestN2HandoverNoNotify(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) { c.AMF.NGAP.TNGRELOCoverall = 100 * time.Millisecond })
	smf, _ := h.withSMF()
	ue := h.newUE(g, "0000000309", 1)
	establishOn(t, h, g, ue, smf, 5)
	g2 := h.connectTarget()
	prepareN2(t, g, g2, ue, smf, 5)
	smfAnswers(smf, models.HoState_PREPARED, models.N2SmInfoType_HANDOVER_CMD, hoCmd)
	g2.send(n2Ack(t, ue.amfID, 62, 5))
	smf.expect("modify")
	g.expect("HandoverCommand")
	smf.set("modify", smfReply{status: 204})
	rel := g2.expect("UEContextReleaseCommand")
	wantCause(t, rel, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentTngrelocoverallExpiry))
	if rel.RANUEID != 62 {
		t.Fatalf("target released RAN UE %d, want 62", rel.RANUEID)
	}
	expectCancelled(t, smf)
	ue.deregisterVia(g, 1)
	h.wantMetric("l25gc_amf_handovers_total", map[string]string{"kind": "n2", "outcome": "failed", "reason": "overall-timeout"}, 1, "handovers never notified")
}

// The source loses the UE while the target prepares (UE Context Release
// Request): the preparation is undone and the UE goes to CM-IDLE with no
// handover left behind.
func TestN2HandoverSourceLost(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000310", 5)
	g2 := h.connectTarget()
	prepareN2(t, g, g2, ue, smf, 5)
	smf.set("modify", smfReply{status: 204})
	g.send(releaseRequest(t, ue.amfID, 1))
	g.expect("UEContextReleaseCommand")
	g.send(releaseComplete(t, ue.amfID, 1))
	// Deactivation (CM-IDLE) and the cancelled preparation, in either order.
	a, b := smf.next1(), smf.next1()
	states := map[models.HoState]bool{a.update.HoState: true, b.update.HoState: true}
	ups := map[models.UpCnxState]bool{a.update.UpCnxState: true, b.update.UpCnxState: true}
	if !states[models.HoState_CANCELLED] || !ups[models.UpCnxState_DEACTIVATED] {
		t.Fatalf("SMF got %+v and %+v", a.update, b.update)
	}
	g2.expect("UEContextReleaseCommand")
	h.wantMetric("l25gc_amf_handovers_total", map[string]string{"kind": "n2", "outcome": "failed", "reason": "source-lost"}, 1, "abandoned handovers")
}

// scriptedUpdates answers UpdateSMContext per SM context (the fake SMF
// answers every context alike) and passes everything else to the fake SMF.
type scriptedUpdates struct {
	SessionConsumer
	answer func(ref string) (SMAnswer, error)
}

func (s scriptedUpdates) UpdateSMContext(_ context.Context, uri string, _ models.SmfPduSessionSmContextUpdateData, _, _ []byte) (SMAnswer, error) {
	return s.answer(uri[strings.LastIndex(uri, "/")+1:])
}

// addSession brings a second PDU session up for a registered UE.
func addSession(t *testing.T, h *harness, g *gnbSide, ue *testUE, smf *fakeSMF, id uint8) {
	t.Helper()
	ue.requestSession(id, &slice1, "internet")
	smf.expect("create")
	req, parts := transferRequest(int32(id), models.AmfCommunicationNgapIeType_PDU_RES_SETUP_REQ, []byte{0x2e, id, 1, 0xc2}, []byte{9})
	if w, p := h.n1n2(ue.supi, req, parts...); w.Code != 200 {
		t.Fatalf("%d %+v", w.Code, p)
	}
	g.readSessionRequest("PDUSessionResourceSetupRequest")
	g.send(setupResponse(t, ue.amfID, ue.ranID, map[int64][]byte{int64(id): {1}}, nil))
	smf.expect("modify")
}

// Of two sessions one is switched and one refused by its SMF: the target
// gets the acknowledgement with the switched one and the refused one in
// the released list with the SMF's transfer (TS 38.413 9.2.3.9), and the
// UE moves.
func TestXnHandoverPartial(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000311", 1)
	addSession(t, h, g, ue, smf, 2)
	g2 := h.connectTarget()
	refusal := []byte{0x00, 0x40}
	h.amf.opts.Sessions = scriptedUpdates{SessionConsumer: h.amf.opts.Sessions, answer: func(ref string) (SMAnswer, error) {
		if ref == "1" {
			return SMAnswer{N2Type: models.N2SmInfoType_PATH_SWITCH_REQ_ACK, N2: ackTransfer}, nil
		}
		return SMAnswer{N2Type: models.N2SmInfoType_PATH_SWITCH_SETUP_FAIL, N2: refusal}, nil
	}}
	g2.send(must2(t)(ngapx.BuildPathSwitchRequest(ngapx.PathSwitchRequestMsg{RANUEID: 53, SourceAMFUEID: ue.amfID, Cell: targetCell,
		SecurityCaps: securityCapsOf(ue.caps),
		ToSwitch:     []ngapx.SessionTransfer{{ID: 1, Transfer: psrTransfer}, {ID: 2, Transfer: psrTransfer}}})))
	ack, err := ngapx.ParsePathSwitchRequestAcknowledge(g2.expectPDU("PathSwitchRequestAcknowledge"))
	switch {
	case err != nil:
		t.Fatal(err)
	case len(ack.Switched) != 1 || ack.Switched[0].ID != 1:
		t.Fatalf("switched %+v", ack.Switched)
	case len(ack.Released) != 1 || ack.Released[0].ID != 2 || !bytes.Equal(ack.Released[0].Transfer, refusal):
		t.Fatalf("released %+v", ack.Released)
	case ack.SecurityCaps != nil:
		t.Fatal("the target reported the UE's own capabilities: none come back")
	}
	g.expect("UEContextReleaseCommand")
}

// securityCapsOf is what a gNB reports of a UE security capability octet pair.
func securityCapsOf(raw []byte) ngapx.SecurityCapabilities {
	c := nasx.SecurityCapability{Raw: raw}
	enc, integ := c.NRBits()
	eenc, einteg := c.EUTRABits()
	return ngapx.SecurityCapabilities{NREncryption: enc, NRIntegrity: integ, EUTRAEncryption: eenc, EUTRAIntegrity: einteg}
}

// An SMF's N2 SM information for a UE in handover preparation is rejected
// for now (409 TEMPORARY_REJECT_HANDOVER_ONGOING, TS 29.518 5.2.2.3.1)
// rather than sent to a source about to lose the UE.
func TestTransferDuringHandoverIsRejectedForNow(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000312", 5)
	g2 := h.connectTarget()
	prepareN2(t, g, g2, ue, smf, 5)
	req, parts := transferRequest(5, models.AmfCommunicationNgapIeType_PDU_RES_MOD_REQ, nil, []byte{1, 2})
	w, p := h.n1n2(ue.supi, req, parts...)
	if w.Code != 409 || p.Cause != "TEMPORARY_REJECT_HANDOVER_ONGOING" {
		t.Fatalf("transfer during handover: %d %+v", w.Code, p)
	}
	g.quiet()
}

// A Path Switch Request without its User Location Information (mandatory,
// TS 38.413 9.2.3.8) is refused with Path Switch Request Failure, the
// sessions released with a protocol cause; the UE stays with the source.
func TestPathSwitchMalformed(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000313", 5)
	g2 := h.connectTarget()
	pdu, err := ngapx.Decode(pathSwitch(t, ue.amfID, 54, 5))
	if err != nil {
		t.Fatal(err)
	}
	m := pdu.InitiatingMessage.Value.PathSwitchRequest
	kept := m.ProtocolIEs.List[:0]
	for _, ie := range m.ProtocolIEs.List {
		if ie.Value.UserLocationInformation == nil {
			kept = append(kept, ie)
		}
	}
	m.ProtocolIEs.List = kept
	g2.send(must2(t)(ngapx.Encode(pdu)))
	f, err := ngapx.ParsePathSwitchRequestFailure(g2.expectPDU("PathSwitchRequestFailure"))
	if err != nil || f.AMFUEID != ue.amfID || f.RANUEID != 54 || len(f.Released) != 1 {
		t.Fatalf("failure %+v, %v", f, err)
	}
	if c, err := ngapx.ParsePathSwitchRequestSetupFailedTransfer(f.Released[0].Transfer); err != nil || c.Protocol == nil {
		t.Fatalf("released with %+v, %v", c, err)
	}
	ue.deregisterVia(g, 1)
	smf.expect("release")
	smf.none()
}

// A Handover Required naming none of the UE's PDU sessions fails at once
// (unknown PDU session ID); no SMF and no target is asked.
func TestN2HandoverOfNoKnownSession(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000314", 5)
	g2 := h.connectTarget()
	g.send(n2Required(t, ue, 9, targetGNB))
	wantCause(t, g.expect("HandoverPreparationFailure"), ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnknownPDUSessionID))
	ue.deregisterVia(g, 1)
	smf.expect("release")
	smf.none()
	g2.quiet()
}
