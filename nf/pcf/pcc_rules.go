package pcf

// PCC rules from the subscriber's QoS flows (TS 23.503 6.3.1, TS 29.512
// 4.2.2.x "Provisioning of PCC rules"): each flow rule stored for the
// session's slice and DNN becomes a dynamic PCC rule whose service data
// flow filter is the rule's filter and whose QoS data is its QoS flow's.

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
)

// policyFlows are a subscriber's QoS flows as the UDR serves them in its
// operator-specific policy data (nf/udr QosFlowsKey): free5GC's flow
// rules and QoS flows.
type policyFlows struct {
	FlowRules []struct {
		Filter     string `json:"filter"`
		Precedence int    `json:"precedence"`
		Snssai     string `json:"snssai"`
		Dnn        string `json:"dnn"`
		QosRef     int    `json:"qosRef"`
	} `json:"flowRules"`
	QosFlows []struct {
		Snssai string `json:"snssai"`
		Dnn    string `json:"dnn"`
		QosRef int    `json:"qosRef"`
		FiveQI int    `json:"5qi"`
		MBRUL  string `json:"mbrUL"`
		MBRDL  string `json:"mbrDL"`
		GBRUL  string `json:"gbrUL"`
		GBRDL  string `json:"gbrDL"`
	} `json:"qosFlows"`
}

// snssaiKey is a slice as free5GC's web console keys it: SST in two hex
// digits, then the SD.
func snssaiKey(n *models.Snssai) string { return fmt.Sprintf("%02x%s", n.Sst, strings.ToLower(n.Sd)) }

// addPCCRules puts a PCC rule and its QoS data into d for every flow rule
// of the session's slice and DNN. The QoS data takes the default QoS
// flow's ARP (TS 29.512 5.6.2.8: arp is needed for a new QoS flow). A
// rule whose filter or QoS is unusable is left out and logged: stored
// data of another tool must not cost the UE its session.
func addPCCRules(d *models.SmPolicyDecision, flows *policyFlows, slice *models.Snssai, dnn string, arp *models.Arp, log *slog.Logger) {
	if flows == nil {
		return
	}
	key := snssaiKey(slice)
	for _, r := range flows.FlowRules {
		if !strings.EqualFold(r.Snssai, key) || !domain.DNN(r.Dnn).Match(domain.DNN(dnn)) {
			continue
		}
		qos, err := qosDataOf(flows, r.Snssai, r.Dnn, r.QosRef, arp)
		if err == nil {
			err = addPCCRule(d, r.Filter, r.Precedence, qos)
		}
		if err != nil {
			log.Warn("flow rule left out of the SM policy", "snssai", r.Snssai, "dnn", r.Dnn, "qosRef", r.QosRef, "err", err)
		}
	}
}

// addPCCRule adds one PCC rule for filter referring to qos.
func addPCCRule(d *models.SmPolicyDecision, filter string, precedence int, qos *models.QosData) error {
	desc, err := flowDescription(filter)
	if err != nil {
		return err
	}
	if d.PccRules == nil {
		d.PccRules, d.QosDecs = map[string]*models.PccRule{}, map[string]*models.QosData{}
	}
	id := "PccRule" + strconv.Itoa(len(d.PccRules)+1)
	d.QosDecs[qos.QosId] = qos
	d.PccRules[id] = &models.PccRule{PccRuleId: id, Precedence: int32(precedence), RefQosData: []string{qos.QosId},
		FlowInfos: []models.FlowInformation{{FlowDescription: desc, FlowDirection: models.FlowDirection_BIDIRECTIONAL}}}
	return nil
}

// qosDataOf is the QoS data of the QoS flow qosRef of the slice and DNN.
func qosDataOf(flows *policyFlows, snssai, dnn string, qosRef int, arp *models.Arp) (*models.QosData, error) {
	for _, q := range flows.QosFlows {
		if q.QosRef != qosRef || !strings.EqualFold(q.Snssai, snssai) || q.Dnn != dnn {
			continue
		}
		if err := domain.Check5QI(q.FiveQI); err != nil {
			return nil, err
		}
		for _, r := range []string{q.MBRUL, q.MBRDL, q.GBRUL, q.GBRDL} {
			if _, err := domain.ParseBitRate(r); r != "" && err != nil {
				return nil, err
			}
		}
		if domain.IsGBR5QI(q.FiveQI) && (q.GBRUL == "" || q.GBRDL == "") {
			return nil, fmt.Errorf("GBR 5QI %d without a guaranteed bit rate", q.FiveQI)
		}
		a := *arp
		return &models.QosData{QosId: "QosData" + strconv.Itoa(qosRef), Var5qi: int32(q.FiveQI), Arp: &a,
			MaxbrUl: q.MBRUL, MaxbrDl: q.MBRDL, GbrUl: q.GBRUL, GbrDl: q.GBRDL}, nil
	}
	return nil, fmt.Errorf("no QoS flow %d", qosRef)
}

// flowDescription is the TS 29.512 FlowDescription of a stored filter: an
// IPFilterRule as given (the "permit out" rules TS 29.214 5.3.8 allows),
// or a data network address or prefix, the traffic between it and the UE
// ("assigned", TS 29.212 5.4.2).
func flowDescription(filter string) (string, error) {
	f := strings.TrimSpace(filter)
	if strings.HasPrefix(f, "permit out ") {
		return f, nil
	}
	if ip := net.ParseIP(f); ip != nil {
		return "permit out ip from " + ip.String() + " to assigned", nil
	}
	if _, n, err := net.ParseCIDR(f); err == nil {
		return "permit out ip from " + n.String() + " to assigned", nil
	}
	return "", fmt.Errorf("filter %q is neither a permit out IPFilterRule nor an address or prefix", filter)
}
