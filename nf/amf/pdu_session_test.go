package amf

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/sbi"
)

var slice1 = models.Snssai{Sst: 1, Sd: "010203"}

// establishedUE registers a UE and brings PDU session id up to the SMF's
// N1N2MessageTransfer and the gNB's setup response, checking each step
// as the gNB, UE and SMF would see it.
func establishedUE(t *testing.T, msin string, id uint8) (*harness, *gnbSide, *testUE, *fakeSMF) {
	return establishedUEWith(t, msin, id, nil)
}

// establishedUEWith is establishedUE with the AMF's config edited.
func establishedUEWith(t *testing.T, msin string, id uint8, edit func(*config.Config)) (*harness, *gnbSide, *testUE, *fakeSMF) {
	h, g := newSetUpHarness(t, edit)
	smf, _ := h.withSMF()
	ue := h.newUE(g, msin, 1)
	ue.register()
	sm := ue.requestSession(id, &slice1, "internet")

	// TS 23.502 4.3.2.2.1 step 3: CreateSMContext with the N1 part.
	got := smf.expect("create")
	c := got.create
	if !bytes.Equal(got.n1, sm) {
		t.Fatalf("N1 part % x, want the UE's 5GSM message % x", got.n1, sm)
	}
	switch {
	case c.Supi != ue.supi || c.PduSessionId != int32(id) || c.Dnn != "internet":
		t.Fatalf("create data supi %q id %d dnn %q", c.Supi, c.PduSessionId, c.Dnn)
	case c.SNssai == nil || !domain.SameModelSNSSAI(*c.SNssai, slice1):
		t.Fatalf("sNssai %+v", c.SNssai)
	case c.ServingNfId != h.amf.id || c.Guami == nil || c.AnType != models.AccessType__3_GPP_ACCESS || c.RequestType != models.RequestType_INITIAL_REQUEST:
		t.Fatalf("servingNfId %q guami %v anType %q requestType %q", c.ServingNfId, c.Guami, c.AnType, c.RequestType)
	case c.SmContextStatusUri == "" || c.UeLocation == nil || c.UeLocation.NrLocation == nil || c.ServingNetwork == nil:
		t.Fatalf("smContextStatusUri %q ueLocation %+v servingNetwork %v", c.SmContextStatusUri, c.UeLocation, c.ServingNetwork)
	}

	// Step 11: the SMF's N1N2MessageTransfer with the accept and the N2 setup request.
	accept, transfer := []byte{0x2e, id, 1, 0xc2, 0x11}, []byte{0x00, 0x03, 0xde, 0xad}
	req, parts := transferRequest(int32(id), models.AmfCommunicationNgapIeType_PDU_RES_SETUP_REQ, accept, transfer)
	w, p := h.n1n2(ue.supi, req, parts...)
	if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte("N1_N2_TRANSFER_INITIATED")) {
		t.Fatalf("N1N2MessageTransfer: %d %+v %s", w.Code, p, w.Body)
	}

	// Step 12: PDU Session Resource Setup Request with the NAS-PDU inside.
	s, items, _ := g.readSessionRequest("PDUSessionResourceSetupRequest")
	if s.AMFUEID != ue.amfID || s.RANUEID != ue.ranID || len(items) != 1 {
		t.Fatalf("setup request for %d/%d with %d sessions", s.AMFUEID, s.RANUEID, len(items))
	}
	it := items[0]
	if it.id != int64(id) || !bytes.Equal(it.transfer, transfer) || it.snssai == nil || it.snssai.SST.Value[0] != 1 {
		t.Fatalf("item id %d transfer % x snssai %+v", it.id, it.transfer, it.snssai)
	}
	if n1, sid := ue.n1In(it.nasPDU); !bytes.Equal(n1, accept) || sid != id {
		t.Fatalf("NAS-PDU carries % x for session %d, want % x for %d", n1, sid, accept, id)
	}

	// Steps 13-14: the gNB's response goes to the SMF as PDU_RES_SETUP_RSP.
	g.send(setupResponse(t, ue.amfID, ue.ranID, map[int64][]byte{int64(id): {0x01, 0x02}}, nil))
	u := smf.expect("modify")
	if u.update.N2SmInfoType != models.N2SmInfoType_PDU_RES_SETUP_RSP || !bytes.Equal(u.n2, []byte{0x01, 0x02}) || u.ref != "1" {
		t.Fatalf("update %s with % x for context %s", u.update.N2SmInfoType, u.n2, u.ref)
	}
	return h, g, ue, smf
}

