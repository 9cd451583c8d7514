package smf

// PDU session modification (TS 23.502 4.3.3.2), the SMF's part:
//
//	network-requested (1b: the PCF's SM policy update notification,
//	    TS 29.512 4.2.4): a new PCC rule adds a QoS flow for the rule's
//	    SDF filters — its own QFI, QoS rule, PDRs and QER; a rule of an
//	    existing flow with new QoS changes that flow's QER; a new
//	    Session-AMBR changes the session QER — all in one N4 Session
//	    Modification (pdu_modification_policy.go), and N1N2MessageTransfer
//	    brings the UE the Modification Command and the gNB the PDU Session
//	    Resource Modify Request Transfer (3b);
//	UE-requested (1a: UpdateSMContext with the UE's Modification Request
//	    asking for a QoS rule with packet filters): the same flow added,
//	    answered in UpdateSMContext (3a);
//	then the gNB's Modify Response (UpdateSMContext, 11) confirms the flows
//	    (a new flow it failed is removed from the UPF again, a changed one
//	    gets its old QoS back) and the UE's
//	    Modification Complete ends it (13).

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/sbi"
)

// modifiable: the user plane is set up (TS 23.502 4.3.3.2), or being
// activated — the UE holds the Accept while the gNB's setup response may
// still be on its way to the SMF, and the AMF delivers the modify request
// after it.
func (c *smContext) modifiable() bool {
	return c.state == stateActive || c.state == stateActivating
}

// addQoSFlows installs flows at the UPF and builds the Modification
// Command (pti: the UE's) and the modify request transfer. The flows stay
// pending until the gNB confirms them.
func (n *NF) addQoSFlows(ctx context.Context, c *smContext, flows []qosFlow, pti uint8) (n1, n2 []byte, err error) {
	return n.modify(ctx, c, policyChange{add: flows}, pti)
}

// modified settles a modification once the gNB (or the UE, refusing)
// answered: new flows it failed leave the UPF, the others are the
// session's; changed flows it failed get their old QoS back at the UPF.
func (n *NF) modified(ctx context.Context, c *smContext, accepted, failed []uint8) error {
	var keep, drop, revert []qosFlow
	for _, f := range c.pending {
		if containsQFI(failed, f.QFI) {
			drop = append(drop, f)
		} else {
			keep = append(keep, f)
		}
	}
	for _, old := range c.changing {
		if containsQFI(failed, old.QFI) {
			revert = append(revert, old)
		}
	}
	c.pending, c.changing = nil, nil
	c.flows = append(c.flows, keep...)
	if len(drop) == 0 && len(revert) == 0 {
		return nil
	}
	m := removeFlows(drop)
	for _, f := range revert {
		m.Update.QERs = append(m.Update.QERs, c.flowQER(f))
		c.replaceFlow(f)
	}
	n4, err := n.n4Client()
	if err == nil {
		_, err = n4.Modify(ctx, n.upf, c.upSEID, m)
	}
	if err != nil {
		return fmt.Errorf("N4 session modification (undo QoS flows the gNB failed): %w", err)
	}
	n.log.Info("QoS flows not set up or not changed", "supi", c.supi, "psi", c.psi, "removed_qfis", fmt.Sprint(pendingOf(drop)), "reverted_qfis", fmt.Sprint(pendingOf(revert)))
	return nil
}

func containsQFI(list []uint8, q uint8) bool {
	for _, x := range list {
		if x == q {
			return true
		}
	}
	return false
}

func pendingOf(flows []qosFlow) []uint8 {
	var out []uint8
	for _, f := range flows {
		out = append(out, f.QFI)
	}
	return out
}

// pendingQFIs are the flows a modification added or changed that the gNB
// has not confirmed.
func pendingQFIs(c *smContext) []uint8 { return append(pendingOf(c.pending), pendingOf(c.changing)...) }

// modificationRequested answers the UE's Modification Request (TS 24.501
// 6.4.2.2) asking for new QoS rules: each becomes a QoS flow authorized
// locally (5QI as the UE asked in its flow descriptions, else 9); a
// request the SMF cannot grant gets Modification Reject with its cause.
func (n *NF) modificationRequested(ctx context.Context, c *smContext, g nasx.GSM) (updateAnswer, error) {
	flows, cause := c.requestedFlows(g)
	if cause == 0 && !c.modifiable() {
		cause = nasx.GSMCauseMessageNotCompatibleWithState
	}
	var n1, n2 []byte
	var err error
	if cause == 0 {
		n1, n2, err = n.addQoSFlows(ctx, c, flows, g.PTI)
		if err != nil {
			n.log.Warn("UE-requested modification", "supi", c.supi, "psi", c.psi, "err", err)
			cause = nasx.GSMCauseInsufficientResources
		}
	}
	if cause != 0 {
		n1, err = nasx.BuildPDUSessionModificationReject(c.psi, g.PTI, cause)
		return updateAnswer{n1: n1}, err
	}
	return updateAnswer{n1: n1, n2: n2, n2Type: models.N2SmInfoType_PDU_RES_MOD_REQ}, nil
}

