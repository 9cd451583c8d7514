package udr

import (
	"net/http"
	"strings"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/udr/store/storetest"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// Both data sets of a registration in one read (TS 29.505
// provisioned-data), and the single-set resources' errors.
func TestProvisionedDataSets(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, srv := testUDR(t, tr, nil)
		if err := n.store.PutSubscriber(ctx, storetest.Subscriber("208930000000001", "000000000020")); err != nil {
			t.Fatal(err)
		}
		base := srv.URL + DRBase + "/subscription-data/" + ue1 + "/20893/provisioned-data"
		var sets models.ProvisionedDataSets
		if st, _ := srv.call(t, "GET", base+"?dataset-names=AM,SMF_SEL", "", &sets); st != 200 ||
			sets.AmData == nil || len(sets.AmData.Nssai.DefaultSingleNssais) != 2 || sets.SmfSelData == nil || len(sets.SmfSelData.SubscribedSnssaiInfos) != 2 {
			t.Fatalf("AM,SMF_SEL = %d %+v", st, sets)
		}
		sets = models.ProvisionedDataSets{}
		if st, _ := srv.call(t, "GET", base+"?dataset-names=SMF_SEL&dataset-names=SMS_SUB", "", &sets); st != 200 || sets.AmData != nil || sets.SmfSelData == nil {
			t.Fatalf("SMF_SEL and a set this UDR does not keep = %d %+v, want SMF_SEL only", st, sets)
		}
		st, pd := srv.call(t, "GET", base, "", nil)
		wantProblem(t, "no dataset-names", st, pd, http.StatusBadRequest, causeInvalidQuery)
		st, pd = srv.call(t, "GET", strings.Replace(base, "/20893/", "/00101/", 1)+"?dataset-names=AM,SMF_SEL", "", nil)
		wantProblem(t, "a known UE for another PLMN", st, pd, http.StatusNotFound, causeDataNotFound)
		st, pd = srv.call(t, "GET", strings.Replace(base, ue1, "imsi-208930000009999", 1)+"?dataset-names=AM,SMF_SEL", "", nil)
		wantProblem(t, "an unknown UE", st, pd, http.StatusNotFound, causeUserNotFound)
	})
}

// A reservation moves the stored SQN by one and answers it with the
// credentials; an unknown UE is USER_NOT_FOUND and moves nothing.
func TestSQNReservation(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		n, srv := testUDR(t, tr, nil)
		if err := n.store.PutSubscriber(ctx, storetest.Subscriber("208930000000001", "0000000000ff")); err != nil {
			t.Fatal(err)
		}
		url := srv.URL + DRBase + "/subscription-data/" + ue1 + SQNReservationPath
		for _, want := range []string{"000000000100", "000000000101"} {
			var r SQNReservation
			if st, pd := srv.call(t, "POST", url, "", &r); st != 200 || r.SQN != want || r.AuthenticationSubscription.EncPermanentKey != storetest.K {
				t.Fatalf("reservation = %d %+v %+v, want SQN %s and the key", st, r, pd, want)
			}
			if a, err := n.store.AuthSubscription(ctx, ue1); err != nil || a.SequenceNumber.Sqn != want {
				t.Fatalf("stored SQN after the reservation: %v %+v, want %s", err, a, want)
			}
		}
		st, pd := srv.call(t, "POST", strings.Replace(url, ue1, "imsi-208930000009999", 1), "", nil)
		wantProblem(t, "reservation for an unknown UE", st, pd, http.StatusNotFound, causeUserNotFound)
	})
}

// dataset-names comes from the client: any value parses, and every name
// kept is a non-empty name without surrounding blanks or commas.
func FuzzDataSetNames(f *testing.F) {
	f.Add("AM,SMF_SEL")
	f.Add(" , AM,,")
	f.Fuzz(func(t *testing.T, v string) {
		for name := range dataSetNames([]string{v}) {
			if name == "" || strings.TrimSpace(name) != name || strings.Contains(name, ",") {
				t.Fatalf("%q gave the name %q", v, name)
			}
		}
	})
}
