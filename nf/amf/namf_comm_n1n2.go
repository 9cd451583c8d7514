package amf

// Namf_Communication_N1N2MessageTransfer (TS 29.518 5.2.2.3.1): the SMF
// hands the AMF a 5GSM message and/or N2 SM information for a UE's PDU
// session (TS 23.502 4.3.2.2.1 step 11, 4.3.3.2 step 3b, 4.3.4.2 step 3b);
// and the SM context status notification (TS 29.502 5.2.2.5.2) by which
// the SMF tells the AMF that a session's SM context is gone.

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/ratelimit"
	"github.com/l25gc/l25gc/sbi"
)

// N1N2MessageTransferPath is the route of the operation (TS 29.518 6.1.3.5.3.1).
const N1N2MessageTransferPath = "/namf-comm/v1/ue-contexts/{ueContextId}/n1-n2-messages"

// Causes of TS 29.518 6.1.3.5.3.1 (table 6.1.3.5.3.1-3) the AMF answers with.
const (
	causeUENotReachable              = "UE_NOT_REACHABLE"                      // 504
	causeTemporaryRejectRegistration = "TEMPORARY_REJECT_REGISTRATION_ONGOING" // 409
)

// maxTransferBody bounds a transfer's body: one 5GSM message and one N2
// SM information, each at most 64 KiB (TS 24.501 9.11.3.39).
const maxTransferBody = 256 << 10

func (n *NF) routeSessions(mux *http.ServeMux) {
	mux.HandleFunc("POST "+N1N2MessageTransferPath, n.handleN1N2MessageTransfer)
	mux.HandleFunc("POST "+callbackPrefix+"sm-context-status/{supi}/{pduSessionId}/{tag}", n.handleSMContextStatus)
	// Untagged: the URI given for contexts created before they were
	// tagged (PDUSession.StatusTag), which an SMF may still hold.
	mux.HandleFunc("POST "+callbackPrefix+"sm-context-status/{supi}/{pduSessionId}", n.handleSMContextStatus)
}

// smStatusPath is the untagged status path of a UE's PDU session id.
func smStatusPath(supi string, id uint8) string {
	return callbackPrefix + "sm-context-status/" + url.PathEscape(supi) + "/" + strconv.Itoa(int(id))
}

// smContextStatusPath is the smContextStatusUri's path of one SM context:
// the PDU session ID names the session, the tag this context of it.
func smContextStatusPath(supi string, id uint8, tag string) string {
	return smStatusPath(supi, id) + "/" + url.PathEscape(tag)
}

// transfer is a validated N1N2MessageTransfer request.
type transfer struct {
	id     uint8
	n1, n2 []byte
	n2Type models.N2SmInfoType
	// failureURI is the SMF's n1n2FailureTxfNotifURI: where a paging that
	// fails is reported (TS 29.518 6.1.6.2.25; paging.go).
	failureURI string
}

// transferVerdict is an answer to the SMF: status and cause.
type transferVerdict struct {
	status int
	cause  string
	detail string // for 202 (paging.go): the kept transfer's resource, sent as Location
}

var transferInitiated = transferVerdict{status: http.StatusOK}

func (n *NF) handleN1N2MessageTransfer(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxTransferBody))
	if err != nil {
		sbi.WriteProblem(w, http.StatusRequestEntityTooLarge, sbi.CauseUnspecifiedMsgFailure, err.Error())
		return
	}
	var req models.N1N2MessageTransferReqData
	parts, err := sbi.DecodeRelated(r.Header.Get("Content-Type"), body, &req)
	if err != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseInvalidMsgFormat, err.Error())
		return
	}
	t, bad := readTransfer(req, parts)
	if bad != nil {
		sbi.WriteProblem(w, http.StatusBadRequest, bad.cause, bad.detail)
		return
	}
	v := n.transferTo(r, r.PathValue("ueContextId"), t)
	if v.status == http.StatusAccepted {
		// TS 29.518 5.2.2.3.1 step 3a: the UE is in CM-IDLE and paged.
		w.Header().Set("Location", v.detail)
		sbi.WriteJSON(w, http.StatusAccepted, models.N1N2MessageTransferRspData{Cause: models.N1N2MessageTransferCause_ATTEMPTING_TO_REACH_UE})
		return
	}
	if v.status != http.StatusOK {
		sbi.WriteProblem(w, v.status, v.cause, v.detail)
		return
	}
	// TS 29.518 5.2.2.3.1 step 2a: the UE is CM-CONNECTED and the AMF has
	// sent the messages on.
	sbi.WriteJSON(w, http.StatusOK, models.N1N2MessageTransferRspData{Cause: models.N1N2MessageTransferCause_N1_N2_TRANSFER_INITIATED})
}

