package smf

import (
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/upf/rules"
)

const iperfFlow = "permit out 17 from 10.200.0.2 5201 to assigned"

// The AMF releases the session itself (ReleaseSMContext, e.g. on
// deregistration): everything goes at once, and the context with it.
func TestAMFTriggeredRelease(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, _ := s.established(t, subscribed, 4, establishmentRequest(t, 4, 1))
	s.activate(t, ref)
	if a := s.post(t, ref+"/release", models.SmfPduSessionSmContextReleaseData{Cause: models.SmfPduSessionCause_REL_DUE_TO_HO}); a.status != 204 {
		t.Fatalf("ReleaseSMContext: %d %s", a.status, a.json)
	}
	s.assertNothingHeld(t)
	if a := s.post(t, ref+"/release", models.SmfPduSessionSmContextReleaseData{}); a.status != 404 {
		t.Fatalf("second ReleaseSMContext: %d, want 404", a.status)
	}
}

// A new establishment with a PDU session ID in use replaces the old
// session: the old one is released, not leaked (TS 23.502 4.3.2.2.1 step 3).
func TestSameSessionIDReplacesTheOld(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	s.established(t, subscribed, 2, establishmentRequest(t, 2, 1))
	s.established(t, subscribed, 2, establishmentRequest(t, 2, 2))
	if len(s.core.released) != 0 {
		t.Fatal("the replaced session was notified as released: the AMF would drop the new one")
	}
	if s.n4.count() != 1 || s.nf.ctxs.count() != 1 {
		t.Fatalf("%d N4 sessions, %d contexts after the replacement, want 1 each", s.n4.count(), s.nf.ctxs.count())
	}
}

// Network-requested modification (TS 23.502 4.3.3.2 1b): the PCF's
// update notification brings a PCC rule with an SDF filter; the session
// gets a QoS flow of its own — QFI 2, its QoS rule with the packet
// filter for the UE, its QoS parameters for the gNB, and at the UPF its
// PDRs with the SDF filter and a QER marking QFI 2 on N3.
func TestNetworkRequestedModificationAddsQoSFlow(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	ctxRef := ref[len(smContextsPath)+1:]
	note := models.SmPolicyNotification{SmPolicyDecision: &models.SmPolicyDecision{
		PccRules: map[string]*models.PccRule{"iperf": {PccRuleId: "iperf", Precedence: 10, RefQosData: []string{"q1"},
			FlowInfos: []models.FlowInformation{{FlowDescription: iperfFlow}}}},
		QosDecs: map[string]*models.QosData{"q1": {QosId: "q1", Var5qi: 1, GbrUl: "2 Mbps", GbrDl: "2 Mbps", MaxbrUl: "5 Mbps", MaxbrDl: "5 Mbps",
			Arp: &models.Arp{PriorityLevel: 2, PreemptCap: models.PreemptionCapability_MAY_PREEMPT}}}}}
	if a := s.post(t, callbackPrefix+"sm-policies/"+ctxRef+"/update", note); a.status != 204 {
		t.Fatalf("policy update notification: %d %s", a.status, a.json)
	}
	tr := s.core.waitTransfer(t)
	cmd := decodeGSM(t, tr.n1).PDUSessionModificationCommand
	if cmd == nil || cmd.AuthorizedQosRules == nil {
		t.Fatalf("not a Modification Command with QoS rules: % x", tr.n1)
	}
	rs, err := nasx.ParseQoSRules(cmd.AuthorizedQosRules.GetQosRule())
	if err != nil || len(rs) != 1 || rs[0].QFI != 2 || rs[0].Precedence != 10 || len(rs[0].Filters) != 1 {
		t.Fatalf("QoS rules %+v %v", rs, err)
	}
	if f := rs[0].Filters[0]; f.Protocol != 17 || f.RemotePort != 5201 || f.Remote != netip.MustParsePrefix("10.200.0.2/32") {
		t.Fatalf("packet filter %+v", f)
	}
	flows, err := nasx.ParseQoSFlows(cmd.AuthorizedQosFlowDescriptions.GetQoSFlowDescriptions())
	if err != nil || len(flows) != 1 || flows[0].FiveQI != 1 || flows[0].GFBRDown != 2_000_000 || flows[0].MFBRUp != 5_000_000 {
		t.Fatalf("QoS flow descriptions %+v %v", flows, err)
	}
	add, err := ngapx.ParsePDUSessionResourceModifyRequestTransfer(tr.n2)
	if err != nil || len(add) != 1 || add[0].QFI != 2 || !add[0].GBR || add[0].GFBRUp != 2_000_000 || add[0].ARPPriority != 2 {
		t.Fatalf("modify request transfer %+v %v", add, err)
	}
	sess := s.n4.only(t)
	var sdf []rules.PDR
	for _, p := range sess.PDRs {
		if len(p.SDFFilters) > 0 {
			sdf = append(sdf, p)
		}
	}
	if len(sdf) != 2 || sdf[0].SDFFilters[0] != iperfFlow || sdf[0].Precedence >= sess.PDRs[0].Precedence ||
		sdf[0].QFI != 2 || sdf[0].LocalFTEID.TEID != 0x101 || sdf[1].QERIDs[0] != 2 || sdf[1].FARID != farDownlink {
		t.Fatalf("SDF PDRs %+v", sdf)
	}
	if q := sess.QERs[len(sess.QERs)-1]; q.QFI != 2 || q.GBRDL != 2_000_000 || q.MBRUL != 5_000_000 {
		t.Fatalf("QER of the new flow %+v", q)
	}
	// The gNB set it up; the UE completed.
	rsp, _ := ngapx.BuildPDUSessionResourceModifyResponseTransfer(ngapx.ModifyResponse{QFIs: []uint8{2}})
	a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N2SmInfo: &models.RefToBinaryData{ContentId: "n2"},
		N2SmInfoType: models.N2SmInfoType_PDU_RES_MOD_RSP}, n2Part(rsp))
	b := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}},
		n1Part(gsmMsg(1, 0, nas.MsgTypePDUSessionModificationComplete)))
	if a.status != 200 || b.status != 200 {
		t.Fatalf("modify response %d, complete %d", a.status, b.status)
	}
	c, _ := s.nf.ctxs.get(ctxRef)
	if len(c.flows) != 2 || len(c.pending) != 0 {
		t.Fatalf("flows %d pending %d after the gNB's confirmation", len(c.flows), len(c.pending))
	}
	// The same rule again adds nothing.
	if a := s.post(t, callbackPrefix+"sm-policies/"+ctxRef+"/update", note); a.status != 204 || len(s.core.transfers) != 0 {
		t.Fatalf("repeated notification: %d, %d transfers", a.status, len(s.core.transfers))
	}
}

