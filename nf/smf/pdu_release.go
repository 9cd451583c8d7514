package smf

// PDU session release (TS 23.502 4.3.4.2), the SMF's part:
//
//	UE-requested: UpdateSMContext with the UE's PDU Session Release
//	    Request (1b) → N4 Session Deletion (2) → UpdateSMContext answered
//	    with the Release Command (N1) and the PDU Session Resource Release
//	    Command Transfer (N2) (3b) → UpdateSMContext with the gNB's
//	    Release Response (7b) and with the UE's Release Complete (10b) →
//	    PCF, UDM and address released, SMContextStatusNotify (11).
//	network-requested (the PCF ends the SM policy association, 1d): the
//	    same, with the Release Command sent by N1N2MessageTransfer (3a).
//	AMF-triggered (ReleaseSMContext, e.g. on deregistration, 1c/3c):
//	    everything released at once, answered 204.
//
// teardown releases in the order of the call flow and is safe to call
// twice: a context is torn down once.

import (
	"context"
	"net/http"
	"time"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// t3592 guards a Release Command (TS 24.501 10.3, 16 s). The SMF does not
// retransmit the command (the AMF's NAS transport is reliable over N2), so
// the first expiry without the UE's Release Complete releases the session
// locally, as the fifth would (TS 24.501 6.3.3.5): a UE or AMF that never
// answers cannot hold an address.
const t3592 = 16 * time.Second

// guardRelease arms T3592 for c's release.
func (n *NF) guardRelease(c *smContext) {
	c.releaseGuard = time.AfterFunc(n.releaseTimeout, func() {
		if n.stop.Err() != nil {
			return
		}
		c.mu.Lock()
		releasing := c.state == stateReleasing
		c.mu.Unlock()
		if releasing {
			n.background(func(ctx context.Context) { n.releaseLocally(ctx, c, "T3592 expired without Release Complete") })
		}
	})
}

// teardown releases everything c holds: the N4 session, the SM policy
// association, the UECM registration and the UE's address. It says
// whether this call released c (false: it was released already).
func (n *NF) teardown(ctx context.Context, c *smContext, why string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateReleased {
		return false
	}
	c.state = stateReleased
	if c.releaseGuard != nil {
		c.releaseGuard.Stop()
	}
	n.deleteN4(ctx, c)
	if c.policyURI != "" {
		if err := n.peers.deletePolicy(ctx, c.policyURI); err != nil {
			n.log.Warn("SM policy delete", "supi", c.supi, "psi", c.psi, "err", err)
		}
		c.policyURI = ""
	}
	if c.uecmRegistered {
		if err := n.peers.deregisterSMF(ctx, c.supi, c.psi); err != nil {
			n.log.Warn("UECM deregistration", "supi", c.supi, "psi", c.psi, "err", err)
		}
		c.uecmRegistered = false
	}
	if c.ueIP.IsValid() {
		c.pool.release(c.ueIP, c.owner())
	}
	n.ctxs.remove(c)
	n.log.Info("PDU session released", "supi", c.supi, "psi", c.psi, "reason", why)
	return true
}

// deleteN4 removes the session from the UPF (TS 29.244 7.5.6); a UPF
// that does not answer keeps nothing the SMF still refers to.
func (n *NF) deleteN4(ctx context.Context, c *smContext) {
	if c.upSEID == 0 || n.n4 == nil {
		return
	}
	if _, err := n.n4.Delete(ctx, n.upf, c.upSEID); err != nil {
		n.log.Warn("N4 session deletion", "supi", c.supi, "psi", c.psi, "seid", c.upSEID, "err", err)
	}
	c.upSEID = 0
}

// releaseLocally tears c down and tells the AMF (SMContextStatusNotify).
// A context released meanwhile otherwise is not notified again: the AMF
// released it itself (ReleaseSMContext, TS 29.502 5.2.2.4, which gets no
// notification), or a new establishment with its PDU session ID replaced
// it, and a late notification would reach the AMF after the new session.
func (n *NF) releaseLocally(ctx context.Context, c *smContext, why string) {
	if !n.teardown(ctx, c, why) {
		return
	}
	if err := n.peers.notifyReleased(ctx, c.statusURI); err != nil {
		n.log.Warn("SM context status notification", "supi", c.supi, "psi", c.psi, "err", err)
	}
}

// releaseCommand is step 2-3 of a UE- or network-requested release: the
// user plane goes, and the Release Command and the N2 release command
// transfer are built. pti is the UE's (0 when the network asks).
func (n *NF) releaseCommand(ctx context.Context, c *smContext, pti, cause uint8) (n1, n2 []byte, err error) {
	n.deleteN4(ctx, c)
	// Without a downlink tunnel the gNB holds no resources of the
	// session and sends no release response (TS 23.502 4.3.4.2 step 3).
	c.releaseN1Done, c.releaseN2Done = false, c.state == stateInactive || !c.dl.IPv4.IsValid()
	c.state = stateReleasing
	n.guardRelease(c)
	if n1, err = nasx.BuildPDUSessionReleaseCommand(c.psi, pti, cause); err != nil {
		return nil, nil, err
	}
	n2, err = ngapx.BuildPDUSessionResourceReleaseCommandTransfer(ngapx.CauseNas(ngapType.CauseNasPresentNormalRelease))
	return n1, n2, err
}

// releaseRequested answers the UE's PDU Session Release Request (TS 24.501
// 6.4.3.2) within UpdateSMContext.
func (n *NF) releaseRequested(ctx context.Context, c *smContext, g nasx.GSM) (updateAnswer, error) {
	n1, n2, err := n.releaseCommand(ctx, c, g.PTI, nasx.GSMCauseRegularDeactivation)
	if err != nil {
		return updateAnswer{}, err
	}
	return updateAnswer{n1: n1, n2: n2, n2Type: models.N2SmInfoType_PDU_RES_REL_CMD}, nil
}

// releaseByNetwork is a network-requested release (step 1d-3a): the
// Release Command goes to the UE through the AMF.
func (n *NF) releaseByNetwork(ctx context.Context, c *smContext, cause uint8) {
	c.mu.Lock()
	if c.state == stateReleased || c.state == stateReleasing {
		c.mu.Unlock()
		return
	}
	n1, n2, err := n.releaseCommand(ctx, c, 0, cause)
	c.mu.Unlock()
	if err == nil {
		err = n.peers.transfer(ctx, n1n2{supi: c.supi, amfID: c.servingNfID, psi: c.psi, snssai: c.snssai,
			n1: n1, n2: n2, n2Type: models.N2SmInfoType_PDU_RES_REL_CMD})
	}
	if err != nil {
		n.log.Warn("network-requested release: the UE could not be told", "supi", c.supi, "psi", c.psi, "err", err)
		n.releaseLocally(ctx, c, "network-requested release")
	}
}

// releaseAnswered notes the UE's Release Complete (step 10b) or the gNB's
// release response (7b), which come in either order; with both the
// session is gone (step 11).
func (n *NF) releaseAnswered(c *smContext, fromUE bool) {
	if c.state != stateReleasing {
		return
	}
	if fromUE {
		c.releaseN1Done = true
	} else {
		c.releaseN2Done = true
	}
	if c.releaseN1Done && c.releaseN2Done {
		n.background(func(ctx context.Context) { n.releaseLocally(ctx, c, "release complete") })
	}
}

// handleRelease is Nsmf_PDUSession_ReleaseSMContext (TS 29.502 5.2.2.4):
// the AMF releases the session itself (e.g. the UE deregistered).
func (n *NF) handleRelease(w http.ResponseWriter, r *http.Request) {
	c, ok := n.ctxs.get(r.PathValue("smContextRef"))
	if !ok {
		notFound(w, r)
		return
	}
	var d models.SmfPduSessionSmContextReleaseData
	if _, ok := decodeRelated(w, r, &d, true); !ok {
		return
	}
	n.teardown(r.Context(), c, "ReleaseSMContext")
	w.WriteHeader(http.StatusNoContent)
}
