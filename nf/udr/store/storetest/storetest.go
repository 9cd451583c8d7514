// Package storetest holds test data shared by the UDR's tests: a subscriber
// in our model and the raw MongoDB documents free5GC's web console writes
// for one, so that tests check we read free5GC's database unchanged.
package storetest

import (
	"github.com/free5gc/openapi/models"
	"go.mongodb.org/mongo-driver/bson"

	"github.com/l25gc/l25gc/nf/udr/store"
)

// Test keys: TS 35.208 test set 1 style values, as free5GC's samples use.
const (
	K    = "8baf473f2f8fd09487cccbd7097c6862"
	OPc  = "8e27b6af0e692e750f32667a3b14605d"
	OP   = "8e27b6af0e692e750f32667a3b14605e"
	Plmn = "20893"
)

// Subscriber builds a subscriber with two slices, DNN "internet" on both and
// a dotted DNN on the first (dots are escaped in MongoDB field names).
func Subscriber(imsi, sqn string) *store.Subscriber {
	s1 := models.Snssai{Sst: 1, Sd: "010203"}
	s2 := models.Snssai{Sst: 1, Sd: "112233"}
	dnn := func() models.DnnConfiguration {
		return models.DnnConfiguration{
			PduSessionTypes: &models.PduSessionTypes{DefaultSessionType: models.PduSessionType_IPV4, AllowedSessionTypes: []models.PduSessionType{models.PduSessionType_IPV4}},
			SscModes:        &models.SscModes{DefaultSscMode: models.SscMode__1, AllowedSscModes: []models.SscMode{models.SscMode__1}},
			SessionAmbr:     &models.Ambr{Uplink: "1 Gbps", Downlink: "2 Gbps"},
			Var5gQosProfile: &models.SubscribedDefaultQos{Var5qi: 9, Arp: &models.Arp{PriorityLevel: 8}, PriorityLevel: 8},
		}
	}
	return &store.Subscriber{
		UeID: "imsi-" + imsi, ServingPlmnID: Plmn,
		Auth: models.AuthenticationSubscription{
			AuthenticationMethod: models.AuthMethod__5_G_AKA,
			EncPermanentKey:      K, EncOpcKey: OPc,
			SequenceNumber:                &models.SequenceNumber{SqnScheme: models.SqnScheme_GENERAL, Sqn: sqn},
			AuthenticationManagementField: "8000",
		},
		AM: models.AccessAndMobilitySubscriptionData{
			Gpsis:            []string{"msisdn-0900000000"},
			Nssai:            &models.Nssai{DefaultSingleNssais: []models.Snssai{s1, s2}, SingleNssais: []models.Snssai{s1, s2}},
			SubscribedUeAmbr: &models.AmbrRm{Uplink: "1 Gbps", Downlink: "2 Gbps"},
		},
		SM: []models.SessionManagementSubscriptionData{
			{SingleNssai: &s1, DnnConfigurations: map[string]models.DnnConfiguration{"internet": dnn(), "ims.mnc093.mcc208.gprs": dnn()}},
			{SingleNssai: &s2, DnnConfigurations: map[string]models.DnnConfiguration{"internet": dnn()}},
		},
		SMFSelection: models.SmfSelectionSubscriptionData{SubscribedSnssaiInfos: map[string]models.SnssaiInfo{
			"01010203": {DnnInfos: []models.DnnInfo{{Dnn: "internet"}}},
			"01112233": {DnnInfos: []models.DnnInfo{{Dnn: "internet"}}},
		}},
		AMPolicy: models.AmPolicyData{SubscCats: []string{"free5gc"}},
		SMPolicy: models.SmPolicyData{SmPolicySnssaiData: map[string]models.SmPolicySnssaiData{
			"01010203": {Snssai: &s1, SmPolicyDnnData: map[string]models.SmPolicyDnnData{
				"internet":               {Dnn: "internet", SubscCats: []string{"gold"}},
				"ims.mnc093.mcc208.gprs": {Dnn: "ims.mnc093.mcc208.gprs"},
			}},
			"01112233": {Snssai: &s2, SmPolicyDnnData: map[string]models.SmPolicyDnnData{"internet": {Dnn: "internet"}}},
		}},
		FlowRules: []store.FlowRule{{Filter: "permit out ip from 10.200.0.2 to assigned", Precedence: 128, Snssai: "01010203", Dnn: "internet", QosRef: 1}},
		QosFlows:  []store.QosFlow{{Snssai: "01010203", Dnn: "internet", QosRef: 1, FiveQI: 2, MBRUL: "5 Mbps", MBRDL: "5 Mbps", GBRUL: "2 Mbps", GBRDL: "2 Mbps"}},
	}
}