// A flow the gNB could not set up leaves the UPF again.
func TestFailedQoSFlowIsRemoved(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	n1, n2 := s.ueModification(t, ref, 1, 7)
	if n2 == nil || decodeGSM(t, n1).PDUSessionModificationCommand == nil {
		t.Fatalf("UE-requested modification answered % x", n1)
	}
	if len(s.n4.only(t).PDRs) != 4 {
		t.Fatal("the requested flow's PDRs are not at the UPF")
	}
	rsp, _ := ngapx.BuildPDUSessionResourceModifyResponseTransfer(ngapx.ModifyResponse{})
	a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N2SmInfo: &models.RefToBinaryData{ContentId: "n2"},
		N2SmInfoType: models.N2SmInfoType_PDU_RES_MOD_FAIL}, n2Part(rsp))
	if a.status != 200 || len(s.n4.only(t).PDRs) != 2 || len(s.n4.only(t).QERs) != 2 {
		t.Fatalf("after the gNB's failure: %d, PDRs %+v", a.status, s.n4.only(t).PDRs)
	}
}

// ueModification sends the UE's Modification Request asking a QoS rule
// for UDP to 10.200.0.2:5201 with 5QI fiveQI; it returns the N1 and N2
// of the answer.
func (s *testSMF) ueModification(t *testing.T, ref string, psi, fiveQI uint8) (n1, n2 []byte) {
	t.Helper()
	r, _ := nasx.EncodeQoSRules([]nasx.QoSRule{{ID: 1, Operation: nasx.RuleOpCreate, Precedence: 20, QFI: 1,
		Filters: []nasx.PacketFilter{{ID: 1, Direction: nasx.FilterBidirectional, Protocol: 17, Remote: netip.MustParsePrefix("10.200.0.2/32"), RemotePort: 5201}}}})
	f, _ := nasx.EncodeQoSFlows([]nasx.QoSFlow{{QFI: 1, Operation: nasx.RuleOpCreate, FiveQI: fiveQI}})
	ies := append([]byte{0x7A, byte(len(r) >> 8), byte(len(r))}, r...)
	ies = append(append(ies, 0x79, byte(len(f)>>8), byte(len(f))), f...)
	a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}},
		n1Part(gsmMsg(psi, 3, nas.MsgTypePDUSessionModificationRequest, ies...)))
	var up models.SmContextUpdatedData
	if a.status != 200 || json.Unmarshal(a.json, &up) != nil || up.N1SmMsg == nil {
		t.Fatalf("modification request answered %d %s", a.status, a.json)
	}
	n1 = a.parts[up.N1SmMsg.ContentId].Data
	if up.N2SmInfo != nil {
		n2 = a.parts[up.N2SmInfo.ContentId].Data
	}
	return n1, n2
}

