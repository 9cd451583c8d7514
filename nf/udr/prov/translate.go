package prov

import (
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/nf/udr/store"
	"github.com/l25gc/l25gc/security"
)

// Every provisioned subscriber gets IPv4 sessions in SSC mode 1, as
// free5GC's web console sample does, and this subscriber category in its
// AM policy data.
const subscriberCategory = "l25gc"

// ToRecord translates a validated subscriber into free5GC's layout for the
// serving PLMN plmn ("20893").
func ToRecord(s Subscriber, plmn string) (*store.Subscriber, error) {
	tmpl, err := template(s, plmn)
	if err != nil {
		return nil, err
	}
	return tmpl.forIMSI(s.IMSI), nil
}

// ToRecords translates a validated range. The records share their nested
// data (stores treat stored data as read-only), so 10,000 of them cost one
// OPc derivation and a few allocations each.
func ToRecords(r Range, plmn string) ([]*store.Subscriber, error) {
	imsis, err := r.IMSIs()
	if err != nil {
		return nil, err
	}
	tmpl, err := template(r.Subscriber, plmn)
	if err != nil {
		return nil, err
	}
	out := make([]*store.Subscriber, len(imsis))
	for i, imsi := range imsis {
		out[i] = tmpl.forIMSI(imsi)
	}
	return out, nil
}

type recordTemplate struct{ store.Subscriber }

func (t *recordTemplate) forIMSI(imsi string) *store.Subscriber {
	c := t.Subscriber
	c.UeID = "imsi-" + imsi
	return &c
}

func template(s Subscriber, plmn string) (*recordTemplate, error) {
	opc, err := opcOf(s)
	if err != nil {
		return nil, err
	}
	snssais := domain.SNSSAIsToModels(s.SNSSAIs)
	ambr := AMBR{Uplink: "1 Gbps", Downlink: "2 Gbps"}
	if s.AMBR != nil {
		ambr = *s.AMBR
	}
	session := *s.Session.withDefaults(SessionQoS{})
	return &recordTemplate{store.Subscriber{
		ServingPlmnID: plmn,
		OP:            s.OP,
		Auth: models.AuthenticationSubscription{
			AuthenticationMethod:          models.AuthMethod__5_G_AKA,
			EncPermanentKey:               s.K,
			EncOpcKey:                     opc,
			SequenceNumber:                &models.SequenceNumber{SqnScheme: models.SqnScheme_GENERAL, Sqn: s.SQN},
			AuthenticationManagementField: s.AMF,
		},
		AM: models.AccessAndMobilitySubscriptionData{
			// Every subscribed slice is also a default one (TS 23.501
			// 5.15.3): a UE that asks for none gets them all.
			Nssai:            &models.Nssai{DefaultSingleNssais: snssais, SingleNssais: snssais},
			SubscribedUeAmbr: &models.AmbrRm{Uplink: ambr.Uplink, Downlink: ambr.Downlink},
		},
		SM:           smData(snssais, s.DNNs, session),
		SMFSelection: smfSelection(s.SNSSAIs, s.DNNs),
		AMPolicy:     models.AmPolicyData{SubscCats: []string{subscriberCategory}},
		SMPolicy:     smPolicy(snssais, s.DNNs),
		FlowRules:    flowRules(s.QosFlows, snssais, s.DNNs),
		QosFlows:     qosFlows(s.QosFlows, snssais, s.DNNs),
	}}, nil
}

// flowScope calls f for every slice (SNSSAIKey) and DNN a QoS flow
// applies to: its own, or every subscribed one.
func flowScope(q QosFlow, snssais []models.Snssai, dnns []string, f func(snssai, dnn string)) {
	for _, n := range snssais {
		if q.SNSSAI != nil && !domain.SameModelSNSSAI(n, models.Snssai{Sst: int32(q.SNSSAI.SST), Sd: q.SNSSAI.SD}) {
			continue
		}
		for _, d := range dnns {
			if q.DNN == "" || domain.DNN(d).Equal(domain.DNN(q.DNN)) {
				f(store.SNSSAIKey(n), d)
			}
		}
	}
}

// flowRules lays the QoS flows out as free5GC's flow rules: one per flow,
// slice and DNN, bound to its QoS by qosRef (the flow's index + 1).
func flowRules(qs []QosFlow, snssais []models.Snssai, dnns []string) []store.FlowRule {
	var out []store.FlowRule
	for i, q := range qs {
		prec := q.Precedence
		if prec == 0 {
			prec = min(128+i, 255)
		}
		flowScope(q, snssais, dnns, func(sn, dnn string) {
			out = append(out, store.FlowRule{Filter: q.Filter, Precedence: prec, Snssai: sn, Dnn: dnn, QosRef: i + 1})
		})
	}
	return out
}

