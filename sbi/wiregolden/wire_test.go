package wiregolden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"
)

// -update rewrites testdata from the running build; run it only with the
// classic encoder (no GOEXPERIMENT=jsonv2) so the files stay the reference.
var update = flag.Bool("update", false, "rewrite the golden files")

// body is one SBI body: the value a producer encodes and a fresh value of
// the same type that a consumer decodes into.
type body struct {
	name  string
	value any
	fresh func() any
	// sameMeaning: the bytes may differ, the JSON they carry may not.
	// The one known case: a Go string holding invalid UTF-8. Both
	// implementations send U+FFFD for the bad byte, the classic one as the
	// escape \ufffd, jsonv2 as the raw character; any JSON reader gets the
	// same string.
	sameMeaning bool
}

func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return &t
}

func plmn() *models.PlmnIdNid { return &models.PlmnIdNid{Mcc: "208", Mnc: "93"} }

// registrationBodies are bodies of TS 23.502 4.2.2.2.2 (registration) and
// 4.3.2.2.1 (PDU session establishment), filled the way our NFs fill them,
// plus the fields where encoders differ: times with and without fractions
// and zones, HTML-significant and line-separator characters, an empty but
// non-nil slice without omitempty, maps (key order), interface values and
// floats.
func registrationBodies() []body {
	return []body{
		{"authentication-info", &models.AuthenticationInfo{
			SupiOrSuci:         "suci-0-208-93-0000-0-0-0000000001",
			ServingNetworkName: "5G:mnc093.mcc208.3gppnetwork.org",
		}, func() any { return new(models.AuthenticationInfo) }, false},
		{"authentication-info-result", &models.UdmUeauAuthenticationInfoResult{
			AuthType: models.UdmUeauAuthType__5_G_AKA,
			AuthenticationVector: &models.AuthenticationVector{
				AvType:   models.AvType__5_G_HE_AKA,
				Rand:     "2a0fbd3d8c3a3b1f7e3d8f6a1c2b3d4e",
				XresStar: "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
				Autn:     "5a6b7c8d9e0f00112233445566778899",
				Kausf:    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
			},
			Supi: "imsi-208930000000001",
		}, func() any { return new(models.UdmUeauAuthenticationInfoResult) }, false},
		{"auth-event", &models.AuthEvent{
			NfInstanceId:       "9b4e1c0e-2f6a-4c39-9d0e-5a1f3e7b8c21",
			Success:            true,
			TimeStamp:          at("2026-11-24T19:20:21.123456789Z"),
			AuthType:           models.UdmUeauAuthType__5_G_AKA,
			ServingNetworkName: "5G:mnc093.mcc208.3gppnetwork.org",
		}, func() any { return new(models.AuthEvent) }, false},
		{"amf-3gpp-access-registration", &models.Amf3GppAccessRegistration{
			AmfInstanceId:          "3c2d7a55-0b8e-4b0f-8d4a-1e2f3a4b5c6d",
			DeregCallbackUri:       "http://127.0.0.18:8000/namf-callback/v1/imsi-208930000000001/dereg-notify?a=1&b=<2>",
			InitialRegistrationInd: true,
			Guami:                  &models.Guami{PlmnId: plmn(), AmfId: "cafe00"},
			RatType:                models.RatType_NR,
			RegistrationTime:       at("2026-11-24T20:20:21+01:00"),
			Pei:                    "imeisv-4370816125816151\u2028",
		}, func() any { return new(models.Amf3GppAccessRegistration) }, false},
		{"am-data", &models.AccessAndMobilitySubscriptionData{
			Gpsis:            []string{"msisdn-0900000000"},
			SubscribedUeAmbr: &models.AmbrRm{Uplink: "1 Gbps", Downlink: "2 Gbps"},
			Nssai: &models.Nssai{
				DefaultSingleNssais: []models.Snssai{{Sst: 1, Sd: "010203"}},
				SingleNssais:        []models.Snssai{{Sst: 1, Sd: "112233"}},
			},
			SharedVnGroupDataIds: map[string]string{"z": "3", "a": "1", "m": "2"},
			SubscribedDnnList:    []interface{}{"internet", 7.0, 1.5e21, map[string]interface{}{"dnn": "ims"}},
		}, func() any { return new(models.AccessAndMobilitySubscriptionData) }, false},
		{"nssai-empty-defaults", &models.Nssai{DefaultSingleNssais: []models.Snssai{}},
			func() any { return new(models.Nssai) }, false},
		{"sm-policy-decision", &models.SmPolicyDecision{
			SessRules: map[string]*models.SessionRule{"SessRuleId-1": {
				SessRuleId:   "SessRuleId-1",
				AuthSessAmbr: &models.Ambr{Uplink: "100 Mbps", Downlink: "200 Mbps"},
				AuthDefQos: &models.AuthorizedDefaultQos{Var5qi: 9, Arp: &models.Arp{
					PriorityLevel: 8,
					PreemptCap:    models.PreemptionCapability_NOT_PREEMPT,
					PreemptVuln:   models.PreemptionVulnerability_NOT_PREEMPTABLE,
				}},
			}},
			PccRules: map[string]*models.PccRule{"PccRuleId-2": {PccRuleId: "PccRuleId-2", Precedence: 255,
				FlowInfos:  []models.FlowInformation{{FlowDescription: "permit out ip from 10.200.0.2 to assigned", FlowDirection: models.FlowDirection_DOWNLINK}},
				RefQosData: []string{"QosId-2"}}},
			QosDecs: map[string]*models.QosData{"QosId-2": {QosId: "QosId-2", Var5qi: 5}},
			PolicyCtrlReqTriggers: []models.PolicyControlRequestTrigger{
				models.PolicyControlRequestTrigger_PLMN_CH, models.PolicyControlRequestTrigger_RES_MO_RE},
		}, func() any { return new(models.SmPolicyDecision) }, false},
		{"problem-details", &models.ProblemDetails{
			Title: "Bad Request", Status: 400, Detail: "supi \"imsi-1\" & <x> is unknown",
			Cause:         "MANDATORY_IE_INCORRECT",
			InvalidParams: []models.InvalidParam{{Param: "supi", Reason: "bad \xff byte"}},
		}, func() any { return new(models.ProblemDetails) }, true},
		{"nf-profile", &models.NrfNfManagementNfProfile{
			NfInstanceId:  "1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9",
			NfType:        models.NrfNfManagementNfType_UDM,
			NfStatus:      models.NrfNfManagementNfStatus_REGISTERED,
			PlmnList:      []models.PlmnId{{Mcc: "208", Mnc: "93"}},
			Ipv4Addresses: []string{"127.0.0.3"},
			Priority:      1,
			LoadTimeStamp: at("2026-11-24T19:20:21Z"),
			UdmInfo:       &models.UdmInfo{GroupId: "g1", RoutingIndicators: []string{"0000"}},
		}, func() any { return new(models.NrfNfManagementNfProfile) }, false},
	}
}

