package udm

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/nrf/nrftest"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// The two SDM Gets of a registration cost one UDR read; each set is served
// from a read once and only within pairWait of it, so later Gets read the
// UDR again.
func TestStep14bGetsShareOneUDRRead(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		u, n, env := udmOnRestartableUDR(t, tr)
		clock := time.Now()
		var clockMu sync.Mutex
		n.pairs.now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
		base, c := nrftest.Serve(t, tr, n.Handler()), env.Client
		supi := "imsi-" + config.DefaultFirstIMSI
		get := func(set string, out any) {
			t.Helper()
			if _, err := c.Do(context.Background(), "GET", base+"/nudm-sdm/v2/"+supi+"/"+set, nil, out); err != nil {
				t.Fatalf("%s: %v", set, err)
			}
		}
		var wg sync.WaitGroup
		var am models.AccessAndMobilitySubscriptionData
		var sel models.SmfSelectionSubscriptionData
		wg.Add(2)
		go func() { defer wg.Done(); get("am-data", &am) }() // as the AMF asks them: at once
		go func() { defer wg.Done(); get("smf-select-data", &sel) }()
		wg.Wait()
		if am.Nssai == nil || len(sel.SubscribedSnssaiInfos) == 0 {
			t.Fatalf("am-data %+v, smf-select-data %+v", am, sel)
		}
		if got := u.count("GET /provisioned-data"); got != 1 || u.total() != 1 {
			t.Fatalf("%d provisioned-data reads, %d UDR requests in all, want 1 and 1", got, u.total())
		}
		get("am-data", nil) // served once: read again
		if got := u.count("GET /provisioned-data"); got != 2 {
			t.Fatalf("a second am-data Get made %d reads in all, want 2", got)
		}
		clockMu.Lock()
		clock = clock.Add(pairWait)
		clockMu.Unlock()
		get("smf-select-data", nil) // the read is too old
		if got := u.count("GET /provisioned-data"); got != 3 {
			t.Fatalf("an smf-select-data Get after pairWait made %d reads in all, want 3", got)
		}
	})
}

// The Gets fail as the single-set reads do: USER_NOT_FOUND, and
// DATA_NOT_FOUND for a PLMN the UE has no data for.
func TestStep14bErrorsAreTheSingleSetOnes(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		_, peer := newRestartableUDR(t, tr)
		env := nrftest.Env(t, tr, nil, models.NrfNfManagementNfType_UDM, peer)
		otherPLMN, _ := json.Marshal(models.PlmnId{Mcc: "001", Mnc: "01"})
		cases := []struct {
			path, cause string
		}{
			{"imsi-208930000009999/am-data", sbi.CauseUserNotFound},
			{"imsi-208930000009999/smf-select-data", sbi.CauseUserNotFound},
			{"imsi-" + config.DefaultFirstIMSI + "/am-data?plmn-id=" + string(otherPLMN), sbi.CauseDataNotFound},
			{"imsi-" + config.DefaultFirstIMSI + "/smf-select-data?plmn-id=" + string(otherPLMN), sbi.CauseDataNotFound},
		}
		for _, pairs := range []bool{true, false} {
			n, err := New(env)
			if err != nil {
				t.Fatal(err)
			}
			if !pairs {
				n.udr.noPairs.Store(peerBase(t, n), struct{}{})
			}
			base, c := nrftest.Serve(t, tr, n.Handler()), env.Client
			for _, tc := range cases {
				_, err := c.Do(context.Background(), "GET", base+"/nudm-sdm/v2/"+tc.path, nil, nil)
				if sbi.StatusOf(err) != 404 || sbi.CauseOf(err) != tc.cause {
					t.Errorf("pair reads %v, %s: %v, want 404 %s", pairs, tc.path, err, tc.cause)
				}
			}
		}
	})
}