// requestedFlows turns the UE's requested QoS rules into QoS flows; the
// 5GSM cause says why not (#44 for filters it cannot carry, #26 when no
// QFI is left).
func (c *smContext) requestedFlows(g nasx.GSM) ([]qosFlow, uint8) {
	var out []qosFlow
	for _, r := range g.Rules {
		if r.Operation != nasx.RuleOpCreate || len(r.Filters) == 0 {
			return nil, nasx.GSMCauseSemanticErrorsInPacketFilters
		}
		f := qosFlow{FiveQI: defaultFiveQI, ARP: arpOrDefault(nil), Precedence: rulePrecedence(int32(r.Precedence))}
		for _, pf := range r.Filters {
			if pf.MatchAll() {
				return nil, nasx.GSMCauseSemanticErrorsInPacketFilters
			}
			f.Filters = append(f.Filters, flowDescription(pf))
		}
		for _, d := range g.Flows {
			if d.QFI == r.QFI && d.FiveQI != 0 {
				f.FiveQI = d.FiveQI
			}
		}
		qfi, ok := c.nextQFI(out)
		if !ok {
			return nil, nasx.GSMCauseInsufficientResources
		}
		f.QFI, f.RuleID, f.GBR = qfi, qfi, isGBR(f.FiveQI)
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, nasx.GSMCauseSemanticErrorsInPacketFilters
	}
	return out, 0
}

// flowDescription writes a NAS packet filter as the IPFilterRule the UPF
// takes (TS 29.212 5.4.2, downlink direction: remote to the UE).
func flowDescription(pf nasx.PacketFilter) string {
	proto := "ip"
	if pf.Protocol != 0 {
		proto = strconv.Itoa(int(pf.Protocol))
	}
	return fmt.Sprintf("permit out %s from %s to %s", proto, side(pf.Remote, pf.RemotePort, "any"), side(pf.Local, pf.LocalPort, "assigned"))
}

func side(p netip.Prefix, port uint16, none string) string {
	s := none
	if p.IsValid() {
		s = p.String()
		if p.IsSingleIP() {
			s = p.Addr().String()
		}
	}
	if port != 0 {
		s += " " + strconv.Itoa(int(port))
	}
	return s
}

// handlePolicyUpdate is the PCF's SM policy update notification (TS
// 29.512 4.2.4.2) at the notificationUri the SMF gave: new PCC rules
// become QoS flows (network-requested modification).
func (n *NF) handlePolicyUpdate(w http.ResponseWriter, r *http.Request) {
	c, ok := n.ctxs.get(r.PathValue("smContextRef"))
	if !ok {
		notFound(w, r)
		return
	}
	var note models.SmPolicyNotification
	if !sbi.DecodeJSON(w, r, &note) {
		return
	}
	n.applyPolicyUpdate(w, r, c, note.SmPolicyDecision)
}

// applyPolicyUpdate runs a network-requested modification for decision d
// and answers 204 once the UPF has the new rules.
func (n *NF) applyPolicyUpdate(w http.ResponseWriter, r *http.Request, c *smContext, d *models.SmPolicyDecision) {
	m, err := n.policyModification(r.Context(), c, d)
	if err != nil {
		sbi.WriteError(w, "UPF", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
	if m != nil {
		n.background(func(ctx context.Context) { n.sendModification(ctx, c, *m) })
	}
}

// policyModification applies a decision to an active session: its new
// AMBR and its new and changed flows are at the UPF before the PCF is
// answered.
func (n *NF) policyModification(ctx context.Context, c *smContext, d *models.SmPolicyDecision) (*n1n2, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.modifiable() {
		return nil, sbi.Rejectf(http.StatusConflict, "PDU_SESSION_NOT_ACTIVE", "PDU session is %s", c.state)
	}
	if d == nil {
		return nil, nil
	}
	p, err := c.planPolicy(d) // checked before anything changes: a bad rule leaves the session as it was
	if err != nil || p.empty() {
		return nil, err
	}
	n1, n2, err := n.modify(ctx, c, p, 0)
	if err != nil {
		return nil, err
	}
	return &n1n2{supi: c.supi, amfID: c.servingNfID, psi: c.psi, snssai: c.snssai, n1: n1, n2: n2, n2Type: models.N2SmInfoType_PDU_RES_MOD_REQ}, nil
}

func (n *NF) sendModification(ctx context.Context, c *smContext, m n1n2) {
	if err := n.peers.transfer(ctx, m); err != nil {
		n.log.Warn("network-requested modification: N1N2MessageTransfer failed", "supi", c.supi, "psi", c.psi, "err", err)
		c.mu.Lock()
		_ = n.modified(ctx, c, nil, pendingQFIs(c))
		c.mu.Unlock()
	}
}

// handlePolicyTerminate is the PCF's termination request (TS 29.512
// 4.2.5.2): the SMF releases the session (network-requested release).
func (n *NF) handlePolicyTerminate(w http.ResponseWriter, r *http.Request) {
	c, ok := n.ctxs.get(r.PathValue("smContextRef"))
	if !ok {
		notFound(w, r)
		return
	}
	var note models.PcfSmPolicyControlTerminationNotification
	if !sbi.DecodeJSON(w, r, &note) {
		return
	}
	w.WriteHeader(http.StatusNoContent)
	n.background(func(ctx context.Context) { n.releaseByNetwork(ctx, c, nasx.GSMCauseRegularDeactivation) })
}
