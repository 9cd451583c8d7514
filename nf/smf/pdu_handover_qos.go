package smf

// QoS flows a target gNB did not accept in a handover: the N2 handover's
// QoS Flow Failed to Setup List (Handover Request Acknowledge Transfer,
// TS 38.413 9.3.4.11) or, in an Xn handover, the flows missing from the
// Path Switch Request Transfer's QoS Flow Accepted List (9.3.4.8). Once
// the UE is with the target, the SMF removes them (TS 23.502 4.9.1.3.3
// step 11 and 4.9.1.2.2 step 2: "the SMF initiates PDU Session
// Modification to remove the QoS flows that were not accepted", 4.3.3.2):
// their PDRs and QERs at the UPF (N4), and their QoS rules and flow
// descriptions at the UE (a Modification Command with "delete existing",
// TS 24.501 9.11.4.12-13). The gNB has no part of them, so the transfer
// carries N1 only, which the AMF delivers even while it still finishes the
// handover (TS 29.518 5.2.2.3.1).

import (
	"context"
	"slices"

	"github.com/l25gc/l25gc/protocol/nasx"
)

// flowsNotAccepted are c's flows among refused, or, with accepted given,
// those missing from it. The default flow is never among them: a target
// that refuses it refuses the session, which the handover itself handles.
func (c *smContext) flowsNotAccepted(refused, accepted []uint8) []qosFlow {
	var out []qosFlow
	for _, f := range c.flows[min(1, len(c.flows)):] {
		if containsQFI(refused, f.QFI) || (accepted != nil && !containsQFI(accepted, f.QFI)) {
			out = append(out, f)
		}
	}
	return out
}

// removeRefusedFlows takes drop off the UPF and the session and returns
// the Modification Command telling the UE (nil when there is nothing to
// remove or the UPF refused: the flows then stay, unused, until the
// session's next change).
func (n *NF) removeRefusedFlows(ctx context.Context, c *smContext, drop []qosFlow) *n1n2 {
	if len(drop) == 0 {
		return nil
	}
	cmd := nasx.ModificationCommand{PDUSessionID: c.psi}
	for _, f := range drop {
		cmd.Rules = append(cmd.Rules, nasx.QoSRule{ID: f.RuleID, Operation: nasx.RuleOpDelete})
		cmd.Flows = append(cmd.Flows, nasx.QoSFlow{QFI: f.QFI, Operation: nasx.FlowOpDelete})
	}
	n1, err := nasx.BuildPDUSessionModificationCommand(cmd)
	if err == nil {
		err = n.modifyN4(ctx, c, removeFlows(drop))
	}
	if err != nil {
		n.log.Warn("QoS flows the target gNB refused stay", "supi", c.supi, "psi", c.psi, "qfis", pendingOf(drop), "err", err)
		return nil
	}
	c.flows = slices.DeleteFunc(c.flows, func(f qosFlow) bool { return containsQFI(pendingOf(drop), f.QFI) })
	n.log.Info("QoS flows the target gNB refused removed", "supi", c.supi, "psi", c.psi, "qfis", pendingOf(drop))
	return &n1n2{supi: c.supi, amfID: c.servingNfID, psi: c.psi, snssai: c.snssai, n1: n1}
}

// tellRemovedFlows sends m, once the handover's answer is on its way.
func (n *NF) tellRemovedFlows(c *smContext, m *n1n2) {
	if m == nil {
		return
	}
	n.background(func(ctx context.Context) { n.sendModification(ctx, c, *m) })
}
