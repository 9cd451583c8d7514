package udm

import (
	"context"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// In a registration the SDM subscription follows the SDM Gets: the UDM
// does not ask the UDR again whether the subscriber exists. Once the
// answer is older than knownFor it asks, and a subscriber deleted
// meanwhile is USER_NOT_FOUND.
func TestSubscribeAfterAReadAsksTheUDRNoMore(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		ctx := context.Background()
		const supi = "imsi-208930000000001"
		f := newFakeUDR()
		f.add(t, supi, subscriber("000000000020"))
		counted, amReads := countRequests(f.handler(), "/am-data")
		n, base, c := newUDMOn(t, tr, counted)
		clock := time.Now()
		n.seen.now = func() time.Time { return clock }
		subscribe := func() error {
			sub := models.SdmSubscription{NfInstanceId: "amf-1", CallbackReference: "http://amf/sdm", MonitoredResourceUris: []string{supi + "/am-data"}}
			_, err := c.Do(ctx, "POST", base+"/nudm-sdm/v2/"+supi+"/sdm-subscriptions", sub, nil)
			return err
		}

		if _, err := c.Do(ctx, "GET", base+"/nudm-sdm/v2/"+supi+"/am-data", nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := subscribe(); err != nil || amReads.Load() != 1 {
			t.Fatalf("subscribe right after the SDM Get: %v, %d UDR reads, want 1", err, amReads.Load())
		}

		f.mu.Lock()
		delete(f.am, supi) // deleted at the UDR
		delete(f.auth, supi)
		f.mu.Unlock()
		clock = clock.Add(knownFor + time.Second)
		if err := subscribe(); sbi.CauseOf(err) != sbi.CauseUserNotFound || amReads.Load() != 2 {
			t.Fatalf("subscribe after knownFor to a deleted subscriber: %v (%d UDR reads), want USER_NOT_FOUND from a second read", err, amReads.Load())
		}
	})
}
