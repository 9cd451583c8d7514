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
	}}, nil
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
	return s
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