// UE-requested modification (TS 23.502 4.3.3.2 1a): the requested rule
// becomes a QoS flow with the 5QI the UE asked, answered within
// UpdateSMContext with the UE's PTI.
func TestUERequestedModification(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	n1, n2 := s.ueModification(t, ref, 1, 7)
	cmd := decodeGSM(t, n1).PDUSessionModificationCommand
	if cmd == nil || cmd.GetPTI() != 3 {
		t.Fatalf("Modification Command %+v", cmd)
	}
	add, err := ngapx.ParsePDUSessionResourceModifyRequestTransfer(n2)
	if err != nil || len(add) != 1 || add[0].QFI != 2 || add[0].FiveQI != 7 || add[0].GBR {
		t.Fatalf("modify request transfer %+v %v", add, err)
	}
	pdrs := s.n4.only(t).PDRs
	if got := pdrs[len(pdrs)-1].SDFFilters; len(got) != 1 || got[0] != "permit out 17 from 10.200.0.2 5201 to assigned" {
		t.Fatalf("SDF filter at the UPF %v", got)
	}
}

// A UE-requested modification the SMF cannot grant, or one the UE sends
// for another session, is answered with its reject and 5GSM cause.
func TestBad5GSMInUpdate(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	matchAll, _ := nasx.EncodeQoSRules([]nasx.QoSRule{{ID: 1, Operation: nasx.RuleOpCreate, Precedence: 20, QFI: 1,
		Filters: []nasx.PacketFilter{{ID: 1, Direction: nasx.FilterBidirectional}}}})
	cases := []struct {
		name string
		n1   []byte
		want uint8 // message type of the answer
		gsm  uint8
	}{
		{"release request for another session", gsmMsg(2, 4, nas.MsgTypePDUSessionReleaseRequest), nas.MsgTypePDUSessionReleaseReject, nasx.GSMCauseInvalidPDUSessionIdentity},
		{"modification without rules", gsmMsg(1, 4, nas.MsgTypePDUSessionModificationRequest), nas.MsgTypePDUSessionModificationReject, nasx.GSMCauseSemanticErrorsInPacketFilters},
		{"modification with a match-all filter", gsmMsg(1, 4, nas.MsgTypePDUSessionModificationRequest, append([]byte{0x7A, 0, byte(len(matchAll))}, matchAll...)...),
			nas.MsgTypePDUSessionModificationReject, nasx.GSMCauseSemanticErrorsInPacketFilters},
		{"modification with broken rules", gsmMsg(1, 4, nas.MsgTypePDUSessionModificationRequest, 0x7A, 0, 2, 1, 0),
			nas.MsgTypePDUSessionModificationReject, nasx.GSMCauseInvalidMandatoryInformation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}}, n1Part(c.n1))
			var up models.SmContextUpdatedData
			if a.status != 200 || json.Unmarshal(a.json, &up) != nil || up.N1SmMsg == nil {
				t.Fatalf("answered %d %s", a.status, a.json)
			}
			b := a.parts[up.N1SmMsg.ContentId].Data
			if b[3] != c.want || b[len(b)-1] != c.gsm {
				t.Fatalf("answer % x, want message %d with cause #%d", b, c.want, c.gsm)
			}
		})
	}
	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}},
		n1Part([]byte{0x2e, 1})); a.status != 400 {
		t.Fatalf("a 2-octet 5GSM message: %d, want 400", a.status)
	}
	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N2SmInfo: &models.RefToBinaryData{ContentId: "n2"},
		N2SmInfoType: models.N2SmInfoType_PDU_RES_SETUP_RSP}, n2Part([]byte{0xff, 0x00})); a.status != 400 {
		t.Fatalf("a broken setup response transfer: %d, want 400", a.status)
	}
	if s.n4.count() != 1 {
		t.Fatal("a bad message cost the session")
	}
}

