package smf

// A network-requested PDU session modification (TS 23.502 4.3.3.2, step
// 1b: the PCF's SM policy update, TS 29.512 4.2.4.2, or the admin API
// standing in for it) as one change: a new Session-AMBR, QoS flows added
// for new PCC rules, and existing flows whose GBR/MBR/5QI/ARP changed.
// The SMF checks the whole decision before anything changes, installs it
// at the UPF in one N4 Session Modification (step 2, TS 29.244 7.5.4: the
// UPF takes it whole or refuses it whole), and only then tells the UE
// (Modification Command, TS 24.501 8.3.9) and the gNB (PDU Session
// Resource Modify Request Transfer, TS 38.413 9.3.4.3) in one N1N2
// message (step 3b).

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/protocol/pfcpx"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/upf/rules"
)

// policyChange is what one decision changes on a session.
type policyChange struct {
	ambr             bool // the Session-AMBR changed
	ambrUp, ambrDown uint64
	add              []qosFlow // flows for PCC rules the session has no flow for
	change           []qosFlow // existing flows with new QoS: their new values
	was              []qosFlow // the same flows as they were
}

func (p policyChange) empty() bool { return !p.ambr && len(p.add) == 0 && len(p.change) == 0 }

// planPolicy reads d against c without changing c. A bad session rule or
// PCC rule is the PCF's error (400) and leaves the session as it was.
func (c *smContext) planPolicy(d *models.SmPolicyDecision) (policyChange, error) {
	var p policyChange
	var err error
	if p.ambrUp, p.ambrDown, err = c.requestedAMBR(d); err != nil {
		return p, sbi.Rejectf(http.StatusBadRequest, "INVALID_SESSION_RULE", "%v", err)
	}
	p.ambr = p.ambrUp != c.ambrUp || p.ambrDown != c.ambrDown
	if p.change, p.was, err = c.changedPCCFlows(d); err == nil {
		p.add, err = c.newPCCFlows(d)
	}
	if err != nil {
		return p, sbi.Rejectf(http.StatusBadRequest, "INVALID_PCC_RULE", "%v", err)
	}
	return p, nil
}

// changedPCCFlows are the session's flows whose PCC rule (the same rule
// ID, or the same SDF filters: the same traffic) now carries other QoS.
func (c *smContext) changedPCCFlows(d *models.SmPolicyDecision) (change, was []qosFlow, err error) {
	for _, id := range sortedKeys(d.PccRules) {
		r := d.PccRules[id]
		i := -1
		if r != nil {
			i = flowIndexOf(c.flows, r)
		}
		if i < 0 || slices.ContainsFunc(change, func(f qosFlow) bool { return f.QFI == c.flows[i].QFI }) {
			continue
		}
		f := c.flows[i]
		if q := qosDataOf(d, r); q != nil {
			if err := f.takeQoS(q); err != nil {
				return nil, nil, fmt.Errorf("PCC rule %s: %w", r.PccRuleId, err)
			}
		}
		if !f.sameQoS(c.flows[i]) {
			change, was = append(change, f), append(was, c.flows[i])
		}
	}
	return change, was, nil
}

// flowIndexOf is the flow of flows that carries rule r's traffic, -1 when
// none: the default flow (no filters) is never one.
func flowIndexOf(flows []qosFlow, r *models.PccRule) int {
	filters := sdfFilters(r.FlowInfos)
	return slices.IndexFunc(flows, func(f qosFlow) bool {
		return len(f.Filters) > 0 && (f.PCCRuleID == r.PccRuleId || slices.Equal(f.Filters, filters))
	})
}

// sameQoS says whether g asks nothing of the UPF, UE or gNB that f does not.
func (f qosFlow) sameQoS(g qosFlow) bool {
	return f.FiveQI == g.FiveQI && f.ARP == g.ARP && f.GBR == g.GBR && f.GBRUp == g.GBRUp && f.GBRDown == g.GBRDown &&
		f.MBRUp == g.MBRUp && f.MBRDown == g.MBRDown
}

// modify carries out p: the messages are built first (a change they cannot
// carry changes nothing), then the UPF installs the rules, then c takes
// them. pti is the UE's for a UE-requested modification, 0 otherwise.
func (n *NF) modify(ctx context.Context, c *smContext, p policyChange, pti uint8) (n1, n2 []byte, err error) {
	if n1, n2, err = c.modificationMessages(p, pti); err != nil {
		return nil, nil, err
	}
	n4, err := n.n4Client()
	if err == nil {
		_, err = n4.Modify(ctx, n.upf, c.upSEID, c.policyRules(p))
	}
	if err != nil {
		return nil, nil, upfRefusal(err, c, p)
	}
	c.takePolicy(p)
	n.log.Info("PDU session modified", "supi", c.supi, "psi", c.psi, "ambr_changed", p.ambr, "ul_bps", c.ambrUp, "dl_bps", c.ambrDown,
		"added_qfis", fmt.Sprint(pendingOf(p.add)), "changed_qfis", fmt.Sprint(pendingOf(p.change)), "ue_requested", pti != 0)
	return n1, n2, nil
}

