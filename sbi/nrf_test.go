package sbi_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// fakeNRF answers discovery of AUSFs for AMFs with profiles and counts how
// often it is asked.
func fakeNRF(validity int32, calls *atomic.Int32, profiles ...models.NrfNfDiscoveryNfProfile) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Query().Get("target-nf-type") != "AUSF" || r.URL.Query().Get("requester-nf-type") != "AMF" {
			sbi.WriteProblem(w, 400, "INVALID_QUERY_PARAM", r.URL.RawQuery)
			return
		}
		time.Sleep(5 * time.Millisecond) // let concurrent callers pile up
		sbi.WriteJSON(w, 200, models.SearchResult{ValidityPeriod: validity, NfInstances: profiles})
	})
}

func ausfAt(id, ip string, port int32) models.NrfNfDiscoveryNfProfile {
	return models.NrfNfDiscoveryNfProfile{NfInstanceId: id, NfType: "AUSF",
		NfServices: []models.NrfNfDiscoveryNfService{{ServiceName: models.ServiceName_NAUSF_AUTH,
			IpEndPoints: []models.IpEndPoint{{Ipv4Address: ip, Port: port}}}}}
}

func TestDiscoveryIsCachedForItsValidity(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		var calls atomic.Int32
		nrf := sbitest.Serve(t, tr, fakeNRF(60, &calls, ausfAt("a", "127.0.0.9", 29509)))
		n := sbi.NewNRFClient(sbitest.Client(tr), nrf, models.NrfNfManagementNfType_AMF)
		now := time.Now()
		n.SetClock(func() time.Time { return now })

		var wg sync.WaitGroup
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				uri, err := n.ServiceURI(context.Background(), models.NrfNfManagementNfType_AUSF, models.ServiceName_NAUSF_AUTH)
				if err != nil || uri != "http://127.0.0.9:29509" {
					t.Errorf("ServiceURI = %q, %v", uri, err)
				}
			}()
		}
		wg.Wait()
		if got := calls.Load(); got != 1 {
			t.Fatalf("50 concurrent lookups asked the NRF %d times, want 1", got)
		}
		now = now.Add(61 * time.Second)
		if _, err := n.Discover(context.Background(), models.NrfNfManagementNfType_AUSF); err != nil {
			t.Fatal(err)
		}
		if got := calls.Load(); got != 2 {
			t.Fatalf("after the validity period the NRF was asked %d times in all, want 2", got)
		}
	})
}
