package smf

import (
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/upf/rules"
)

var (
	sourceTunnel  = ngapx.Tunnel{IPv4: netip.MustParseAddr(gnbN3), TEID: 0x77}
	targetTunnel  = ngapx.Tunnel{IPv4: netip.MustParseAddr("10.100.0.3"), TEID: 0x88}
	targetForward = ngapx.Tunnel{IPv4: netip.MustParseAddr("10.100.0.3"), TEID: 0x89}
	targetID      = &models.NgRanTargetId{RanNodeId: &models.GlobalRanNodeId{GNbId: &models.GNbId{BitLength: 22, GNBValue: "000002"},
		PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}}, Tai: &models.Tai{Tac: "000001", PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}}}
)

// activeSession is an established and activated session's context URI.
func (s *testSMF) activeSession(t *testing.T) string {
	t.Helper()
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	return ref
}

// updated posts an UpdateSMContext with an N2 SM information.
func (s *testSMF) updated(t *testing.T, ref string, d models.SmfPduSessionSmContextUpdateData, n2 []byte) (answer, models.SmContextUpdatedData) {
	t.Helper()
	var parts []sbi.Part
	if n2 != nil {
		d.N2SmInfo = &models.RefToBinaryData{ContentId: "n2"}
		parts = append(parts, n2Part(n2))
	}
	a := s.post(t, ref+"/modify", d, parts...)
	var up models.SmContextUpdatedData
	if a.status == 200 {
		if err := json.Unmarshal(a.json, &up); err != nil {
			t.Fatal(err)
		}
	}
	return a, up
}

func n2Of(t *testing.T, a answer, up models.SmContextUpdatedData) []byte {
	t.Helper()
	if up.N2SmInfo == nil {
		t.Fatalf("no N2 SM information in %s", a.json)
	}
	return a.parts[up.N2SmInfo.ContentId].Data
}

func build(t *testing.T) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// assertDownlinkTo: the session's downlink goes into tunnel dl.
func (s *testSMF) assertDownlinkTo(t *testing.T, dl ngapx.Tunnel) {
	t.Helper()
	far := s.downlinkFAR(t)
	if far.Action != rules.ActionForward || far.OuterHeader == nil || far.OuterHeader.PeerIPv4 != dl.IPv4 || far.OuterHeader.TEID != dl.TEID {
		t.Fatalf("downlink FAR %+v, want into %+v", far, dl)
	}
}

// lastEndMarker: the last modification switched the downlink FAR with an
// End Marker request (TS 29.244 8.2.58 SNDEM).
func (s *testSMF) assertEndMarkerRequested(t *testing.T) {
	t.Helper()
	mods := s.n4.modifications()
	last := mods[len(mods)-1]
	if len(last.Update.FARs) != 1 || last.Update.FARs[0].ID != farDownlink || !last.Update.FARs[0].SendEndMarker {
		t.Fatalf("last modification %+v: want the downlink FAR with SendEndMarker", last)
	}
}

// Xn handover (TS 23.502 4.9.1.2.2): the target's tunnel goes into the
// downlink FAR with End Marker, and the acknowledge carries the UPF's
// uplink tunnel.
func TestPathSwitch(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref := s.activeSession(t)
	req := build(t)(ngapx.BuildPathSwitchRequestTransfer(ngapx.PathSwitchRequest{DL: targetTunnel, QFIs: []uint8{1}}))
	a, up := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{N2SmInfoType: models.N2SmInfoType_PATH_SWITCH_REQ}, req)
	if a.status != 200 || up.N2SmInfoType != models.N2SmInfoType_PATH_SWITCH_REQ_ACK {
		t.Fatalf("path switch: %d %s", a.status, a.json)
	}
	ul, err := ngapx.ParsePathSwitchRequestAcknowledgeTransfer(n2Of(t, a, up))
	if err != nil || ul == nil || ul.IPv4.String() != upfN3 {
		t.Fatalf("acknowledge transfer: %v %v", ul, err)
	}
	s.assertDownlinkTo(t, targetTunnel)
	s.assertEndMarkerRequested(t)
}