// Network-requested release (TS 23.502 4.3.4.2 1d): the PCF ends the
// policy association; the UE gets the Release Command through the AMF
// and, once it completes, nothing is left.
func TestNetworkRequestedRelease(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	ctxRef := ref[len(smContextsPath)+1:]
	if a := s.post(t, callbackPrefix+"sm-policies/"+ctxRef+"/terminate", models.PcfSmPolicyControlTerminationNotification{}); a.status != 204 {
		t.Fatalf("termination: %d %s", a.status, a.json)
	}
	tr := s.core.waitTransfer(t)
	if cmd := decodeGSM(t, tr.n1).PDUSessionReleaseCommand; cmd == nil || cmd.GetPTI() != 0 || tr.n2 == nil {
		t.Fatalf("transfer % x", tr.n1)
	}
	// The UE's Release Complete may come before the gNB's release
	// response: the session waits for both (TS 23.502 4.3.4.2 7b, 10b).
	s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}},
		n1Part(gsmMsg(1, 0, nas.MsgTypePDUSessionReleaseComplete)))
	if s.nf.ctxs.count() != 1 {
		t.Fatal("the SM context went before the gNB's release response")
	}
	if a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N2SmInfo: &models.RefToBinaryData{ContentId: "n2"},
		N2SmInfoType: models.N2SmInfoType_PDU_RES_REL_RSP, UpCnxState: models.UpCnxState_DEACTIVATED}, n2Part([]byte{0})); a.status != 200 {
		t.Fatalf("release response: %d %s", a.status, a.json)
	}
	s.core.waitReleased(t)
	s.assertNothingHeld(t)
}

// AN release and service request (TS 23.502 4.2.6, 4.2.3.2): the downlink
// tunnel goes and comes back.
func TestDeactivateAndReactivate(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_DEACTIVATED})
	// TS 23.502 4.2.6 step 5: buffer and notify, no tunnel.
	if far := s.n4.only(t).FARs[1]; a.status != 200 || far.Action != rules.ActionBuffer|rules.ActionNotify || far.OuterHeader != nil {
		t.Fatalf("deactivation: %d, FAR %+v", a.status, far)
	}
	a = s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{UpCnxState: models.UpCnxState_ACTIVATING})
	var up models.SmContextUpdatedData
	if a.status != 200 || json.Unmarshal(a.json, &up) != nil || up.N2SmInfoType != models.N2SmInfoType_PDU_RES_SETUP_REQ {
		t.Fatalf("activating: %d %s", a.status, a.json)
	}
	if _, err := ngapx.ParsePDUSessionResourceSetupRequestTransfer(a.parts[up.N2SmInfo.ContentId].Data); err != nil {
		t.Fatal(err)
	}
	s.activate(t, ref)
	if s.n4.only(t).FARs[1].Action != rules.ActionForward {
		t.Fatal("downlink not forwarded after the service request")
	}
}

// A Release Command the UE never completes: T3592 releases the session
// locally, so no address is held by a silent UE (TS 24.501 6.3.3.5).
func TestReleaseWithoutCompleteEndsOnT3592(t *testing.T) {
	s := newTestSMF(t, sbi.NewTCP(), setup{})
	s.nf.releaseTimeout = time.Millisecond
	ref, _ := s.established(t, subscribed, 1, establishmentRequest(t, 1, 1))
	s.activate(t, ref)
	a := s.post(t, ref+"/modify", models.SmfPduSessionSmContextUpdateData{N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}},
		n1Part(gsmMsg(1, 2, nas.MsgTypePDUSessionReleaseRequest)))
	if a.status != 200 {
		t.Fatalf("release request: %d", a.status)
	}
	s.core.waitReleased(t)
	s.assertNothingHeld(t)
}