// TS 23.502 4.3.2.2.1: establishment forwarded, the SMF's messages reach
// gNB and UE, the gNB's answer reaches the SMF; deregistration then
// releases the SM context (4.2.2.3.2 step 2).
func TestPDUSessionEstablishmentAndDeregistrationRelease(t *testing.T) {
	h, _, ue, smf := establishedUE(t, "0000000101", 5)
	ue.up(ue.deregistrationRequest(false))
	if m := ue.dl("DownlinkNASTransport"); m.DeregistrationAcceptUEOriginatingDeregistration == nil {
		t.Fatal("want Deregistration Accept")
	}
	if c := smf.expect("release"); c.ref != "1" {
		t.Fatalf("released SM context %s, want 1", c.ref)
	}
	_ = h
}

// The UDM deregistering the AMF (network-initiated) ends the UE's
// context and its SM contexts too.
func TestNetworkDeregistrationReleasesSessions(t *testing.T) {
	h, _, ue, smf := establishedUE(t, "0000000102", 1)
	if code, p := h.callback("/namf-callback/v1/"+ue.supi+"/dereg-notify",
		`{"deregReason":"SUBSCRIPTION_WITHDRAWN","accessType":"3GPP_ACCESS"}`); code != http.StatusNoContent {
		t.Fatalf("dereg-notify: %d %+v", code, p)
	}
	smf.expect("release")
}

// A failed setup at the gNB goes to the SMF as PDU_RES_SETUP_FAIL with
// the unsuccessful transfer (TS 29.502 5.2.2.3.2).
func TestSetupFailureGoesToSMF(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	smf, _ := h.withSMF()
	ue := h.newUE(g, "0000000103", 1)
	ue.register()
	ue.requestSession(2, nil, "")
	c := smf.expect("create").create
	if c.Dnn != "internet" || c.SNssai == nil || !domain.SameModelSNSSAI(*c.SNssai, slice1) {
		t.Fatalf("without S-NSSAI and DNN the AMF picks the defaults: got %v %q", c.SNssai, c.Dnn)
	}
	req, parts := transferRequest(2, models.AmfCommunicationNgapIeType_PDU_RES_SETUP_REQ, []byte{0x2e, 2, 1, 0xc2}, []byte{9})
	if w, p := h.n1n2(ue.supi, req, parts...); w.Code != 200 {
		t.Fatalf("%d %+v", w.Code, p)
	}
	g.readSessionRequest("PDUSessionResourceSetupRequest")
	g.send(setupResponse(t, ue.amfID, ue.ranID, nil, map[int64][]byte{2: {0x40}}))
	u := smf.expect("modify")
	if u.update.N2SmInfoType != models.N2SmInfoType_PDU_RES_SETUP_FAIL || !bytes.Equal(u.n2, []byte{0x40}) {
		t.Fatalf("update %s with % x", u.update.N2SmInfoType, u.n2)
	}
}

// TS 24.501 5.4.5.2.5: what the AMF cannot forward goes back with the
// 5GMM cause; the SMF sees nothing.
func TestEstablishmentNotForwarded(t *testing.T) {
	for _, c := range []struct {
		name   string
		snssai *models.Snssai
		dnn    string
		noSMF  bool
		cause  uint8
	}{
		{"S-NSSAI not allowed", &models.Snssai{Sst: 9}, "internet", false, nasx.CausePayloadNotForwarded},
		{"DNN not subscribed in the slice", &slice1, "ims", false, nasMessage.Cause5GMMDNNNotSupportedOrNotSubscribedInTheSlice},
		{"no SMF serves slice and DNN", &slice1, "internet", true, nasx.CausePayloadNotForwarded},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, g := newSetUpHarness(t, nil)
			smf, sess := h.withSMF()
			sess.noSMF = c.noSMF
			ue := h.newUE(g, "0000000104", 1)
			ue.register()
			sm := ue.requestSession(4, c.snssai, c.dnn)
			ue.sentBack(sm, 4, c.cause)
			smf.none()
			h.wantMetric("l25gc_amf_nas_payloads_not_forwarded_total", map[string]string{"payload": "n1-sm"}, 1, "payloads not forwarded")
		})
	}
}

