package store

import (
	"testing"

	"github.com/free5gc/openapi/models"
)

// FilterSM answers the UDR's sm-data query parameters by the domain rules:
// a request without an SD is the SST-only slice (TS 23.501 5.15.2.1) and
// equals SD ffffff (TS 23.003 28.4.2); DNNs compare without case and a
// wildcard DNN entry serves every DNN.
func TestFilterSM(t *testing.T) {
	conf := map[string]models.DnnConfiguration{"internet": {}}
	all := []models.SessionManagementSubscriptionData{
		{SingleNssai: &models.Snssai{Sst: 1, Sd: "010203"}, DnnConfigurations: conf},
		{SingleNssai: &models.Snssai{Sst: 1}, DnnConfigurations: conf},
		{SingleNssai: &models.Snssai{Sst: 2, Sd: "abcdef"}, DnnConfigurations: map[string]models.DnnConfiguration{"*": {}}},
	}
	cases := []struct {
		name   string
		snssai *models.Snssai
		dnn    string
		want   []int // indexes into all
	}{
		{"no filter", nil, "", []int{0, 1, 2}},
		{"slice with SD", &models.Snssai{Sst: 1, Sd: "010203"}, "", []int{0}},
		{"SD in upper case", &models.Snssai{Sst: 2, Sd: "ABCDEF"}, "", []int{2}},
		{"SST only is the slice without SD, no wildcard", &models.Snssai{Sst: 1}, "", []int{1}},
		{"SD ffffff is the slice without SD", &models.Snssai{Sst: 1, Sd: "ffffff"}, "", []int{1}},
		{"DNN without case", nil, "Internet", []int{0, 1, 2}},
		{"DNN only under the wildcard", nil, "ims", []int{2}},
		{"slice and DNN", &models.Snssai{Sst: 1}, "ims", nil},
	}
	for _, c := range cases {
		got := FilterSM(all, c.snssai, c.dnn)
		if len(got) != len(c.want) {
			t.Errorf("%s: %d data sets, want %d", c.name, len(got), len(c.want))
			continue
		}
		for i, w := range c.want {
			if got[i].SingleNssai != all[w].SingleNssai {
				t.Errorf("%s: data set %d is %+v, want %+v", c.name, i, *got[i].SingleNssai, *all[w].SingleNssai)
			}
		}
	}
}