// A path switch the SMF cannot do is answered PATH_SWITCH_SETUP_FAIL with
// the cause, and the session stays on its old tunnel: a transfer that
// does not decode, the UPF refusing, a session without user plane.
func TestPathSwitchFailures(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref := s.activeSession(t)
	good := build(t)(ngapx.BuildPathSwitchRequestTransfer(ngapx.PathSwitchRequest{DL: targetTunnel, QFIs: []uint8{1}}))
	failed := func(n2 []byte, want ngapType.Cause) {
		t.Helper()
		a, up := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{N2SmInfoType: models.N2SmInfoType_PATH_SWITCH_REQ}, n2)
		if a.status != 200 || up.N2SmInfoType != models.N2SmInfoType_PATH_SWITCH_SETUP_FAIL {
			t.Fatalf("path switch: %d %s, want PATH_SWITCH_SETUP_FAIL", a.status, a.json)
		}
		cause, err := ngapx.ParsePathSwitchRequestSetupFailedTransfer(n2Of(t, a, up))
		if err != nil || ngapx.CauseString(&cause) != ngapx.CauseString(&want) {
			t.Fatalf("cause %s %v, want %s", ngapx.CauseString(&cause), err, ngapx.CauseString(&want))
		}
		s.assertDownlinkTo(t, sourceTunnel)
	}
	failed([]byte{0xff, 0x00, 0x13}, ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorReject))
	s.n4.setFailModify(errUPFDown)
	failed(good, transportResourceUnavailable)
	s.n4.setFailModify(nil)
	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_DEACTIVATED}); a.status != 200 {
		t.Fatalf("deactivation: %d", a.status)
	}
	a, up := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{N2SmInfoType: models.N2SmInfoType_PATH_SWITCH_REQ}, good)
	if a.status != 200 || up.N2SmInfoType != models.N2SmInfoType_PATH_SWITCH_SETUP_FAIL {
		t.Fatalf("path switch of an idle session: %d %s", a.status, a.json)
	}
	if far := s.downlinkFAR(t); far.Action != rules.ActionBuffer|rules.ActionNotify {
		t.Fatalf("idle session's FAR after a refused path switch: %+v", far)
	}
}

// prepare runs hoState PREPARING and PREPARED for the session and returns
// the Handover Command Transfer.
func (s *testSMF) prepare(t *testing.T, ref string, direct bool, ack ngapx.HandoverRequestAck) ngapx.HandoverCommand {
	t.Helper()
	rqd := build(t)(ngapx.BuildHandoverRequiredTransfer(direct))
	a, up := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_PREPARING, TargetId: targetID,
		N2SmInfoType: models.N2SmInfoType_HANDOVER_REQUIRED}, rqd)
	if a.status != 200 || up.HoState != models.HoState_PREPARING || up.N2SmInfoType != models.N2SmInfoType_PDU_RES_SETUP_REQ {
		t.Fatalf("PREPARING: %d %s", a.status, a.json)
	}
	setup, err := ngapx.ParsePDUSessionResourceSetupRequestTransfer(n2Of(t, a, up))
	if err != nil || setup.UL.IPv4.String() != upfN3 || len(setup.Flows) == 0 {
		t.Fatalf("setup request transfer for the target: %+v %v", setup, err)
	}
	a, up = s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_PREPARED,
		N2SmInfoType: models.N2SmInfoType_HANDOVER_REQ_ACK}, build(t)(ngapx.BuildHandoverRequestAcknowledgeTransfer(ack)))
	if a.status != 200 || up.HoState != models.HoState_PREPARED || up.N2SmInfoType != models.N2SmInfoType_HANDOVER_CMD {
		t.Fatalf("PREPARED: %d %s", a.status, a.json)
	}
	cmd, err := ngapx.ParseHandoverCommandTransfer(n2Of(t, a, up))
	if err != nil {
		t.Fatal(err)
	}
	s.assertDownlinkTo(t, sourceTunnel) // until COMPLETED
	return cmd
}

func (s *testSMF) complete(t *testing.T, ref string) {
	t.Helper()
	a, up := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_COMPLETED}, nil)
	if a.status != 200 || up.HoState != models.HoState_COMPLETED {
		t.Fatalf("COMPLETED: %d %s", a.status, a.json)
	}
}

func (s *testSMF) assertNoForwarding(t *testing.T) {
	t.Helper()
	sess := s.n4.only(t)
	for _, p := range sess.PDRs {
		if p.ID == pdrForwarding {
			t.Fatalf("forwarding PDR left: %+v", p)
		}
	}
	if _, ok := s.n4.far(t, farForwarding); ok {
		t.Fatal("forwarding FAR left")
	}
}