// The SMF's rejection (SmContextCreateError with the N1 PDU Session
// Establishment Reject) reaches the UE as the SMF wrote it, without 5GMM
// cause; an SMF error without 5GSM answer is #90.
func TestSMFRejection(t *testing.T) {
	reject := []byte{0x2e, 3, 1, 0xc3, 0x1b} // 5GSM cause #27 missing or unknown DNN
	for _, c := range []struct {
		name string
		rep  smfReply
	}{
		{"with 5GSM reject", smfReply{status: 403, body: models.SmContextCreateError{
			Error:   &models.SmfPduSessionExtProblemDetails{Status: 403, Cause: "DNN_DENIED"},
			N1SmMsg: &models.RefToBinaryData{ContentId: "r"}}, parts: []sbi.Part{{ContentID: "r", ContentType: sbi.ContentTypeNAS, Data: reject}}}},
		{"failing", smfReply{status: 500, body: models.ProblemDetails{Status: 500, Cause: sbi.CauseSystemFailure}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, g := newSetUpHarness(t, nil)
			smf, _ := h.withSMF()
			smf.set("create", c.rep)
			ue := h.newUE(g, "0000000105", 1)
			ue.register()
			sm := ue.requestSession(3, &slice1, "internet")
			smf.expect("create")
			if c.rep.parts == nil {
				ue.sentBack(sm, 3, nasx.CausePayloadNotForwarded)
				return
			}
			d := ue.dl("DownlinkNASTransport").DLNASTransport
			if d == nil || !bytes.Equal(d.GetPayloadContainerContents(), reject) || d.Cause5GMM != nil || d.GetPduSessionID2Value() != 3 {
				t.Fatalf("want the SMF's reject for session 3 without 5GMM cause, got %+v", d)
			}
		})
	}
}

// UE-requested release (TS 23.502 4.3.4.2): the 5GSM message goes to the
// SMF in UpdateSMContext; its answer (Release Command + N2 release) goes
// to the gNB as PDU Session Resource Release Command, whose response goes
// back as PDU_RES_REL_RSP; the SMF's status notification ends the routing
// context, after which a 5GSM message for the session comes back #90.
func TestUERequestedRelease(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000106", 6)
	cmd, n2 := []byte{0x2e, 6, 2, 0xd3, 0x24}, []byte{0x10}
	smf.set("modify", smfReply{status: 200, body: models.SmContextUpdatedData{N1SmMsg: &models.RefToBinaryData{ContentId: "a"},
		N2SmInfo: &models.RefToBinaryData{ContentId: "b"}, N2SmInfoType: models.N2SmInfoType_PDU_RES_REL_CMD},
		parts: []sbi.Part{{ContentID: "a", ContentType: sbi.ContentTypeNAS, Data: cmd}, {ContentID: "b", ContentType: sbi.ContentTypeNGAP, Data: n2}}})
	rel := []byte{0x2e, 6, 2, 0xd1}
	ue.up(ue.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: rel, PDUSessionID: 6}))
	if u := smf.expect("modify"); !bytes.Equal(u.n1, rel) || u.ref != "1" {
		t.Fatalf("update N1 % x for %s", u.n1, u.ref)
	}
	_, items, nasPDU := g.readSessionRequest("PDUSessionResourceReleaseCommand")
	if len(items) != 1 || items[0].id != 6 || !bytes.Equal(items[0].transfer, n2) {
		t.Fatalf("release items %+v", items)
	}
	if got, _ := ue.n1In(nasPDU); !bytes.Equal(got, cmd) {
		t.Fatalf("release command NAS % x", got)
	}
	smf.set("modify", smfReply{status: 204})
	g.send(releaseResponse(t, ue.amfID, ue.ranID, 6, []byte{0x00}))
	if u := smf.expect("modify"); u.update.N2SmInfoType != models.N2SmInfoType_PDU_RES_REL_RSP {
		t.Fatalf("update type %s", u.update.N2SmInfoType)
	}
	note := `{"statusInfo":{"resourceStatus":"RELEASED","cause":"REL_DUE_TO_HO"}}`
	if code, p := h.callback(smStatusPath(ue.supi, 6), note); code != http.StatusNoContent {
		t.Fatalf("status notify: %d %+v", code, p)
	}
	again := []byte{0x2e, 6, 3, 0xc9}
	ue.up(ue.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: again, PDUSessionID: 6}))
	ue.sentBack(again, 6, nasx.CausePayloadNotForwarded)
	smf.none()
}

