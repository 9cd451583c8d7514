package amf

// Network-triggered Service Request, the AMF's part (TS 23.502 4.2.3.3
// steps 3a-4b, 6; TS 29.518 5.2.2.3.1; TS 24.501 5.6.2): an SMF's
// N1N2MessageTransfer for a CM-IDLE UE is kept and answered 202
// ATTEMPTING_TO_REACH_UE, the UE is paged (ngap_paging.go) under T3513 with
// amf.nas.paging_retransmissions, and then either
//   - the UE answers with a Service Request: the kept transfers move to its
//     new N2 connection and its sessions are set up in Initial Context Setup
//     (gmm_service_request.go);
//   - paging fails (T3513's last expiry, or the mobile reachable timer
//     expired): each transfer's n1n2FailureTxfNotifURI gets
//     N1N2MsgTxfrFailureNotification {UE_NOT_RESPONDING} and the UE stays
//     registered and idle;
//   - the UE registers or deregisters meanwhile: the paging ends and the
//     transfers are failed the same way, nothing kept.
//
// A parked context belongs to the UE table, not to a dispatcher key: its
// paging state changes only under the table's lock (editIdleTMSI), and
// whatever takes time (NGAP writes, notifications) runs after, outside it.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/ratelimit"
	"github.com/l25gc/l25gc/sbi"
)

// pendingTransfer is an N1N2MessageTransfer kept while the UE is paged.
type pendingTransfer struct {
	transfer
	dataURI string // the transfer's resource (Location of the 202, TS 29.518 6.1.3.5.3.1)
}

// paging is one paging procedure of a parked UE; several transfers page once.
type paging struct {
	transfers map[uint8]pendingTransfer // by PDU session ID
	sent      int                       // Paging messages sent: 1 + retransmissions
	timer     *time.Timer               // T3513
	// slot counts the network-triggered Service Request in the limiter
	// (limiter_events.go) from the paging on.
	slot *ratelimit.Slot
}

// pageFor keeps t for the parked UE of supi and pages it unless a paging
// runs already (TS 23.502 4.2.3.3 step 3b: 202 ATTEMPTING_TO_REACH_UE).
// A UE whose mobile reachable timer expired is not paged (TS 24.501 5.3.7):
// 504 UE_NOT_REACHABLE.
func (n *NF) pageFor(supi string, t transfer) (v transferVerdict, parked bool) {
	var page *ueContext
	n.ues.editIdleSUPI(supi, func(ue *ueContext) {
		if parked || ue.guti == nil {
			return // one parked context answers
		}
		parked = true
		v, page = n.keepTransfer(ue, t)
	})
	if page != nil {
		n.sendPaging(page.guti.STMSI(), supi)
	}
	return v, parked
}

// keepTransfer runs under the table's lock: it files t with the parked UE
// and says whether a new paging starts (then the caller sends it).
func (n *NF) keepTransfer(ue *ueContext, t transfer) (transferVerdict, *ueContext) {
	switch {
	case ue.idle.unreachable:
		return transferVerdict{http.StatusGatewayTimeout, causeUENotReachable, ue.supi + " is not reachable (mobile reachable timer expired)"}, nil
	case ue.pdu.get(t.id) == nil:
		return transferVerdict{http.StatusNotFound, sbi.CauseContextNotFound, "no PDU session " + strconv.Itoa(int(t.id)) + " for " + ue.supi}, nil
	case t.n2 != nil && !forRAN(t.n2Type):
		// As for a connected UE (ngap_pdu_session.go): refused now, not
		// after the paging.
		return transferVerdict{http.StatusBadRequest, sbi.CauseMandatoryIEIncorrect, fmt.Sprintf("%v: %q", errUnknownN2Type, t.n2Type)}, nil
	}
	p := pendingTransfer{transfer: t, dataURI: n.callbackURI("/namf-comm/v1/ue-contexts/" + ue.supi + "/n1-n2-messages/" +
		strconv.Itoa(int(t.id)) + "-" + strconv.FormatUint(n.callGen.Add(1), 10))}
	v := transferVerdict{status: http.StatusAccepted, detail: p.dataURI}
	if pg := ue.idle.paging; pg != nil {
		// A newer transfer for a session replaces the older one silently:
		// a failure notification would have the SMF drop what it buffers.
		pg.transfers[t.id] = p
		return v, nil // TS 23.502 4.2.3.3 step 4a: already paging, page once
	}
	// Counted, not gated: the parked context has no key to hold it on.
	ue.idle.paging = &paging{transfers: map[uint8]pendingTransfer{t.id: p}, sent: 1, slot: n.limiter.Force(kindPaging)}
	n.armT3513(ue)
	n.metrics.pagingStarted.Inc()
	return v, ue
}

// armT3513 starts T3513 for the parked UE's paging (TS 24.501 5.6.2.2.1);
// under the table's lock.
func (n *NF) armT3513(ue *ueContext) {
	tmsi, pg := ue.guti.TMSI, ue.idle.paging
	pg.timer = time.AfterFunc(n.cfg.AMF.NAS.T3513, func() { n.onT3513(ue, tmsi, pg) })
}

