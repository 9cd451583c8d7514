package amf

// Procedures in progress, as the limiter counts them (DESIGN.md "AMF
// limiter and overload"): events, not messages.
//
// The API, for every procedure (the lead wires Service Request, Handover
// Required and Path Switch Request with it):
//
//	n.gate(ue, kind, run)          on the UE's key, for an event-initiating
//	                               message: run(ue) now if the limiter has
//	                               room, else once it has (the UE's later
//	                               events stay queued behind it)
//	n.claimProcedure(ue, key, kind) where the procedure starts (inside
//	                               run): it takes the gate's slot, or a slot
//	                               of its own when it was not gated; key is
//	                               mmKey(kind) or sessionKey(id)
//	n.releaseProcedure(ue, key, r) every way it ends; once-only, so calling
//	                               it on several paths is safe
//	n.endProcedures(ue, r)         the UE context ends (released, reset,
//	                               panicked): all its procedures end
//
// A slot the gate took but no procedure claimed (the message was rejected
// before it started anything) is given back when run returns. Whatever a
// path forgets, the limiter ends after amf.limiter.procedure_timeout.
//
// Follow-up messages (the UE's answers, the gNB's responses, the peers'
// answers) never call gate. A UE with a procedure in progress is not held
// either when it starts another (e.g. a second PDU session): holding its
// key would hold that procedure's follow-ups behind the gate, and with a
// full limiter every UE could be waiting for a follow-up of its own; its
// new procedure is counted at once instead (Limiter.Force).

import (
	"net/http"

	"github.com/free5gc/nas"
	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/ratelimit"
	"github.com/l25gc/l25gc/sbi"
)

// Procedure kinds: the limiter's labels.
const (
	kindRegistration     = procRegistration
	kindDeregistration   = procDeregistration
	kindServiceRequest   = "service_request"
	kindHandover         = "handover"
	kindPathSwitch       = "path_switch"
	kindPDUEstablishment = "pdu_session_establishment"
	kindPDUModification  = "pdu_session_modification"
	kindPDURelease       = "pdu_session_release"
)

// procKey names one procedure of a UE: a 5GMM procedure by its kind, a PDU
// session procedure by its session (one at a time per session, TS 24.501
// 6.1.3.1).
type procKey struct {
	kind    string
	session uint8
}

func mmKey(kind string) procKey   { return procKey{kind: kind} }
func sessionKey(id uint8) procKey { return procKey{kind: "pdu_session", session: id} }

// procedures is a UE's share of the limiter: touched only on its key.
type procedures struct {
	open    map[procKey]*ratelimit.Slot
	ticket  *ratelimit.Slot // the gate's slot, until a procedure claims it
	waiting bool            // an initiating message of the UE waits at the gate
}

// busy says whether the UE has a procedure in progress; a slot the
// limiter ended meanwhile (procedure_timeout) no longer counts.
func (p *procedures) busy() bool {
	for key, s := range p.open {
		if s.Done() {
			delete(p.open, key)
		}
	}
	return len(p.open) > 0
}

// gate runs run(ue) for an event-initiating message of kind once the
// limiter lets a new procedure start. While it waits, the UE's key is held:
// its later events queue behind this one. With the queue full the message
// is dropped and counted (the UE retransmits it on its NAS timer) and gate
// returns false.
func (n *NF) gate(ue *ueContext, kind string, run func(*ueContext)) bool {
	if ue.lim.busy() {
		run(ue)
		return true
	}
	id := ue.amfID
	slot, err := n.limiter.Acquire(kind, func(s *ratelimit.Slot) { n.admitted(id, s, run) })
	switch {
	case err != nil:
		n.limiter.dropped.WithLabelValues(kind).Inc()
		n.log.Info("limiter queue full: initiating message dropped", "amfUeNgapId", id, "procedure", kind)
		return false
	case slot != nil:
		n.runAdmitted(ue, slot, run)
	default:
		ue.lim.waiting = true
		n.disp.Hold(ratelimit.UE(id))
	}
	return true
}

// admitted is the limiter's call when a waiting message's turn comes (on
// the goroutine that freed the slot): the rest runs on the UE's key, first
// of its events.
func (n *NF) admitted(id int64, s *ratelimit.Slot, run func(*ueContext)) {
	err := n.disp.Resume(ratelimit.UE(id), func() {
		ue := n.ues.get(id)
		if ue == nil {
			s.Finish(ratelimit.ResultGone)
			return
		}
		ue.lim.waiting = false
		n.runAdmitted(ue, s, run)
	})
	if err != nil {
		s.Finish(ratelimit.ResultGone) // the AMF is stopping
	}
}