// Network-requested modification: N1N2MessageTransfer with
// PDU_RES_MOD_REQ becomes PDU Session Resource Modify Request.
func TestModificationTransfer(t *testing.T) {
	h, g, ue, _ := establishedUE(t, "0000000107", 7)
	cmd := []byte{0x2e, 7, 0, 0xcb}
	req, parts := transferRequest(7, models.AmfCommunicationNgapIeType_PDU_RES_MOD_REQ, cmd, []byte{0x77})
	if w, p := h.n1n2(ue.supi, req, parts...); w.Code != 200 {
		t.Fatalf("%d %+v", w.Code, p)
	}
	_, items, _ := g.readSessionRequest("PDUSessionResourceModifyRequest")
	if len(items) != 1 || items[0].id != 7 || !bytes.Equal(items[0].transfer, []byte{0x77}) {
		t.Fatalf("modify items %+v", items)
	}
	if got, _ := ue.n1In(items[0].nasPDU); !bytes.Equal(got, cmd) {
		t.Fatalf("modification command % x", got)
	}
}

// An initial request for a PDU session ID in use replaces the session:
// the old SM context is released, a new one created.
func TestDuplicateSessionIDReleasesTheOld(t *testing.T) {
	_, _, ue, smf := establishedUE(t, "0000000108", 8)
	ue.requestSession(8, &slice1, "internet")
	first, second := smf.expect2("release", "create")
	if first.ref != "1" || second.create.PduSessionId != 8 {
		t.Fatalf("released %s, created session %d", first.ref, second.create.PduSessionId)
	}
}

// TS 29.518 6.1.3.5.3.1: the transfer's errors.
func TestN1N2MessageTransferErrors(t *testing.T) {
	h, g, ue, _ := establishedUE(t, "0000000109", 9)
	req, parts := transferRequest(9, models.AmfCommunicationNgapIeType_PDU_RES_SETUP_REQ, []byte{1}, []byte{2})
	for _, c := range []struct {
		name   string
		supi   string
		req    models.N1N2MessageTransferReqData
		parts  []sbi.Part
		status int
		cause  string
	}{
		{"unknown UE", "imsi-208930000009999", req, parts, 404, sbi.CauseContextNotFound},
		{"unknown PDU session", ue.supi, func() models.N1N2MessageTransferReqData {
			r, _ := transferRequest(4, "PDU_RES_SETUP_REQ", []byte{1}, nil)
			return r
		}(), parts, 404, sbi.CauseContextNotFound},
		{"nothing to transfer", ue.supi, models.N1N2MessageTransferReqData{PduSessionId: 9}, nil, 400, sbi.CauseMandatoryIEMissing},
		{"N1 part missing", ue.supi, req, parts[1:], 400, sbi.CauseMandatoryIEIncorrect},
		{"N2 for no RAN request", ue.supi, func() models.N1N2MessageTransferReqData {
			r, _ := transferRequest(9, "PDU_RES_NTY", nil, []byte{2})
			return r
		}(), parts[1:], 400, sbi.CauseMandatoryIEIncorrect},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, p := h.n1n2(c.supi, c.req, c.parts...)
			if w.Code != c.status || p.Cause != c.cause {
				t.Fatalf("%d %q, want %d %q", w.Code, p.Cause, c.status, c.cause)
			}
		})
	}
	// CM-IDLE: the UE is paged (TS 29.518 5.2.2.3.1 step 3a; paging_test.go).
	g.send(releaseRequest(t, ue.amfID, ue.ranID))
	g.expect("UEContextReleaseCommand")
	g.send(releaseComplete(t, ue.amfID, ue.ranID))
	h.waitIdle(1)
	if w, p := h.n1n2(ue.supi, req, parts...); w.Code != http.StatusAccepted || !bytes.Contains(w.Body.Bytes(), []byte("ATTEMPTING_TO_REACH_UE")) {
		t.Fatalf("idle UE: %d %q", w.Code, p.Cause)
	}
	g.expect("Paging")
}