// readTransfer checks the request (TS 29.518 6.1.6.2.25): the PDU session
// ID, an N1 message of class SM and/or N2 SM information, each with its
// binary part.
func readTransfer(req models.N1N2MessageTransferReqData, parts map[string]sbi.Part) (transfer, *transferVerdict) {
	bad := func(cause, detail string) (transfer, *transferVerdict) {
		return transfer{}, &transferVerdict{status: http.StatusBadRequest, cause: cause, detail: detail}
	}
	t := transfer{failureURI: req.N1n2FailureTxfNotifURI}
	id := req.PduSessionId
	if c := req.N1MessageContainer; c != nil {
		if c.N1MessageClass != models.N1MessageClass_SM {
			return bad(sbi.CauseMandatoryIEIncorrect, "n1MessageClass "+string(c.N1MessageClass)+": only SM is served")
		}
		if t.n1 = partOf(parts, c.N1MessageContent); t.n1 == nil {
			return bad(sbi.CauseMandatoryIEIncorrect, "n1MessageContent names no binary part")
		}
	}
	if c := req.N2InfoContainer; c != nil {
		if c.N2InformationClass != models.N2InformationClass_SM || c.SmInfo == nil || c.SmInfo.N2InfoContent == nil {
			return bad(sbi.CauseMandatoryIEIncorrect, "n2InfoContainer: only SM information with n2InfoContent is served")
		}
		if t.n2 = partOf(parts, c.SmInfo.N2InfoContent.NgapData); t.n2 == nil {
			return bad(sbi.CauseMandatoryIEIncorrect, "ngapData names no binary part")
		}
		t.n2Type = models.N2SmInfoType(c.SmInfo.N2InfoContent.NgapIeType)
		if id == 0 {
			id = c.SmInfo.PduSessionId
		}
	}
	switch {
	case t.n1 == nil && t.n2 == nil:
		return bad(sbi.CauseMandatoryIEMissing, "neither n1MessageContainer nor n2InfoContainer")
	case id < 1 || id > 15:
		return bad(sbi.CauseMandatoryIEIncorrect, "pduSessionId "+strconv.Itoa(int(id))+": want 1-15")
	}
	t.id = uint8(id)
	return t, nil
}

// transferTo runs the transfer on the UE's key and waits for its verdict:
// building and sending NGAP takes no peer, so the SMF learns at once
// whether the messages left. ueContextId is the SUPI (TS 29.518 6.1.3.2.2).
func (n *NF) transferTo(r *http.Request, supi string, t transfer) transferVerdict {
	id, connected := n.ues.findSUPI(supi)
	if !connected {
		// TS 29.518 5.2.2.3.1: a CM-IDLE UE is paged first (paging.go).
		if v, parked := n.pageFor(supi, t); parked {
			return v
		}
		// Not parked (any more): it may have just come back.
		if id, connected = n.ues.findSUPI(supi); !connected {
			return transferVerdict{http.StatusNotFound, sbi.CauseContextNotFound, "no UE context for " + supi}
		}
	}
	done := make(chan transferVerdict, 1)
	err := n.disp.Dispatch(ratelimit.UE(id), func() {
		ue := n.ues.get(id)
		if ue == nil || ue.supi != supi {
			// Its AN release ended before this ran: parked, it is paged.
			done <- n.pageParkedOr404(supi, t)
			return
		}
		if n.pageAfterRelease(r.Context(), ue, t, done) {
			return // an_release_window.go
		}
		n.transferGated(ue, t, done)
	})
	if err != nil {
		return transferVerdict{http.StatusServiceUnavailable, sbi.CauseNFCongestion, err.Error()}
	}
	select {
	case v := <-done:
		return v
	case <-r.Context().Done():
		return transferVerdict{http.StatusGatewayTimeout, sbi.CauseTimedOutRequest, "UE's events did not run in time"}
	}
}

