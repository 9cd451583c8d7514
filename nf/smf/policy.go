package smf

// The PCF's SM policy decision (TS 29.512 4.2.2.2, 5.6.2.7) applied to a
// PDU session: the session rule's authorized session AMBR and default QoS
// (TS 23.503 6.3), and a QoS flow for each PCC rule with SDF filters
// (TS 23.501 5.7.1.5: the SMF binds PCC rules to QoS flows by their QoS).

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/free5gc/openapi/models"
)

// applyDecision takes the session rule and the PCC rules of d into c.
func (c *smContext) applyDecision(d *models.SmPolicyDecision) error {
	if d == nil {
		return nil
	}
	if err := c.applySessionRule(d); err != nil {
		return err
	}
	flows, err := c.newPCCFlows(d)
	if err != nil {
		return err
	}
	c.flows = append(c.flows, flows...)
	return nil
}

func (c *smContext) applySessionRule(d *models.SmPolicyDecision) error {
	for _, id := range sortedKeys(d.SessRules) {
		r := d.SessRules[id]
		if r == nil {
			continue
		}
		if r.AuthSessAmbr != nil {
			if err := c.setAMBR(r.AuthSessAmbr); err != nil {
				return err
			}
		}
		if q := r.AuthDefQos; q != nil && q.Var5qi > 0 && q.Var5qi < 256 {
			c.flows[0].FiveQI, c.flows[0].ARP = uint8(q.Var5qi), arpOrDefault(q.Arp)
		}
		return nil // TS 29.512 4.2.2.2: one session rule applies at a time
	}
	return nil
}

// newPCCFlows are QoS flows for the PCC rules of d the session does not
// carry yet (changedPCCFlows takes the others). A rule without SDF filters, or matching every packet, or
// marked as the default flow's, rides on the default QoS flow.
func (c *smContext) newPCCFlows(d *models.SmPolicyDecision) ([]qosFlow, error) {
	var out []qosFlow
	for _, id := range sortedKeys(d.PccRules) {
		r := d.PccRules[id]
		if r == nil || c.hasFlowFor(r) || containsPCC(out, r.PccRuleId) {
			continue
		}
		filters := sdfFilters(r.FlowInfos)
		qos := qosDataOf(d, r)
		if len(filters) == 0 || (qos != nil && qos.DefQosFlowIndication) {
			continue
		}
		f, err := c.pccFlow(r, filters, qos, out)
		if err != nil {
			return nil, fmt.Errorf("PCC rule %s: %w", r.PccRuleId, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func containsPCC(flows []qosFlow, id string) bool {
	return slices.ContainsFunc(flows, func(f qosFlow) bool { return f.PCCRuleID == id })
}

// hasFlowFor says whether a flow of the session (or one the gNB has yet
// to confirm) carries rule r's traffic: same rule ID or same SDF filters.
func (c *smContext) hasFlowFor(r *models.PccRule) bool {
	return flowIndexOf(c.flows, r) >= 0 || flowIndexOf(c.pending, r) >= 0
}

// sdfFilters are the rule's flow descriptions but the match-all ones.
func sdfFilters(infos []models.FlowInformation) []string {
	var out []string
	for _, fi := range infos {
		d := strings.Join(strings.Fields(fi.FlowDescription), " ")
		if d == "" || d == "permit out ip from any to assigned" || d == "permit out ip from any to any" {
			continue
		}
		out = append(out, d)
	}
	return out
}

func qosDataOf(d *models.SmPolicyDecision, r *models.PccRule) *models.QosData {
	for _, ref := range r.RefQosData {
		if q := d.QosDecs[ref]; q != nil {
			return q
		}
	}
	return nil
}

// errNoQFI: all 63 QFIs are taken (TS 23.501 5.7.1.1).
var errNoQFI = errors.New("no QoS flow identifier left")

// pccFlow is the QoS flow of one PCC rule; also taken are the QFIs of
// flows being added with it.
func (c *smContext) pccFlow(r *models.PccRule, filters []string, q *models.QosData, adding []qosFlow) (qosFlow, error) {
	for _, d := range filters {
		if _, err := packetFilter(d); err != nil {
			return qosFlow{}, err
		}
	}
	qfi, ok := c.nextQFI(adding)
	if !ok {
		return qosFlow{}, errNoQFI
	}
	f := qosFlow{QFI: qfi, FiveQI: defaultFiveQI, ARP: arpOrDefault(nil), RuleID: qfi, Precedence: rulePrecedence(r.Precedence),
		Filters: filters, PCCRuleID: r.PccRuleId}
	if q != nil {
		if err := f.takeQoS(q); err != nil {
			return qosFlow{}, err
		}
	}
	f.GBR = isGBR(f.FiveQI)
	return f, nil
}

// takeQoS sets the flow's 5QI, ARP, GBR and MBR from a PCC rule's QoS data
// (TS 29.512 5.6.2.8); f is unchanged when one of its rates is malformed.
func (f *qosFlow) takeQoS(q *models.QosData) error {
	g := *f
	if q.Var5qi > 0 && q.Var5qi < 256 {
		g.FiveQI = uint8(q.Var5qi)
	}
	g.ARP = arpOrDefault(q.Arp)
	var errs [4]error
	g.MBRUp, errs[0] = parseBitRate(q.MaxbrUl)
	g.MBRDown, errs[1] = parseBitRate(q.MaxbrDl)
	g.GBRUp, errs[2] = parseBitRate(q.GbrUl)
	g.GBRDown, errs[3] = parseBitRate(q.GbrDl)
	if err := errors.Join(errs[:]...); err != nil {
		return err
	}
	g.GBR = isGBR(g.FiveQI)
	*f = g
	return nil
}

// rulePrecedence maps a PCC rule's precedence (TS 29.512 5.6.2.6, lower
// first) into a QoS rule's 1..254; 255 is the default rule's.
func rulePrecedence(p int32) uint8 {
	switch {
	case p <= 0:
		return 128
	case p >= 255:
		return 254
	}
	return uint8(p)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