// modificationMessages are the UE's Modification Command and the gNB's
// Modify Request Transfer for p: the new AMBR in both (TS 24.501
// 9.11.4.14, TS 38.413 9.3.1.69), new flows as rules and "create"
// descriptions, changed flows as "modify existing" descriptions (TS 24.501
// 9.11.4.12; their rules and filters stay) and QoS Flow Add or Modify
// Request items.
func (c *smContext) modificationMessages(p policyChange, pti uint8) (n1, n2 []byte, err error) {
	cmd := nasx.ModificationCommand{PDUSessionID: c.psi, PTI: pti}
	var tr ngapx.ModifyRequestTransfer
	if p.ambr {
		cmd.AMBR = &nasx.SessionAMBR{UplinkBps: p.ambrUp, DownlinkBps: p.ambrDown}
		tr.AMBR = &ngapx.AMBR{Down: p.ambrDown, Up: p.ambrUp}
	}
	for _, f := range p.add {
		r, err := f.nasRule()
		if err != nil {
			return nil, nil, err
		}
		cmd.Rules, cmd.Flows = append(cmd.Rules, r), append(cmd.Flows, f.nasFlow())
		tr.AddOrModify = append(tr.AddOrModify, f.ngapFlow())
	}
	for _, f := range p.change {
		d := f.nasFlow()
		d.Operation = nasx.FlowOpModify
		cmd.Flows = append(cmd.Flows, d)
		tr.AddOrModify = append(tr.AddOrModify, f.ngapFlow())
	}
	if n1, err = nasx.BuildPDUSessionModificationCommand(cmd); err != nil {
		return nil, nil, err
	}
	n2, err = ngapx.BuildModifyRequestTransfer(tr)
	return n1, n2, err
}

// policyRules is p as one N4 modification: the new flows' PDRs and QERs
// created, the changed flows' QERs and the session QER updated.
func (c *smContext) policyRules(p policyChange) *rules.Modification {
	m := c.addFlows(p.add)
	for _, f := range p.change {
		m.Update.QERs = append(m.Update.QERs, c.flowQER(f))
	}
	if p.ambr {
		m.Update.QERs = append(m.Update.QERs, sessionQERWith(p.ambrUp, p.ambrDown))
	}
	return m
}

// takePolicy records p once the UPF has it: the new AMBR and flow values
// apply at once (the UPF enforces them), new flows wait for the gNB, and
// the changed flows' old values are kept until the gNB confirms, to be
// put back if it cannot.
func (c *smContext) takePolicy(p policyChange) {
	if p.ambr {
		c.ambrUp, c.ambrDown = p.ambrUp, p.ambrDown
	}
	for i, f := range p.change {
		c.replaceFlow(f)
		if !slices.ContainsFunc(c.changing, func(g qosFlow) bool { return g.QFI == f.QFI }) {
			c.changing = append(c.changing, p.was[i])
		}
	}
	c.pending = append(c.pending, p.add...)
}

func (c *smContext) replaceFlow(f qosFlow) {
	for i := range c.flows {
		if c.flows[i].QFI == f.QFI {
			c.flows[i] = f
		}
	}
}

// upfRefusal is the admin API's and the PCF's answer when the UPF refuses
// the change (any PFCP cause): a ProblemDetails naming the PFCP cause and
// what the change asked the UPF to hold (TS 29.500 5.2.7.2: 500
// INSUFFICIENT_RESOURCES when the UPF has no room, SYSTEM_FAILURE for
// another refusal). A UPF that does not answer stays the caller's 504.
func upfRefusal(err error, c *smContext, p policyChange) error {
	var ce *rules.CauseError
	if !errors.As(err, &ce) {
		return fmt.Errorf("N4 session modification: %w", err)
	}
	cause := "SYSTEM_FAILURE"
	switch ce.Cause {
	case pfcpx.CauseNoResources, pfcpx.CauseRuleFailure, pfcpCauseCongestion:
		cause = "INSUFFICIENT_RESOURCES"
	}
	return sbi.Rejectf(http.StatusInternalServerError, cause,
		"the UPF refused the N4 Session Modification with PFCP cause %d (%s): %s did not fit (the session has %s); the session keeps its previous policy%s",
		ce.Cause, pfcpx.CauseName(ce.Cause), p.describe(), c.ruleCount(), upfDetail(ce))
}

// upfDetail is what the UPF's answer says beyond its cause (the Offending
// IE or Failed Rule ID, TS 29.244 8.2.22, 8.2.80), "" when nothing.
func upfDetail(ce *rules.CauseError) string {
	d := strings.TrimPrefix(ce.Detail, fmt.Sprintf("pfcp cause %d (%s)", ce.Cause, pfcpx.CauseName(ce.Cause)))
	d = strings.TrimSpace(strings.TrimPrefix(d, ","))
	d = strings.TrimSpace(strings.TrimPrefix(d, ":"))
	if d == "" {
		return ""
	}
	return "; the UPF says: " + d
}

// pfcpCauseCongestion is PFCP entity in congestion (TS 29.244 8.2.1).
const pfcpCauseCongestion = 74

// describe names what p asks of the UPF.
func (p policyChange) describe() string {
	var parts []string
	for _, f := range p.add {
		parts = append(parts, fmt.Sprintf("new QoS flow QFI %d (PCC rule %q: PDRs %d and %d, QER %d)", f.QFI, f.PCCRuleID, pdrUplink(f.QFI), pdrDownlink(f.QFI), qerOf(f.QFI)))
	}
	for _, f := range p.change {
		parts = append(parts, fmt.Sprintf("QER %d of QoS flow QFI %d (GBR %d/%d, MBR %d/%d bit/s UL/DL)", qerOf(f.QFI), f.QFI, f.GBRUp, f.GBRDown, f.MBRUp, f.MBRDown))
	}
	if p.ambr {
		parts = append(parts, fmt.Sprintf("session QER %d (Session-AMBR %d/%d bit/s UL/DL)", qerSession, p.ambrUp, p.ambrDown))
	}
	return strings.Join(parts, ", ")
}

// ruleCount is what the session holds at the UPF now.
func (c *smContext) ruleCount() string {
	n := len(c.flows) + len(c.pending)
	return fmt.Sprintf("%d QoS flows: %d PDRs, %d QERs with the session QER", n, 2*n, n+1)
}
