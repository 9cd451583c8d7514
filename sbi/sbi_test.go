package sbi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/l25gc/l25gc/logging"
)

func TestHandlerTurnsBadBodyIntoProblem400(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /nausf-auth/v1/ue-authentications", func(w http.ResponseWriter, r *http.Request) {
		var in models.AuthenticationInfo
		if !DecodeJSON(w, r, &in) {
			return
		}
		WriteJSON(w, http.StatusCreated, in)
	})
	srv := httptest.NewServer(Handler(mux, NewMetrics(prometheus.NewRegistry()), logging.Discard()))
	defer srv.Close()
	c := NewClient(srv.Client().Transport, nil)

	_, err := c.Do(context.Background(), "POST", srv.URL+"/nausf-auth/v1/ue-authentications", []int{1, 2}, nil)
	var pe *ProblemError
	if !errors.As(err, &pe) || pe.Status != 400 || pe.Problem.Cause != "INVALID_MSG_FORMAT" {
		t.Fatalf("bad body: got %v, want 400 INVALID_MSG_FORMAT", err)
	}
	var out models.AuthenticationInfo
	if _, err := c.Do(context.Background(), "POST", srv.URL+"/nausf-auth/v1/ue-authentications",
		models.AuthenticationInfo{SupiOrSuci: "imsi-208930000000001"}, &out); err != nil || out.SupiOrSuci != "imsi-208930000000001" {
		t.Fatalf("good body: %v %+v", err, out)
	}
}

func TestHandlerContainsPanics(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /boom", func(http.ResponseWriter, *http.Request) { panic("bug") })
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) })
	srv := httptest.NewServer(Handler(mux, nil, logging.Discard()))
	defer srv.Close()
	c := NewClient(srv.Client().Transport, nil)
	if _, err := c.Do(context.Background(), "GET", srv.URL+"/boom", nil, nil); StatusOf(err) != 500 || CauseOf(err) != "SYSTEM_FAILURE" {
		t.Fatalf("panic: got %v, want 500 SYSTEM_FAILURE", err)
	}
	if _, err := c.Do(context.Background(), "GET", srv.URL+"/ok", nil, nil); err != nil {
		t.Fatalf("server did not survive the panic: %v", err)
	}
}

// fakeNRF answers discovery and counts how often it is asked.
func fakeNRF(t *testing.T, validity int32, calls *atomic.Int32) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Query().Get("target-nf-type") != "AUSF" || r.URL.Query().Get("requester-nf-type") != "AMF" {
			WriteProblem(w, 400, "INVALID_QUERY_PARAM", r.URL.RawQuery)
			return
		}
		time.Sleep(5 * time.Millisecond) // let concurrent callers pile up
		WriteJSON(w, 200, models.SearchResult{ValidityPeriod: validity, NfInstances: []models.NrfNfDiscoveryNfProfile{{
			NfInstanceId: "a", NfType: "AUSF",
			NfServices: []models.NrfNfDiscoveryNfService{{ServiceName: models.ServiceName_NAUSF_AUTH,
				IpEndPoints: []models.IpEndPoint{{Ipv4Address: "127.0.0.9", Port: 29509}}}},
		}}})
	}))
}

func TestDiscoveryIsCachedForItsValidity(t *testing.T) {
	var calls atomic.Int32
	nrf := fakeNRF(t, 60, &calls)
	defer nrf.Close()
	n := NewNRFClient(NewClient(nrf.Client().Transport, nil), nrf.URL, models.NrfNfManagementNfType_AMF)
	now := time.Now()
	n.now = func() time.Time { return now }

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
}

func TestTCPTransportSpeaksH2C(t *testing.T) {
	tr := NewTCP()
	srv, err := tr.Serve("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, 200, map[string]string{"proto": r.Proto})
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	var out map[string]string
	if _, err := NewClient(tr.RoundTripper(), nil).Do(context.Background(), "GET", "http://"+srv.Addr()+"/x", nil, &out); err != nil {
		t.Fatal(err)
	}
	if out["proto"] != "HTTP/2.0" {
		t.Fatalf("server saw %s, want HTTP/2.0 (h2c)", out["proto"])
	}
}