// A malformed body is 400 INVALID_MSG_FORMAT.
func TestN1N2MessageTransferMalformed(t *testing.T) {
	h, _ := newSetUpHarness(t, nil)
	if code, p := h.callback("/namf-comm/v1/ue-contexts/imsi-1/n1-n2-messages", `{"pduSessionId":`); code != 400 || p.Cause != sbi.CauseInvalidMsgFormat {
		t.Fatalf("%d %q", code, p.Cause)
	}
}

// A UE's sessions outlive CM-IDLE (TS 23.502 4.2.6: the AN release keeps
// the PDU sessions, their user plane deactivated at the SMF): back with a mobility registration update, its 5GSM
// message reaches the session's SMF. The SMF's status notification for
// the idle UE ends the routing context of the session it names.
func TestSessionsOutliveCMIdle(t *testing.T) {
	h, _, ue, smf := establishedUE(t, "0000000110", 10)
	ue.goIdle(1)
	if u := smf.expect("modify"); u.update.UpCnxState != models.UpCnxState_DEACTIVATED || u.ref != "1" {
		t.Fatalf("AN release: update %+v of %s, want the user plane deactivated", u.update, u.ref)
	}
	note := `{"statusInfo":{"resourceStatus":"RELEASED"}}`
	if code, p := h.callback(smStatusPath(ue.supi, 11), note); code != http.StatusNoContent {
		t.Fatalf("status notify for the idle UE: %d %+v", code, p)
	}
	ue.returnWithGUTI(2)
	ue.up(ue.registrationComplete())
	ue.dl("DownlinkNASTransport") // Configuration Update Command
	rel := []byte{0x2e, 10, 2, 0xd1}
	ue.up(ue.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: rel, PDUSessionID: 10}))
	if u := smf.expect("modify"); !bytes.Equal(u.n1, rel) || u.ref != "1" {
		t.Fatalf("after CM-IDLE: update N1 % x for %s", u.n1, u.ref)
	}
	ue.goIdle(1)
	smf.expect("modify") // deactivation again
	if code, p := h.callback(smStatusPath(ue.supi, 10), note); code != http.StatusNoContent {
		t.Fatalf("status notify: %d %+v", code, p)
	}
	ue.returnWithGUTI(3)
	ue.up(ue.registrationComplete())
	ue.dl("DownlinkNASTransport")
	ue.up(ue.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: rel, PDUSessionID: 10}))
	ue.sentBack(rel, 10, nasx.CausePayloadNotForwarded)
	smf.none()
	if code, _ := h.callback(smStatusPath("imsi-208930000009998", 10), note); code != http.StatusNotFound {
		t.Fatalf("status notify for an unknown UE: %d, want 404", code)
	}
}

// An initial registration means the UE holds no session (TS 24.501
// 5.5.2): the SM contexts of the context it returns to are released.
func TestInitialRegistrationReleasesStaleSessions(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000111", 12)
	ue.goIdle(1)
	smf.expect("modify") // user plane deactivated
	gb, _ := nasx.EncodeGUTI(*ue.guti)
	ue.ranID = 2
	g.send(initialUEMessage(t, ue.ranID, ue.protect(ue.registrationRequest(
		nasMessage.RegistrationType5GSInitialRegistration, gb), nas.SecurityHeaderTypeIntegrityProtected)))
	ue.readAccept()
	if c := smf.expect("release"); c.ref != "1" {
		t.Fatalf("released %s, want the stale context 1", c.ref)
	}
	_ = h
}