func goldenPath(name string) string { return filepath.Join("testdata", name+".json") }

// TestEncodedBodiesAreByteIdenticalToTheClassicEncoder: what a peer reads
// from us does not depend on which encoding/json implementation built us.
func TestEncodedBodiesAreByteIdenticalToTheClassicEncoder(t *testing.T) {
	for _, b := range registrationBodies() {
		t.Run(b.name, func(t *testing.T) {
			got, err := json.Marshal(b.value)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(goldenPath(b.name), got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(goldenPath(b.name))
			if err != nil {
				t.Fatal(err)
			}
			if b.sameMeaning {
				assertSameJSON(t, got, want)
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encoded body differs from the classic encoder's\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

func assertSameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("encoded body means something else than the classic encoder's\n got: %s\nwant: %s", got, want)
	}
}

// TestGoldenBodiesDecodeToWhatWasEncoded: a body the classic encoder wrote
// decodes to the same Go value (nil stays nil, empty stays empty, times keep
// their zone), so a consumer sees what the producer meant. The value with
// invalid UTF-8 is the exception both implementations share: it comes back
// with U+FFFD, compared below.
func TestGoldenBodiesDecodeToWhatWasEncoded(t *testing.T) {
	for _, b := range registrationBodies() {
		t.Run(b.name, func(t *testing.T) {
			data, err := os.ReadFile(goldenPath(b.name))
			if err != nil {
				t.Fatal(err)
			}
			got := b.fresh()
			if err := json.Unmarshal(data, got); err != nil {
				t.Fatal(err)
			}
			want := b.value
			if p, ok := want.(*models.ProblemDetails); ok {
				c := *p
				c.InvalidParams = []models.InvalidParam{{Param: "supi", Reason: "bad \uFFFD byte"}}
				want = &c
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded %#v\nwant %#v", got, want)
			}
		})
	}
}
