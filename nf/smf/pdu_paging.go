package smf

// Network-triggered service request at the SMF (TS 23.502 4.2.3.3): the
// UPF buffered downlink data for a session whose user plane is
// deactivated and reported it (PFCP Session Report, Downlink Data Report,
// TS 29.244 7.5.8); the SMF asks the AMF serving the UE to bring the
// session back (Namf_Communication_N1N2MessageTransfer with the PDU
// Session Resource Setup Request Transfer). The AMF either passes it to
// the gNB at once (UE CM-CONNECTED) or pages the UE; the gNB's answer
// arrives as UpdateSMContext PDU_RES_SETUP_RSP (pdu_update.go,
// activated). A UE that does not answer ends in the AMF's failure
// notification: the UPF discards the buffer.

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/upf/rules"
)

// PFCP causes of a Session Report Response (TS 29.244 8.2.1).
const (
	pfcpCauseAccepted        uint8 = 1
	pfcpCauseSessionNotFound uint8 = 65
)

const n1n2FailurePath = callbackPrefix + "n1n2-failure/"

// After a temporary reject (the UE is registering or being handed over,
// TS 29.518 6.1.3.5.3.1 409) the SMF pages again when its guard timer
// expires (TS 23.502 4.2.3.3 step 3b: "locally configured"), keeping the
// UPF's buffer, at most pagingRetries times.
const (
	pagingGuard   = time.Second
	pagingRetries = 3
)

// handleReport is the SMF's rules.ReportHandler (TS 23.502 4.2.3.3 steps
// 2a-2b): the answer goes back to the UPF at once; the transfer to the
// AMF runs after it, on the N4 client's goroutine that sent the answer
// when the client offers that (afterAnswer). A report for a session the
// SMF does not hold is cause 65, so the UPF drops it (TS 29.244 7.5.9).
func (n *NF) handleReport(ctx context.Context, upf string, r *rules.Report) uint8 {
	if n.stop.Err() != nil {
		return pfcpCauseAccepted // stopping: no procedure starts any more
	}
	c, ok := n.ctxs.byCPSEID(r.CPSEID)
	if !ok {
		n.log.Info("PFCP Session Report for no session", "upf", upf, "cp_seid", r.CPSEID)
		return pfcpCauseSessionNotFound
	}
	if r.DownlinkData == nil {
		return pfcpCauseAccepted // usage reports: the SMF sets no thresholds, nothing to do
	}
	span := n.traceReport(c)
	switch start, gone := n.startPaging(c); {
	case gone:
		span.End()
		return pfcpCauseSessionNotFound
	case start:
		n.m.paging("reported")
		n.afterAnswer(ctx, func(ctx context.Context) {
			defer span.End()
			n.page(tracing.WithSpan(ctx, span), c, 0)
		})
	default:
		span.End()
		n.m.paging("suppressed")
	}
	return pfcpCauseAccepted
}

// startPaging marks c as paging unless it already is or its user plane
// is not deactivated: one transfer per session until it ends (DESIGN.md
// "one Downlink Data Report per session until served", also against a
// report storm from a UPF that repeats).
func (n *NF) startPaging(c *smContext) (start, gone bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.state == stateReleased:
		return false, true
	case c.state != stateInactive || c.paging:
		return false, false
	}
	c.paging = true
	c.pagingGen++
	return true, false
}

// page is step 3a: N1N2MessageTransfer with the setup request transfer;
// retries counts the temporary rejects before it.
func (n *NF) page(ctx context.Context, c *smContext, retries int) {
	c.mu.Lock()
	m, err := n.pagingTransfer(c)
	gen := c.pagingGen
	c.mu.Unlock()
	if err != nil {
		n.pagingFailed(ctx, c, err.Error())
		return
	}
	cause, err := n.peers.transferCause(ctx, m)
	switch {
	case err != nil && n.stop.Err() != nil:
		return
	case temporaryReject(err) && retries < pagingRetries:
		n.log.Debug("N1N2MessageTransfer temporarily rejected: paging again later", "supi", c.supi, "psi", c.psi, "err", err)
		n.pageLater(c, retries+1)
	case err != nil:
		// TS 29.518 5.2.2.3.1.3: e.g. 404 (UE unknown), 409 (UE not
		// reachable now), 504 (UE not reachable): as a paging failure.
		n.pagingFailed(ctx, c, fmt.Sprintf("N1N2MessageTransfer: %v", err))
	case cause == models.N1N2MessageTransferCause_ATTEMPTING_TO_REACH_UE:
		n.log.Debug("AMF pages the UE", "supi", c.supi, "psi", c.psi)
		n.supervisePaging(c, gen)
	default:
		// The UE was CM-CONNECTED: the gNB sets the session up (step 3b
		// does not apply) and its answer activates it.
		n.log.Debug("N1N2MessageTransfer initiated", "supi", c.supi, "psi", c.psi, "cause", cause)
		n.supervisePaging(c, gen)
	}
}

// pagingTimeout bounds a paging attempt the AMF accepted: well beyond the
// AMF's own end of it (T3513 x (1 + retransmissions), 6 s by default,
// then its failure notification) and a Service Request, so only an AMF
// that lost the attempt (restarted, crashed) hits it. Without it such a
// session would stay marked as paging and never page again.
const pagingTimeout = 30 * time.Second

// supervisePaging ends attempt gen of c as failed if it has neither
// activated the session nor failed after pagingTimeout.
func (n *NF) supervisePaging(c *smContext, gen uint64) {
	time.AfterFunc(n.pagingTimeout, func() {
		if n.stop.Err() != nil {
			return
		}
		n.background(func(ctx context.Context) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.paging && c.pagingGen == gen {
				n.endPaging(ctx, c, "no outcome from the AMF within "+n.pagingTimeout.String())
			}
		})
	})
}