// qosFlows lays the QoS flows' QoS out as free5GC's QoS flows.
func qosFlows(qs []QosFlow, snssais []models.Snssai, dnns []string) []store.QosFlow {
	var out []store.QosFlow
	for i, q := range qs {
		flowScope(q, snssais, dnns, func(sn, dnn string) {
			f := store.QosFlow{Snssai: sn, Dnn: dnn, QosRef: i + 1, FiveQI: q.FiveQI}
			if q.MBR != nil {
				f.MBRUL, f.MBRDL = q.MBR.Uplink, q.MBR.Downlink
			}
			if q.GBR != nil {
				f.GBRUL, f.GBRDL = q.GBR.Uplink, q.GBR.Downlink
			}
			out = append(out, f)
		})
	}
	return out
}

// opcOf is the OPc to store: given, or derived from OP (TS 35.206 4.1).
func opcOf(s Subscriber) (string, error) {
	if s.OP == "" {
		return s.OPc, nil
	}
	k, err1 := hex.DecodeString(s.K)
	op, err2 := hex.DecodeString(s.OP)
	if err1 != nil || err2 != nil {
		return "", fmt.Errorf("k, op: not hex")
	}
	opc, err := security.DeriveOPc(k, op)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(opc), nil
}

func smData(snssais []models.Snssai, dnns []string, q SessionQoS) []models.SessionManagementSubscriptionData {
	out := make([]models.SessionManagementSubscriptionData, len(snssais))
	for i := range snssais {
		confs := make(map[string]models.DnnConfiguration, len(dnns))
		for _, d := range dnns {
			confs[d] = dnnConfiguration(q)
		}
		out[i] = models.SessionManagementSubscriptionData{SingleNssai: &snssais[i], DnnConfigurations: confs}
	}
	return out
}

// dnnConfiguration is TS 29.505 DnnConfiguration with the subscriber's
// session AMBR and default QoS. The ARP lets the session pre-empt none and
// be pre-empted (TS 23.501 5.7.2.2), the usual choice for best effort.
func dnnConfiguration(q SessionQoS) models.DnnConfiguration {
	return models.DnnConfiguration{
		PduSessionTypes: &models.PduSessionTypes{
			DefaultSessionType:  models.PduSessionType_IPV4,
			AllowedSessionTypes: []models.PduSessionType{models.PduSessionType_IPV4},
		},
		SscModes: &models.SscModes{DefaultSscMode: models.SscMode__1, AllowedSscModes: []models.SscMode{models.SscMode__1}},
		Var5gQosProfile: &models.SubscribedDefaultQos{
			Var5qi: int32(q.FiveQI), PriorityLevel: int32(q.ARPPriority),
			Arp: &models.Arp{PriorityLevel: int32(q.ARPPriority), PreemptCap: models.PreemptionCapability_NOT_PREEMPT, PreemptVuln: models.PreemptionVulnerability_PREEMPTABLE},
		},
		SessionAmbr: &models.Ambr{Uplink: q.AMBR.Uplink, Downlink: q.AMBR.Downlink},
	}
}

// smPolicy is the PCF's SM policy data (TS 29.519 SmPolicyData): every
// subscribed slice with every subscribed DNN, keyed as free5GC keys them,
// so the PCF authorises exactly the subscribed slice and DNN pairs.
func smPolicy(snssais []models.Snssai, dnns []string) models.SmPolicyData {
	slices := make(map[string]models.SmPolicySnssaiData, len(snssais))
	for i := range snssais {
		per := make(map[string]models.SmPolicyDnnData, len(dnns))
		for _, d := range dnns {
			per[d] = models.SmPolicyDnnData{Dnn: d}
		}
		slices[store.SNSSAIKey(snssais[i])] = models.SmPolicySnssaiData{Snssai: &snssais[i], SmPolicyDnnData: per}
	}
	return models.SmPolicyData{SmPolicySnssaiData: slices}
}

// smfSelection keys each slice as free5GC does (store.SNSSAIKey; TS 29.505
// 6.1.6.2.7 subscribedSnssaiInfos is keyed by S-NSSAI).
func smfSelection(snssais []SNSSAI, dnns []string) models.SmfSelectionSubscriptionData {
	infos := make(map[string]models.SnssaiInfo, len(snssais))
	for _, n := range snssais {
		di := make([]models.DnnInfo, len(dnns))
		for i, d := range dnns {
			di[i] = models.DnnInfo{Dnn: d, DefaultDnnIndicator: i == 0}
		}
		infos[store.SNSSAIKey(models.Snssai{Sst: int32(n.SST), Sd: n.SD})] = models.SnssaiInfo{DnnInfos: di}
	}
	return models.SmfSelectionSubscriptionData{SubscribedSnssaiInfos: infos}
}