// transfer sends the SMF's messages to the UE and gNB (TS 23.502
// 4.3.2.2.1 step 12: PDU Session Resource Setup Request with the NAS-PDU).
func (n *NF) transfer(ue *ueContext, t transfer) transferVerdict {
	switch ue.state {
	case StateRegistered, StateRegistering:
	case StateReleasing:
		return transferVerdict{http.StatusGatewayTimeout, causeUENotReachable, "the UE's N2 connection is being released"}
	default:
		// TS 29.518 5.2.2.3.1: a registration in progress rejects the
		// transfer for now.
		return transferVerdict{http.StatusConflict, causeTemporaryRejectRegistration, "registration in progress (" + ue.state.String() + ")"}
	}
	if v, held := handoverHolds(ue, t); held {
		return v // ngap_handover_common.go
	}
	s := ue.pdu.get(t.id)
	if s == nil {
		return transferVerdict{http.StatusNotFound, sbi.CauseContextNotFound, "no PDU session " + strconv.Itoa(int(t.id)) + " for " + ue.supi}
	}
	if n.holdForService(ue, t) {
		return transferInitiated // goes in the Service Request's Initial Context Setup
	}
	err := n.deliverSM(ue, s, t.n1, t.n2, t.n2Type)
	switch {
	case err == nil:
		return transferInitiated
	case errors.Is(err, errNoConnection):
		return transferVerdict{http.StatusGatewayTimeout, causeUENotReachable, err.Error()}
	case errors.Is(err, errUnknownN2Type):
		return transferVerdict{http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, err.Error()}
	}
	// The SMF's N2 SM information did not fit an NGAP message.
	return transferVerdict{http.StatusBadRequest, sbi.CauseUnspecifiedMsgFailure, err.Error()}
}

// handleSMContextStatus: TS 29.502 5.2.2.5.2 — the SMF released the SM
// context (resourceStatus RELEASED): the AMF forgets the routing context
// (TS 23.502 4.3.4.2 step 12). Only the context the URI's tag names: the
// notification of a context the UE has already replaced (it reused the
// PDU session ID, TS 24.501 6.4.1.2, or registered again) may come late
// and is answered 204 without touching the new session.
func (n *NF) handleSMContextStatus(w http.ResponseWriter, r *http.Request) {
	var note models.SmfPduSessionSmContextStatusNotification
	if !sbi.DecodeJSON(w, r, &note) {
		return
	}
	if note.StatusInfo == nil || note.StatusInfo.ResourceStatus == "" {
		sbi.WriteProblem(w, http.StatusBadRequest, sbi.CauseMandatoryIEMissing, "statusInfo.resourceStatus is mandatory")
		return
	}
	supi := r.PathValue("supi")
	sid, err := strconv.Atoi(r.PathValue("pduSessionId"))
	if err != nil || sid < 1 || sid > 15 {
		sbi.WriteProblem(w, http.StatusNotFound, sbi.CauseResourceURIStructureNotFound, "PDU session ID "+r.PathValue("pduSessionId"))
		return
	}
	if note.StatusInfo.ResourceStatus != models.ResourceStatus_RELEASED {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	id, tag := uint8(sid), r.PathValue("tag")
	n.log.Info("SM context released by the SMF", "supi", supi, "pduSessionId", id, "tag", tag, "cause", note.StatusInfo.Cause)
	known := n.onConnectedUE(supi, func(ue *ueContext) {
		if n.endedByStatus(ue, id, tag) {
			n.releaseProcedure(ue, sessionKey(id), ratelimit.ResultSuccess) // TS 23.502 4.3.4.2 step 12
		}
	})
	known = n.ues.editIdleSUPI(supi, func(ue *ueContext) { n.endedByStatus(ue, id, tag) }) || known
	answerKnown(w, supi, known)
}

// endedByStatus forgets the UE's session id if the notification is about
// its current SM context, and logs a stale one.
func (n *NF) endedByStatus(ue *ueContext, id uint8, tag string) bool {
	if ue.pdu.endedByStatus(id, tag) {
		return true
	}
	if ue.pdu.get(id) != nil {
		n.log.Info("status notification of an older SM context ignored", "supi", ue.supi, "pduSessionId", id, "tag", tag)
	}
	return false
}