// runAdmitted runs the message with the slot as its ticket, and gives the
// slot back if no procedure claimed it.
func (n *NF) runAdmitted(ue *ueContext, s *ratelimit.Slot, run func(*ueContext)) {
	ue.lim.ticket = s
	defer func() {
		if t := ue.lim.ticket; t != nil {
			ue.lim.ticket = nil
			t.Finish(ratelimit.ResultNone)
		}
	}()
	run(ue)
}

// claimProcedure counts the procedure key as started, with the gate's slot
// or one of its own. A procedure of the same key still open (restarted,
// replaced) ends first, as a failure.
func (n *NF) claimProcedure(ue *ueContext, key procKey, kind string) {
	n.releaseProcedure(ue, key, ratelimit.ResultFailure)
	s := ue.lim.ticket
	ue.lim.ticket = nil
	if s == nil {
		s = n.limiter.Force(kind)
	}
	if ue.lim.open == nil {
		ue.lim.open = map[procKey]*ratelimit.Slot{}
	}
	ue.lim.open[key] = s
}

// releaseProcedure ends procedure key, if open.
func (n *NF) releaseProcedure(ue *ueContext, key procKey, result string) {
	if s, ok := ue.lim.open[key]; ok {
		delete(ue.lim.open, key)
		s.Finish(result)
	}
}

// openKind is the kind of procedure key in progress, "" when none.
func (ue *ueContext) openKind(key procKey) string {
	if s, ok := ue.lim.open[key]; ok {
		return s.Kind()
	}
	return ""
}

// endProcedures ends everything the UE has in progress: its context or
// its N2 connection is gone.
func (n *NF) endProcedures(ue *ueContext, result string) {
	for key := range ue.lim.open {
		n.releaseProcedure(ue, key, result)
	}
	if t := ue.lim.ticket; t != nil {
		ue.lim.ticket = nil
		t.Finish(result)
	}
}

// initiatingKind says which procedure an uplink 5GMM message starts
// (TS 24.501 5.5.1, 5.5.2.2, 6.4.1.2, 6.4.2.2, 6.4.3.2), if any.
func initiatingKind(ev Event, m *nas.Message) (string, bool) {
	switch ev {
	case EvRegistrationRequest:
		return kindRegistration, true
	case EvDeregistrationRequest:
		return kindDeregistration, true
	case EvULNASTransport:
		return sessionKind(m)
	}
	return "", false
}

// 5GSM message types of TS 24.501 9.7 the AMF's counting looks at.
const (
	gsmEstablishmentRequest  = 0xC1
	gsmEstablishmentReject   = 0xC3
	gsmModificationRequest   = 0xC9
	gsmModificationReject    = 0xCA
	gsmModificationCommand   = 0xCB
	gsmModificationComplete  = 0xCC
	gsmModificationCmdReject = 0xCD
	gsmReleaseRequest        = 0xD1
	gsmReleaseReject         = 0xD2
	gsmReleaseCommand        = 0xD3
	gsmReleaseComplete       = 0xD4
)

// gsmType is the message type of a plain 5GSM message (TS 24.501 8.3:
// EPD, PDU session ID, PTI, type), 0 when it is none.
func gsmType(b []byte) uint8 {
	if len(b) < 4 || b[0] != nasMessage.Epd5GSSessionManagementMessage {
		return 0
	}
	return b[3]
}

// sessionKind: a UE's PDU Session Establishment, Modification or Release
// Request in UL NAS Transport starts a procedure.
func sessionKind(m *nas.Message) (string, bool) {
	if m == nil || m.GmmMessage == nil || m.ULNASTransport == nil {
		return "", false
	}
	ul := m.ULNASTransport
	if ul.GetPayloadContainerType() != nasMessage.PayloadContainerTypeN1SMInfo {
		return "", false
	}
	if gsmType(ul.GetPayloadContainerContents()) == gsmEstablishmentRequest {
		return kindPDUEstablishment, true
	}
	return sessionKindOf(ul.GetPayloadContainerContents())
}