// FromRecord shows a stored subscriber (ours or free5GC's) in the API shape.
func FromRecord(r *store.Subscriber) Subscriber {
	s := Subscriber{
		IMSI: r.IMSI(), K: r.Auth.EncPermanentKey, OP: r.OP,
		SQN: r.SQN(), AMF: r.Auth.AuthenticationManagementField,
	}
	if s.OP == "" {
		s.OPc = r.Auth.EncOpcKey
	}
	if n := r.AM.Nssai; n != nil {
		list := n.SingleNssais
		if len(list) == 0 {
			list = n.DefaultSingleNssais
		}
		for _, x := range list {
			n, err := domain.SNSSAIFromModel(x)
			if err != nil { // shown as stored: the record is another tool's
				n = SNSSAI{SST: int(x.Sst), SD: x.Sd}
			}
			s.SNSSAIs = append(s.SNSSAIs, n)
		}
	}
	s.DNNs = dnnsOf(r.SM)
	if a := r.AM.SubscribedUeAmbr; a != nil {
		s.AMBR = &AMBR{Uplink: a.Uplink, Downlink: a.Downlink}
	}
	s.Session = sessionOf(r.SM)
	s.QosFlows = qosFlowsOf(r.FlowRules, r.QosFlows)
	return s
}

// qosFlowsOf shows the stored flows one per qosRef, in qosRef order, with
// the QoS of its first QoS flow. A flow whose rules all name one DNN shows
// it (with one DNN subscribed that reads the same as "every one"); the
// slice is not shown.
func qosFlowsOf(rules []store.FlowRule, flows []store.QosFlow) []QosFlow {
	byRef := map[int]*QosFlow{}
	var refs []int
	dnns := map[int]map[string]bool{}
	for _, r := range rules {
		if byRef[r.QosRef] == nil {
			byRef[r.QosRef] = &QosFlow{Filter: r.Filter, Precedence: r.Precedence}
			refs = append(refs, r.QosRef)
			dnns[r.QosRef] = map[string]bool{}
		}
		dnns[r.QosRef][r.Dnn] = true
	}
	for _, f := range flows {
		q := byRef[f.QosRef]
		if q == nil || q.FiveQI != 0 {
			continue
		}
		q.FiveQI = f.FiveQI
		if f.MBRUL != "" || f.MBRDL != "" {
			q.MBR = &AMBR{Uplink: f.MBRUL, Downlink: f.MBRDL}
		}
		if f.GBRUL != "" || f.GBRDL != "" {
			q.GBR = &AMBR{Uplink: f.GBRUL, Downlink: f.GBRDL}
		}
	}
	sort.Ints(refs)
	out := make([]QosFlow, 0, len(refs))
	for _, ref := range refs {
		q := byRef[ref]
		if len(dnns[ref]) == 1 {
			for d := range dnns[ref] {
				q.DNN = d
			}
		}
		out = append(out, *q)
	}
	return out
}

// sessionOf shows the session QoS of the first DNN configuration (in slice,
// then DNN order) that has one: what we provision is the same on all.
func sessionOf(sm []models.SessionManagementSubscriptionData) *SessionQoS {
	for _, d := range sm {
		dnns := make([]string, 0, len(d.DnnConfigurations))
		for dnn := range d.DnnConfigurations {
			dnns = append(dnns, dnn)
		}
		sort.Strings(dnns)
		for _, dnn := range dnns {
			c := d.DnnConfigurations[dnn]
			if c.SessionAmbr == nil || c.Var5gQosProfile == nil {
				continue
			}
			q := &SessionQoS{AMBR: AMBR{Uplink: c.SessionAmbr.Uplink, Downlink: c.SessionAmbr.Downlink}, FiveQI: int(c.Var5gQosProfile.Var5qi)}
			if c.Var5gQosProfile.Arp != nil {
				q.ARPPriority = int(c.Var5gQosProfile.Arp.PriorityLevel)
			}
			return q
		}
	}
	return nil
}

func dnnsOf(sm []models.SessionManagementSubscriptionData) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range sm {
		for dnn := range d.DnnConfigurations {
			if !seen[dnn] {
				seen[dnn] = true
				out = append(out, dnn)
			}
		}
	}
	sort.Strings(out)
	return out
}