// Free5GCDocs are the documents free5GC's web console (v3.4) writes for one
// subscriber, by collection: models converted through JSON to bson.M (so
// numbers are doubles), with ueId, servingPlmnId and tenantId added.
func Free5GCDocs(ueID, plmn, sqn string) map[string][]bson.M {
	snssai := func(sd string) bson.M { return bson.M{"sst": float64(1), "sd": sd} }
	dnnConf := bson.M{
		"pduSessionTypes": bson.M{"defaultSessionType": "IPV4", "allowedSessionTypes": bson.A{"IPV4"}},
		"sscModes":        bson.M{"defaultSscMode": "SSC_MODE_1", "allowedSscModes": bson.A{"SSC_MODE_2", "SSC_MODE_3"}},
		"5gQosProfile":    bson.M{"5qi": float64(9), "arp": bson.M{"priorityLevel": float64(8), "preemptCap": "", "preemptVuln": ""}, "priorityLevel": float64(8)},
		"sessionAmbr":     bson.M{"uplink": "1000 Mbps", "downlink": "1000 Mbps"},
	}
	tenant := "c3a2c4d4-8a5b-4c0e-9a39-5a3c9e2d6f11"
	return map[string][]bson.M{
		"subscriptionData.authenticationData.authenticationSubscription": {{
			"authenticationMethod":          "5G_AKA",
			"encPermanentKey":               K,
			"encOpcKey":                     OPc,
			"sequenceNumber":                bson.M{"sqnScheme": "GENERAL", "sqn": sqn},
			"authenticationManagementField": "8000",
			"ueId":                          ueID,
			"tenantId":                      tenant,
		}},
		"subscriptionData.authenticationData.webAuthenticationSubscription": {{
			"authenticationMethod":          "5G_AKA",
			"permanentKey":                  bson.M{"permanentKeyValue": K, "encryptionKey": float64(0), "encryptionAlgorithm": float64(0)},
			"sequenceNumber":                sqn,
			"authenticationManagementField": "8000",
			"milenage":                      bson.M{"op": bson.M{"opValue": "", "encryptionKey": float64(0), "encryptionAlgorithm": float64(0)}},
			"opc":                           bson.M{"opcValue": OPc, "encryptionKey": float64(0), "encryptionAlgorithm": float64(0)},
			"ueId":                          ueID,
			"tenantId":                      tenant,
		}},
		"subscriptionData.provisionedData.amData": {{
			"gpsis":            bson.A{"msisdn-0900000000"},
			"subscribedUeAmbr": bson.M{"uplink": "1 Gbps", "downlink": "2 Gbps"},
			"nssai": bson.M{
				"defaultSingleNssais": bson.A{snssai("010203"), snssai("112233")},
				"singleNssais":        bson.A{snssai("010203"), snssai("112233")},
			},
			"ueId": ueID, "servingPlmnId": plmn, "tenantId": tenant,
		}},
		"subscriptionData.provisionedData.smData": {
			{"singleNssai": snssai("010203"), "dnnConfigurations": bson.M{"internet": dnnConf}, "ueId": ueID, "servingPlmnId": plmn},
			{"singleNssai": snssai("112233"), "dnnConfigurations": bson.M{"internet": dnnConf}, "ueId": ueID, "servingPlmnId": plmn},
		},
		"subscriptionData.provisionedData.smfSelectionSubscriptionData": {{
			"subscribedSnssaiInfos": bson.M{
				"01010203": bson.M{"dnnInfos": bson.A{bson.M{"dnn": "internet"}}},
				"01112233": bson.M{"dnnInfos": bson.A{bson.M{"dnn": "internet"}}},
			},
			"ueId": ueID, "servingPlmnId": plmn,
		}},
		"policyData.ues.amData": {{"subscCats": bson.A{"free5gc"}, "ueId": ueID}},
		"policyData.ues.flowRule": {{
			"filter": "10.200.0.2/32", "precedence": float64(128), "snssai": "01010203", "dnn": "internet", "qosRef": float64(1),
			"ueId": ueID, "servingPlmnId": plmn,
		}},
		"policyData.ues.qosFlow": {{
			"snssai": "01010203", "dnn": "internet", "qosRef": float64(1), "5qi": float64(2),
			"mbrUL": "5 Mbps", "mbrDL": "5 Mbps", "gbrUL": "2 Mbps", "gbrDL": "2 Mbps",
			"ueId": ueID, "servingPlmnId": plmn,
		}},
		"policyData.ues.smData": {{
			"smPolicySnssaiData": bson.M{"01010203": bson.M{
				"snssai":          snssai("010203"),
				"smPolicyDnnData": bson.M{"internet": bson.M{"dnn": "internet"}},
			}},
			"ueId": ueID,
		}},
	}
}

// LegacyFree5GCAuthDoc is the authentication subscription as free5GC's web
// console wrote it before v3.4 (permanentKey/opc/milenage, SQN as a string).
func LegacyFree5GCAuthDoc(ueID, op, sqn string) bson.M {
	key := func(field, v string) bson.M {
		return bson.M{field: v, "encryptionKey": float64(0), "encryptionAlgorithm": float64(0)}
	}
	return bson.M{
		"ueId":                          ueID,
		"authenticationMethod":          "5G_AKA",
		"permanentKey":                  key("permanentKeyValue", K),
		"opc":                           key("opcValue", ""),
		"milenage":                      bson.M{"op": key("opValue", op)},
		"sequenceNumber":                sqn,
		"authenticationManagementField": "8000",
	}
}