// networkSessionKind: an N1N2MessageTransfer that starts a network-
// initiated modification or release (TS 23.502 4.3.3.2 step 1b-e, 4.3.4.2
// step 1b-e) of a session with no procedure in progress.
func networkSessionKind(t transfer) (string, bool) {
	switch {
	case t.n2Type == models.N2SmInfoType_PDU_RES_MOD_REQ || gsmType(t.n1) == gsmModificationCommand:
		return kindPDUModification, true
	case t.n2Type == models.N2SmInfoType_PDU_RES_REL_CMD || gsmType(t.n1) == gsmReleaseCommand:
		return kindPDURelease, true
	}
	return "", false
}

// sessionUplinkDone: the UE's 5GSM message that completes the session's
// procedure (TS 23.502 4.3.3.2 step 8, 4.3.4.2 step 9), once the SMF
// took it.
func (n *NF) sessionUplinkDone(ue *ueContext, id uint8, msg []byte, err error) {
	switch gsmType(msg) {
	case gsmModificationComplete, gsmReleaseComplete:
		n.releaseProcedure(ue, sessionKey(id), resultOf(err))
	case gsmModificationCmdReject:
		n.releaseProcedure(ue, sessionKey(id), ratelimit.ResultReject)
	}
}

// sessionDownlink: the SMF's 5GSM reject ends the session's procedure
// (TS 24.501 6.4.1.4, 6.4.2.4, 6.4.3.4).
func (n *NF) sessionDownlink(ue *ueContext, id uint8, n1 []byte) {
	switch gsmType(n1) {
	case gsmEstablishmentReject, gsmModificationReject, gsmReleaseReject:
		n.releaseProcedure(ue, sessionKey(id), ratelimit.ResultReject)
	}
}

// sessionN2Done: the gNB's PDU Session Resource Setup answer, taken by
// the SMF, completes an establishment (TS 23.502 4.3.2.2.1 steps 14-17);
// a failed Modify ends a modification.
func (n *NF) sessionN2Done(ue *ueContext, id uint8, t models.N2SmInfoType, err error) {
	kind := ue.openKind(sessionKey(id))
	switch {
	case kind == kindPDUEstablishment && t == models.N2SmInfoType_PDU_RES_SETUP_RSP:
		n.releaseProcedure(ue, sessionKey(id), resultOf(err))
	case kind == kindPDUEstablishment && t == models.N2SmInfoType_PDU_RES_SETUP_FAIL,
		kind == kindPDUModification && t == models.N2SmInfoType_PDU_RES_MOD_FAIL:
		n.releaseProcedure(ue, sessionKey(id), ratelimit.ResultFailure)
	}
}

func resultOf(err error) string {
	if err != nil {
		return ratelimit.ResultFailure
	}
	return ratelimit.ResultSuccess
}

// sessionKindOf is sessionKind for the 5GSM message alone (forwardToSession
// has already routed it).
func sessionKindOf(msg []byte) (string, bool) {
	switch gsmType(msg) {
	case gsmModificationRequest:
		return kindPDUModification, true
	case gsmReleaseRequest:
		return kindPDURelease, true
	}
	return "", false
}

// transferGated runs an N1N2MessageTransfer on the UE's key: one that
// starts a network-initiated procedure waits for the limiter like a UE's
// request (the SMF waits for the verdict); with the queue full the SMF
// hears 503 NF_CONGESTION (TS 29.500 5.2.7.2).
func (n *NF) transferGated(ue *ueContext, t transfer, done chan<- transferVerdict) {
	kind, initiates := networkSessionKind(t)
	if !initiates || ue.openKind(sessionKey(t.id)) != "" {
		done <- n.transfer(ue, t)
		return
	}
	run := func(ue *ueContext) {
		v := n.transfer(ue, t)
		if v.status == transferInitiated.status {
			n.claimProcedure(ue, sessionKey(t.id), kind)
		}
		done <- v
	}
	if !n.gate(ue, kind, run) {
		done <- transferVerdict{http.StatusServiceUnavailable, sbi.CauseNFCongestion, "AMF limiter queue full"}
	}
}

// refuseCongested answers an initial message the limiter's full queue
// turned away: #22 congestion, with a random T3346 for a Registration
// Request (TS 24.501 5.5.1.2.5, 5.3.9), so the UE backs off instead of
// waiting for its own timer; its context then has nothing started and
// is released (keepIfStarted).
func (n *NF) refuseCongested(ue *ueContext, typ uint8) {
	n.sendPlainOrProtected(ue, overloadAnswer(typ))
}
