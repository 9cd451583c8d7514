package amf

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
)

// nssfOverHTTP serves an NRF that lists one NSSF and that NSSF, which
// allows 1/010203 (or fails with 500 while failing is set) and counts
// the selections it is asked.
func nssfOverHTTP(t *testing.T) (s *sbiSlices, asked *atomic.Int32, failing *atomic.Bool, now *time.Time) {
	t.Helper()
	asked, failing = new(atomic.Int32), new(atomic.Bool)
	var srv *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+sbi.NFDiscoveryPath, func(w http.ResponseWriter, r *http.Request) {
		sbi.WriteJSON(w, http.StatusOK, models.SearchResult{ValidityPeriod: 3600, NfInstances: []models.NrfNfDiscoveryNfProfile{{
			NfInstanceId: "nssf-1", NfType: models.NrfNfManagementNfType_NSSF, NfStatus: models.NrfNfManagementNfStatus_REGISTERED,
			NfServices: []models.NrfNfDiscoveryNfService{{ServiceName: models.ServiceName_NNSSF_NSSELECTION, ApiPrefix: srv.URL}},
		}}})
	})
	mux.HandleFunc("GET "+NSSelectionPath, func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if failing.Load() {
			sbi.WriteProblem(w, http.StatusInternalServerError, sbi.CauseSystemFailure, "down")
			return
		}
		sbi.WriteJSON(w, http.StatusOK, models.AuthorizedNetworkSliceInfo{AllowedNssaiList: []models.AllowedNssai{{
			AccessType: models.AccessType__3_GPP_ACCESS, AllowedSnssaiList: []models.AllowedSnssai{{AllowedSnssai: &models.Snssai{Sst: 1, Sd: "010203"}}},
		}}})
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := sbi.NewClient(srv.Client().Transport, nil)
	now = new(time.Time)
	*now = time.Now()
	s = &sbiSlices{c: c, nrf: sbi.NewNRFClient(c, srv.URL, models.NrfNfManagementNfType_AMF), answers: newNSSFAnswers(func() time.Time { return *now })}
	return s, asked, failing, now
}

// TS 29.531 5.2.2.2.2: the same question gets the same answer, so the AMF
// asks the NSSF once per distinct question while the answer is fresh; a
// different question, or the same one after nssfAnswerTTL, is asked again.
func TestTheSameSliceQuestionIsAskedOnceWhileFresh(t *testing.T) {
	s, asked, _, now := nssfOverHTTP(t)
	ctx := context.Background()
	info := models.SliceInfoForRegistration{SubscribedNssai: []models.SubscribedSnssai{{SubscribedSnssai: &models.Snssai{Sst: 1, Sd: "010203"}, DefaultIndication: true}}}
	here := models.Tai{PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}, Tac: "000001"}
	there := models.Tai{PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}, Tac: "000002"}
	ask := func(tai models.Tai) {
		t.Helper()
		got, err := s.ForRegistration(ctx, "amf-1", info, tai)
		if err != nil || len(got.AllowedNssaiList) != 1 || got.AllowedNssaiList[0].AllowedSnssaiList[0].AllowedSnssai.Sd != "010203" {
			t.Fatalf("answer %+v, %v; want 1/010203 allowed", got, err)
		}
	}
	for range 5 {
		ask(here)
	}
	if n := asked.Load(); n != 1 {
		t.Fatalf("5 UEs asking the same question reached the NSSF %d times, want once", n)
	}
	ask(there)
	if n := asked.Load(); n != 2 {
		t.Fatalf("a question for another TAI: the NSSF was asked %d times in all, want 2", n)
	}
	*now = now.Add(nssfAnswerTTL)
	ask(here)
	if n := asked.Load(); n != 3 {
		t.Fatalf("after %v the NSSF was asked %d times in all, want 3 (the answer is old)", nssfAnswerTTL, n)
	}
}

// A failure is not remembered: the next UE asks the NSSF again and gets
// its answer once it is back.
func TestASliceSelectionFailureIsNotRemembered(t *testing.T) {
	s, asked, failing, _ := nssfOverHTTP(t)
	ctx := context.Background()
	tai := models.Tai{PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}, Tac: "000001"}
	failing.Store(true)
	for range 2 {
		if _, err := s.ForRegistration(ctx, "amf-1", models.SliceInfoForRegistration{}, tai); err == nil {
			t.Fatal("the NSSF's 500 was not returned")
		}
	}
	failing.Store(false)
	if got, err := s.ForRegistration(ctx, "amf-1", models.SliceInfoForRegistration{}, tai); err != nil || len(got.AllowedNssaiList) != 1 {
		t.Fatalf("after the NSSF came back: %+v, %v", got, err)
	}
	if n := asked.Load(); n < 3 {
		t.Fatalf("the NSSF was asked %d times for 3 selections, two of which failed; want 3 or more", n)
	}
}