// onT3513: TS 24.501 5.6.2.2.2 — page again, at most
// paging_retransmissions times; then the paging has failed. ue and pg are
// the parked context and paging the timer was armed for: if either is no
// longer there (the UE answered, registered, ended) the expiry is stale.
func (n *NF) onT3513(ue *ueContext, tmsi uint32, pg *paging) {
	if n.stopped() {
		return
	}
	var again bool
	var failed []pendingTransfer
	n.ues.editIdleTMSI(tmsi, func(p *ueContext) {
		if p != ue || p.idle.paging != pg {
			return
		}
		if pg.sent <= n.cfg.AMF.NAS.PagingRetransmissions {
			pg.sent++
			again = true
			n.armT3513(p)
			return
		}
		failed = p.idle.endPaging()
	})
	switch {
	case again:
		n.metrics.pagingRetransmissions.Inc()
		n.sendPaging(ue.guti.STMSI(), ue.supi)
	case failed != nil:
		n.log.Info("paging failed: no answer", "supi", ue.supi, "pagings", pg.sent)
		n.failTransfers(ue.supi, failed, models.N1N2MessageTransferCause_UE_NOT_RESPONDING)
	}
}

// endPaging stops the paging and hands over its transfers (nil: none ran).
// Unless the UE answered (takePaging took the slot first), the network-
// triggered Service Request has failed.
func (s *idleState) endPaging() []pendingTransfer {
	pg := s.paging
	if pg == nil {
		return nil
	}
	s.paging = nil
	pg.timer.Stop()
	pg.slot.Finish(ratelimit.ResultFailure)
	out := make([]pendingTransfer, 0, len(pg.transfers))
	for _, t := range pg.transfers {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b pendingTransfer) int { return int(a.id) - int(b.id) })
	return out
}

// failTransfers counts a failed paging and tells each transfer's SMF
// (TS 29.518 5.2.2.3.1: N1N2MsgTxfrFailureNotification), off the caller.
func (n *NF) failTransfers(supi string, ts []pendingTransfer, cause models.N1N2MessageTransferCause) {
	if len(ts) == 0 {
		return
	}
	n.metrics.pagingDone.WithLabelValues(resultFailure).Inc()
	for _, t := range ts {
		go n.notifyTransferFailed(supi, t, cause)
	}
}

// notifyTransferFailed posts the failure notification to the transfer's
// n1n2FailureTxfNotifURI, when the SMF gave one; a failure is logged only.
func (n *NF) notifyTransferFailed(supi string, t pendingTransfer, cause models.N1N2MessageTransferCause) {
	if t.failureURI == "" {
		return
	}
	ctx, cancel := context.WithTimeout(n.calls, sbiTimeout)
	defer cancel()
	note := models.N1N2MsgTxfrFailureNotification{Cause: cause, N1n2MsgDataUri: t.dataURI}
	if err := n.opts.Sessions.NotifyTransferFailure(ctx, t.failureURI, note); err != nil {
		n.log.Warn("N1N2 transfer failure notification", "supi", supi, "pduSessionId", t.id, "err", err)
	}
}

// failPaged fails the transfers a connected context took over from paging
// and has not delivered (the UE registered instead of answering with a
// Service Request, or its connection ended first).
func (n *NF) failPaged(ue *ueContext, cause models.N1N2MessageTransferCause) {
	if len(ue.paged) == 0 {
		return
	}
	ts := make([]pendingTransfer, 0, len(ue.paged))
	for _, t := range ue.paged {
		ts = append(ts, t)
	}
	ue.paged = nil
	n.failTransfers(ue.supi, ts, cause)
}

// takePaging moves the paging of a parked context, just taken out of the
// table, onto the context that adopts it: its transfers are now the new
// context's to deliver or fail, and its timers stop.
func (ue *ueContext) takePaging(old *ueContext) {
	if pg := old.idle.paging; pg != nil {
		// The procedure goes on with the UE's answer (limiter_events.go).
		ue.lim.paging, pg.slot = pg.slot, nil
	}
	ts := old.idle.endPaging()
	old.idle.stopTimer()
	if len(ts) == 0 {
		return
	}
	ue.paged = make(map[uint8]pendingTransfer, len(ts))
	for _, t := range ts {
		ue.paged[t.id] = t
	}
}

func (p pendingTransfer) String() string {
	return fmt.Sprintf("PDU session %d (%s)", p.id, p.n2Type)
}

// NotifyTransferFailure posts N1N2MsgTxfrFailureNotification to the SMF's
// callback (TS 29.518 6.1.5.2); the SMF answers 204.
func (s *sbiSessions) NotifyTransferFailure(ctx context.Context, uri string, note models.N1N2MsgTxfrFailureNotification) error {
	_, err := s.c.Do(ctx, http.MethodPost, uri, note, nil)
	return err
}

// forRAN says whether N2 SM information of type t goes to the gNB in one
// of the PDU Session Resource requests (sessionRequest).
func forRAN(t models.N2SmInfoType) bool {
	switch t {
	case models.N2SmInfoType_PDU_RES_SETUP_REQ, models.N2SmInfoType_PDU_RES_MOD_REQ, models.N2SmInfoType_PDU_RES_REL_CMD:
		return true
	}
	return false
}
