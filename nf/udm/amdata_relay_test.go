package udm

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// Nudm_SDM_Get of the AM data passes the UDR's data on unchanged: every
// field the UDR holds reaches the AMF, and an unknown UE is still 404
// USER_NOT_FOUND.
func TestAMDataRelaysTheUDRsData(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		udr := newFakeUDR()
		const supi = "imsi-208930000000001"
		udr.add(t, supi, subscriber("000000000020"))
		want := models.AccessAndMobilitySubscriptionData{Gpsis: []string{"msisdn-0900000001"},
			SubscribedUeAmbr: &models.AmbrRm{Uplink: "1 Gbps", Downlink: "2 Gbps"},
			Nssai:            &models.Nssai{DefaultSingleNssais: []models.Snssai{{Sst: 1, Sd: "010203"}}}}
		udr.mu.Lock()
		udr.am[supi] = want
		udr.mu.Unlock()
		_, base, c := newUDM(t, tr, udr)
		var raw json.RawMessage
		if _, err := c.Do(context.Background(), "GET", base+"/nudm-sdm/v2/"+supi+`/am-data?plmn-id={"mcc":"208","mnc":"93"}`, nil, &raw); err != nil {
			t.Fatal(err)
		}
		var got models.AccessAndMobilitySubscriptionData
		if err := json.Unmarshal(raw, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("am-data %s (%v), want %+v", raw, err, want)
		}
		_, err := c.Do(context.Background(), "GET", base+"/nudm-sdm/v2/imsi-208930000009999/am-data", nil, nil)
		if sbi.StatusOf(err) != 404 || sbi.CauseOf(err) != "USER_NOT_FOUND" {
			t.Fatalf("unknown UE: %v, want 404 USER_NOT_FOUND", err)
		}
	})
}
