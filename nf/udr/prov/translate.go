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

// Policy values every provisioned subscriber gets, as free5GC's web console
// sample does: IPv4 sessions, SSC mode 1, default QoS 5QI 9 with ARP 8
// (TS 23.501 5.7.4: 5QI 9 is the default bearer of internet access).
const (
	default5QI         = 9
	defaultARPPriority = 8
	subscriberCategory = "l25gc"
)

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
		SM:           smData(snssais, s.DNNs, ambr),
		SMFSelection: smfSelection(s.SNSSAIs, s.DNNs),
		AMPolicy:     models.AmPolicyData{SubscCats: []string{subscriberCategory}},
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

func smData(snssais []models.Snssai, dnns []string, ambr AMBR) []models.SessionManagementSubscriptionData {
	out := make([]models.SessionManagementSubscriptionData, len(snssais))
	for i := range snssais {
		confs := make(map[string]models.DnnConfiguration, len(dnns))
		for _, d := range dnns {
			confs[d] = dnnConfiguration(ambr)
		}
		out[i] = models.SessionManagementSubscriptionData{SingleNssai: &snssais[i], DnnConfigurations: confs}
	}
	return out
}

// dnnConfiguration is TS 29.505 DnnConfiguration with the session AMBR
// equal to the UE AMBR.
func dnnConfiguration(ambr AMBR) models.DnnConfiguration {
	return models.DnnConfiguration{
		PduSessionTypes: &models.PduSessionTypes{
			DefaultSessionType:  models.PduSessionType_IPV4,
			AllowedSessionTypes: []models.PduSessionType{models.PduSessionType_IPV4},
		},
		SscModes: &models.SscModes{DefaultSscMode: models.SscMode__1, AllowedSscModes: []models.SscMode{models.SscMode__1}},
		Var5gQosProfile: &models.SubscribedDefaultQos{
			Var5qi: default5QI, PriorityLevel: defaultARPPriority,
			Arp: &models.Arp{PriorityLevel: defaultARPPriority, PreemptCap: models.PreemptionCapability_NOT_PREEMPT, PreemptVuln: models.PreemptionVulnerability_PREEMPTABLE},
		},
		SessionAmbr: &models.Ambr{Uplink: ambr.Uplink, Downlink: ambr.Downlink},
	}
}

// smfSelection keys each slice as free5GC does: SST in 2 hex digits then SD
// (TS 29.505 6.1.6.2.7 subscribedSnssaiInfos is keyed by S-NSSAI).
func smfSelection(snssais []SNSSAI, dnns []string) models.SmfSelectionSubscriptionData {
	infos := make(map[string]models.SnssaiInfo, len(snssais))
	for _, n := range snssais {
		di := make([]models.DnnInfo, len(dnns))
		for i, d := range dnns {
			di[i] = models.DnnInfo{Dnn: d, DefaultDnnIndicator: i == 0}
		}
		infos[fmt.Sprintf("%02x%s", n.SST, n.SD)] = models.SnssaiInfo{DnnInfos: di}
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
	return s
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