// N2 handover with direct forwarding (TS 23.502 4.9.1.3): the source
// forwards straight to the target's forwarding tunnel, the UPF keeps no
// forwarding rule, and COMPLETED moves the downlink with End Marker.
func TestN2HandoverDirectForwarding(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref := s.activeSession(t)
	cmd := s.prepare(t, ref, true, ngapx.HandoverRequestAck{DL: targetTunnel, DLForwarding: &targetForward, QFIs: []uint8{1}, ForwardQFIs: []uint8{1}})
	if cmd.DLForwarding == nil || *cmd.DLForwarding != targetForward || len(cmd.ForwardQFIs) != 1 {
		t.Fatalf("handover command %+v: want direct forwarding to %+v", cmd, targetForward)
	}
	s.assertNoForwarding(t)
	s.complete(t, ref)
	s.assertDownlinkTo(t, targetTunnel)
	s.assertEndMarkerRequested(t)
}

// N2 handover without a direct path: the source forwards to a UPF F-TEID
// whose FAR sends into the target's forwarding tunnel. COMPLETED keeps
// those rules for what the source still forwards (forwardingHold, here
// longer than the test); the next handover's preparation removes them.
func TestN2HandoverIndirectForwarding(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	s.nf.forwardingHold = time.Hour
	ref := s.activeSession(t)
	cmd := s.prepare(t, ref, false, ngapx.HandoverRequestAck{DL: targetTunnel, DLForwarding: &targetForward, QFIs: []uint8{1}})
	if cmd.DLForwarding == nil || cmd.DLForwarding.IPv4.String() != upfN3 {
		t.Fatalf("handover command %+v: want forwarding through the UPF", cmd)
	}
	fwd, ok := s.n4.far(t, farForwarding)
	if !ok || fwd.Action != rules.ActionForward || fwd.Destination != rules.Access || fwd.OuterHeader == nil ||
		fwd.OuterHeader.TEID != targetForward.TEID || fwd.OuterHeader.PeerIPv4 != targetForward.IPv4 {
		t.Fatalf("forwarding FAR %+v", fwd)
	}
	var pdr *rules.PDR
	for _, p := range s.n4.only(t).PDRs {
		if p.ID == pdrForwarding {
			pdr = &p
		}
	}
	if pdr == nil || pdr.Source != rules.Access || pdr.FARID != farForwarding || pdr.LocalFTEID == nil || pdr.LocalFTEID.TEID != cmd.DLForwarding.TEID {
		t.Fatalf("forwarding PDR %+v, command %+v", pdr, cmd)
	}
	s.complete(t, ref)
	s.assertDownlinkTo(t, targetTunnel)
	if _, ok := s.n4.far(t, farForwarding); !ok {
		t.Fatal("forwarding removed at COMPLETED: what the source still forwards is lost")
	}
	rqd := build(t)(ngapx.BuildHandoverRequiredTransfer(true))
	if a, _ := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_PREPARING, TargetId: targetID,
		N2SmInfoType: models.N2SmInfoType_HANDOVER_REQUIRED}, rqd); a.status != 200 {
		t.Fatalf("next PREPARING: %d", a.status)
	}
	s.assertNoForwarding(t)
}

// Handover cancel (TS 23.502 4.9.1.4) and a target that refuses the
// session (HANDOVER_RES_ALLOC_FAIL): the preparation and its forwarding
// go, the UE stays on the source, and COMPLETED is then refused.
func TestN2HandoverCancelAndRefusal(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref := s.activeSession(t)
	s.prepare(t, ref, false, ngapx.HandoverRequestAck{DL: targetTunnel, DLForwarding: &targetForward, QFIs: []uint8{1}})
	a, up := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_CANCELLED}, nil)
	if a.status != 200 || up.HoState != models.HoState_CANCELLED {
		t.Fatalf("CANCELLED: %d %s", a.status, a.json)
	}
	s.assertNoForwarding(t)
	s.assertDownlinkTo(t, sourceTunnel)
	if a, _ := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_COMPLETED}, nil); a.status != 409 {
		t.Fatalf("COMPLETED after cancel: %d, want 409", a.status)
	}

	rqd := build(t)(ngapx.BuildHandoverRequiredTransfer(false))
	if a, _ := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_PREPARING, TargetId: targetID,
		N2SmInfoType: models.N2SmInfoType_HANDOVER_REQUIRED}, rqd); a.status != 200 {
		t.Fatalf("PREPARING again: %d", a.status)
	}
	refused := build(t)(ngapx.BuildHandoverResourceAllocationUnsuccessfulTransfer(ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentNoRadioResourcesAvailableInTargetCell)))
	a, up = s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_PREPARED,
		N2SmInfoType: models.N2SmInfoType_HANDOVER_RES_ALLOC_FAIL}, refused)
	if a.status != 200 || up.HoState != models.HoState_CANCELLED {
		t.Fatalf("target refusal: %d %s", a.status, a.json)
	}
	s.assertDownlinkTo(t, sourceTunnel)
	if a, _ := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_COMPLETED}, nil); a.status != 409 {
		t.Fatalf("COMPLETED after refusal: %d, want 409", a.status)
	}
}

