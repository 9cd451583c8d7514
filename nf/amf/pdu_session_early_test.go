package amf

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
)

// TS 23.502 4.3.2.2.1: the SMF may send N1N2MessageTransfer (the accept)
// before the AMF has read its 201 to CreateSMContext, so the UE can answer
// (here: release the session) before the AMF knows the SM context. The
// message waits for the context and then reaches the SMF, instead of going
// back with #90 (200 UEs at once over tcp hit this).
func TestReleaseRequestDuringTheCreationReachesTheSMF(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	smf, _ := h.withSMF()
	held := make(chan struct{})
	smf.set("create", smfReply{status: http.StatusCreated, body: models.SmfPduSessionSmContextCreatedData{PduSessionId: 7}, wait: held})
	ue := h.newUE(g, "0000000107", 1)
	ue.register()
	ue.requestSession(7, &slice1, "internet")
	smf.expect("create")

	rel := []byte{0x2e, 7, 2, 0xd1}
	ue.up(ue.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: rel, PDUSessionID: 7}))
	smf.set("modify", smfReply{status: http.StatusNoContent})
	close(held)
	if u := smf.expect("modify"); !bytes.Equal(u.n1, rel) || u.ref != "1" {
		t.Fatalf("SMF got N1 % x for context %s, want the release request for 1", u.n1, u.ref)
	}
}

// A creation that fails leaves the messages that waited for it without a
// routing context: each goes back to the UE with #90 (TS 24.501
// 5.4.5.2.5), after the establishment request itself.
func TestMessagesWaitingForAFailedCreationGoBack(t *testing.T) {
	h, g := newSetUpHarness(t, nil)
	smf, _ := h.withSMF()
	held := make(chan struct{})
	smf.set("create", smfReply{status: http.StatusInternalServerError,
		body: models.ProblemDetails{Status: 500, Cause: "SYSTEM_FAILURE"}, wait: held})
	ue := h.newUE(g, "0000000108", 1)
	ue.register()
	sm := ue.requestSession(8, &slice1, "internet")
	smf.expect("create")

	rel := []byte{0x2e, 8, 2, 0xd1}
	ue.up(ue.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: rel, PDUSessionID: 8}))
	close(held)
	ue.sentBack(sm, 8, nasx.CausePayloadNotForwarded)
	ue.sentBack(rel, 8, nasx.CausePayloadNotForwarded)
	smf.none()
}