// temporaryReject: the AMF cannot page now but may soon (TS 29.518
// 6.1.3.5.3.1 table 6.1.3.5.3.1-3, 409).
func temporaryReject(err error) bool {
	switch sbi.CauseOf(err) {
	case "TEMPORARY_REJECT_REGISTRATION_ONGOING", "TEMPORARY_REJECT_HANDOVER_ONGOING":
		return true
	}
	return false
}

// pageLater pages c again after the guard, unless the attempt ended
// meanwhile (the UE came back, the session went).
func (n *NF) pageLater(c *smContext, retries int) {
	time.AfterFunc(n.pagingGuard, func() {
		if n.stop.Err() != nil {
			return
		}
		c.mu.Lock()
		still := c.paging && c.state == stateInactive
		c.mu.Unlock()
		if still {
			n.background(func(ctx context.Context) { n.page(ctx, c, retries) })
		}
	})
}

// pagingTransfer is the N1N2MessageTransfer for c (TS 29.518 6.1.6.2.3):
// PDU session ID, N2 SM information PDU_RES_SETUP_REQ, the default flow's
// ARP and 5QI, and the SMF's failure notification URI.
func (n *NF) pagingTransfer(c *smContext) (n1n2, error) {
	n2, err := ngapx.BuildPDUSessionResourceSetupRequestTransfer(c.setupTransfer())
	if err != nil {
		return n1n2{}, err
	}
	m := n1n2{supi: c.supi, amfID: c.servingNfID, psi: c.psi, snssai: c.snssai, n2: n2,
		n2Type: models.N2SmInfoType_PDU_RES_SETUP_REQ, failureURI: n.apiRoot() + n1n2FailurePath + c.ref}
	if len(c.flows) > 0 {
		arp := c.flows[0].ARP
		m.arp, m.fiveQI = &arp, c.flows[0].FiveQI
	}
	return m, nil
}

// pagingFailed ends a paging attempt that did not reach the UE (TS 23.502
// 4.2.3.3 step 3c): the UPF discards what it buffered (FAR DROP; UPF-C has
// UPF-U drop the buffer and count it), then the downlink FAR is BUFF|NOCP
// again at once so that the next downlink packet pages once more (the UE
// may be reachable by then; the AMF's T3513 retransmissions bound how
// often that happens).
func (n *NF) pagingFailed(ctx context.Context, c *smContext, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n.endPaging(ctx, c, why)
}

// endPaging is pagingFailed with c.mu held.
func (n *NF) endPaging(ctx context.Context, c *smContext, why string) {
	if !c.paging {
		return
	}
	c.paging = false
	n.m.paging("failed")
	n.log.Info("paging failed: downlink buffer discarded", "supi", c.supi, "psi", c.psi, "reason", why)
	if c.state != stateInactive {
		return // activated or released meanwhile
	}
	if err := n.modifyN4(ctx, c, downlinkDiscarded()); err != nil {
		n.log.Warn("N4 session modification (discard the downlink buffer)", "supi", c.supi, "psi", c.psi, "err", err)
		return
	}
	if err := n.modifyN4(ctx, c, downlinkBuffered()); err != nil {
		n.log.Warn("N4 session modification (buffer downlink again)", "supi", c.supi, "psi", c.psi, "err", err)
	}
}

// pagingAbandoned is an AN release that arrives while paging is under
// way (the AMF passed the transfer on, then lost the UE before the gNB
// answered): the attempt ends and the downlink FAR is written again, so
// the UPF reports the next packet (TS 29.244 5.2.3: one report per BUFF
// NOCP setting) instead of the session staying silent.
func (n *NF) pagingAbandoned(ctx context.Context, c *smContext) (updateAnswer, error) {
	c.paging = false
	if err := n.modifyN4(ctx, c, downlinkBuffered()); err != nil {
		return updateAnswer{}, fmt.Errorf("N4 session modification (AN release while paging): %w", err)
	}
	return updateAnswer{upCnx: models.UpCnxState_DEACTIVATED}, nil
}

// modifyN4 changes c's session at the UPF.
func (n *NF) modifyN4(ctx context.Context, c *smContext, m *rules.Modification) error {
	n4, err := n.n4Client()
	if err != nil {
		return err
	}
	_, err = n4.Modify(ctx, n.upf, c.upSEID, m)
	return err
}

// handleN1N2Failure is the AMF's N1N2MsgTxfrFailureNotification (TS 29.518
// 5.2.2.3.2, 6.1.5.2): the UE did not answer paging (UE_NOT_RESPONDING)
// or cannot be reached. The SMF answers 204 once the UPF was told.
func (n *NF) handleN1N2Failure(w http.ResponseWriter, r *http.Request) {
	c, ok := n.ctxs.get(r.PathValue("smContextRef"))
	if !ok {
		notFound(w, r)
		return
	}
	var f models.N1N2MsgTxfrFailureNotification
	if !sbi.DecodeJSON(w, r, &f) {
		return
	}
	n.pagingFailed(r.Context(), c, "AMF: "+string(f.Cause))
	w.WriteHeader(http.StatusNoContent)
}

// afterAnswer runs f as background does, but on the goroutine of the N4
// client that answers the UPF's request handled with ctx, once the answer
// is sent (rules.LeaveAfterAnswer): no other goroutine is woken between
// the Session Report and the N1N2MessageTransfer. A client that does not
// offer it (or a stopping SMF's) gets the background's worker.
func (n *NF) afterAnswer(ctx context.Context, f func(ctx context.Context)) {
	run := n.procedure(f)
	if run == nil {
		return // stopped
	}
	if !rules.LeaveAfterAnswer(ctx, run) {
		n.workers.Go(run)
	}
}