// Bad handover input gets an error and leaves the session on the source:
// PREPARING without targetId, a Handover Request Acknowledge Transfer that
// does not decode, PREPARED without PREPARING, PREPARING of an idle
// session, and a UPF that refuses the switch at COMPLETED.
func TestN2HandoverFailures(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref := s.activeSession(t)
	rqd := build(t)(ngapx.BuildHandoverRequiredTransfer(true))
	preparing := models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_PREPARING, N2SmInfoType: models.N2SmInfoType_HANDOVER_REQUIRED}
	if a, _ := s.updated(t, ref, preparing, rqd); a.status != 400 {
		t.Fatalf("PREPARING without targetId: %d", a.status)
	}
	prepared := models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_PREPARED, N2SmInfoType: models.N2SmInfoType_HANDOVER_REQ_ACK}
	ack := build(t)(ngapx.BuildHandoverRequestAcknowledgeTransfer(ngapx.HandoverRequestAck{DL: targetTunnel, QFIs: []uint8{1}}))
	if a, _ := s.updated(t, ref, prepared, ack); a.status != 409 {
		t.Fatalf("PREPARED without PREPARING: %d", a.status)
	}
	preparing.TargetId = targetID
	if a, _ := s.updated(t, ref, preparing, rqd); a.status != 200 {
		t.Fatalf("PREPARING: %d", a.status)
	}
	if a, _ := s.updated(t, ref, prepared, []byte{0xff, 0xff}); a.status != 400 || !json.Valid(a.json) {
		t.Fatalf("bad acknowledge transfer: %d %s", a.status, a.json)
	}
	s.assertDownlinkTo(t, sourceTunnel)

	// COMPLETED refused by the UPF: 500, the downlink stays on the source.
	s.prepare(t, ref, true, ngapx.HandoverRequestAck{DL: targetTunnel, QFIs: []uint8{1}})
	s.n4.setFailModify(errUPFDown)
	if a, _ := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{HoState: models.HoState_COMPLETED}, nil); a.status != 500 {
		t.Fatalf("COMPLETED with the UPF down: %d", a.status)
	}
	s.n4.setFailModify(nil)
	s.assertDownlinkTo(t, sourceTunnel)

	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_DEACTIVATED}); a.status != 200 {
		t.Fatalf("deactivation: %d", a.status)
	}
	if a, _ := s.updated(t, ref, preparing, rqd); a.status != 409 {
		t.Fatalf("PREPARING of an idle session: %d", a.status)
	}
}

// A session the target gNB could not set up (the AMF relays the gNB's
// Path Switch Request Setup Failed Transfer) loses its user plane but
// stays: the downlink is buffered for paging.
func TestPathSwitchSetupFailedDeactivates(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref := s.activeSession(t)
	fail := build(t)(ngapx.BuildPathSwitchRequestSetupFailedTransfer(ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentRadioResourcesNotAvailable)))
	a, up := s.updated(t, ref, models.SmfPduSessionSmContextUpdateData{N2SmInfoType: models.N2SmInfoType_PATH_SWITCH_SETUP_FAIL, FailedToBeSwitched: true}, fail)
	if a.status != 200 || up.UpCnxState != models.UpCnxState_DEACTIVATED {
		t.Fatalf("setup failed: %d %s", a.status, a.json)
	}
	if far := s.downlinkFAR(t); far.Action != rules.ActionBuffer|rules.ActionNotify {
		t.Fatalf("downlink FAR %+v, want BUFF|NOCP", far)
	}
	if s.nf.ctxs.count() != 1 {
		t.Fatal("the session was released")
	}
}
