package sbi

import (
	"net/url"
	"strings"
	"testing"

	"github.com/free5gc/openapi/models"
)

// viaValues is the NFDiscover query string as url.Values writes it: the
// reference Query.encode must match byte for byte, since the NRF parses
// it and the discovery cache is keyed by it.
func viaValues(q Query, requester models.NrfNfManagementNfType) string {
	v := url.Values{"target-nf-type": {string(q.Target)}, "requester-nf-type": {string(requester)}}
	if len(q.Services) > 0 {
		names := make([]string, len(q.Services))
		for i, s := range q.Services {
			names[i] = string(s)
		}
		v.Set("service-names", strings.Join(names, ","))
	}
	if len(q.SNSSAIs) > 0 {
		v.Set("snssais", jsonParam(q.SNSSAIs))
	}
	if q.DNN != "" {
		v.Set("dnn", q.DNN)
	}
	if q.TAI != nil {
		v.Set("tai", jsonParam(q.TAI))
	}
	if q.PreferredLocality != "" {
		v.Set("preferred-locality", q.PreferredLocality)
	}
	if q.TargetInstanceID != "" {
		v.Set("target-nf-instance-id", q.TargetInstanceID)
	}
	return v.Encode()
}

func TestDiscoveryQueryStringIsWhatURLValuesWrites(t *testing.T) {
	smf := Query{Target: models.NrfNfManagementNfType_SMF, Services: []models.ServiceName{models.ServiceName_NSMF_PDUSESSION},
		SNSSAIs: []models.Snssai{{Sst: 1, Sd: "010203"}}, DNN: "internet"}
	everything := smf
	everything.Services = append(everything.Services, models.ServiceName_NSMF_EVENT_EXPOSURE)
	everything.TAI = &models.Tai{PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}, Tac: "000001"}
	everything.PreferredLocality = "node b/rack&1"
	everything.TargetInstanceID = "6f0e6a7c-0000-4000-8000-000000000001"
	for _, q := range []Query{
		{Target: models.NrfNfManagementNfType_UDM},
		{Target: models.NrfNfManagementNfType_UDM, Services: []models.ServiceName{models.ServiceName_NUDM_UECM}},
		smf,
		everything,
		{Target: "A B", DNN: "ims+x=1", TargetInstanceID: "a&b"},
	} {
		got, want := q.encode(models.NrfNfManagementNfType_AMF), viaValues(q, models.NrfNfManagementNfType_AMF)
		if got != want {
			t.Errorf("query %+v:\n got %s\nwant %s", q, got, want)
		}
	}
}

func FuzzDiscoveryQueryString(f *testing.F) {
	f.Add("UDM", "nudm-uecm", "internet", "", "", uint8(1), "010203")
	f.Add("SMF", "nsmf-pdusession,x", "a&b=c", "loc 1", "id/2", uint8(0), "")
	f.Fuzz(func(t *testing.T, target, services, dnn, locality, id string, sst uint8, sd string) {
		q := Query{Target: models.NrfNfManagementNfType(target), DNN: dnn, PreferredLocality: locality, TargetInstanceID: id}
		for s := range strings.SplitSeq(services, ",") {
			if s != "" {
				q.Services = append(q.Services, models.ServiceName(s))
			}
		}
		if sst != 0 {
			q.SNSSAIs = []models.Snssai{{Sst: int32(sst), Sd: sd}}
		}
		if got, want := q.encode("AMF"), viaValues(q, "AMF"); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	})
}
