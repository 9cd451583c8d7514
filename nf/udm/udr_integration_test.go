package udm

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/nrf/nrftest"
	"github.com/l25gc/l25gc/nf/udr/udrtest"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// TestAgainstTheRealUDR runs the UDM against package udr (embedded store,
// the default subscribers provisioned at start): the paths, the SQN patch
// and the errors must be the ones the UDR really speaks.
func TestAgainstTheRealUDR(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		ctx := context.Background()
		u, peer := udrtest.Serve(t, tr, nil)
		env := nrftest.Env(t, tr, nil, models.NrfNfManagementNfType_UDM, peer)
		n, err := New(env)
		if err != nil {
			t.Fatal(err)
		}
		base, c := nrftest.Serve(t, tr, n.Handler()), env.Client
		const supi = "imsi-" + config.DefaultFirstIMSI

		var wg sync.WaitGroup
		sqns := make(chan uint64, 20)
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := generate(c, base, "suci-0-208-93-0000-0-0-0000000001", nil)
				if err != nil {
					t.Error(err)
					return
				}
				sqns <- ueAccepts(t, res, testOPc, 0x20)
			}()
		}
		wg.Wait()
		close(sqns)
		seen := map[uint64]bool{}
		for s := range sqns {
			if seen[s] {
				t.Fatalf("SQN %x issued twice", s)
			}
			seen[s] = true
		}
		a, err := u.Store().AuthSubscription(ctx, supi)
		if err != nil || a.SequenceNumber.Sqn != fmt.Sprintf("%012x", 0x20+20) {
			t.Fatalf("UDR SQN after 20 vectors: %v %+v", err, a.SequenceNumber)
		}

		if _, err := generate(c, base, "imsi-208939999999999", nil); sbi.CauseOf(err) != "USER_NOT_FOUND" {
			t.Fatalf("unknown subscriber: %v, want USER_NOT_FOUND", err)
		}
		guami := models.Guami{PlmnId: &models.PlmnIdNid{Mcc: "208", Mnc: "93"}, AmfId: "cafe00"}
		reg := models.Amf3GppAccessRegistration{AmfInstanceId: "amf-1", DeregCallbackUri: "http://amf/cb", Guami: &guami, RatType: models.RatType_NR}
		if _, err := c.Do(ctx, "PUT", base+"/nudm-uecm/v1/"+supi+"/registrations/amf-3gpp-access", reg, nil); err != nil {
			t.Fatalf("UECM: %v", err)
		}
		// A restarted UDM finds the registration in the UDR.
		n2, err := New(env)
		if err != nil {
			t.Fatal(err)
		}
		base2 := nrftest.Serve(t, tr, n2.Handler())
		if _, err := c.Do(ctx, "PATCH", base2+"/nudm-uecm/v1/"+supi+"/registrations/amf-3gpp-access",
			models.Amf3GppAccessRegistrationModification{Guami: &guami, PurgeFlag: true}, nil); err != nil {
			t.Fatalf("purge at a restarted UDM: %v", err)
		}
		if _, err := c.Do(ctx, "PATCH", base2+"/nudm-uecm/v1/imsi-208930000000002/registrations/amf-3gpp-access",
			models.Amf3GppAccessRegistrationModification{Guami: &guami, PurgeFlag: true}, nil); sbi.CauseOf(err) != "CONTEXT_NOT_FOUND" {
			t.Fatalf("purge of a UE never registered: %v, want CONTEXT_NOT_FOUND", err)
		}
		var am models.AccessAndMobilitySubscriptionData
		if _, err := c.Do(ctx, "GET", base+"/nudm-sdm/v2/"+supi+`/am-data?plmn-id={"mcc":"208","mnc":"93"}`, nil, &am); err != nil || am.Nssai == nil {
			t.Fatalf("am-data: %v %+v", err, am)
		}
		if _, err := c.Do(ctx, "GET", base+"/nudm-sdm/v2/"+supi+"/smf-select-data", nil, nil); err != nil {
			t.Fatalf("smf-select-data: %v", err)
		}
	})
}
